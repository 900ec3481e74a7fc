import XCTest
@testable import Soundmark

/// Issue 40 item 12: re-timed subtitles keep their styling within a format and translate it, or
/// drop it with a warning, across formats (``CueMarkup``).
final class CueStylingTests: XCTestCase {
    private func cue(_ text: String) -> [Cue] { [Cue(start: 1, end: 2.5, text: text)] }
    private let assHeader = CueWriter.ass([]).components(separatedBy: "Format: Layer").first! + "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"

    // MARK: SubRip-flavoured text ({\an8}, <font>)

    func testSubRipStylingInEachFormat() {
        let text = "{\\an8}Opening — <font color=\"#ffff00\">the knolls</font> at dawn\n<i>Strings</i> {\\pos(10,20)}here"
        let srt = StylingLoss(format: "SubRip")
        XCTAssertEqual(CueWriter.srt(cue(text), loss: srt), "1\n00:00:01,000 --> 00:00:02,500\n\(text)\n\n")
        XCTAssertEqual(srt.messages, [])

        let vtt = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueWriter.webVTT(cue(text), loss: vtt), """
            WEBVTT

            00:00:01.000 --> 00:00:02.500 line:0
            Opening — <c.yellow>the knolls</c> at dawn
            <i>Strings</i> here


            """)
        XCTAssertEqual(vtt.messages, ["ASS override \\pos has no WebVTT form: dropped from 1 cue(s)"])

        let ass = StylingLoss(format: "ASS")
        XCTAssertEqual(CueWriter.ass(cue(text), loss: ass), assHeader
            + "Dialogue: 0,0:00:01.00,0:00:02.50,Default,,0,0,0,,{\\an8}Opening — {\\c&H00FFFF&}the knolls{\\c} at dawn"
            + "\\N{\\i1}Strings{\\i0} {\\pos(10,20)}here\n")
        XCTAssertEqual(ass.messages, [])

