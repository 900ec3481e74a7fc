import Foundation
import XCTest
import Soundmark

/// End-to-end tests of `soundmark timeline merge` on the built binary.
final class TimelineMergeTests: XCTestCase {
    /// The binary: `$SOUNDMARK_BIN`, else the one built next to this test bundle, else
    /// `<package>/.build/debug/soundmark`, else `/tmp/mon-build/debug/soundmark`.
    private static let binary: String = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["SOUNDMARK_BIN"], !env.isEmpty { return env }
        let bundleDir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let candidates = [bundleDir + "/soundmark", root + "/.build/debug/soundmark", "/tmp/mon-build/debug/soundmark"]
        return candidates.first { fm.isExecutableFile(atPath: $0) } ?? candidates[1]
    }()

    private var directory: URL!

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: Self.binary), "no soundmark binary at \(Self.binary)")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs the binary with `arguments` (and `input` on stdin); returns exit status, stdout, stderr.
    private func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments
        let out = Pipe(), err = Pipe(), inPipe = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input == nil ? FileHandle.nullDevice : inPipe
        try process.run()
        if let input {
            inPipe.fileHandleForWriting.write(Data(input.utf8))
            try inPipe.fileHandleForWriting.close()
        }
        /// stderr, read on another thread so neither pipe can fill up and block the child.
        final class Box: @unchecked Sendable { var data = Data() }
        let errBox = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errBox.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errBox.data, as: UTF8.self))
    }

    /// Writes `lines` as a JSONL file in the temporary directory and returns its path.
    private func write(_ name: String, _ lines: [String]) throws -> String {
        let url = directory.appendingPathComponent(name)
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// The `rows` of a JSON export.
    private func rows(_ json: String) throws -> [[String: Any]] {
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try XCTUnwrap(object["rows"] as? [[String: Any]])
    }

    /// A(activity-1) → A′(activity-1, marker) → A(activity-1, marker miss): one row, marker kept.
    private let refineSequence = [
        #"{"activity_id":"activity-1","material_id":"spot-a","campaign":"Spring","time":10,"position":0.5}"#,
        #"{"activity_id":"activity-1","material_id":"spot-a","trait":{"marker":true},"time":12}"#,
        #"{"activity_id":"activity-1","material_id":"spot-a","trait":{"marker":false},"time":14}"#,
    ]

    /// A(activity-1) → B(activity-2) → late A′(activity-1, marker): two rows, A unmarked.
    private let lateSequence = [
        #"{"activity_id":"activity-1","material_id":"spot-a","campaign":"Spring","time":10}"#,
        #"{"activity_id":"activity-2","material_id":"spot-b","campaign":"Summer","time":20}"#,
        #"{"activity_id":"activity-1","material_id":"spot-a","trait":{"marker":true},"time":21}"#,
    ]

    func testMarkerRefinementIsOneMarkedRow() throws {
        let result = try run(["timeline", "merge", try write("refine.jsonl", refineSequence)])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.err, "")
        let rows = try rows(result.out)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows[0]["activity_id"] as? String, "activity-1")
        XCTAssertEqual(rows[0]["material_id"] as? String, "spot-a")
        XCTAssertEqual(rows[0]["marker"] as? Bool, true, "a later marker miss never clears the marker")
        XCTAssertEqual(rows[0]["closed"] as? Bool, false)
        let firstSeen = try XCTUnwrap(rows[0]["first_seen"] as? [String: Any])
        XCTAssertEqual(firstSeen["time"] as? Double, 10)
        XCTAssertEqual(firstSeen["position"] as? Double, 0.5)
        XCTAssertEqual((rows[0]["fields"] as? [String: Any])?["campaign"] as? String, "Spring")
    }

    func testLateRefinementIsIgnoredAndReportedWithVerbose() throws {
        let path = try write("late.jsonl", lateSequence)
        let result = try run(["timeline", "merge", path])
        XCTAssertEqual(result.status, 0, result.err)
        // Without --verbose an ignored payload is counted on one line (issue 40: nothing is dropped
        // without a line on stderr), and the JSON lists that line.
        let counted = "\(path): 1 payload(s) ignored (late for an earlier activity, or unusable; --verbose lists them)"
        XCTAssertEqual(result.err, "soundmark: warning: \(counted)\n")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
        XCTAssertEqual(object["warnings"] as? [String], [counted])
        let rows = try rows(result.out)
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows.map { $0["activity_id"] as? String }, ["activity-1", "activity-2"])
        XCTAssertEqual(rows[0]["marker"] as? Bool, false, "the late marker of activity-1 is ignored")
        XCTAssertEqual(rows[0]["closed"] as? Bool, true)
        XCTAssertEqual(rows[1]["marker"] as? Bool, false)
        XCTAssertEqual(rows[1]["closed"] as? Bool, false, "activity-2 is current")

        let verbose = try run(["timeline", "merge", "--verbose", path])
        XCTAssertEqual(try self.rows(verbose.out).count, rows.count)
        let ignored = verbose.err.split(separator: "\n").filter { $0.contains("ignored") }
        XCTAssertEqual(ignored.count, 1, verbose.err)
        XCTAssertTrue(ignored[0].hasPrefix("soundmark: warning: line 3: ignored: late refinement"), String(ignored[0]))
    }

    func testAFileWithNoJSONLineIsAnError() throws {
        let path = try write("notes.txt", ["this is", "not JSON Lines"])
        let result = try run(["timeline", "merge", path])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.err, "soundmark: \(path): no JSON object on any line (2 unreadable line(s)); is it JSON Lines?\n")
    }

    func testMalformedLinesAreWarnedAndSkipped() throws {
        let path = try write("bad.jsonl", [refineSequence[0], "{not json", "[1,2]", #"{"activity_id":5}"#, refineSequence[1]])
        let result = try run(["timeline", "merge", path])
        XCTAssertEqual(result.status, 0, result.err)
        let warnings = result.err.split(separator: "\n")
        XCTAssertEqual(warnings.count, 3, result.err)
        XCTAssertTrue(warnings.allSatisfy { $0.hasPrefix("soundmark: warning: \(path): line ") }, result.err)
        XCTAssertTrue(warnings[0].hasPrefix("soundmark: warning: \(path): line 2:"), result.err)
        let rows = try rows(result.out)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows[0]["marker"] as? Bool, true)
    }

    func testStdinAndStreamEventsOfTheMonitor() throws {
        let lines = [
            #"{"event":"segment.started","activity_id":"a1","material_id":"knolls","title":"Knolls","time":0,"position":1.5}"#,
            #"{"event":"stream.gap","time":8,"duration":0.5}"#,
            #"{"event":"stream.reconnected","time":8.5,"attempt":1}"#,
            #"{"event":"segment.ended","activity_id":"a1","material_id":"knolls","title":"Knolls","time":30,"position":31.5}"#,
            #"{"event":"stream.ended","time":40}"#,
        ]
        let result = try run(["timeline", "merge", "--verbose", "-"], input: lines.joined(separator: "\n"))
        XCTAssertEqual(result.status, 0, result.err)
        let rows = try rows(result.out)
        XCTAssertEqual(rows.count, 1)
        let fields = try XCTUnwrap(rows[0]["fields"] as? [String: Any])
        XCTAssertNil(fields["duration"], "a gap's duration must not become the row's duration")
        XCTAssertEqual(fields["event"] as? String, "segment.ended")
        XCTAssertEqual(result.err.split(separator: "\n").filter { $0.contains("monitor stream event") }.count, 3, result.err)
    }

    /// Issue 8.9: two 15 s tracks back to back, as the monitor writes them: the first track's
    /// `segment.ended` comes after the second one's `segment.started`. The first row ends at
    /// 15.0 (not the 9.4 s known when it started), the second is closed by its own end, and
    /// the subtitles end each cue when its activity ended.
    func testLateSegmentEndedEndsItsRow() throws {
        let lines = [
            #"{"event":"segment.started","activity_id":"a1","material_id":"one","title":"One","time":0,"start":0,"end":9.4,"position":0}"#,
            #"{"event":"segment.started","activity_id":"a2","material_id":"two","title":"Two","time":15,"start":15,"end":17.5,"position":0}"#,
            #"{"event":"segment.ended","activity_id":"a1","material_id":"one","title":"One","time":15,"start":0,"end":15,"position":15}"#,
            #"{"event":"segment.ended","activity_id":"a2","material_id":"two","title":"Two","time":30,"start":15,"end":30,"position":15}"#,
            #"{"event":"stream.ended","time":30}"#,
        ]
        let path = try write("back-to-back.jsonl", lines)
        let result = try run(["timeline", "merge", path])
        XCTAssertEqual(result.status, 0, result.err)
        let rows = try rows(result.out)
        XCTAssertEqual(rows.count, 2)
        XCTAssertEqual(rows.map { $0["end"] as? Double }, [15, 30])
        XCTAssertEqual(rows.map { ($0["fields"] as? [String: Any])?["end"] as? Double }, [15, 30])
        XCTAssertEqual(rows.map { $0["closed"] as? Bool }, [true, true])
        let csv = try run(["timeline", "merge", "--format", "csv", path])
        XCTAssertEqual(csv.out.components(separatedBy: "\r\n")[1].split(separator: ",", omittingEmptySubsequences: false)[6], "15")
        let srt = try run(["timeline", "merge", "--format", "srt", path])
        XCTAssertEqual(srt.out, "1\n00:00:00,000 --> 00:00:15,000\nOne – one\n\n2\n00:00:15,000 --> 00:00:30,000\nTwo – two\n\n")
        let vtt = try run(["timeline", "merge", "--format", "vtt", path])
        XCTAssertTrue(vtt.out.contains("00:00:15.000 --> 00:00:30.000\nTwo – two"), vtt.out)
    }

    func testCSVHasHeaderAndCRLF() throws {
        let result = try run(["timeline", "merge", "--format", "csv", try write("late.jsonl", lateSequence)])
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.hasSuffix("\r\n"))
        let records = result.out.components(separatedBy: "\r\n").dropLast()
        XCTAssertEqual(records.count, 3)
        XCTAssertFalse(result.out.replacingOccurrences(of: "\r\n", with: "").contains("\n"), "every line ends with CRLF")
        XCTAssertEqual(records.first, "activity_id,material_id,marker,first_seen_time,first_seen_position,first_seen_timestamp,end,closed,fields.campaign")
        XCTAssertEqual(records[1], "activity-1,spot-a,false,10,,,20,true,Spring", "closed by activity-2: ends where it began")
        XCTAssertEqual(records[2], "activity-2,spot-b,false,20,,,,false,Summer")
    }

    func testSubRipAndWebVTTParse() throws {
        let path = try write("late.jsonl", lateSequence)
        for (format, expectedFormat) in [("srt", AnnotationFormat.srt), ("vtt", AnnotationFormat.webVTT)] {
            let result = try run(["timeline", "merge", "--format", format, path])
            XCTAssertEqual(result.status, 0, result.err)
            if format == "vtt" { XCTAssertTrue(result.out.hasPrefix("WEBVTT\n\n")) }
            let parsed = try AnnotationReader.parse(Data(result.out.utf8), name: "out.\(format)", format: expectedFormat)
            XCTAssertEqual(parsed.warnings, [], format)
            XCTAssertEqual(parsed.annotations.count, 2, format)
            XCTAssertEqual(parsed.annotations.map(\.start), [10, 20], format)
            XCTAssertEqual(parsed.annotations.map(\.end), [20, 25], format)
            XCTAssertEqual(parsed.annotations.map(\.text), ["Spring – spot-a", "Summer – spot-b"], format)
        }
    }

    func testMissingFileAndBadFormat() throws {
        let missing = try run(["timeline", "merge", directory.appendingPathComponent("nope.jsonl").path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.out, "")
        XCTAssertEqual(missing.err.split(separator: "\n").count, 1, missing.err)
        XCTAssertTrue(missing.err.contains("no such file"), missing.err)

        let badFormat = try run(["timeline", "merge", "--format", "xml", try write("a.jsonl", refineSequence)])
        XCTAssertEqual(badFormat.status, 2)
        XCTAssertEqual(badFormat.err.split(separator: "\n").count, 1, badFormat.err)
    }
}
