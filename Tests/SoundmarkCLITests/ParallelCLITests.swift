import Foundation
import XCTest

/// `--jobs`, several clips per `identify`, several recordings per `scan`, and the index file the
/// catalog commands keep up to date.
final class ParallelCLITests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-parallel-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    private var references: String { CLISupport.root.appendingPathComponent("samples/references").path }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let r = try CLISupport.run(executable, arguments, in: directory)
        return (r.status, r.stdout, r.stderr)
    }

    private func soundmark(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(try CLISupport.soundmarkBinary(), arguments)
    }

    /// A clip of `seconds` from reference `id` starting at `start` s, as WAV.
    private func clip(_ id: String, from start: Int, seconds: Int = 8) throws -> String {
        let output = path("\(id)-\(start).wav")
        let r = try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y", "-ss", "\(start)", "-t", "\(seconds)",
                                            "-i", "\(references)/\(id).ogg", output])
        XCTAssertEqual(r.status, 0, r.stderr)
        return output
    }

    private func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    func testCatalogAddWithJobsStoresWhatOneJobStoresAndKeepsTheIndexCurrent() throws {
        let one = path("one.db"), three = path("three.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--jobs", "1", "--catalog", one, references).status, 0)
        let r = try soundmark("catalog", "add", "--jobs", "3", "--catalog", three, references)
        XCTAssertEqual(r.status, 0, r.stderr)
        // Reported in input order, whatever finished first.
        let added = r.stderr.split(separator: "\n").filter { $0.contains(": added ") }.map { String($0.prefix { $0 != ":" }) }
        XCTAssertEqual(added, ["supertux-chipdisko", "supertux-forest", "wesnoth-battle", "wesnoth-knolls", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual(try soundmark("catalog", "list", "--format", "json", "--catalog", one).stdout,
                       try soundmark("catalog", "list", "--format", "json", "--catalog", three).stdout)
        XCTAssertTrue(FileManager.default.fileExists(atPath: three + ".index"))
        let forest = try clip("supertux-forest", from: 10)
        let a = try soundmark("identify", "--format", "json", "--catalog", one, forest)
        XCTAssertEqual(a.status, 0, a.stderr)
        XCTAssertEqual(a.stdout, try soundmark("identify", "--format", "json", "--catalog", three, forest).stdout)
        // Re-adding with several jobs skips every file unchanged.
        let again = try soundmark("catalog", "add", "--jobs", "2", "--catalog", three, references)
        XCTAssertEqual(again.stderr.components(separatedBy: "skipped (already in the catalog, unchanged)").count - 1, 5, again.stderr)
        // A removed reference is no longer found: the index file followed the catalog.
        XCTAssertEqual(try soundmark("catalog", "remove", "--catalog", three, "supertux-forest").status, 0)
        let gone = try soundmark("identify", "--format", "json", "--catalog", three, forest)
        XCTAssertEqual(gone.status, 1, gone.stderr)
        XCTAssertFalse(gone.stdout.contains("\"id\":\"supertux-forest\""), gone.stdout)
        let bad = try soundmark("catalog", "add", "--jobs", "0", "--catalog", three, references)
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.stderr.contains("--jobs takes a whole number"), bad.stderr)
    }

    func testACopyAddedInTheSameRunIsADuplicateOfTheFileBeforeIt() throws {
        // The duplicate check looks only at references of the same length: a re-encoding added
        // later in the same batch (nothing stored before it) is still found, with any --jobs;
        // a cut of the same audio (another length) is added.
        let knolls = "\(references)/wesnoth-knolls.ogg"
        let copy = path("knolls-copy.mp3"), cut = path("knolls-cut.wav")
        for (arguments, output) in [(["-i", knolls, "-b:a", "128k"], copy), (["-ss", "5", "-i", knolls], cut)] {
            let r = try run("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments + [output])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        for jobs in ["1", "2"] {
            let db = path("dups-\(jobs).db")
            let r = try soundmark("catalog", "add", "--jobs", jobs, "--catalog", db, "\(references)/wesnoth-battle.ogg", knolls, copy, cut)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("soundmark: \(copy): skipped, the same recording as 'wesnoth-knolls' (use --allow-duplicates to add it as 'knolls-copy')"), r.stderr)
            let ids = try soundmark("catalog", "list", "--catalog", db).stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
            XCTAssertEqual(ids, ["knolls-cut", "wesnoth-battle", "wesnoth-knolls"], "--jobs \(jobs)")
        }
    }

    func testIdentifyMatchesSeveralClipsInOneProcessInArgumentOrder() throws {
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, references).status, 0)
        let forest = try clip("supertux-forest", from: 10), knolls = try clip("wesnoth-knolls", from: 5)
        let r = try soundmark("identify", "--jobs", "2", "--format", "json", "--catalog", catalog, forest, knolls, forest)
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = try jsonLines(r.stdout)
        XCTAssertEqual(lines.map { $0["source"] as? String }, [forest, knolls, forest])
        let best = lines.map { (($0["matches"] as? [[String: Any]])?.first) }
        XCTAssertEqual(best.map { ($0?["reference"] as? [String: Any])?["id"] as? String },
                       ["supertux-forest", "wesnoth-knolls", "supertux-forest"])
        XCTAssertEqual(best[0]?["matchOffset"] as? Double ?? -1, 10, accuracy: 0.05)
        XCTAssertEqual(best[1]?["matchOffset"] as? Double ?? -1, 5, accuracy: 0.05)
        // One clip alone prints the object each line of several is (issue 39.4: it named no source).
        let single = try soundmark("identify", "--format", "json", "--catalog", catalog, knolls)
        XCTAssertEqual(single.stdout, r.stdout.split(separator: "\n")[1] + "\n")
        // A missing clip is reported and the others still matched: exit 1.
        let text = try soundmark("identify", "--catalog", catalog, forest, path("missing.wav"), knolls)
        XCTAssertEqual(text.status, 1)
        XCTAssertEqual(text.stdout.split(separator: "\n").filter { $0.hasPrefix("# ") }.map(String.init), ["# \(forest)", "# \(knolls)"])
        XCTAssertTrue(text.stderr.contains("missing.wav"), text.stderr)
        XCTAssertTrue(text.stderr.contains("1 of 3 clip(s) failed"), text.stderr)
    }

    func testScanOfSeveralRecordingsReportsEachAsAScanOfItAlone() throws {
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, references).status, 0)
        let recording = CLISupport.root.appendingPathComponent("samples/recording.mp3").path
        let knolls = try clip("wesnoth-knolls", from: 5, seconds: 20)
        let alone = try soundmark("scan", "--format", "json", "--catalog", catalog, recording)
        XCTAssertEqual(alone.status, 0, alone.stderr)
        let ids = try jsonLines(alone.stdout)[0]["segments"].flatMap { $0 as? [[String: Any]] }?
            .map { ($0["reference"] as? [String: Any])?["id"] as? String }
        XCTAssertEqual(ids, ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        let both = try soundmark("scan", "--jobs", "2", "--format", "json", "--catalog", catalog, recording, knolls)
        XCTAssertEqual(both.status, 0, both.stderr)
        let lines = both.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2)
        XCTAssertEqual(lines[0] + "\n", alone.stdout)
        XCTAssertEqual(lines[1] + "\n", try soundmark("scan", "--format", "json", "--catalog", catalog, knolls).stdout)
        let srt = try soundmark("scan", "--format", "srt", "--catalog", catalog, recording, knolls)
        XCTAssertEqual(srt.status, 2)
        XCTAssertTrue(srt.stderr.contains("--format srt writes one recording"), srt.stderr)
    }
}
