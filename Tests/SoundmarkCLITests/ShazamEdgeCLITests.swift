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
}
