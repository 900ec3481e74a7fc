import Foundation
import XCTest

/// End-to-end tests of the ShazamKit interop commands (`signature show`, `signature --format shazam`,
/// signature files as queries) on real files in Tests/Fixtures/Shazam.
final class ShazamCLITests: XCTestCase {
    static let fixtures = CLISupport.root.appendingPathComponent("Tests/Fixtures/Shazam")
    static let work = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-shazam-cli-\(UUID().uuidString)")

    override class func setUp() {
        super.setUp()
        try? FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override class func tearDown() {
        try? FileManager.default.removeItem(at: work)
        super.tearDown()
    }

    struct Run { var status: Int32; var stdout: String; var stderr: String }

    /// Runs the built binary with `arguments`; stdout and stderr through files.
    func soundmark(_ arguments: [String]) throws -> Run {
        let r = try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: Self.work)
        return Run(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    func fixture(_ name: String) -> String { Self.fixtures.appendingPathComponent(name).path }

    func testImportDoesNotReplaceAFingerprintAndExportRefusesAChangedSourceFile() throws {
        // Importing a catalog's own export replaced its references' fingerprints with Shazam peaks
        // (scan then found nothing); exporting after the source file changed wrote another
        // recording's peaks under the reference's id.
        let dir = Self.work.appendingPathComponent("replace-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let source = dir.appendingPathComponent("forest.ogg").path
        try FileManager.default.copyItem(atPath: CLISupport.root.appendingPathComponent("samples/references/supertux-forest.ogg").path,
                                         toPath: source)
        let db = dir.appendingPathComponent("c.db").path, export = dir.appendingPathComponent("c.shazamcatalog").path
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", db, source]).status, 0)
        XCTAssertEqual(try soundmark(["catalog", "export", "--format", "shazamcatalog", "--catalog", db, "-o", export]).status, 0)
        let again = try soundmark(["catalog", "import", "--catalog", db, export])
        XCTAssertEqual(again.status, 2)
        XCTAssertTrue(again.stderr.contains("'forest' is already in"), again.stderr)
        XCTAssertEqual(again.stderr.split(separator: "\n").count, 1, again.stderr)
        let clip = CLISupport.root.appendingPathComponent("samples/clip.mp3").path
        let found = try soundmark(["identify", "--catalog", db, "--format", "json", clip])
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertTrue(found.stdout.contains("\"alignedLandmarks\""), "still matched by its fingerprint")
        // The source file now holds other audio: no export under the old id.
        try FileManager.default.removeItem(atPath: source)
        try FileManager.default.copyItem(atPath: CLISupport.root.appendingPathComponent("samples/references/supertux-chipdisko.ogg").path,
                                         toPath: source)
        let changed = try soundmark(["catalog", "export", "--format", "shazamcatalog", "--catalog", db, "-o", export + "2"])
        XCTAssertEqual(changed.status, 2)
        XCTAssertTrue(changed.stderr.contains("has changed since it was added"), changed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: export + "2"))
        // An empty id is refused.
        let empty = try soundmark(["catalog", "add", "--catalog", db, "--id", "", clip])
        XCTAssertNotEqual(empty.status, 0)
        XCTAssertTrue(empty.stderr.contains("the reference id is empty"), empty.stderr)
    }

    func testShowAndroidSignatureAsJSON() throws {
        let r = try soundmark(["signature", "show", "--format", "json", fixture("shazam-for-real_test-sigx-10.2.1.bin")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(json["format"] as? String, "shazamsignature v1")
        XCTAssertEqual(json["sampleRate"] as? Int, 16000)
        XCTAssertEqual(json["sampleCount"] as? Int, 200_832)
        XCTAssertEqual(json["duration"] as? Double, 12.552)
        XCTAssertEqual(json["crc"] as? String, "ok")
        XCTAssertEqual((json["bands"] as! [[String: Any]]).map { $0["peaks"] as! Int }, [41, 152, 155, 96])
    }

    func testShowCatalogWithMediaItem() throws {
        let r = try soundmark(["signature", "show", fixture("SoundCatalogKit_MyCatalog.shazamcatalog")])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("signature 17E1832A-56A9-414D-A0E5-D2A283C793FE"), r.stdout)
        XCTAssertTrue(r.stdout.contains("title: Learn with Neil"), r.stdout)
        XCTAssertTrue(r.stdout.contains("subtitle: Count on Me"), r.stdout)
        XCTAssertTrue(r.stdout.contains("teacher (custom): Neil Foley"), r.stdout)
        XCTAssertTrue(r.stdout.contains("episode (custom): 3"), r.stdout)
    }

    func testShowDamagedAndLegacyFiles() throws {
        var data = try Data(contentsOf: Self.fixtures.appendingPathComponent("andresparejo_Trim1.mp4.shazamsignature"))
        data[300] ^= 1
        let damaged = Self.work.appendingPathComponent("damaged.shazamsignature")
        try data.write(to: damaged)
        let r = try soundmark(["signature", "show", damaged.path])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.contains("CRC-32: MISMATCH"), r.stdout)

        let legacy = try soundmark(["signature", "show", fixture("shazam-for-real_test-sigx-5.1.0.bin")])
        XCTAssertEqual(legacy.status, 2)
        XCTAssertEqual(legacy.stderr.split(separator: "\n").count, 1, legacy.stderr)
        XCTAssertTrue(legacy.stderr.contains("shazam-for-real_test-sigx-5.1.0.bin: legacy Shazam signature"), legacy.stderr)

        let mp3 = try soundmark(["signature", "show", fixture("shazam-for-real_test.mp3")])
        XCTAssertEqual(mp3.status, 2)
        XCTAssertTrue(mp3.stderr.contains("shazam-for-real_test.mp3: neither a Shazam signature"), mp3.stderr)
    }

    /// A catalog of two sample references, made once.
    func sampleCatalog() throws -> String {
        let db = Self.work.appendingPathComponent("samples.db").path
        if FileManager.default.fileExists(atPath: db) { return db }
        let refs = CLISupport.root.appendingPathComponent("samples/references")
        let r = try soundmark(["catalog", "add", "--catalog", db, refs.appendingPathComponent("supertux-forest.ogg").path,
                               refs.appendingPathComponent("wesnoth-battle.ogg").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return db
    }

    /// Cuts `seconds` of a sample reference from `start` into an MP3.
    func excerpt(_ id: String, start: Double, seconds: Double) throws -> String {
        let out = Self.work.appendingPathComponent("\(id)-\(start)-\(seconds).mp3").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-y", "-ss", String(start), "-t", String(seconds), "-i",
                       CLISupport.root.appendingPathComponent("samples/references/\(id).ogg").path, out]
        try p.run(); p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        return out
    }

    func testIdentifyAndScanASignatureFileLikeTheAudio() throws {
        let db = try sampleCatalog()
        let clip = try excerpt("supertux-forest", start: 20.7, seconds: 10)
        let sig = Self.work.appendingPathComponent("clip.smsig").path
        let made = try soundmark(["signature", "-o", sig, clip])
        XCTAssertEqual(made.status, 0, made.stderr)
        let size = (try FileManager.default.attributesOfItem(atPath: sig)[.size] as? Int) ?? 0
        XCTAssertGreaterThan(size, 1000)
        XCTAssertLessThan(size, 20_000)
        func top(_ input: String) throws -> (String, Double) {
            let r = try soundmark(["identify", "--catalog", db, "--format", "json", input])
            XCTAssertEqual(r.status, 0, r.stderr)
            let m = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any])["matches"] as! [[String: Any]]
            return ((m[0]["reference"] as! [String: Any])["id"] as! String, m[0]["matchOffset"] as! Double)
        }
        let shown = try soundmark(["signature", "show", "--format", "json", sig])
        let info = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as! [String: Any]
        XCTAssertEqual(info["format"] as? String, "soundmark signature v1")
        XCTAssertEqual(info["duration"] as? Double, 10)
        XCTAssertEqual((info["peakSets"] as? [[String: Any]])?.map { $0["role"] as! String }, ["reference", "query", "query", "query", "query"])
        let (idA, offA) = try top(clip), (idB, offB) = try top(sig)
        XCTAssertEqual(idA, "supertux-forest")
        XCTAssertEqual(idB, idA)
        XCTAssertEqual(offB, offA, accuracy: 0.005)
        XCTAssertEqual(offB, 20.7, accuracy: 0.05)

        // A recording's signature scans to the segments of the recording itself.
        let rec = try excerpt("wesnoth-battle", start: 5, seconds: 25)
        let recSig = Self.work.appendingPathComponent("sigs/")
        XCTAssertEqual(try soundmark(["signature", "-o", recSig.path + "/", rec]).status, 0)
        let a = try soundmark(["scan", "--catalog", db, "--format", "csv", rec])
        let b = try soundmark(["scan", "--catalog", db, "--format", "csv", recSig.appendingPathComponent((rec as NSString).lastPathComponent + ".smsig").path])
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(b.status, 0, b.stderr)
        XCTAssertEqual(b.stdout, a.stdout)
        XCTAssertTrue(a.stdout.contains("wesnoth-battle"), a.stdout)
    }

    func testDamagedSignatureFileIsOneLineError() throws {
        let db = try sampleCatalog()
        let clip = try excerpt("wesnoth-battle", start: 3, seconds: 5)
        let sig = Self.work.appendingPathComponent("short.smsig")
        XCTAssertEqual(try soundmark(["signature", "-o", sig.path, clip]).status, 0)
        var data = try Data(contentsOf: sig)
        data[data.count - 20] ^= 0xFF
        try data.write(to: sig)
        let r = try soundmark(["identify", "--catalog", db, sig.path])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("short.smsig") && r.stderr.contains("CRC-32 mismatch"), r.stderr)
    }

