import Foundation
import XCTest
@testable import Soundmark

/// Tolerance rules of `AnnotationReader`, each input built byte by byte.
final class AnnotationReaderTests: XCTestCase {
    private func parse(_ text: String, format: AnnotationFormat? = nil, name: String = "in.srt") throws -> AnnotationImport {
        try AnnotationReader.parse(Data(text.utf8), name: name, format: format)
    }

    private func parse(bytes: [UInt8], encoding: String.Encoding? = nil, name: String = "in.srt") throws -> AnnotationImport {
        try AnnotationReader.parse(Data(bytes), name: name, encoding: encoding)
    }

    private let basicSRT = "1\n00:00:01,000 --> 00:00:02,500\nHello\n\n2\n00:00:03,000 --> 00:00:04,000\nWorld\n"
    private let basicExpected = [Annotation(start: 1, end: 2.5, text: "Hello"), Annotation(start: 3, end: 4, text: "World")]

    // MARK: Encodings

    func testUTF8WithoutBOM() throws {
        let r = try parse(basicSRT)
        XCTAssertEqual(r.annotations, basicExpected)
        XCTAssertEqual(r.warnings, [])
    }

    func testUTF8WithBOM() throws {
        let r = try parse(bytes: [0xEF, 0xBB, 0xBF] + Array(basicSRT.utf8))
        XCTAssertEqual(r.annotations, basicExpected)
        XCTAssertEqual(r.warnings, [])
    }

