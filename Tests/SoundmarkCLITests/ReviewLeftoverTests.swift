import CSQLite
import Foundation
import XCTest

/// End-to-end tests of faults found in review after the third round: concurrent duplicate adds,
/// titles that are empty, and bad input to every subcommand.
final class ReviewLeftoverTests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private var work: URL!

    override func setUpWithError() throws {
        work = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-leftovers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let work { try? FileManager.default.removeItem(at: work) }
    }

    private func soundmark(_ arguments: String...) throws -> CLISupport.Run {
        try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
    }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    private func ffmpeg(_ arguments: [String], output: String) throws {
        let binary = "/usr/bin/ffmpeg"
        guard FileManager.default.isExecutableFile(atPath: binary) else { throw XCTSkip("no ffmpeg CLI") }
        let r = try CLISupport.run(binary, ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"] + arguments + [output], in: work)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// Starts the built binary without waiting; stdout and stderr go to `name.out` / `name.err`.
    private func launch(_ arguments: [String], name: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try CLISupport.soundmarkBinary())
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        for (suffix, isOut) in [("out", true), ("err", false)] {
            let file = path("\(name).\(suffix)")
            _ = FileManager.default.createFile(atPath: file, contents: nil)
            if isOut { p.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: file)) } else {
                p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
            }
        }
        try p.run()
        return p
    }

    private func output(_ name: String) -> String {
        (try? String(contentsOfFile: path("\(name).err"), encoding: .utf8)) ?? ""
    }

    // MARK: - concurrent duplicate adds

    /// Review of issue 10 item 5: two `catalog add` processes adding re-encoded copies of one
    /// recording at once both stored it (the duplicate check ran before the write lock). The
    /// catalog's write lock is held here while both fingerprint, so both reach their write at
    /// the same time: one is stored, the other is reported as the same recording.
    func testConcurrentAddsOfOneRecordingStoreItOnce() throws {
        let knolls = Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path
        let wav = path("knolls.wav"), mp3 = path("knolls.mp3")
        try ffmpeg(["-t", "12", "-i", knolls], output: wav)
        try ffmpeg(["-i", wav, "-b:a", "128k"], output: mp3)
        let db = path("c.db")
        let first = try soundmark("catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("references/supertux-forest.ogg").path)
        XCTAssertEqual(first.status, 0, first.stderr)

        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(db, &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        XCTAssertEqual(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil), SQLITE_OK)
        let a = try launch(["catalog", "add", "--catalog", db, wav], name: "a")
        let b = try launch(["catalog", "add", "--catalog", db, mp3], name: "b")
        // Both decode and fingerprint 12 s of audio, then wait for the lock (SQLite's busy
        // timeout is 10 s, so the lock is let go well before it).
        Thread.sleep(forTimeInterval: 5)
        XCTAssertEqual(sqlite3_exec(handle, "COMMIT", nil, nil, nil), SQLITE_OK)
        a.waitUntilExit()
        b.waitUntilExit()
        XCTAssertEqual(a.terminationStatus, 0, output("a"))
        XCTAssertEqual(b.terminationStatus, 0, output("b"))
        let messages = output("a") + output("b")
        let skipped = messages.split(separator: "\n").filter { $0.contains(": skipped, the same recording as 'knolls") }
        XCTAssertEqual(skipped.count, 1, messages)
        let list = try soundmark("catalog", "list", "--catalog", db)
        let ids = list.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        XCTAssertEqual(ids.count, 2, list.stdout)
        XCTAssertTrue(ids.contains("supertux-forest"), list.stdout)
        XCTAssertEqual(ids.filter { $0.hasPrefix("knolls") }.count, 1, list.stdout)
    }
}
