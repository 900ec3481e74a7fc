import Foundation
import XCTest
@testable import Soundmark

/// Checks that real consumers accept what `CueWriter` produces: FFmpeg (SRT, WebVTT) and
/// cuetools (`cueprint`, `cuebreakpoints`) for cue sheets. Nothing is installed here; a test
/// is skipped only when its tool is not on `PATH` (the Makefile installs `ffmpeg` and `cuetools`).
final class CueConsumerTests: XCTestCase {
    private var workDir: URL!

    override func setUpWithError() throws {
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-cues-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDir)
    }

    private let cues = [
        Cue(start: 0.25, end: 1.5, text: "<i>First</i> cue"),
        Cue(start: 2, end: 4.125, text: "Two\nlines: naïve 😀"),
        Cue(start: 5, end: 6, text: "a --> b & c < d"),
        Cue(start: 61.001, end: 62.999, text: "42"),
        Cue(start: 3723.004, end: 3725.5, text: "Last one"),
    ]

    // MARK: FFmpeg

    func testFFmpegReadsOurSRT() throws {
        let ffmpeg = try ExportTool.require("ffmpeg")
        let url = workDir.appendingPathComponent("out.srt")
        try CueWriter.srt(cues).write(to: url, atomically: true, encoding: .utf8)
        let check = try ExportTool.run(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-i", url.path, "-map", "0", "-c:s", "ass", "-f", "null", "-"])
        XCTAssertEqual(check.status, 0, check.stderr)
        try assertFFmpegSRTRoundTrip(ffmpeg, url)
    }

    func testFFmpegReadsOurWebVTT() throws {
        let ffmpeg = try ExportTool.require("ffmpeg")
        let url = workDir.appendingPathComponent("out.vtt")
        try CueWriter.webVTT(cues).write(to: url, atomically: true, encoding: .utf8)
        let check = try ExportTool.run(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-i", url.path, "-map", "0", "-c:s", "ass", "-f", "null", "-"])
        XCTAssertEqual(check.status, 0, check.stderr)
        try assertFFmpegSRTRoundTrip(ffmpeg, url)
    }

    /// Converts `input` to SRT with FFmpeg and reads the result back with our reader.
    private func assertFFmpegSRTRoundTrip(_ ffmpeg: String, _ input: URL,
                                          file: StaticString = #filePath, line: UInt = #line) throws {
        let result = try ExportTool.run(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-i", input.path,
                                                 "-c:s", "srt", "-f", "srt", "-"])
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        let back = try AnnotationReader.parse(Data(result.stdout.utf8), name: "ffmpeg-output.srt", format: .srt)
        XCTAssertEqual(back.warnings, [], file: file, line: line)
        XCTAssertEqual(back.annotations.count, cues.count, result.stdout, file: file, line: line)
        guard let first = back.annotations.first, let last = back.annotations.last else { return }
        XCTAssertEqual(first.start, cues[0].start, accuracy: 0.0005, file: file, line: line)
        XCTAssertEqual(first.end, cues[0].end, accuracy: 0.0005, file: file, line: line)
        XCTAssertEqual(last.start, cues[cues.count - 1].start, accuracy: 0.0005, file: file, line: line)
        XCTAssertEqual(last.end, cues[cues.count - 1].end, accuracy: 0.0005, file: file, line: line)
        for (got, want) in zip(back.annotations, cues) {
            XCTAssertEqual(got.start, want.start, accuracy: 0.0005, file: file, line: line)
            XCTAssertEqual(got.end, want.end, accuracy: 0.0005, file: file, line: line)
        }
        // FFmpeg decodes the WebVTT escapes, so both inputs give back the original text.
        XCTAssertEqual(back.annotations.map(\.text), cues.map(\.text), file: file, line: line)
    }

    // MARK: cuetools

    func testCuetoolsReadOurCueSheet() throws {
        let cueprint = try ExportTool.require("cueprint")
        let cuebreakpoints = try ExportTool.require("cuebreakpoints")
        let tracks = [
            CueSheetTrack(start: 0, title: "Opening é", performer: "Ana"),
            CueSheetTrack(start: 62.5, title: "Say \"hi\"", performer: nil),
            CueSheetTrack(start: 754.04, title: "Third", performer: "Bo & Co"),
            CueSheetTrack(start: 6000.5, title: "After 100 minutes", performer: nil),
        ]
        let url = workDir.appendingPathComponent("out.cue")
        try CueWriter.cueSheet(file: "live set.wav", tracks: tracks).write(to: url, atomically: true, encoding: .utf8)

        let printed = try ExportTool.run(cueprint, ["-d", "%N\n", "-t", "%n|%t|%p\n", url.path])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        XCTAssertEqual(printed.stdout, """
        4
        1|Opening é|Ana
        2|Say 'hi'|
        3|Third|Bo & Co
        4|After 100 minutes|

        """)

        // cuebreakpoints prints the start of every track after the first as m:ss.ff (frames).
        let breaks = try ExportTool.run(cuebreakpoints, [url.path])
        XCTAssertEqual(breaks.status, 0, breaks.stderr)
        XCTAssertEqual(breaks.stdout, "1:02.38\n12:34.03\n100:00.38\n")
        let expected = tracks.dropFirst().map { track -> String in
            let f = Int((track.start * 75).rounded())
            return "\(f / 4500):\(String(format: "%02d", f / 75 % 60)).\(String(format: "%02d", f % 75))"
        }
        XCTAssertEqual(breaks.stdout.split(separator: "\n").map(String.init), expected)
    }
}