    func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
    }

    func topMatch(_ db: String, _ query: String) throws -> (id: String, offset: Double)? {
        let r = try soundmark(["identify", "--catalog", db, "--format", "json", query])
        XCTAssertTrue(r.status == 0 || r.status == 1, r.stderr)
        guard let m = (try json(r.stdout)["matches"] as? [[String: Any]])?.first else { return nil }
        return ((m["reference"] as! [String: Any])["id"] as! String, m["matchOffset"] as! Double)
    }

    func testOfficialAndOwnShazamSignaturesFindTheCataloguedMP3() throws {
        let db = Self.work.appendingPathComponent("shazam-test.db").path
        let add = try soundmark(["catalog", "add", "--shazam", "--catalog", db, "--id", "test", fixture("shazam-for-real_test.mp3")])
        XCTAssertEqual(add.status, 0, add.stderr)
        // The official signatures' audio starts where FFmpeg's does (shift 0 passes).
        for name in ["shazam-for-real_test-sigx-10.2.1.bin", "shazam-for-real_test-sigx-10.1.3.bin"] {
            let m = try XCTUnwrap(try topMatch(db, fixture(name)), name)
            XCTAssertEqual(m.id, "test")
            XCTAssertEqual(m.offset, 0, accuracy: 0.05, name)
        }
        // Our Shazam signature of a 5 s clip cut at 3.0 s.
        let clip = Self.work.appendingPathComponent("clip-3s.wav").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-y", "-ss", "3.0", "-t", "5", "-i", fixture("shazam-for-real_test.mp3"), clip]
        try p.run(); p.waitUntilExit()
        let sig = Self.work.appendingPathComponent("clip-3s.shazamsignature").path
        XCTAssertEqual(try soundmark(["signature", "--format", "shazam", "-o", sig, clip]).status, 0)
        let shown = try json(try soundmark(["signature", "show", "--format", "json", sig]).stdout)
        XCTAssertEqual(shown["format"] as? String, "shazamsignature v1")
        XCTAssertEqual(shown["crc"] as? String, "ok")
        let m = try XCTUnwrap(try topMatch(db, sig))
        XCTAssertEqual(m.id, "test")
        XCTAssertEqual(m.offset, 3.0, accuracy: 0.05)
        // A Shazam signature against a catalog without Shazam peaks: a one-line error.
        let plain = Self.work.appendingPathComponent("plain.db").path
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", plain, fixture("shazam-for-real_test.mp3")]).status, 0)
        let r = try soundmark(["identify", "--catalog", plain, sig])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("no Shazam peaks"), r.stderr)
    }

    func testImportMyCatalogExportAndImportBack() throws {
        let db = Self.work.appendingPathComponent("imported.db").path
        let r = try soundmark(["catalog", "import", "--catalog", db, fixture("SoundCatalogKit_MyCatalog.shazamcatalog")])
        XCTAssertEqual(r.status, 0, r.stderr)
        let show = try json(try soundmark(["catalog", "show", "--catalog", db, "--format", "json", "17E1832A-56A9-414D-A0E5-D2A283C793FE"]).stdout)
        let ref = (show["reference"] as? [String: Any]) ?? show
        XCTAssertEqual(ref["title"] as? String, "Learn with Neil")
        XCTAssertEqual(ref["subtitle"] as? String, "Count on Me")
        XCTAssertEqual(ref["properties"] as? [String: String], ["teacher": "Neil Foley", "episode": "3"])

        // Annotations travel as media items with sh_timeRanges.
        let ann = Self.work.appendingPathComponent("ann.json")
        try Data(#"[{"start":1.5,"end":4.25,"text":"intro"},{"start":30,"end":31,"text":"chorus"}]"#.utf8).write(to: ann)
        XCTAssertEqual(try soundmark(["catalog", "annotate", "--catalog", db, "17E1832A-56A9-414D-A0E5-D2A283C793FE", ann.path]).status, 0)
        let out = Self.work.appendingPathComponent("out.shazamcatalog").path
        let e = try soundmark(["catalog", "export", "--format", "shazamcatalog", "--catalog", db, "-o", out])
        XCTAssertEqual(e.status, 0, e.stderr)
        let listed = try soundmark(["signature", "show", out])
        XCTAssertTrue(listed.stdout.contains("time ranges: 1.500–4.250 s"), listed.stdout)
        XCTAssertTrue(listed.stdout.contains("teacher (custom): Neil Foley"), listed.stdout)
        let db2 = Self.work.appendingPathComponent("reimported.db").path
        XCTAssertEqual(try soundmark(["catalog", "import", "--catalog", db2, out]).status, 0)
        let a = try json(try soundmark(["catalog", "show", "--catalog", db, "--format", "json", "17E1832A-56A9-414D-A0E5-D2A283C793FE"]).stdout)
        var b = try json(try soundmark(["catalog", "show", "--catalog", db2, "--format", "json", "17E1832A-56A9-414D-A0E5-D2A283C793FE"]).stdout)
        var a2 = a
        a2["source"] = nil; b["source"] = nil
        if var r1 = a2["reference"] as? [String: Any], var r2 = b["reference"] as? [String: Any] {
            r1["source"] = nil; r2["source"] = nil; a2["reference"] = r1; b["reference"] = r2
        }
        XCTAssertEqual(NSDictionary(dictionary: a2), NSDictionary(dictionary: b))
        XCTAssertEqual((b["annotationList"] as? [Any])?.count, 2, "\(b)")
    }
}
