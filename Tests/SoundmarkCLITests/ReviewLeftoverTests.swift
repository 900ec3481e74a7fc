import CSQLite
import Foundation
import XCTest

/// End-to-end tests of faults found in review after the third round: concurrent duplicate adds,
/// titles that are empty, and bad input to every subcommand.
final class ReviewLeftoverTests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private var work: URL!

    override func setUpWithError() throws {
        work = try CLISupport.temporaryDirectory(self, prefix: "leftovers")
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

    // MARK: - empty titles

    /// Review: a reference with an empty title printed as `1.  (id)` in identify's text output,
    /// and as empty tracks and cues in scan's set-list, CUE sheet and SRT. The id stands in.
    func testAnEmptyTitleIsShownAsTheReferenceId() throws {
        let knolls = Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path
        let db = path("titles.db")
        // An empty --title is no title: the file's tag (else its name) is stored instead.
        let add = try soundmark("catalog", "add", "--catalog", db, "--id", "knolls", "--title", "", knolls)
        XCTAssertEqual(add.status, 0, add.stderr)
        let show = try soundmark("catalog", "show", "--catalog", db, "knolls").stdout
        XCTAssertTrue(show.contains("title:     The Knolls of Doldesh\n"), show)
        // A catalog that holds an empty title (written by another tool or an older soundmark).
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(db, &handle), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(handle, "UPDATE reference SET title = '', artist = ''", nil, nil, nil), SQLITE_OK)
        sqlite3_close(handle)
        let clip = path("clip.wav"), recording = path("recording.wav")
        try ffmpeg(["-ss", "10", "-t", "8", "-i", knolls], output: clip)
        try ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono", "-i", knolls, "-filter_complex",
                    "[0]atrim=0:3[s];[s][1]concat=n=2:v=0:a=1"], output: recording)
        let identify = try soundmark("identify", "--catalog", db, clip)
        XCTAssertEqual(identify.status, 0, identify.stderr)
        XCTAssertTrue(identify.stdout.hasPrefix("1. knolls (knolls) at 00:00:10."), identify.stdout)
        let setList = try soundmark("scan", "--catalog", db, recording)
        XCTAssertTrue(setList.stdout.contains("  knolls (knolls from 00:00:00"), setList.stdout)
        let cue = try soundmark("scan", "--catalog", db, "--format", "cue", recording)
        XCTAssertTrue(cue.stdout.contains("TITLE \"knolls\""), cue.stdout)
        XCTAssertFalse(cue.stdout.contains("PERFORMER \"\""), cue.stdout)
        let srt = try soundmark("scan", "--catalog", db, "--format", "srt", recording)
        XCTAssertTrue(srt.stdout.hasSuffix(" --> 00:00:43,000\nknolls\n\n") || srt.stdout.contains("\nknolls\n"), srt.stdout)
        // The library keeps the empty title; its text list shows the id.
        let library = path("airings.db")
        XCTAssertEqual(try soundmark("scan", "--catalog", db, "--library", library, "--source", "radio", recording).status, 0)
        let list = try soundmark("library", "list", "--library", library)
        XCTAssertTrue(list.stdout.contains("  knolls (knolls) from "), list.stdout)
    }

    // MARK: - marker payloads in the library

    /// Review: the library's marker column held a Boolean; it holds the payload seen, shown by
    /// library list (text, CSV, JSON) and report airings.
    func testTheLibraryKeepsTheMarkerPayload() throws {
        let events = path("events.jsonl")
        try """
            {"event":"segment.started","activity_id":"a1","material_id":"spot-a","title":"Spot A","time":10,"position":0}
            {"event":"segment.refined","activity_id":"a1","material_id":"spot-a","time":25,"position":15,"trait":{"marker":true},"marker":{"payload":222,"firstSeen":20,"windows":1}}
            {"event":"segment.ended","activity_id":"a1","material_id":"spot-a","time":40,"position":30,"trait":{"marker":true}}
            {"event":"segment.started","activity_id":"a2","material_id":"spot-b","time":50,"position":0}
            {"event":"segment.ended","activity_id":"a2","material_id":"spot-b","time":60,"position":10}

            """.write(toFile: events, atomically: true, encoding: .utf8)
        let library = path("markers.db")
        let imported = try soundmark("library", "import", "--library", library, "--source", "tv", events)
        XCTAssertEqual(imported.status, 0, imported.stderr)
        let text = try soundmark("library", "list", "--library", library)
        let lines = text.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, text.stdout)
        XCTAssertTrue(lines[0].hasSuffix(", marker 222"), text.stdout)
        XCTAssertFalse(lines[1].contains("marker"), text.stdout)
        let csv = try soundmark("report", "airings", "--library", library, "--format", "csv")
        let rows = csv.stdout.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        XCTAssertEqual(rows[0].last, "marker")
        XCTAssertEqual(rows.dropFirst().map { String($0.last ?? "") }, ["222", ""], csv.stdout)
        let json = try soundmark("library", "list", "--library", library, "--format", "json")
        XCTAssertTrue(json.stdout.contains("\"marker\":222}"), json.stdout)
        XCTAssertTrue(json.stdout.contains("\"marker\":null}"), json.stdout)
        let html = try soundmark("report", "html", "--library", library, "--output", path("r.html"))
        XCTAssertEqual(html.status, 0, html.stderr)
        XCTAssertTrue(try String(contentsOfFile: path("r.html"), encoding: .utf8).contains(" · marker 222"))
    }

    // MARK: - a new user's bad input

    /// Exit 2, one stderr line starting `soundmark:` that holds `text`, no crash.
    private func assertOneLineError(_ r: CLISupport.Run, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(r.signalled, r.stderr, file: file, line: line)
        XCTAssertEqual(r.status, 2, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stderrLines.count, 1, r.stderr, file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("soundmark: ") && r.stderr.contains(text), r.stderr, file: file, line: line)
    }

    /// A new user's check: an empty file given as a catalog to remove, annotate or upgrade became
    /// a catalog (upgrade even said "already format version 2"), and as a library to list or
    /// remove from became a library. Both are refused, and the file stays empty.
    func testAnEmptyFileIsNeitherACatalogNorALibraryUnlessOneIsCreated() throws {
        let empty = path("empty.db")
        let srt = Self.samples.appendingPathComponent("wesnoth-knolls.srt").path
        for command in [["catalog", "remove", "--catalog", empty, "x"], ["catalog", "upgrade", "--catalog", empty],
                        ["catalog", "annotate", "--catalog", empty, "x", srt], ["catalog", "list", "--catalog", empty],
                        ["library", "list", "--library", empty], ["library", "remove", "--library", empty, "--source", "x"],
                        ["report", "counts", "--library", empty]] {
            _ = FileManager.default.createFile(atPath: empty, contents: Data())
            let r = try CLISupport.run(try CLISupport.soundmarkBinary(), command, in: work)
            assertOneLineError(r, "empty.db")
            XCTAssertTrue(r.stderr.contains("not a soundmark"), r.stderr)
            XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int, 0, command.joined(separator: " "))
        }
        // Where a catalog or library is created, an empty file is a new one.
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let add = try soundmark("catalog", "add", "--catalog", empty, Self.samples.appendingPathComponent("clip.mp3").path)
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(try soundmark("catalog", "list", "--catalog", empty).stdout.split(separator: "\n").count, 1)
    }

    /// A new user's check: an empty events file imported as a recording with no airings (every
    /// empty file has one digest, so it replaced the last empty import of any name), and
    /// `timeline merge` of it succeeded silently; annotating from an empty file said so twice.
    func testEmptyEventAndAnnotationFilesAreOneLineErrors() throws {
        let empty = path("events.jsonl")
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        assertOneLineError(try soundmark("library", "import", "--library", path("lib.db"), empty), "events.jsonl: no events (an empty file)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("lib.db")), "nothing imported, no library created")
        assertOneLineError(try soundmark("timeline", "merge", empty), "events.jsonl: no events (an empty file)")
        let db = path("c.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", db, "--id", "clip", Self.samples.appendingPathComponent("clip.mp3").path).status, 0)
        let srt = path("empty.srt")
        _ = FileManager.default.createFile(atPath: srt, contents: Data())
        assertOneLineError(try soundmark("catalog", "annotate", "--catalog", db, "clip", srt), "empty.srt: an empty file, no annotations found; the stored ones are kept")
    }

    /// A new user's check: `signature -o -` onto a full disk crashed with a stack trace, and
    /// text output that could not be written (scan, library list) exited 0. Both are one-line
    /// errors, exit 2.
    func testOutputThatCannotBeWrittenIsAnError() throws {
        guard FileManager.default.fileExists(atPath: "/dev/full") else { throw XCTSkip("no /dev/full") }
        let clip = Self.samples.appendingPathComponent("clip.mp3").path
        let db = path("c.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", db, clip).status, 0)
        for command in [["signature", "-o", "-", clip], ["identify", "--catalog", db, clip], ["catalog", "list", "--catalog", db]] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try CLISupport.soundmarkBinary())
            p.arguments = command
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle(forWritingAtPath: "/dev/full")
            let err = path("full.err")
            _ = FileManager.default.createFile(atPath: err, contents: nil)
            p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
            try p.run()
            p.waitUntilExit()
            let stderr = try String(contentsOfFile: err, encoding: .utf8)
            XCTAssertEqual(p.terminationReason, .exit, stderr)
            XCTAssertEqual(p.terminationStatus, 2, stderr)
            XCTAssertTrue(stderr.hasSuffix("soundmark: cannot write standard output: No space left on device\n"), stderr)
            XCTAssertFalse(stderr.contains("crashed"), stderr)
        }
    }

    /// Writing a report, signature or exported catalog through a symbolic link replaced the link
    /// with a file (and a device such as /dev/null with a regular file): the link's target is written.
    func testOutputThroughASymbolicLinkWritesItsTarget() throws {
        let library = path("lib.db")
        let events = path("events.jsonl")
        try #"{"activity_id":"a","material_id":"spot","time":1}"#.write(toFile: events, atomically: true, encoding: .utf8)
        XCTAssertEqual(try soundmark("library", "import", "--library", library, events).status, 0)
        try FileManager.default.createDirectory(atPath: path("reports"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path("latest.html"), withDestinationPath: "reports/day1.html")
        let r = try soundmark("report", "html", "--library", library, "--output", path("latest.html"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: path("latest.html")), "reports/day1.html")
        XCTAssertTrue(try String(contentsOfFile: path("reports/day1.html"), encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        assertOneLineError(try soundmark("report", "html", "--library", library, "--output", path("reports")), "reports: cannot write the report: is a directory")
    }

    /// A new user's check: a file cut short (a broken download, a full disk) was read up to its
    /// cut without a word, and `catalog add` stored the shorter audio. A file whose header
    /// declares more audio than it holds (an MP3's frame count, an MP4 track's duration) is
    /// reported as truncated; a whole file and a file without such a header are not.
    func testATruncatedFileIsReportedAsTruncated() throws {
        let knolls = Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path
        let mp3 = path("whole.mp3"), mp4 = path("whole.mp4")
        try ffmpeg(["-i", knolls, "-b:a", "128k"], output: mp3)
        try ffmpeg(["-i", knolls, "-c:a", "aac", "-movflags", "+faststart"], output: mp4)
        let db = path("c.db")
        for whole in [mp3, mp4] {
            let data = try Data(contentsOf: URL(fileURLWithPath: whole))
            let cut = path("cut-" + (whole as NSString).lastPathComponent)
            try data.prefix(data.count / 3).write(to: URL(fileURLWithPath: cut))
            let add = try soundmark("catalog", "add", "--catalog", db, "--allow-duplicates", cut)
            XCTAssertEqual(add.status, 0, add.stderr)
            let warning = add.stderrLines.filter { $0.contains("it is truncated") }
            XCTAssertEqual(warning.count, 1, add.stderr)
            XCTAssertTrue(warning.first?.hasPrefix("soundmark: warning: \(cut): the audio ends at 1") == true, add.stderr)
            XCTAssertTrue(warning.first?.contains("but the file declares 40.0 s") == true, add.stderr)
            let intact = try soundmark("identify", "--catalog", db, whole)
            XCTAssertFalse(intact.stderr.contains("truncated"), intact.stderr)
        }
        // Cut inside its first frames: nothing decodes. One error, not a warning per corrupt
        // packet followed by "only 0.0 s of audio" (identify) or "no audio content" (catalog add).
        let wav = path("whole.wav"), stub = path("stub.wav")
        try ffmpeg(["-i", knolls], output: wav)
        try Data(try Data(contentsOf: URL(fileURLWithPath: wav)).prefix(100)).write(to: URL(fileURLWithPath: stub))
        for command in [["identify", "--catalog", db, stub], ["catalog", "add", "--catalog", db, stub], ["marker", "detect", stub]] {
            let r = try CLISupport.run(try CLISupport.soundmarkBinary(), command, in: work)
            assertOneLineError(r, "stub.wav: read failed: no audio could be decoded (corrupt audio skipped at 0.00 s")
        }
    }

    /// A new user's check: `scan --cues annotations` with the default set-list (or csv, html)
    /// format was silently ignored; it is refused in one line naming the formats it applies to.
    func testCuesWithoutACueFormatIsRefused() throws {
        for format in [nil, "csv", "html"] {
            let r = try CLISupport.run(try CLISupport.soundmarkBinary(), ["scan", "--catalog", path("none.db"), "--cues", "annotations"]
                                       + (format.map { ["--format", $0] } ?? []) + [Self.samples.appendingPathComponent("clip.mp3").path], in: work)
            assertOneLineError(r, "--cues chooses the cues of --format srt, vtt, ass, cue, audacity, json, not of \(format ?? "setlist")")
        }
    }

    /// A new user's check: `--since` after `--until` (a swapped pair) listed "no airings" and
    /// removed nothing, exit 0. It is refused in one line for every command that takes them.
    func testASwappedTimeRangeIsRefused() throws {
        let events = path("events.jsonl")
        try #"{"activity_id":"a","material_id":"spot","time":"2026-12-01T10:00:00Z"}"#.write(toFile: events, atomically: true, encoding: .utf8)
        let library = path("lib.db")
        XCTAssertEqual(try soundmark("library", "import", "--library", library, events).status, 0)
        for command in [["library", "list"], ["library", "remove"], ["report", "airings"], ["report", "counts"]] {
            let r = try CLISupport.run(try CLISupport.soundmarkBinary(), command + ["--library", library, "--since", "2026-12-02", "--until", "2026-12-01"], in: work)
            assertOneLineError(r, "--until 2026-12-01 is before --since 2026-12-02")
        }
        XCTAssertEqual(try soundmark("library", "list", "--library", library, "--since", "2026-12-01", "--until", "2026-12-02").stdout.split(separator: "\n").count, 1)
    }

    /// A new user's check: `catalog copy a.db ./a.db` (the same file spelled another way, or a
    /// link to it) copied every reference onto itself; it is refused as `a.db a.db` is.
    func testCatalogCopyOntoItselfIsRefusedHoweverItIsSpelled() throws {
        let db = path("a.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("clip.mp3").path).status, 0)
        try FileManager.default.createSymbolicLink(atPath: path("link.db"), withDestinationPath: "a.db")
        for other in [work.path + "/./a.db", path("link.db")] {
            assertOneLineError(try soundmark("catalog", "copy", db, other), "source and destination are the same catalog")
        }
    }
}