extension CueConsumerTests {
    /// Issue 8.8: segments with unidentified stretches before and between them. With default
    /// options, `cuebreakpoints` must break at exactly the segment starts (not attach the 7.5 s
    /// lead-in to the first segment), `shnsplit` must cut the lead-in apart, and
    /// `cuebreakpoints --split-gaps` finds the stretch between the segments (their pregap).
    func testSplitToolsBreakAtEverySegmentStartAndKeepTheLeadInApart() throws {
        let cuebreakpoints = try ExportTool.require("cuebreakpoints")
        let segments = [CueSheetTrack(start: 7.5, title: "One", performer: "A", end: 15),
                        CueSheetTrack(start: 18, title: "Two", performer: nil, end: 27)]
        let sheet = CueWriter.cueSheet(file: "mix.wav", tracks: segments)
        let url = workDir.appendingPathComponent("mix.cue")
        try sheet.write(to: url, atomically: true, encoding: .utf8)
        XCTAssertEqual(sheet, [
            #"FILE "mix.wav" WAVE"#,
            "  TRACK 01 AUDIO", #"    TITLE "(unidentified)""#, "    INDEX 01 00:00:00",
            "  TRACK 02 AUDIO", #"    TITLE "One""#, #"    PERFORMER "A""#, "    INDEX 01 00:07:38",
            "  TRACK 03 AUDIO", #"    TITLE "Two""#, "    INDEX 00 00:15:00", "    INDEX 01 00:18:00", "",
        ].joined(separator: "\r\n"))
        let breaks = try ExportTool.run(cuebreakpoints, [url.path])
        XCTAssertEqual(breaks.status, 0, breaks.stderr)
        // Exactly the segment starts.
        let points = breaks.stdout.split(separator: "\n").map { p -> Double in
            let parts = p.split(whereSeparator: { $0 == ":" || $0 == "." }).map { Double($0)! }
            return parts[0] * 60 + parts[1] + parts[2] / 75
        }
        XCTAssertEqual(points.count, segments.count, breaks.stdout)
        for (point, s) in zip(points, segments) { XCTAssertEqual(point, s.start, accuracy: 0.51 / 75, "a CD frame apart at most") }
        let gaps = try ExportTool.run(cuebreakpoints, ["--split-gaps", url.path])
        XCTAssertEqual(gaps.stdout, "0:07.38\n0:15.00\n0:18.00\n")

        // Tracks without ends (one per cue) from 0: unchanged, nothing inserted.
        let plain = CueWriter.cueSheet(file: "a.wav", tracks: [CueSheetTrack(start: 0, title: "x"), CueSheetTrack(start: 5, title: "y")])
        XCTAssertFalse(plain.contains("(unidentified)") || plain.contains("INDEX 00"), plain)
        // A lead-in shorter than a second stays with the first track.
        XCTAssertFalse(CueWriter.cueSheet(file: "a.wav", tracks: [CueSheetTrack(start: 0.5, title: "x")]).contains("(unidentified)"))

        // shnsplit (shntool) with its defaults: the lead-in (563 CD frames of 588 samples), then
        // each segment from its start (the pregap stays with the previous piece).
        let shnsplit = try ExportTool.require("shnsplit")
        let sox = try ExportTool.require("sox")
        let wav = workDir.appendingPathComponent("mix.wav")
        let made = try ExportTool.run(sox, ["-n", "-r", "44100", "-c", "2", "-b", "16", wav.path, "synth", "30", "sine", "440"])
        XCTAssertEqual(made.status, 0, made.stderr)
        let split = try ExportTool.run(shnsplit, ["-q", "-d", workDir.path, "-f", url.path, wav.path])
        XCTAssertEqual(split.status, 0, split.stderr)
        var frames: [Int] = []
        for n in 1...3 {
            let piece = workDir.appendingPathComponent(String(format: "split-track%02d.wav", n))
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: piece.path)[.size] as? Int, piece.path)
            frames.append((size - 44) / 4 / 588)
        }
        XCTAssertEqual(frames, [563, 1350 - 563, 2250 - 1350])
    }
}

/// Finds and runs external programs for the consumer tests.
private enum ExportTool {
    struct Output { var status: Int32; var stdout: String; var stderr: String }

    /// The absolute path of `name` on `PATH`, or `XCTSkip` when it is not installed.
    static func require(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw XCTSkip("\(name) is not installed")
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read stderr concurrently so neither pipe can fill up and block the child.
        let errBox = DataBox()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errBox.data = errPipe.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let out = outPipe.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: out, as: UTF8.self),
                      stderr: String(decoding: errBox.data, as: UTF8.self))
    }

    private final class DataBox: @unchecked Sendable { var data = Data() }
}
