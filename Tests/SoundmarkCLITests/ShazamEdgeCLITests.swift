import Foundation
import XCTest
import Soundmark

/// ShazamKit interop at its edges: signature files on standard input (`identify -`, `scan -`,
/// `signature show -`), recognised by their first bytes like files; signatures whose header does
/// not record the sample count; an empty `.shazamcatalog` imported.
final class ShazamEdgeCLITests: XCTestCase {
    static let fixtures = CLISupport.root.appendingPathComponent("Tests/Fixtures/Shazam")
    static let work = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-shazam-edge-\(UUID().uuidString)")

    override class func tearDown() {
        try? FileManager.default.removeItem(at: work)
        super.tearDown()
    }

    func fixture(_ name: String) -> String { Self.fixtures.appendingPathComponent(name).path }

    /// Runs the built binary with `arguments`, standard input read from the file `stdin` when given.
    func soundmark(_ arguments: [String], stdin: String? = nil) throws -> CLISupport.Run {
        let binary = try CLISupport.soundmarkBinary()
        guard let stdin else { return try CLISupport.run(binary, arguments, in: Self.work) }
        return try CLISupport.run("/bin/sh", ["-c", "f=$1; shift; exec \"$@\" < \"$f\"", "sh", stdin, binary] + arguments, in: Self.work)
    }

    func top(_ r: CLISupport.Run) throws -> (id: String, offset: Double)? {
        XCTAssertTrue(r.status == 0 || r.status == 1, r.stderr)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        guard let m = (json?["matches"] as? [[String: Any]])?.first else { return nil }
        return ((m["reference"] as! [String: Any])["id"] as! String, m["matchOffset"] as! Double)
    }