    func testUTF16LittleEndianWithBOM() throws {
        let text = "1\r\n00:00:01,000 --> 00:00:02,000\r\nGrüße 😀\r\n"
        let bytes = [0xFF, 0xFE] + [UInt8](text.data(using: .utf16LittleEndian)!)
        let r = try parse(bytes: bytes)
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "Grüße 😀")])
        XCTAssertEqual(r.warnings, [])
    }

    func testUTF16BigEndianWithBOM() throws {
        let text = "WEBVTT\n\n00:01.000 --> 00:02.000\nÇa va ? 🎵\n"
        let bytes = [0xFE, 0xFF] + [UInt8](text.data(using: .utf16BigEndian)!)
        let r = try parse(bytes: bytes, name: "in.vtt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "Ça va ? 🎵")])
    }

    func testUTF16WithoutBOMDetectedByNULPattern() throws {
        let le = try parse(bytes: [UInt8](basicSRT.data(using: .utf16LittleEndian)!))
        XCTAssertEqual(le.annotations, basicExpected)
        let be = try parse(bytes: [UInt8](basicSRT.data(using: .utf16BigEndian)!))
        XCTAssertEqual(be.annotations, basicExpected)
    }

    func testLegacyWindows1252FallbackWhenNotUTF8() throws {
        // "Café “quoted” €5" in Windows-1252: é=E9, “=93, ”=94, €=80.
        var bytes = Array("1\n00:00:01,000 --> 00:00:02,000\nCaf".utf8)
        bytes += [0xE9, 0x20, 0x93] + Array("quoted".utf8) + [0x94, 0x20, 0x80] + Array("5\n".utf8)
        let r = try parse(bytes: bytes)
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "Café “quoted” €5")])
    }

    func testExplicitEncodingIsUsed() throws {
        // Byte 0xE9 is "é" in ISO-8859-1; given explicitly it is not re-detected.
        let bytes = Array("1\n00:00:01,000 --> 00:00:02,000\nn".utf8) + [0xE9] + Array("e\n".utf8)
        let r = try parse(bytes: bytes, encoding: .isoLatin1)
        XCTAssertEqual(r.annotations.first?.text, "née")
        // UTF-16LE without BOM given explicitly.
        let u16 = try parse(bytes: [UInt8](basicSRT.data(using: .utf16LittleEndian)!), encoding: .utf16LittleEndian)
        XCTAssertEqual(u16.annotations, basicExpected)
    }

    func testExplicitUTF8RejectsInvalidBytes() {
        let bytes = Array("1\n00:00:01,000 --> 00:00:02,000\nn".utf8) + [0xE9, 0x0A]
        XCTAssertThrowsError(try parse(bytes: bytes, encoding: .utf8, name: "legacy.srt")) { error in
            XCTAssertEqual(error as? AnnotationError, .undecodable(file: "legacy.srt", encoding: "UTF-8"))
            XCTAssertEqual(error.localizedDescription, "legacy.srt: not valid UTF-8 text")
        }
    }

    // MARK: Line ends

    func testCRLFAndCRAndMixedLineEndsAndMissingFinalNewline() throws {
        let crlf = basicSRT.replacingOccurrences(of: "\n", with: "\r\n")
        XCTAssertEqual(try parse(crlf).annotations, basicExpected)
        let cr = basicSRT.replacingOccurrences(of: "\n", with: "\r")
        XCTAssertEqual(try parse(cr).annotations, basicExpected)
        let mixed = "1\r\n00:00:01,000 --> 00:00:02,500\rHello\n\r\n2\n00:00:03,000 --> 00:00:04,000\r\nWorld"
        XCTAssertEqual(try parse(mixed).annotations, basicExpected)
        let multi = "1\r\n00:00:01,000 --> 00:00:02,000\r\nline one\r\nline two"
        XCTAssertEqual(try parse(multi).annotations, [Annotation(start: 1, end: 2, text: "line one\nline two")])
    }

    // MARK: SubRip

    func testSRTBlankLineInsideCueContinuesText() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nFirst paragraph\n\nSecond paragraph\n\n2\n00:00:03,000 --> 00:00:04,000\nNext\n"
        let r = try parse(srt)
        XCTAssertEqual(r.annotations, [
            Annotation(start: 1, end: 2, text: "First paragraph\n\nSecond paragraph"),
            Annotation(start: 3, end: 4, text: "Next"),
        ])
        XCTAssertEqual(r.warnings, [])
    }

    func testSRTCueWhoseTextIsOnlyANumber() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\n42\n\n2\n00:00:03,000 --> 00:00:04,000\n7\n"
        let r = try parse(srt)
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "42"), Annotation(start: 3, end: 4, text: "7")])
    }

    func testSRTDotInsteadOfCommaAndShortFractions() throws {
        let srt = "00:00:01.250 --> 00:00:02.5\nDots\n\n00:01:00,07 --> 00:01:01\nMixed\n"
        XCTAssertEqual(try parse(srt).annotations, [
            Annotation(start: 1.25, end: 2.5, text: "Dots"),
            Annotation(start: 60.07, end: 61, text: "Mixed"),
        ])
    }

    func testSRTHoursAbove99() throws {
        let srt = "1\n123:00:00,000 --> 123:00:01,500\nLong recording\n"
        XCTAssertEqual(try parse(srt).annotations, [Annotation(start: 442_800, end: 442_801.5, text: "Long recording")])
    }

    func testSRTWithoutIndexLinesAndWithCoordinates() throws {
        let srt = "00:00:01,000 --> 00:00:02,000 X1:100 X2:200 Y1:10 Y2:20\nA\n\n00:00:02,000 --> 00:00:03,000\nB\n"
        XCTAssertEqual(try parse(srt).annotations, [Annotation(start: 1, end: 2, text: "A"), Annotation(start: 2, end: 3, text: "B")])
    }

    func testSRTTextIsKeptVerbatim() throws {
        let text = "<i>Italic</i> & <b>bold</b> {\\an8}\nnaïve 日本語 👩‍👩‍👧 trailing space \nTom --> Jerry"
        let r = try parse("1\n00:00:01,000 --> 00:00:02,000\n\(text)\n\n")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: text)])
        XCTAssertEqual(r.warnings, [])
    }

    func testSRTSkipsBadTimingEndBeforeStartAndGarbageWithLineNumbers() throws {
        let srt = """
        Some title line
        by someone

        1
        00:00:01,000 --> 00:00:02,000
        Good one

        2
        00:00:0x,000 --> 00:00:03,000
        Bad timing text

        3
        00:00:05,000 --> 00:00:04,000
        Backwards

        4
        00:00:06,000 --> garbage
        Bad end

        5
        00:00:07,000 --> 00:00:08,000
        Good two
        """
        let r = try parse(srt, name: "x.srt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "Good one"), Annotation(start: 7, end: 8, text: "Good two")])
        XCTAssertEqual(r.warnings, [
            "x.srt:1: skipped 2 lines of text outside any cue (no timing line before them)",
            "x.srt:9: skipped cue: unparseable start time \"00:00:0x,000\"",
            "x.srt:13: skipped cue: end time 00:00:04,000 is before start time 00:00:05,000",
            "x.srt:17: skipped cue: unparseable end time \"garbage\"",
        ])
    }

    func testSRTLeadingAndTrailingBlankLinesOfTextAreSeparators() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\n\nAfter a blank\n   \n\n\n2\n00:00:03,000 --> 00:00:04,000\nB"
        XCTAssertEqual(try parse(srt).annotations, [
            Annotation(start: 1, end: 2, text: "After a blank"), Annotation(start: 3, end: 4, text: "B"),
        ])
    }

    // MARK: WebVTT

    func testWebVTTHeaderNoteStyleRegionIdentifiersSettingsAndShortTimestamps() throws {
        let vtt = """
        WEBVTT - Some header text
        Kind: captions
        Language: en

        REGION
        id:fred
        width:40%

        STYLE
        ::cue { color: yellow }

        NOTE This is a comment
        spanning two lines

        intro
        00:01.000 --> 00:04.000 align:start position:10%
        <v Roger>Hi <i>there</i> &amp; welcome

        NOTE another comment

        2
        00:00:05.500 --> 00:00:07.250 line:0
        Two
        lines

        01:02:03.004 --> 123:00:00.000
        Long
        """
        let r = try parse(vtt, name: "a.vtt")
        XCTAssertEqual(r.annotations, [
            Annotation(start: 1, end: 4, text: "{vtt align:start position:10%}<v Roger>Hi <i>there</i> &amp; welcome"),
            Annotation(start: 5.5, end: 7.25, text: "{vtt line:0}Two\nlines"),
            Annotation(start: 3723.004, end: 442_800, text: "Long"),
        ])
        XCTAssertEqual(r.warnings, [
            "a.vtt:5: REGION block not stored (only cue text and cue settings are): cues keep their own markup only",
            "a.vtt:9: STYLE block not stored (only cue text and cue settings are): cues keep their own markup only",
        ])
    }

    func testWebVTTBlankLineEndsCueAndStrayTextIsReported() throws {
        let vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\nOne\n\nOrphan line\nsecond orphan\n\n00:03.000 --> 00:04.000\nTwo\n"
        let r = try parse(vtt, name: "b.vtt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "One"), Annotation(start: 3, end: 4, text: "Two")])
        XCTAssertEqual(r.warnings, ["b.vtt:6: skipped 2 lines without a cue timing line"])
    }

    func testWebVTTBadTimingAndTimingLineInsidePayload() throws {
        let vtt = "WEBVTT\n\nid\n00:05.000 --> 00:04.000\nBackwards\n\n00:01.000 --> 00:02.000\nOne\n00:02.000 --> 00:03.000\nTwo\n\n00:aa.000 --> 00:03.000\nBad\n"
        let r = try parse(vtt, name: "c.vtt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "One"), Annotation(start: 2, end: 3, text: "Two")])
        XCTAssertEqual(r.warnings, [
            "c.vtt:4: skipped cue: end time 00:04.000 is before start time 00:05.000",
            "c.vtt:12: skipped cue: unparseable start time \"00:aa.000\"",
        ])
    }

    func testWebVTTWithBOMCRLFAndCueRightAfterHeader() throws {
        let vtt = "\u{FEFF}WEBVTT\r\n00:00:01.000 --> 00:00:02.000\r\nNo gap"
        let r = try AnnotationReader.parse(Data(vtt.utf8), name: "d.vtt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "No gap")])
        XCTAssertEqual(r.warnings, ["d.vtt:2: no blank line between the WEBVTT header and the first cue; reading the cue anyway"])
    }

    func testForcedWebVTTWithoutHeaderWarns() throws {
        let r = try parse("00:01.000 --> 00:02.000\nX\n", format: .webVTT, name: "e.txt")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "X")])
        XCTAssertEqual(r.warnings, ["e.txt:1: missing WEBVTT header; reading as WebVTT anyway"])
    }

    func testWebVTTHeaderOnlyGivesEmptyListWithWarning() throws {
        let r = try parse("WEBVTT\n\nNOTE nothing yet\n", name: "f.vtt")
        XCTAssertEqual(r.annotations, [])
        XCTAssertEqual(r.warnings, ["f.vtt: no annotations in file"])
    }

    // MARK: JSON

    func testJSONArray() throws {
        let json = #"[{"start": 1.5, "end": 2, "text": "A \"q\" \u00e9 \ud83d\ude00\nB"}, {"text": "<i>x</i>", "end": 4.25, "start": 3, "extra": true}]"#
        let r = try parse(json, name: "a.json")
        XCTAssertEqual(r.annotations, [
            Annotation(start: 1.5, end: 2, text: "A \"q\" é 😀\nB"),
            Annotation(start: 3, end: 4.25, text: "<i>x</i>"),
        ])
        XCTAssertEqual(r.warnings, [])
    }

    func testJSONSkipsBadEntriesWithLineNumbers() throws {
        let json = """
        [
          {"start": 1, "end": 2, "text": "ok"},
          {"start": 5, "end": 4, "text": "backwards"},
          {"start": "00:00:06.500", "end": "7", "text": "string times"},
          {"start": 8, "text": "no end"},
          "garbage",
          {"start": -1, "end": 2, "text": "negative"},
          {"start": 9, "end": 10, "text": null}
        ]
        """
        let r = try parse(json, name: "b.json")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "ok"), Annotation(start: 6.5, end: 7, text: "string times")])
        XCTAssertEqual(r.warnings, [
            "b.json:3: skipped entry 2: end 4.0 s is before start 5.0 s",
            "b.json:5: skipped entry 4: missing \"end\"",
            "b.json:6: skipped entry 5: expected an object, found a string",
            "b.json:7: skipped entry 6: \"start\" must be a finite number of seconds >= 0",
            "b.json:8: skipped entry 7: \"text\" is null, not a string",
        ])
    }

    func testInvalidJSONThrowsWithLine() {
        let json = "[\n  {\"start\": 1, \"end\": 2, \"text\": \"a\"},\n  {\"start\": 2 \"end\": 3}\n]"
        XCTAssertThrowsError(try parse(json, name: "c.json")) { error in
            XCTAssertEqual(error as? AnnotationError, .invalidJSON(file: "c.json", line: 3, reason: "expected ',' or '}'"))
            XCTAssertEqual(error.localizedDescription, "c.json:3: invalid JSON annotations: expected ',' or '}'")
        }
    }

    func testJSONWrappedInObjectAndEmptyArray() throws {
        let r = try parse(#"{"annotations": [{"start": 0, "end": 0, "text": ""}]}"#, name: "d.json")
        XCTAssertEqual(r.annotations, [Annotation(start: 0, end: 0, text: "")])
        let empty = try parse("[ ]", name: "e.json")
        XCTAssertEqual(empty.annotations, [])
        XCTAssertEqual(empty.warnings, ["e.json: no annotations in file"])
    }

    // MARK: Detection, empty files, errors

    func testFormatDetectionFromContent() throws {
        XCTAssertEqual(AnnotationReader.detectFormat(["", "  WEBVTT"]), .webVTT)
        XCTAssertEqual(AnnotationReader.detectFormat(["\u{FEFF}[{}]"]), .json)
        XCTAssertEqual(AnnotationReader.detectFormat(["  {"]), .json)
        XCTAssertEqual(AnnotationReader.detectFormat(["1", "00:00:01,000 --> 00:00:02,000"]), .srt)
        // Content decides even with a misleading name; an explicit format wins.
        XCTAssertEqual(try parse("WEBVTT\n\n00:01.000 --> 00:02.000\nv\n", name: "x.srt").annotations,
                       [Annotation(start: 1, end: 2, text: "v")])
        XCTAssertEqual(try parse(basicSRT, format: .srt, name: "x.vtt").annotations, basicExpected)
    }

    func testEmptyFilesGiveEmptyListWithWarning() throws {
        for content in ["", "\n\r\n  \n", "\u{FEFF}"] {
            let r = try parse(content, name: "empty.srt")
            XCTAssertEqual(r.annotations, [])
            XCTAssertEqual(r.warnings, ["empty.srt: file is empty; no annotations"])
        }
    }

    func testContentWithoutAnyCueThrows() {
        XCTAssertThrowsError(try parse("just some\nnotes\n", name: "notes.txt")) { error in
            XCTAssertEqual(error as? AnnotationError, .noAnnotations(
                file: "notes.txt", skipped: 1,
                firstProblem: "notes.txt:1: skipped 2 lines of text outside any cue (no timing line before them)"))
            XCTAssertFalse(error.localizedDescription.contains("\n"))
            XCTAssertTrue(error.localizedDescription.hasPrefix("notes.txt: no usable annotations"))
        }
    }

    func testReadContentsOfURLNamesFileInWarningsAndErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-annot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("talk.srt")
        try Data("junk\n\n1\n00:00:01,000 --> 00:00:02,000\nHi\n".utf8).write(to: url)
        let r = try AnnotationReader.read(contentsOf: url)
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "Hi")])
        XCTAssertEqual(r.warnings, ["\(url.path):1: skipped 1 line of text outside any cue (no timing line before it)"])

        let missing = dir.appendingPathComponent("missing.vtt")
        XCTAssertThrowsError(try AnnotationReader.read(contentsOf: missing)) { error in
            guard case .unreadable(let file, _)? = error as? AnnotationError else { return XCTFail("\(error)") }
            XCTAssertEqual(file, missing.path)
            XCTAssertTrue(error.localizedDescription.hasPrefix("\(missing.path): cannot read annotation file"))
        }
    }

    func testAnnotationCodableShape() throws {
        let data = try JSONEncoder().encode([Annotation(start: 1.5, end: 2, text: "x")])
        let back = try AnnotationReader.parse(data, name: "enc.json")
        XCTAssertEqual(back.annotations, [Annotation(start: 1.5, end: 2, text: "x")])
    }

    // MARK: Round trips through the writers

    func testRoundTripThroughSRTAndWebVTTWriters() throws {
        let cues = [
            Cue(start: 0, end: 1.5, text: "<i>Hello</i>\nnaïve 😀"),
            Cue(start: 61.001, end: 3723.004, text: "42"),
            Cue(start: 442_800, end: 442_801, text: "Tom &amp; Jerry"),
        ]
        let expected = cues.map { Annotation(start: $0.start, end: $0.end, text: $0.text) }
        let srt = try AnnotationReader.parse(Data(CueWriter.srt(cues).utf8), name: "rt.srt")
        XCTAssertEqual(srt.annotations, expected)
        XCTAssertEqual(srt.warnings, [])
        let vtt = try AnnotationReader.parse(Data(CueWriter.webVTT(cues).utf8), name: "rt.vtt")
        XCTAssertEqual(vtt.annotations, expected)
        XCTAssertEqual(vtt.warnings, [])
    }

    /// Issue 40 item 10: an ASS line whose `{` is never closed kept its text hidden as an
    /// override block (an empty cue). It is text, as renderers show it, with a warning.
    func testASSUnclosedBraceIsTextWithAWarning() throws {
        let ass = "[Script Info]\nScriptType: v4.00+\n\n[Events]\n"
            + "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
            + "Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\an8}Top {oops and more\n"
            + "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,{\\i1}Closed{\\i0} line\n"
        let r = try parse(ass, name: "in.ass")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2, text: "{\\an8}Top {oops and more"),
                                       Annotation(start: 3, end: 4, text: "{\\i1}Closed{\\i0} line")])
        XCTAssertEqual(r.warnings, ["in.ass:6: a '{' without its '}' is kept as text (not an override block)"])
    }
}
