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
        let out = Self.work.appendingPathComponent("out-\(UUID().uuidString)")
        let err = Self.work.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: out); try? FileManager.default.removeItem(at: err) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try CLISupport.soundmarkBinary())
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                   stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    func fixture(_ name: String) -> String { Self.fixtures.appendingPathComponent(name).path }

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
}