    func testSignatureFilesOnStandardInput() throws {
        try FileManager.default.createDirectory(at: Self.work, withIntermediateDirectories: true)
        let db = Self.work.appendingPathComponent("c.db").path
        let add = try soundmark(["catalog", "add", "--shazam", "--catalog", db, "--id", "test", fixture("shazam-for-real_test.mp3")])
        XCTAssertEqual(add.status, 0, add.stderr)

        // The official Android signature, piped: the same answer as the file (offset 0).
        let official = fixture("shazam-for-real_test-sigx-10.2.1.bin")
        let fromFile = try XCTUnwrap(try top(try soundmark(["identify", "--catalog", db, "--format", "json", official])))
        let piped = try XCTUnwrap(try top(try soundmark(["identify", "--catalog", db, "--format", "json", "-"], stdin: official)))
        XCTAssertEqual(piped.id, "test")
        XCTAssertEqual(piped.offset, fromFile.offset, accuracy: 1e-9)
        XCTAssertEqual(piped.offset, 0, accuracy: 0.05)

        // A data URI and soundmark's own signature file, piped.
        let uri = Self.work.appendingPathComponent("sig.uri")
        try Data(try ShazamSignature(data: Data(contentsOf: URL(fileURLWithPath: official))).dataURI.utf8).write(to: uri)
        XCTAssertEqual(try top(try soundmark(["identify", "--catalog", db, "--format", "json", "-"], stdin: uri.path))?.id, "test")
        let clip = Self.work.appendingPathComponent("clip.wav").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-y", "-ss", "4.0", "-t", "6", "-i", fixture("shazam-for-real_test.mp3"), clip]
        try p.run(); p.waitUntilExit()
        let smsig = Self.work.appendingPathComponent("clip.smsig").path
        XCTAssertEqual(try soundmark(["signature", "-o", smsig, clip]).status, 0)
        let own = try XCTUnwrap(try top(try soundmark(["identify", "--catalog", db, "--format", "json", "-"], stdin: smsig)))
        XCTAssertEqual(own.id, "test")
        XCTAssertEqual(own.offset, 4.0, accuracy: 0.05)
        // Media on standard input is still decoded whole (the bytes looked at are not lost).
        let audio = try XCTUnwrap(try top(try soundmark(["identify", "--catalog", db, "--format", "json", "-"], stdin: clip)))
        XCTAssertEqual(audio.id, "test")
        XCTAssertEqual(audio.offset, 4.0, accuracy: 0.05)

        // signature show - and a damaged signature on standard input: one line naming stdin.
        let shown = try soundmark(["signature", "show", "-"], stdin: official)
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("200832 samples, duration 12.552 s"), shown.stdout)
        var damaged = try Data(contentsOf: URL(fileURLWithPath: official))
        damaged[200] ^= 0x55
        let bad = Self.work.appendingPathComponent("bad.bin")
        try damaged.write(to: bad)
        let r = try soundmark(["identify", "--catalog", db, "-"], stdin: bad.path)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("stdin: Shazam signature CRC-32 mismatch"), r.stderr)
        // Piped against a catalog without Shazam peaks: the line names stdin too.
        let plain = Self.work.appendingPathComponent("plain-stdin.db").path
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", plain, fixture("shazam-for-real_test.mp3")]).status, 0)
        let none = try soundmark(["identify", "--catalog", plain, "-"], stdin: official)
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.stderr.hasPrefix("soundmark: stdin: the catalog holds no Shazam peaks"), none.stderr)
    }

    /// A header sample count of 0xFFFFFFFF is "unknown", not −1 samples: `signature show` says
    /// so (JSON: null) and the duration is where the peaks end.
    func testUnknownSampleCount() throws {
        try FileManager.default.createDirectory(at: Self.work, withIntermediateDirectories: true)
        var s = try ShazamSignature(data: Data(contentsOf: URL(fileURLWithPath: fixture("shazam-for-real_test-sigx-10.2.1.bin"))))
        let lastPass = s.bands.flatMap { $0.map(\.pass) }.max()!
        s.sampleCount = ShazamSignature.unknownSampleCount
        XCTAssertFalse(s.sampleCountIsKnown)
        XCTAssertEqual(s.duration, Double(lastPass + 1) * 0.008, accuracy: 1e-9)
        let file = Self.work.appendingPathComponent("unknown.shazamsignature")
        try s.dataRepresentation().write(to: file)
        XCTAssertEqual(try ShazamSignature(data: Data(contentsOf: file)).sampleCount, 0xFFFF_FFFF)
        let text = try soundmark(["signature", "show", file.path])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertFalse(text.stdout.contains("-1"), text.stdout)
        XCTAssertTrue(text.stdout.contains("sample count unknown (0xFFFFFFFF), peaks up to 12.376 s"), text.stdout)
        let json = try JSONSerialization.jsonObject(with: Data(try soundmark(["signature", "show", "--format", "json", file.path]).stdout.utf8)) as! [String: Any]
        XCTAssertTrue(json["sampleCount"] is NSNull, "\(json)")
        XCTAssertTrue(json["duration"] is NSNull, "\(json)")
    }

    /// An empty .shazamcatalog (the header line only) is refused by `catalog import` with one
    /// line naming the file, exit 2, and no catalog is created; with another file that imports,
    /// that one is imported and the exit status is 1. `signature show` lists it as 0 signatures.
    func testEmptyShazamCatalogIsRefused() throws {
        try FileManager.default.createDirectory(at: Self.work, withIntermediateDirectories: true)
        let empty = Self.work.appendingPathComponent("empty.shazamcatalog")
        try ShazamCatalog(entries: []).dataRepresentation.write(to: empty)
        XCTAssertTrue(try soundmark(["signature", "show", empty.path]).stdout.contains("0 signature(s)"))
        let db = Self.work.appendingPathComponent("empty-import.db").path
        let r = try soundmark(["catalog", "import", "--catalog", db, empty.path])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "soundmark: \(empty.path): the .shazamcatalog holds no signatures (0 references): nothing imported\n")
        XCTAssertEqual(r.stdout, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: db))

        let both = try soundmark(["catalog", "import", "--catalog", db, empty.path, fixture("SoundCatalogKit_MyCatalog.shazamcatalog")])
        XCTAssertEqual(both.status, 1)
        XCTAssertTrue(both.stdout.contains("imported 17E1832A-56A9-414D-A0E5-D2A283C793FE"), both.stdout)
        XCTAssertTrue(both.stderr.contains("0 references"), both.stderr)
    }

    /// Issue 40, item 8: a 400 KB .shazamcatalog that inflated to 400 MB made `signature show`
    /// use 1.27 GB. What a catalog may inflate to is bounded by its size (``InflationBound``:
    /// 64 times plus 1 MiB): a catalog with an 8 MB media title is refused with one line naming
    /// the file, by `signature show` and `catalog import` alike; one with a 1 MB title is read.
    func testShazamCatalogInflatingPastItsBoundIsRefused() throws {
        try FileManager.default.createDirectory(at: Self.work, withIntermediateDirectories: true)
        let real = try ShazamCatalog(data: Data(contentsOf: URL(fileURLWithPath: fixture("SoundCatalogKit_MyCatalog.shazamcatalog"))))
        func catalog(titleBytes: Int, name: String) throws -> (path: String, size: Int) {
            var entry = try XCTUnwrap(real.entries.first)
            entry.mediaItems = [ShazamMediaItem(title: String(repeating: "x", count: titleBytes))]
            let url = Self.work.appendingPathComponent(name)
            let data = ShazamCatalog(entries: [entry]).dataRepresentation
            try data.write(to: url)
            return (url.path, data.count)
        }
        let bomb = try catalog(titleBytes: 8 << 20, name: "bomb.shazamcatalog")
        let limit = InflationBound.limit(compressedBytes: bomb.size)
        XCTAssertLessThan(limit, 8 << 20)
        for command in [["signature", "show"], ["catalog", "import", "--catalog", Self.work.appendingPathComponent("bomb.db").path]] {
            let r = try soundmark(command + [bomb.path])
            XCTAssertEqual(r.status, 2, r.stderr)
            XCTAssertEqual(r.stderr, "soundmark: \(bomb.path): shazamcatalog inflates to more than \(limit) bytes (64 times its \(bomb.size) bytes plus 1 MiB): refused as a decompression bomb\n")
            XCTAssertEqual(r.stdout, "")
        }
        let fine = try catalog(titleBytes: 1 << 20, name: "long-title.shazamcatalog")
        let shown = try soundmark(["signature", "show", fine.path])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("1 signature(s)"), shown.stdout)
    }

    /// scan in both directions: a Shazam signature of a recording against references with
    /// Shazam peaks (`catalog add --shazam`), and the audio of the recording against imported
    /// Shazam signatures (references without audio). Recording: 10 s of supertux-forest from
    /// 20 s, then 12 s of wesnoth-battle from 4 s.
    func testScanWithShazamPeaksBothWays() throws {
        let dir = Self.work.appendingPathComponent("scan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let refs = CLISupport.root.appendingPathComponent("samples/references")
        let forest = refs.appendingPathComponent("supertux-forest.ogg").path, battle = refs.appendingPathComponent("wesnoth-battle.ogg").path
        let recording = dir.appendingPathComponent("rec.wav").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-v", "error", "-y", "-ss", "20", "-t", "10", "-i", forest, "-ss", "4", "-t", "12", "-i", battle,
                       "-filter_complex", "[0][1]concat=n=2:v=0:a=1", recording]
        try p.run(); p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        func segments(_ r: CLISupport.Run) throws -> [(id: String, start: Double, line: Double)] {
            XCTAssertEqual(r.status, 0, r.stderr)
            let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            return (json["segments"] as! [[String: Any]]).map {
                (($0["reference"] as! [String: Any])["id"] as! String, $0["start"] as! Double, ($0["referenceStart"] as! Double) - ($0["start"] as! Double))
            }
        }
        func check(_ found: [(id: String, start: Double, line: Double)], _ what: String) {
            XCTAssertEqual(found.map(\.id), ["supertux-forest", "wesnoth-battle"], what)
            guard found.count == 2 else { return }
            XCTAssertEqual(found[0].line, 20, accuracy: 0.05, what)
            XCTAssertEqual(found[1].line, -6, accuracy: 0.05, what)
            XCTAssertEqual(found[1].start, 10, accuracy: 1.5, what)
        }
        // A Shazam signature of the recording against references with Shazam peaks.
        let own = dir.appendingPathComponent("own.db").path
        XCTAssertEqual(try soundmark(["catalog", "add", "--shazam", "--catalog", own, forest, battle]).status, 0)
        let sig = dir.appendingPathComponent("rec.shazamsignature").path
        XCTAssertEqual(try soundmark(["signature", "--format", "shazam", "-o", sig, recording]).status, 0)
        check(try segments(try soundmark(["scan", "--catalog", own, "--format", "json", sig])), "Shazam signature scanned")
        // The recording's audio against imported Shazam signatures.
        let imported = dir.appendingPathComponent("imported.db").path
        for (id, path) in [("supertux-forest", forest), ("wesnoth-battle", battle)] {
            let s = dir.appendingPathComponent("\(id).shazamsignature").path
            XCTAssertEqual(try soundmark(["signature", "--format", "shazam", "-o", s, path]).status, 0)
            XCTAssertEqual(try soundmark(["catalog", "import", "--catalog", imported, s]).status, 0)
        }
        check(try segments(try soundmark(["scan", "--catalog", imported, "--format", "json", recording])), "audio against imported")
        // A Shazam signature against a catalog without Shazam peaks: one line.
        let plain = dir.appendingPathComponent("plain.db").path
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", plain, forest]).status, 0)
        let r = try soundmark(["scan", "--catalog", plain, sig])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("no Shazam peaks"), r.stderr)
    }
}
