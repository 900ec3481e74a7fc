import Foundation
import XCTest

/// Issue 40 item 12 through the command line: `catalog annotate` a reference with styled
/// subtitles, then `scan --format vtt|ass` of samples/recording.mp3 (which plays wesnoth-knolls
/// from 1.5 s into it) re-times them and keeps, translates or drops their styling with a warning.
final class SubtitleStylingCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private var work: URL!

    override func setUpWithError() throws {
        work = try CLISupport.temporaryDirectory(self, prefix: "subtitle-styling")
    }

    private func soundmark(_ arguments: String...) throws -> CLISupport.Run {
        try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
    }

    /// The catalog of wesnoth-knolls titled `Track <1>`, annotated from `subtitles` (a file `name`).
    private func catalog(_ name: String, _ subtitles: String) throws -> String {
        let db = work.appendingPathComponent("\(name).db").path, file = work.appendingPathComponent(name).path
        try subtitles.write(toFile: file, atomically: true, encoding: .utf8)
        let add = try soundmark("catalog", "add", "--catalog", db, "--title", "Track <1>",
                                Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path)
        XCTAssertEqual(add.status, 0, add.stderr)
        let annotate = try soundmark("catalog", "annotate", "--catalog", db, "wesnoth-knolls", file)
        XCTAssertEqual(annotate.status, 0, annotate.stderr)
        return db
    }

    private var recording: String { Self.samples.appendingPathComponent("recording.mp3").path }
    private let assEvents = "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"

    func testSubRipStylingIntoWebVTTAndASS() throws {
        let db = try catalog("styled.srt", """
            1
            00:00:02,000 --> 00:00:05,000
            {\\an8}Opening — <font color="#ffff00">the knolls</font> at dawn

            2
            00:00:06,000 --> 00:00:09,500
            <i>Strings enter</i> {\\pos(10,20)}here

            """)
        let vtt = try soundmark("scan", "--catalog", db, "--format", "vtt", recording)
        XCTAssertEqual(vtt.status, 0, vtt.stderr)
        XCTAssertEqual(vtt.stdout, """
            WEBVTT

            00:00:00.501 --> 00:00:03.500 line:0
            Opening — <c.yellow>the knolls</c> at dawn

            00:00:04.500 --> 00:00:08.000
            <i>Strings enter</i> here


            """)
        XCTAssertEqual(vtt.stderr, "soundmark: warning: \(recording): ASS override \\pos has no WebVTT form: dropped from 1 cue(s)\n")

        let ass = try soundmark("scan", "--catalog", db, "--format", "ass", recording)
        XCTAssertEqual(ass.status, 0, ass.stderr)
        XCTAssertTrue(ass.stdout.hasSuffix(assEvents
            + "Dialogue: 0,0:00:00.50,0:00:03.50,Default,,0,0,0,,{\\an8}Opening — {\\c&H00FFFF&}the knolls{\\c} at dawn\n"
            + "Dialogue: 0,0:00:04.50,0:00:08.00,Default,,0,0,0,,{\\i1}Strings enter{\\i0} {\\pos(10,20)}here\n"), ass.stdout)
        XCTAssertEqual(ass.stderr, "")

        // The title "Track <1>" is text, not markup.
        let segments = try soundmark("scan", "--catalog", db, "--cues", "segments", "--format", "ass", recording)
        XCTAssertTrue(segments.stdout.hasSuffix(",Default,,0,0,0,,Track <1> – Timothy Pinkham\n"), segments.stdout)
        let labels = try soundmark("scan", "--catalog", db, "--cues", "segments", "--format", "audacity", recording)
        XCTAssertEqual(labels.stdout, "0.000000\t36.360000\tTrack <1> – Timothy Pinkham\n")
    }

    /// An ASS drawing's commands came out as text in WebVTT: they are dropped, with one warning.
    func testASSDrawingIsDroppedFromWebVTT() throws {
        let db = try catalog("drawn.ass", """
            [Script Info]
            ScriptType: v4.00+

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:02.00,0:00:05.00,Default,,0,0,0,,Box {\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}drawn
            Dialogue: 0,0:00:06.00,0:00:09.50,Default,,0,0,0,,{\\p1}m 0 0 l 10 0 10 10{\\p0}

            """)
        let vtt = try soundmark("scan", "--catalog", db, "--format", "vtt", recording)
        XCTAssertEqual(vtt.status, 0, vtt.stderr)
        XCTAssertEqual(vtt.stdout, """
            WEBVTT

            00:00:00.501 --> 00:00:03.500
            Box drawn

            00:00:04.500 --> 00:00:08.000


            """)
        XCTAssertEqual(vtt.stderr, "soundmark: warning: \(recording): ASS drawing {\\p1}…{\\p0} has no WebVTT form: dropped from 2 cue(s)\n")
    }

    /// A reference titled `<b>Live</b>` came out bold: a title is plain text in every format, in
    /// a segment's cue (`--cues segments`) and in the cue of a segment without annotations.
    func testTitleIsTextNotMarkup() throws {
        let db = work.appendingPathComponent("live.db").path
        let add = try soundmark("catalog", "add", "--catalog", db, "--title", "<b>Live</b> {\\i1}", "--artist", "R&amp;B",
                                Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path)
        XCTAssertEqual(add.status, 0, add.stderr)
        for cues in ["segments", "annotations"] {
            let vtt = try soundmark("scan", "--catalog", db, "--cues", cues, "--format", "vtt", recording)
            XCTAssertEqual(vtt.status, 0, vtt.stderr)
            XCTAssertEqual(vtt.stdout, "WEBVTT\n\n00:00:00.000 --> 00:00:36.360\n&lt;b&gt;Live&lt;/b&gt; {\\i1} – R&amp;amp;B\n\n", cues)
            let srt = try soundmark("scan", "--catalog", db, "--cues", cues, "--format", "srt", recording)
            XCTAssertEqual(srt.stdout, "1\n00:00:00,000 --> 00:00:36,360\n<\u{2060}b>Live<\u{2060}/b> {\u{2060}\\i1} – R&amp;B\n\n", cues)
            let ass = try soundmark("scan", "--catalog", db, "--cues", cues, "--format", "ass", recording)
            XCTAssertTrue(ass.stdout.hasSuffix(",Default,,0,0,0,,<b>Live</b> ｛\\i1｝ – R&amp;B\n"), ass.stdout)
            let note = cues == "segments" ? ""
                : "soundmark: \(recording): 1 segment(s) without annotations are one cue each: wesnoth-knolls at 00:00:00\n"
            XCTAssertEqual(vtt.stderr + srt.stderr + ass.stderr, String(repeating: note, count: 3), cues)
        }
    }

    func testWebVTTStylingIntoWebVTTAndASS() throws {
        let db = try catalog("styled.vtt", """
            WEBVTT

            00:00:02.000 --> 00:00:05.000 line:0 position:20% align:start
            <v Bob>Opening</v> — <c.yellow>the knolls</c> at dawn

            """)
        let vtt = try soundmark("scan", "--catalog", db, "--format", "vtt", recording)
        XCTAssertEqual(vtt.stdout, """
            WEBVTT

            00:00:00.501 --> 00:00:03.500 line:0 position:20% align:start
            <v Bob>Opening</v> — <c.yellow>the knolls</c> at dawn


            """)
        XCTAssertEqual(vtt.stderr, "")
        let ass = try soundmark("scan", "--catalog", db, "--format", "ass", recording)
        XCTAssertTrue(ass.stdout.hasSuffix(assEvents
            + "Dialogue: 0,0:00:00.50,0:00:03.50,Default,Bob,0,0,0,,{\\an7}Opening — {\\c&H00FFFF&}the knolls{\\c} at dawn\n"), ass.stdout)
        XCTAssertEqual(ass.stderr, "soundmark: warning: \(recording): WebVTT cue setting position has no ASS form: dropped from 1 cue(s)\n")
    }
}
