import Foundation
import XCTest

/// End-to-end tests of `--library` on identify/scan, the `library` commands and the reports.
final class LibraryCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private static let work = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-library-tests-\(UUID().uuidString)")
    nonisolated(unsafe) private static var catalog: String?

    override class func tearDown() {
        try? FileManager.default.removeItem(at: work)
        super.tearDown()
    }

    struct Result { var status: Int32; var out: String; var err: String }

    /// Runs the binary; output through files (no pipe can fill up).
    func run(_ arguments: [String]) throws -> Result {
        let r = try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: Self.work)
        return Result(status: r.status, out: r.stdout, err: r.stderr)
    }

    /// The sample catalog (samples/references), built once.
    func sampleCatalog() throws -> String {
        if let c = Self.catalog { return c }
        let path = Self.work.appendingPathComponent("catalog.db").path
        let r = try run(["catalog", "add", "--catalog", path, Self.samples.appendingPathComponent("references").path])
        XCTAssertEqual(r.status, 0, r.err)
        Self.catalog = path
        return path
    }

    func newLibrary() -> String { Self.work.appendingPathComponent("library-\(UUID().uuidString).db").path }

    /// CSV rows (no quoted commas in these tests) without the header.
    func csvRows(_ text: String) -> [[String]] {
        text.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    func testScanIntoTheLibraryTwiceKeepsOneRecordingWithWallClockTimes() throws {
        let catalog = try sampleCatalog(), library = newLibrary()
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        var r = try run(["scan", "--catalog", catalog, "--library", library, "--source", "radio1",
                         "--start-time", "2026-12-01T08:00:00Z", recording])
        XCTAssertEqual(r.status, 0, r.err)
        // The same audio under another name replaces the first results.
        let copy = Self.work.appendingPathComponent("copy-\(UUID().uuidString).mp3").path
        try FileManager.default.copyItem(atPath: recording, toPath: copy)
        r = try run(["scan", "--catalog", catalog, "--library", library, "--source", "radio1",
                     "--start-time", "2026-12-01T09:00:00+01:00", copy])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["library", "show", "--library", library, "--format", "json"])
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let recordings = try XCTUnwrap(shown["recordings"] as? [[String: Any]])
        XCTAssertEqual(recordings.count, 1)
        XCTAssertEqual(recordings.first?["name"] as? String, copy)
        XCTAssertEqual(recordings.first?["airingCount"] as? Int, 4)

        r = try run(["library", "list", "--library", library, "--format", "csv"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("source,recording,start,end,wall_start,wall_end,reference,title,artist,duration,fraction_aired,"))
        let rows = csvRows(r.out)
        XCTAssertEqual(rows.map { $0[6] }, ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual(rows.map { $0[0] }, Array(repeating: "radio1", count: 4))
        // The set-list of samples/recording.mp3 (samples/README.md): 0:00, 0:36, 1:28, 2:02.
        let starts = rows.map { Double($0[2])! }
        for (got, want) in zip(starts, [0.0, 36.2, 88.5, 122.4]) { XCTAssertEqual(got, want, accuracy: 1.0) }
        XCTAssertEqual(rows[0][4], "2026-12-01T08:00:00.000Z")
        XCTAssertTrue(rows[1][4].hasPrefix("2026-12-01T08:00:36"), rows[1][4])

        r = try run(["library", "list", "--library", library, "--reference", "wesnoth-battle", "--since", "2026-12-01T08:01:00Z", "--format", "json"])
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let airings = try XCTUnwrap(listed["airings"] as? [[String: Any]])
        // One reference object, as in scan's and identify's JSON.
        let reference = airings.first?["reference"] as? [String: Any]
        XCTAssertEqual(airings.count, 1)
        XCTAssertEqual(reference?["id"] as? String, "wesnoth-battle")
        XCTAssertEqual(reference?["title"] as? String, "Battle Music")
        XCTAssertNil(airings.first?["title"], "the title is in the reference object, not beside it")
    }

    func testIdentifyRecordsItsBestMatchAndRemoveTakesItAway() throws {
        let catalog = try sampleCatalog(), library = newLibrary()
        var r = try run(["identify", "--catalog", catalog, "--library", library, "--source", "phone",
                         Self.samples.appendingPathComponent("clip.mp3").path])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["library", "list", "--library", library, "--format", "csv"])
        let rows = csvRows(r.out)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?[0], "phone")
        XCTAssertEqual(rows.first?[6], "supertux-forest")
        XCTAssertEqual(Double(rows.first?[11] ?? "") ?? -1, 15.0, accuracy: 0.1)
        r = try run(["library", "remove", "--library", library, "--source", "phone"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "removed 1 airing(s), 1 recording(s)\n")
        r = try run(["library", "list", "--library", library])
        XCTAssertEqual(r.out, "no airings\n")
        r = try run(["library", "remove", "--library", library])
        XCTAssertEqual(r.status, 2)
    }

    func testImportFollowsTheTimelineRulesAndReplacesOnReimport() throws {
        let library = newLibrary()
        let events = Self.work.appendingPathComponent("events-\(UUID().uuidString).jsonl")
        try FileManager.default.createDirectory(at: Self.work, withIntermediateDirectories: true)
        try """
        {"event":"segment.started","activity_id":"a1","material_id":"spot-a","title":"A","time":10,"start":10,"end":12,"position":0,"referenceStart":0,"confidence":0.9}
        {"event":"segment.started","activity_id":"a2","material_id":"spot-b","title":"B","time":30,"start":30,"end":33,"position":5,"referenceStart":5,"confidence":0.8}
        {"event":"segment.ended","activity_id":"a1","material_id":"spot-a","time":31,"start":10,"end":31,"position":21,"referenceStart":0,"confidence":0.9}
        not json
        {"event":"segment.ended","activity_id":"a2","material_id":"spot-b","time":50,"start":30,"end":50,"position":25,"referenceStart":5,"confidence":0.8}
        {"event":"stream.ended","time":60}

        """.write(to: events, atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let r = try run(["library", "import", "--library", library, "--source", "tv2", "--start-time", "2026-12-01T20:00:00Z", events.path])
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertTrue(r.err.contains("line 4: not valid JSON"), r.err)
        }
        let r = try run(["library", "list", "--library", library, "--format", "csv"])
        let rows = csvRows(r.out)
        XCTAssertEqual(rows.map { "\($0[0]) \($0[2]) \($0[3]) \($0[4]) \($0[6])" },
                       ["tv2 10.000 31.000 2026-12-01T20:00:10.000Z spot-a", "tv2 30.000 50.000 2026-12-01T20:00:30.000Z spot-b"])
    }

    func testMonitorRecordsEachEndedActivityAndAgainReplacesTheRun() throws {
        let catalog = try sampleCatalog(), library = newLibrary()
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        for _ in 0..<2 {
            let r = try run(["monitor", "--catalog", catalog, "--library", library, "--source", "live", "--catalog-poll", "0",
                             "--start-time", "2026-12-01T06:00:00Z", recording])
            XCTAssertEqual(r.status, 0, r.err)
        }
        var r = try run(["library", "show", "--library", library])
        XCTAssertTrue(r.out.hasSuffix("1 recording(s), 4 airing(s)\n"), r.out)
        r = try run(["library", "list", "--library", library, "--format", "csv"])
        let rows = csvRows(r.out)
        XCTAssertEqual(rows.map { $0[6] }, ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual(rows.first?[4], "2026-12-01T06:00:00.000Z")
        // A scan of the same audio from the same source is the same recording: it replaces the
        // monitor's results (another named source would keep both, issue 39 item 2).
        r = try run(["scan", "--catalog", catalog, "--library", library, "--source", "live", recording])
        r = try run(["library", "show", "--library", library, "--format", "json"])
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let recordings = try XCTUnwrap(shown["recordings"] as? [[String: Any]])
        XCTAssertEqual(recordings.count, 1, r.out)
        XCTAssertEqual(recordings.first?["name"] as? String, recording)
        XCTAssertEqual(recordings.first?["airingCount"] as? Int, 4)
    }

    /// Runs the binary with standard input read from `file`.
    func run(_ arguments: [String], stdin file: String) throws -> Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try CLISupport.soundmarkBinary())
        p.arguments = arguments
        p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
        let out = Self.work.appendingPathComponent("stdin-out-\(UUID().uuidString)")
        let err = Self.work.appendingPathComponent("stdin-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, out: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                      err: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Issue 39 item 2: the same MP3 scanned as a file, as an HTTP URL and from standard input
    /// gave 3 recordings and 12 airings (a piped MP3 decodes ~61 samples more: no gapless
    /// trim). It is one recording with the set-list's 4 airings; the same file scanned under
    /// the named sources "Radio 1" and "Radio 9" keeps both sources' airings.
    func testOneRecordingWhateverThePathURLOrPipe() throws {
        let catalog = try sampleCatalog(), library = newLibrary()
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        let log = Self.work.appendingPathComponent("http-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1", "--directory", Self.samples.path, "0"]
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = try FileHandle(forWritingTo: log)
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate(); server.waitUntilExit() }
        var port: Int?
        for _ in 0..<100 where port == nil {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            port = text.components(separatedBy: " port ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            if port == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        guard let port else { throw XCTSkip("python3 http.server did not start") }
        var r = try run(["scan", "--catalog", catalog, "--library", library, recording])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["scan", "--catalog", catalog, "--library", library, "http://127.0.0.1:\(port)/recording.mp3"])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["scan", "--catalog", catalog, "--library", library, "--verbose", "-"], stdin: recording)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("replacing its earlier results"), r.err)
        r = try run(["library", "show", "--library", library])
        XCTAssertTrue(r.out.hasSuffix("1 recording(s), 4 airing(s)\n"), r.out)

        let stations = newLibrary()
        for source in ["Radio 1", "Radio 9"] {
            r = try run(["scan", "--catalog", catalog, "--library", stations, "--source", source, recording])
            XCTAssertEqual(r.status, 0, r.err)
        }
        r = try run(["report", "counts", "--library", stations, "--by", "source"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(csvRows(r.out).map { $0[0] }, Array(repeating: "Radio 1", count: 4) + Array(repeating: "Radio 9", count: 4), r.out)
    }

    func testReportAiringsIsRFC4180AndCountsMatchTheAirings() throws {
        let library = newLibrary(), catalog = Self.work.appendingPathComponent("quoted-\(UUID().uuidString).db").path
        var r = try run(["catalog", "add", "--catalog", catalog, "--id", "forest", "--title", "Forest, \"Dance\"", "--artist", "Wansti",
                         Self.samples.appendingPathComponent("references/supertux-forest.ogg").path])
        XCTAssertEqual(r.status, 0, r.err)
        for (source, time) in [("radio1", "2026-12-01T08:00:00Z"), ("radio1", "2026-12-02T08:00:00Z"), ("radio2", "2026-12-01T09:00:00Z")] {
            // Three recordings: copies of the clip at different gains (the same audio would be one recording).
            let clip = Self.work.appendingPathComponent("clip-\(source)-\(time.prefix(10)).wav").path
            let gain = source == "radio2" ? "0.9" : time.hasPrefix("2026-12-02") ? "0.8" : "1.0"
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
            p.arguments = ["-nostdin", "-loglevel", "error", "-y", "-i", Self.samples.appendingPathComponent("clip.mp3").path,
                           "-af", "volume=\(gain)", clip]
            try p.run()
            p.waitUntilExit()
            r = try run(["identify", "--catalog", catalog, "--library", library, "--source", source, "--start-time", time, clip])
            XCTAssertEqual(r.status, 0, r.err)
        }
        r = try run(["report", "airings", "--library", library, "--source", "radio1"])
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.components(separatedBy: "\r\n")
        XCTAssertEqual(lines.count, 4, r.out)  // header, two rows, the empty string after the last CRLF
        XCTAssertTrue(lines[1].hasPrefix("radio1,"), lines[1])
        XCTAssertTrue(lines[1].contains(",forest,\"Forest, \"\"Dance\"\"\",Wansti,"), lines[1])
        XCTAssertTrue(lines[1].contains(",2026-12-01T08:00:00."), lines[1])
        r = try run(["report", "counts", "--library", library, "--by", "day"])
        XCTAssertEqual(r.out.components(separatedBy: "\r\n").dropLast().map { $0.split(separator: ",").prefix(2).joined(separator: ",") + "," + ($0.split(separator: ",").dropLast().last ?? "") },
                       ["day,reference,plays", "2026-12-01,forest,2", "2026-12-02,forest,1"])
        r = try run(["report", "counts", "--library", library, "--by", "source", "--format", "json"])
        let counts = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["counts"] as? [[String: Any]])
        XCTAssertEqual(counts.map { "\($0["source"]!) \($0["plays"]!)" }, ["radio1 2", "radio2 1"])
        // Without --by: the overall plays per reference (as --by reference).
        r = try run(["report", "counts", "--library", library])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out.components(separatedBy: "\r\n").dropLast().map { $0.split(separator: ",").first.map(String.init) ?? "" },
                       ["reference", "forest"], r.out)
        XCTAssertEqual(r.out, try run(["report", "counts", "--library", library, "--by", "reference"]).out)
        XCTAssertTrue(r.out.contains(",3,"), r.out)
        r = try run(["report", "counts", "--library", library, "--by", "month"])
        XCTAssertEqual(r.status, 2)
        let html = Self.work.appendingPathComponent("report-\(UUID().uuidString).html").path
        r = try run(["report", "html", "--library", library, "--output", html])
        XCTAssertEqual(r.status, 0, r.err)
        let page = try String(contentsOfFile: html, encoding: .utf8)
        XCTAssertEqual(page.components(separatedBy: "<rect class=\"airing\"").count - 1, 3)
        XCTAssertEqual(page.components(separatedBy: "<line class=\"plot-line\"").count - 1, 3)
    }

    /// `scan --format html` in headless Chromium (scripts/check-report-browser.sh): no console error,
    /// one block and one plot line per segment of `scan --format json`; skipped without Chromium.
    func testScanHTMLInAHeadlessBrowser() throws {
        let catalog = try sampleCatalog()
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        let html = Self.work.appendingPathComponent("scan-\(UUID().uuidString).html"), json = Self.work.appendingPathComponent("scan-\(UUID().uuidString).json")
        var r = try run(["scan", "--catalog", catalog, "--format", "html", "--source", "demo", "--start-time", "2026-12-01T08:00:00Z", recording])
        XCTAssertEqual(r.status, 0, r.err)
        try r.out.write(to: html, atomically: true, encoding: .utf8)
        XCTAssertEqual(r.out.components(separatedBy: "<rect class=\"airing\"").count - 1, 4)
        XCTAssertTrue(r.out.contains(">08:00:00</text>"))
        r = try run(["scan", "--catalog", catalog, "--format", "json", recording])
        try r.out.write(to: json, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = CLISupport.root.appendingPathComponent("scripts/check-report-browser.sh")
        p.arguments = [html.path, json.path, Self.work.appendingPathComponent("scan.png").path]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        if p.terminationStatus == 77 { throw XCTSkip("no Chromium: \(text)") }
        XCTAssertEqual(p.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("blocks 4, plot lines 4"), text)
    }

    func testBadLibraryFilesAreOneLineErrors() throws {
        let catalog = try sampleCatalog()
        var r = try run(["library", "list", "--library", Self.work.appendingPathComponent("missing.db").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.hasSuffix("missing.db: cannot read library: no such file\n"), r.err)
        // A file SQLite cannot create (/proc takes no new files, even for root): SQLite's reason, no Swift enum case.
        r = try run(["scan", "--catalog", catalog, "--library", "/proc/soundmark-library.db", Self.samples.appendingPathComponent("clip.mp3").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.err, "soundmark: /proc/soundmark-library.db: cannot read library: unable to open database file\n")
        // A catalog is not a library, and is left as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: catalog))
        r = try run(["scan", "--catalog", catalog, "--library", catalog, Self.samples.appendingPathComponent("clip.mp3").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.err, "soundmark: \(catalog): cannot read library: not a soundmark library (another SQLite database, a catalog?)\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: catalog)), before)
        r = try run(["scan", "--catalog", catalog, "--start-time", "yesterday", Self.samples.appendingPathComponent("clip.mp3").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("--start-time needs --library"), r.err)
        r = try run(["scan", "--catalog", catalog, "--library", newLibrary(), "--start-time", "yesterday", Self.samples.appendingPathComponent("clip.mp3").path])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("--start-time takes an ISO-8601 time"), r.err)
    }
}
