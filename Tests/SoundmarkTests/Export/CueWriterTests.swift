import Foundation
import XCTest
@testable import Soundmark

/// Exact output of every `CueWriter` format.
final class CueWriterTests: XCTestCase {
    func testSRT() {
        let cues = [
            Cue(start: 1, end: 2.5, text: "Hello\nworld"),
            Cue(start: 1.9996, end: 3723.0044, text: "Rounded\r\n\r\nblank line dropped"),
            Cue(start: 442_800, end: 442_801.25, text: "Hours above 99"),
            Cue(start: -3, end: -1, text: "clamped"),
            Cue(start: 10, end: 9, text: "end before start"),
        ]
        XCTAssertEqual(CueWriter.srt(cues), """
        1
        00:00:01,000 --> 00:00:02,500
        Hello
        world

        2
        00:00:02,000 --> 01:02:03,004
        Rounded
        blank line dropped

        3
        123:00:00,000 --> 123:00:01,250
        Hours above 99

        4
        00:00:00,000 --> 00:00:00,000
        clamped

        5
        00:00:10,000 --> 00:00:10,000
        end before start


        """)
        XCTAssertEqual(CueWriter.srt([]), "")
    }

    func testWebVTT() {
        let cues = [
            Cue(start: 0.5, end: 61.25, text: "<i>Hi</i>\nsecond line"),
            Cue(start: 3723.004, end: 442_800, text: "Long"),
        ]
        XCTAssertEqual(CueWriter.webVTT(cues), """
        WEBVTT

        00:00:00.500 --> 00:01:01.250
        <i>Hi</i>
        second line

        01:02:03.004 --> 123:00:00.000
        Long


        """)
        XCTAssertEqual(CueWriter.webVTT([]), "WEBVTT\n\n")
    }

    func testWebVTTEscaping() {
        let cases: [(String, String)] = [
            ("a --> b", "a --&gt; b"),
            ("Tom & Jerry", "Tom &amp; Jerry"),
            ("Tom &amp; Jerry &lt;3 &#233; &#x1F600; &nbsp;", "Tom &amp; Jerry &lt;3 &#233; &#x1F600; &nbsp;"),
            ("AT&T; & &#; &#xZ;", "AT&T; &amp; &amp;#; &amp;#xZ;"),
            ("x < y > z", "x &lt; y &gt; z"),
            ("<i>it</i> <b>bo</b> <u>un</u>", "<i>it</i> <b>bo</b> <u>un</u>"),
            ("<c.yellow.bg_blue>col</c> <c>plain</c>", "<c.yellow.bg_blue>col</c> <c>plain</c>"),
            ("<v Roger Bingham>Hi</v> <v.loud Esme>Yo", "<v Roger Bingham>Hi</v> <v.loud Esme>Yo"),
            ("<lang en-GB>colour</lang> <ruby>漢<rt>kan</rt></ruby>", "<lang en-GB>colour</lang> <ruby>漢<rt>kan</rt></ruby>"),
            ("<00:00:01.500>ka<01:00.250>ra", "<00:00:01.500>ka<01:00.250>ra"),
            ("<font color=\"#ff0000\">red</font>", "<c.red>red</c>"),
            ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
            ("<i class>x</i>", "&lt;i class&gt;x</i>"),
            ("<v a-->", "&lt;v a--&gt;"),
            ("<b", "&lt;b"),
            ("<1:2>", "&lt;1:2&gt;"),
            ("<i.>", "&lt;i.&gt;"),
            ("emoji 👩‍👩‍👧 naïve", "emoji 👩‍👩‍👧 naïve"),
        ]
        for (input, expected) in cases {
            XCTAssertEqual(CueMarkup.webVTT(input, loss: nil).lines.joined(separator: "\n"), expected, input)
            XCTAssertFalse(expected.contains("-->"))
        }
        let vtt = CueWriter.webVTT([Cue(start: 0, end: 1, text: "a --> b\n\n\nc & d\r\ne")])
        XCTAssertEqual(vtt, "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\na --&gt; b\nc &amp; d\ne\n\n")
    }

    func testAudacityLabels() {
        let cues = [
            Cue(start: 0, end: 1.5, text: "First"),
            Cue(start: 3723.0000004, end: 3724.1234567, text: "Two\nlines\twith tab"),
            Cue(start: 5, end: 5, text: ""),
        ]
        XCTAssertEqual(CueWriter.audacityLabels(cues),
                       "0.000000\t1.500000\tFirst\n3723.000000\t3724.123457\tTwo lines with tab\n5.000000\t5.000000\t\n")
    }

    func testCueSheet() {
        let tracks = [
            CueSheetTrack(start: 62.5, title: "Second \"quoted\"", performer: nil),
            CueSheetTrack(start: 0, title: "First é", performer: "Ana"),
            CueSheetTrack(start: 6000.5, title: "Third\nline", performer: "Bo"),
        ]
        XCTAssertEqual(CueWriter.cueSheet(file: "live set.wav", tracks: tracks),
            "FILE \"live set.wav\" WAVE\r\n" +
            "  TRACK 01 AUDIO\r\n    TITLE \"First é\"\r\n    PERFORMER \"Ana\"\r\n    INDEX 01 00:00:00\r\n" +
            "  TRACK 02 AUDIO\r\n    TITLE \"Second 'quoted'\"\r\n    INDEX 01 01:02:38\r\n" +
            "  TRACK 03 AUDIO\r\n    TITLE \"Third line\"\r\n    PERFORMER \"Bo\"\r\n    INDEX 01 100:00:38\r\n")
        XCTAssertTrue(CueWriter.cueSheet(file: "a.MP3", tracks: []).hasPrefix("FILE \"a.MP3\" MP3\r\n"))
        XCTAssertTrue(CueWriter.cueSheet(file: "a.aiff", tracks: []).hasPrefix("FILE \"a.aiff\" AIFF\r\n"))
        XCTAssertTrue(CueWriter.cueSheet(file: "a.flac", tracks: []).hasPrefix("FILE \"a.flac\" WAVE\r\n"))
        // 1/75 s frames: 0.0066 s rounds to frame 0, 0.007 s to frame 1, 59.999 s to 01:00:00.
        let frames = CueWriter.cueSheet(file: "f.wav", tracks: [
            CueSheetTrack(start: 0.0066, title: "a"), CueSheetTrack(start: 0.007, title: "b"), CueSheetTrack(start: 59.999, title: "c"),
        ])
        XCTAssertTrue(frames.contains("INDEX 01 00:00:00\r\n"))
        XCTAssertTrue(frames.contains("INDEX 01 00:00:01\r\n"))
        XCTAssertTrue(frames.contains("INDEX 01 01:00:00\r\n"))
    }

    func testCSV() {
        let out = CueWriter.csv(header: ["start", "end", "text"], rows: [
            ["1.000", "2.000", "plain"],
            ["3", "4", "comma, here"],
            ["5", "6", "say \"hi\""],
            ["7", "8", "two\nlines"],
            ["9", "10", "cr\rhere"],
            ["", " spaced ", "naïve 😀"],
        ])
        XCTAssertEqual(out,
            "start,end,text\r\n1.000,2.000,plain\r\n3,4,\"comma, here\"\r\n5,6,\"say \"\"hi\"\"\"\r\n" +
            "7,8,\"two\nlines\"\r\n9,10,\"cr\rhere\"\r\n, spaced ,naïve 😀\r\n")
        XCTAssertEqual(CueWriter.csv(header: [], rows: [["a"]]), "a\r\n")
        XCTAssertEqual(CueWriter.csv(header: ["only"], rows: []), "only\r\n")
    }
}