        let labels = StylingLoss(format: "Audacity label")
        XCTAssertEqual(CueWriter.audacityLabels(cue(text), loss: labels),
                       "1.000000\t2.500000\tOpening — the knolls at dawn Strings here\n")
        XCTAssertEqual(labels.messages, ["styling has no Audacity label form: dropped from 1 cue(s)"])
    }

    // MARK: WebVTT (cue settings, <c.yellow>, <v Bob>)

    func testWebVTTStylingInEachFormat() throws {
        let read = try AnnotationReader.parse(Data("""
            WEBVTT

            STYLE
            ::cue { color: lime }

            00:00:01.000 --> 00:00:02.500 line:0   position:20% align:start
            <v Bob>Opening</v> — <c.yellow.loud>the knolls</c>
            <lang en>at dawn</lang>

            """.utf8), name: "in.vtt")
        let text = "{vtt line:0 position:20% align:start}<v Bob>Opening</v> — <c.yellow.loud>the knolls</c>\n<lang en>at dawn</lang>"
        XCTAssertEqual(read.annotations, [Annotation(start: 1, end: 2.5, text: text)])
        XCTAssertEqual(read.warnings, ["in.vtt:3: STYLE block not stored (only cue text and cue settings are): cues keep their own markup only"])

        let vtt = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueWriter.webVTT(cue(text), loss: vtt), """
            WEBVTT

            00:00:01.000 --> 00:00:02.500 line:0 position:20% align:start
            <v Bob>Opening</v> — <c.yellow.loud>the knolls</c>
            <lang en>at dawn</lang>


            """)
        XCTAssertEqual(vtt.messages, [])

        let srt = StylingLoss(format: "SubRip")
        XCTAssertEqual(CueWriter.srt(cue(text), loss: srt),
                       "1\n00:00:01,000 --> 00:00:02,500\n{\\an7}Opening — <font color=\"#ffff00\">the knolls</font>\nat dawn\n\n")
        XCTAssertEqual(srt.messages, [
            "WebVTT cue setting position has no SubRip form: dropped from 1 cue(s)",
            "WebVTT voice <v> has no SubRip form: dropped from 1 cue(s)",
            "WebVTT class .loud has no SubRip form: dropped from 1 cue(s)",
            "WebVTT <lang> has no SubRip form: dropped from 1 cue(s)",
        ])

        let ass = StylingLoss(format: "ASS")
        XCTAssertEqual(CueWriter.ass(cue(text), loss: ass), assHeader
            + "Dialogue: 0,0:00:01.00,0:00:02.50,Default,Bob,0,0,0,,{\\an7}Opening — {\\c&H00FFFF&}the knolls{\\c}\\Nat dawn\n")
        XCTAssertEqual(ass.messages, [
            "WebVTT cue setting position has no ASS form: dropped from 1 cue(s)",
            "WebVTT class .loud has no ASS form: dropped from 1 cue(s)",
            "WebVTT <lang> has no ASS form: dropped from 1 cue(s)",
        ])
    }

    /// `{\anN}` ↔ WebVTT `line`/`align`: every alignment comes back as itself.
    /// A new user's trial: an SRT cue `{vtt is cool} and fun` lost its braces' text in SRT and
    /// put "is cool" into WebVTT's timing line: a `{vtt …}` block is cue settings only when each
    /// word is a WebVTT cue setting with a value.
    func testTextThatLooksLikeTheSettingsBlockIsText() {
        let text = "{vtt is cool} and fun"
        XCTAssertEqual(CueWriter.srt(cue(text), loss: StylingLoss(format: "SubRip")), "1\n00:00:01,000 --> 00:00:02,500\n\(text)\n\n")
        XCTAssertEqual(CueWriter.webVTT(cue(text), loss: StylingLoss(format: "WebVTT")),
                       "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\n\(text)\n\n")
        XCTAssertEqual(CueWriter.webVTT(cue("{vtt line:0 align:start}top"), loss: StylingLoss(format: "WebVTT")),
                       "WEBVTT\n\n00:00:01.000 --> 00:00:02.500 line:0 align:start\ntop\n\n")
    }

    func testAlignmentTranslatesBothWays() {
        let settings = (1...9).map { CueMarkup.webVTTSettings(alignment: $0) }
        XCTAssertEqual(settings, ["align:left", "", "align:right", "line:50%,center align:left", "line:50%,center",
                                  "line:50%,center align:right", "line:0 align:left", "line:0", "line:0 align:right"])
        for (n, s) in settings.enumerated() {
            XCTAssertEqual(CueMarkup.alignment(webVTTSettings: s).alignment, n + 1, s)
        }
        XCTAssertEqual(CueMarkup.alignment(webVTTSettings: "line:-2 align:end size:50%").alignment, 3)
        XCTAssertEqual(CueMarkup.alignment(webVTTSettings: "line:10% region:fred").lost, ["region"])
        XCTAssertEqual(CueMarkup.alignment(webVTTSettings: "line:3").alignment, 8)
    }

    // MARK: ASS (\pos, \fad, named styles, PlayResX/Y, Name)

    func testASSStylingIsKeptAndTranslated() throws {
        let read = try AnnotationReader.parse(Data("""
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 1920
            PlayResY: 1080

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
            Style: Default,Arial,48,&H00FFFFFF,&H000000FF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,2,0,2,10,10,10,1
            Style: Top,Arial,48,&H0000FFFF,&H000000FF,&H00000000,&H80000000,0,-1,0,0,100,100,0,0,1,2,0,8,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:01.00,0:00:02.50,Top,Bob,0,0,0,,Opening{ a note } — the knolls\\Nat dawn
            Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\fad(200,200)\\pos(960,100)}Strings {\\i1}enter{\\i0}
            Dialogue: 0,0:00:05.00,0:00:06.00,Top,,0,0,0,,{\\an1}Low left

            """.utf8), name: "in.ass")
        let first = "<v Bob>{\\an8\\i1\\c&H00FFFF&}Opening — the knolls\nat dawn"
        let second = "{\\fad(200,200)\\pos(192,26.67)}Strings {\\i1}enter{\\i0}"
        XCTAssertEqual(read.annotations.map(\.text), [first, second, "{\\i1\\c&H00FFFF&}{\\an1}Low left"])
        XCTAssertEqual(read.warnings, [
            "in.ass: 1 comment block(s) {…} left out (ASS never shows them)",
            "in.ass: named styles are not stored (Top): each event keeps its style's alignment, bold, italic, underline, "
                + "strike-out and colour as override tags, not its font, size, outline or margins",
        ])

        let cues = [Cue(start: 1, end: 2.5, text: first), Cue(start: 3, end: 4, text: second)]
        let ass = StylingLoss(format: "ASS")
        XCTAssertEqual(CueWriter.ass(cues, loss: ass), assHeader
            + "Dialogue: 0,0:00:01.00,0:00:02.50,Default,Bob,0,0,0,,{\\an8\\i1\\c&H00FFFF&}Opening — the knolls\\Nat dawn\n"
            + "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\fad(200,200)\\pos(192,26.67)}Strings {\\i1}enter{\\i0}\n")
        XCTAssertEqual(ass.messages, [])

        let vtt = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueWriter.webVTT(cues, loss: vtt), """
            WEBVTT

            00:00:01.000 --> 00:00:02.500 line:0
            <v Bob><i><c.yellow>Opening — the knolls
            at dawn

            00:00:03.000 --> 00:00:04.000
            Strings <i>enter</i>


            """)
        XCTAssertEqual(vtt.messages, ["ASS override \\fad has no WebVTT form: dropped from 1 cue(s)",
                                      "ASS override \\pos has no WebVTT form: dropped from 1 cue(s)"])
    }

    /// An event naming a style no `Style:` line defines was read with no word said: one warning
    /// per undefined name (at its first event), the text kept with no style tags.
    func testUndefinedStyleIsWarnedOncePerName() throws {
        let read = try AnnotationReader.parse(Data("""
            [Script Info]
            ScriptType: v4.00+

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
            Style: Top,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,2,0,8,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:01.00,0:00:02.00,Shout,,0,0,0,,Loud {\\i1}one
            Dialogue: 0,0:00:03.00,0:00:04.00,Top,,0,0,0,,High
            Dialogue: 0,0:00:05.00,0:00:06.00,Shout,,0,0,0,,Loud two
            Dialogue: 0,0:00:07.00,0:00:08.00,Whisper,,0,0,0,,Soft
            Dialogue: 0,0:00:09.00,0:00:10.00,default,,0,0,0,,Plain

            """.utf8), name: "s.ass")
        XCTAssertEqual(read.annotations.map(\.text), ["Loud {\\i1}one", "{\\an8}High", "Loud two", "Soft", "Plain"])
        XCTAssertEqual(read.warnings, [
            "s.ass:10: style \"Shout\" is not defined in the script's styles: its events keep their text, with no style of their own",
            "s.ass:13: style \"Whisper\" is not defined in the script's styles: its events keep their text, with no style of their own",
            "s.ass: named styles are not stored (Top): each event keeps its style's alignment, bold, italic, underline, "
                + "strike-out and colour as override tags, not its font, size, outline or margins",
        ])
    }

    /// Coordinates and font sizes are in the script's PlayResX/Y; soundmark's ASS output (and
    /// SubRip players) use 384×288, so they are rescaled; drawings are kept with a warning.
    func testASSCoordinatesAreRescaledToTheOutputPlayRes() throws {
        func read(_ scriptInfo: String, _ text: String) throws -> AnnotationImport {
            try AnnotationReader.parse(Data("""
                [Script Info]
                \(scriptInfo)
                [Events]
                Format: Start, End, Text
                Dialogue: 0:00:01.00,0:00:02.00,\(text)

                """.utf8), name: "p.ass")
        }
        let text = "{\\an7\\pos(960,540)\\fs72}Middle{\\move(0,0,1920,1080,0,500)\\org(1,1)\\clip(0,0,960,540)}"
        XCTAssertEqual(try read("PlayResX: 1920\nPlayResY: 1080", text).annotations.map(\.text),
                       ["{\\an7\\pos(192,144)\\fs19.2}Middle{\\move(0,0,384,288,0,500)\\org(0.2,0.27)\\clip(0,0,192,144)}"])
        // PlayResY alone: PlayResX follows at 4:3 (libass); 384×288 itself or none: as written.
        XCTAssertEqual(try read("PlayResY: 576", "{\\pos(384,288)}x").annotations.map(\.text), ["{\\pos(192,144)}x"])
        XCTAssertEqual(try read("PlayResX: 384\nPlayResY: 288", text).annotations.map(\.text), [text])
        XCTAssertEqual(try read("Title: none", text).annotations.map(\.text), [text])
        let drawing = try read("PlayResX: 1920\nPlayResY: 1080", "{\\p1}m 0 0 l 100 0 100 100{\\p0}")
        XCTAssertEqual(drawing.annotations.map(\.text), ["{\\p1}m 0 0 l 100 0 100 100{\\p0}"])
        XCTAssertEqual(drawing.warnings, ["p.ass: drawings (\\p) and vector clips are kept in this script's PlayResX/Y 1920×1080, "
                                          + "not rescaled to soundmark's 384×288"])
    }

    /// A script with PlayResY alone had its drawings warned about in "PlayResX/Y ×720": the width
    /// libass assumes (PlayResY × 4 / 3 in integer arithmetic; 1280 for 1024) is said, and used.
    func testMissingPlayResIsSaidAsLibassAssumesIt() throws {
        func read(_ scriptInfo: String) throws -> AnnotationImport {
            try AnnotationReader.parse(Data("""
                [Script Info]
                \(scriptInfo)
                [Events]
                Format: Start, End, Text
                Dialogue: 0:00:01.00,0:00:02.00,{\\pos(480,360)\\p1}m 0 0 l 100 0 100 100{\\p0}

                """.utf8), name: "p.ass")
        }
        let y720 = try read("PlayResY: 720")
        XCTAssertEqual(y720.annotations.map(\.text), ["{\\pos(192,144)\\p1}m 0 0 l 100 0 100 100{\\p0}"])
        XCTAssertEqual(y720.warnings, ["p.ass: drawings (\\p) and vector clips are kept in this script's PlayResX/Y 960×720 "
                                       + "(PlayResX assumed from PlayResY, as libass does), not rescaled to soundmark's 384×288"])
        // 1000 × 4 / 3 is 1333 in libass's integer arithmetic, not 1333.33.
        let y1000 = try read("PlayResY: 1000")
        XCTAssertEqual(y1000.annotations.map(\.text), ["{\\pos(138.27,103.68)\\p1}m 0 0 l 100 0 100 100{\\p0}"])
        XCTAssertEqual(y1000.warnings.first?.contains("PlayResX/Y 1333×1000 (PlayResX assumed"), true)
        XCTAssertEqual(try read("PlayResY: 1024").warnings, ["p.ass: drawings (\\p) and vector clips are kept in this script's "
            + "PlayResX/Y 1280×1024 (PlayResX assumed from PlayResY, as libass does), not rescaled to soundmark's 384×288"])
        XCTAssertEqual(try read("PlayResX: 640").warnings, ["p.ass: drawings (\\p) and vector clips are kept in this script's "
            + "PlayResX/Y 640×480 (PlayResY assumed from PlayResX, as libass does), not rescaled to soundmark's 384×288"])
    }

    /// ASS drawings (`{\p1}` commands `{\p0}`) came out as text in WebVTT and SubRip: they are
    /// dropped there, commands and `\p` tags, with one warning per output; ASS keeps them.
    func testDrawingsAreDroppedFromTextFormats() {
        let cues = [Cue(start: 1, end: 2.5, text: "{\\an8}Logo: {\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}{\\i1}on{\\i0}"),
                    Cue(start: 3, end: 4, text: "{\\pos(10,20)\\p1}m 0 0 l 1 1\nl 2 2{\\p0}after")]
        let srt = StylingLoss(format: "SubRip")
        XCTAssertEqual(CueWriter.srt(cues, loss: srt), """
            1
            00:00:01,000 --> 00:00:02,500
            {\\an8}Logo: {\\i1}on{\\i0}

            2
            00:00:03,000 --> 00:00:04,000
            {\\pos(10,20)}
            after


            """)
        XCTAssertEqual(srt.messages, ["ASS drawing {\\p1}…{\\p0} has no SubRip form: dropped from 2 cue(s)"])

        let vtt = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueWriter.webVTT(cues, loss: vtt), """
            WEBVTT

            00:00:01.000 --> 00:00:02.500 line:0
            Logo: <i>on</i>

            00:00:03.000 --> 00:00:04.000
            after


            """)
        XCTAssertEqual(vtt.messages, ["ASS drawing {\\p1}…{\\p0} has no WebVTT form: dropped from 2 cue(s)",
                                      "ASS override \\pos has no WebVTT form: dropped from 1 cue(s)"])

        let ass = StylingLoss(format: "ASS")
        XCTAssertEqual(CueWriter.ass(cues, loss: ass), assHeader
            + "Dialogue: 0,0:00:01.00,0:00:02.50,Default,,0,0,0,,{\\an8}Logo: {\\p1}m 0 0 l 100 0 100 100 0 100{\\p0}{\\i1}on{\\i0}\n"
            + "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\pos(10,20)\\p1}m 0 0 l 1 1\\Nl 2 2{\\p0}after\n")
        XCTAssertEqual(ass.messages, [])
        XCTAssertEqual(CueMarkup.plainText(cues[0].text), "Logo: on")
        // A drawing that never ends runs to the cue's end; \p0 alone is no drawing.
        XCTAssertEqual(CueMarkup.webVTT("a{\\p1}m 0 0 l 1 1", loss: nil).lines, ["a"])
        XCTAssertEqual(CueMarkup.subRip("a{\\p0}b", loss: nil), ["ab"])
    }

    /// WebVTT timestamp tags (karaoke) are reference times: re-timing moves them with the cue.
    func testTimestampTagsAreRetimed() {
        let text = "{vtt line:0}<c.yellow>Ka</c><00:00:03.250>ra<00:03.500>o\nke {\\an8} <1> <00:03.5>"
        XCTAssertEqual(CueMarkup.retimingTimestamps(text) { $0 - 1.5 },
                       "{vtt line:0}<c.yellow>Ka</c><00:00:01.750>ra<00:00:02.000>o\nke {\\an8} <1> <00:03.5>")
        XCTAssertEqual(CueMarkup.retimingTimestamps("no tags <1>") { $0 + 1 }, "no tags <1>")
    }

    // MARK: text that is not markup

    /// A title `Track <1>` lost its `<1>` in ASS and Audacity output: only recognised tags are markup.
    func testUnknownAngleBracketsAreText() {
        let text = "Track <1> <br> {not a block} <font color=red>x</font>"
        XCTAssertEqual(CueMarkup.plainText(text), "Track <1> <br> {not a block} x")
        XCTAssertEqual(CueWriter.assText(text), "Track <1> <br> ｛not a block｝ {\\c&H0000FF&}x{\\c}")
        XCTAssertEqual(CueWriter.audacityLabels([Cue(start: 0, end: 1, text: "Track <1>")]), "0.000000\t1.000000\tTrack <1>\n")
        XCTAssertEqual(CueWriter.srt([Cue(start: 0, end: 1, text: "Track <1>")]), "1\n00:00:00,000 --> 00:00:01,000\nTrack <1>\n\n")
        XCTAssertEqual(CueWriter.webVTT([Cue(start: 0, end: 1, text: "Track <1>")]),
                       "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nTrack &lt;1&gt;\n\n")
    }

    /// A reference titled `<b>Live</b>` came out bold in subtitles: titles and artists are plain
    /// text (``CueTextKind/plain``), shown as written and escaped as each format needs.
    func testPlainTextIsNeverMarkup() {
        let cues = [Cue(start: 1, end: 2.5, text: "<b>Live</b> {\\i1}at{\\i0} R&amp;B", kind: .plain),
                    Cue(start: 3, end: 4, text: "{vtt line:0} x <1>", kind: .plain)]
        let srt = StylingLoss(format: "SubRip")
        XCTAssertEqual(CueWriter.srt(cues, loss: srt), "1\n00:00:01,000 --> 00:00:02,500\n"
            + "<\u{2060}b>Live<\u{2060}/b> {\u{2060}\\i1}at{\u{2060}\\i0} R&amp;B\n\n"
            + "2\n00:00:03,000 --> 00:00:04,000\n{\u{2060}vtt line:0} x <1>\n\n")
        let vtt = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueWriter.webVTT(cues, loss: vtt), """
            WEBVTT

            00:00:01.000 --> 00:00:02.500
            &lt;b&gt;Live&lt;/b&gt; {\\i1}at{\\i0} R&amp;amp;B

            00:00:03.000 --> 00:00:04.000
            {vtt line:0} x &lt;1&gt;


            """)
        let ass = StylingLoss(format: "ASS")
        XCTAssertEqual(CueWriter.ass(cues, loss: ass), assHeader
            + "Dialogue: 0,0:00:01.00,0:00:02.50,Default,,0,0,0,,<b>Live</b> ｛\\i1｝at｛\\i0｝ R&amp;B\n"
            + "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,｛vtt line:0｝ x <1>\n")
        let labels = StylingLoss(format: "Audacity label")
        XCTAssertEqual(CueWriter.audacityLabels(cues, loss: labels),
                       "1.000000\t2.500000\t<b>Live</b> {\\i1}at{\\i0} R&amp;B\n3.000000\t4.000000\t{vtt line:0} x <1>\n")
        XCTAssertEqual(srt.messages + vtt.messages + ass.messages + labels.messages, [])
    }

    /// SubRip players take `<I>` and `<FONT COLOR=…>` in capitals; WebVTT tags are lower case.
    func testSubRipTagsInCapitals() {
        let text = "<I>it</I> <B>bo</B> <FONT COLOR=\"#FF0000\">red</FONT>"
        XCTAssertEqual(CueMarkup.webVTT(text, loss: nil).lines, ["<i>it</i> <b>bo</b> <c.red>red</c>"])
        XCTAssertEqual(CueWriter.assText(text), "{\\i1}it{\\i0} {\\b1}bo{\\b0} {\\c&H0000FF&}red{\\c}")
        XCTAssertEqual(CueMarkup.plainText(text), "it bo red")
    }

    /// Nested colours come back to the outer one when the inner ends; other colours have no
    /// WebVTT class.
    func testNestedAndOtherColours() {
        let text = "<font color=red>a<font color=\"#00f\">b</font>c</font>d"
        XCTAssertEqual(CueWriter.assText(text), "{\\c&H0000FF&}a{\\c&HFF0000&}b{\\c&H0000FF&}c{\\c}d")
        XCTAssertEqual(CueMarkup.webVTT(text, loss: nil).lines, ["<c.red>a<c.blue>b</c>c</c>d"])
        let loss = StylingLoss(format: "WebVTT")
        XCTAssertEqual(CueMarkup.webVTT("<font color=\"#123456\" face=\"Serif\">x</font>{\\c&H00FF00&}y", loss: loss).lines,
                       ["x<c.lime>y"])
        XCTAssertEqual(loss.messages, ["colour other than the WebVTT default colours has no WebVTT form: dropped from 1 cue(s)",
                                       "SubRip <font face> has no WebVTT form: dropped from 1 cue(s)"])
    }
}
