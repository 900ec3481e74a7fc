import Foundation
import XCTest
@testable import Soundmark

/// Library side of issue 9: time limits, path names, legacy encodings, ASS, checksums.
final class InputLimitsTests: XCTestCase {
    func testCueWritersClampHugeAndNonFiniteTimes() {
        let cues = [Cue(start: 1e16, end: 1e308, text: "x"), Cue(start: -.infinity, end: .nan, text: "y"),
                    Cue(start: 1, end: .infinity, text: "z")]
        XCTAssertEqual(CueWriter.srt(cues), """
            1
            277777777:46:40,000 --> 277777777:46:40,000
            x

            2
            00:00:00,000 --> 00:00:00,000
            y

            3
            00:00:01,000 --> 277777777:46:40,000
            z


            """)
        XCTAssertTrue(CueWriter.webVTT(cues).contains("277777777:46:40.000 --> 277777777:46:40.000\nx\n"))
        XCTAssertTrue(CueWriter.audacityLabels(cues).hasPrefix("1000000000000.000000\t1000000000000.000000\tx\n"))
        XCTAssertTrue(CueWriter.ass(cues).contains("Dialogue: 0,277777777:46:40.00,277777777:46:40.00,Default,,0,0,0,,x\n"))
        XCTAssertTrue(CueWriter.cueSheet(file: "a.wav", tracks: [CueSheetTrack(start: 1e300, title: "t")])
            .contains("INDEX 01 16666666666:40:00"))
    }

    func testCatalogRefusesOutOfRangeAnnotations() throws {
        let path = try TestSupport.temporaryDirectory(self).appendingPathComponent("c.db").path
        let catalog = try Catalog(path: path, create: true)
        let sig = try TestSupport.referenceSignature("supertux-forest")
        try catalog.addReferenceSignature(sig, representing: MediaItem(id: "forest"))
        for bad in [Annotation(start: 1, end: 1e16, text: "x"), Annotation(start: -1, end: 2, text: "x"),
                    Annotation(start: 3, end: 2, text: "x"), Annotation(start: .nan, end: 2, text: "x")] {
            XCTAssertThrowsError(try catalog.setAnnotations([Annotation(start: 0, end: 1, text: "ok"), bad], forReference: "forest")) { error in
                guard case SoundmarkError.annotationOutOfRange(_, "forest", 1, _, _)? = error as? SoundmarkError else {
                    return XCTFail("\(error)")
                }
            }
        }
        XCTAssertEqual(try catalog.annotations(id: "forest"), [])
        XCTAssertThrowsError(try catalog.addReferenceSignature(sig, representing: MediaItem(id: "forest"),
                                                               annotations: [Annotation(start: 0, end: 2e12, text: "x")]))
    }

    func testParentDirectoryNeverTraps() {
        XCTAssertEqual(parentDirectory(of: "a"), "")
        XCTAssertEqual(parentDirectory(of: "-"), "")
        XCTAssertEqual(parentDirectory(of: "~"), "")
        XCTAssertEqual(parentDirectory(of: ""), "")
        XCTAssertEqual(parentDirectory(of: "/"), "/")
        XCTAssertEqual(parentDirectory(of: "/a"), "/")
        XCTAssertEqual(parentDirectory(of: "x/y/z.db"), "x/y")
        XCTAssertEqual(parentDirectory(of: "x//y/"), "x")
    }

    func testLegacyEncodingDetection() throws {
        let texts: [(String, String)] = [
            ("CP1250", "Příliš žluťoučký kůň úpěl ďábelské ódy."), ("CP1256", "سلام دنيا، اين يک آزمايش است."),
            ("CP949", "안녕하세요 세계, 이것은 시험입니다."), ("CP1251", "Съешь же ещё этих мягких французских булок."),
            ("CP1253", "Καλημέρα κόσμε, αυτό είναι ένα τεστ."), ("CP1252", "Voilà, ça déçoit les élèves à l’école."),
            ("SHIFT_JIS", "こんにちは世界、これはテストです。"),
            // Issue 40 item 11: Hebrew subtitles were read as CP1251 ("щмен темн"): every byte is a
            // letter in CP1251 (lower case) and KOI8-R (upper case) too, but Cyrillic text mixes cases.
            ("CP1255", "שלום עולם, זה מבחן של כתוביות."),
        ]
        for (encoding, text) in texts {
            let bytes = try XCTUnwrap(encode(text, as: encoding), encoding)
            let guess = try XCTUnwrap(LegacyEncoding.detect(bytes))
            XCTAssertEqual(guess.text, text, encoding)
            XCTAssertFalse(guess.doubtful, encoding)
        }
        // Russian all in lower case still reads as Russian (ы, ь, я are no Hebrew letters), though
        // as doubtful: the same bytes are upper-case KOI8-R.
        // Short Hebrew lines too (a trial: "שלום" was read "щмен"), doubtful as so few letters are; and
        // their last letter is kept (iconv holds a CP1255 letter back for a mark until flushed).
        for text in ["שלום", "תודה רבה"] {
            XCTAssertEqual(LegacyEncoding.detect(try XCTUnwrap(encode(text, as: "CP1255")))?.text, text)
        }
        let lower = "съешь же ещё этих мягких французских булок, да выпей чаю."
        XCTAssertEqual(LegacyEncoding.detect(try XCTUnwrap(encode(lower, as: "CP1251")))?.text, lower)
        XCTAssertEqual(LegacyEncoding.iconvName("windows-1256"), "CP1256")
        XCTAssertEqual(LegacyEncoding.iconvName("euc-kr"), "CP949")
        XCTAssertNil(LegacyEncoding.iconvName("klingon"))
        XCTAssertNil(LegacyEncoding.decode([0x81, 0x20], as: "CP949"))
    }

    /// `text` in `encoding`, by iconv's reverse direction.
    private func encode(_ text: String, as encoding: String) -> [UInt8]? {
        let cd = iconv_open(encoding, "UTF-8")
        guard cd != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(cd) }
        var input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count * 4)
        let capacity = output.count
        let written: Int? = input.withUnsafeMutableBufferPointer { i in
            output.withUnsafeMutableBufferPointer { o in
                var ip: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(i.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var op: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(o.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var il = i.count, ol = capacity
                return iconv(cd, &ip, &il, &op, &ol) == -1 ? nil : capacity - ol
            }
        }
        return written.map { Array(output.prefix($0)) }
    }

    func testASSEventText() throws {
        let r = try AnnotationReader.parse(Data("""
            [Script Info]
            [Events]
            Format: Start, End, Text
            Dialogue: 0:00:01.00,0:00:02.50,{\\an8}Top{\\b1}bold{\\b0}\\Nnext\\hword, with, commas
            """.utf8), name: "x.ssa")
        XCTAssertEqual(r.annotations, [Annotation(start: 1, end: 2.5, text: "{\\an8}Top{\\b1}bold{\\b0}\nnext\u{00A0}word, with, commas")])
        XCTAssertEqual(CueWriter.assText("<i>a</i> {b}\n\\N"), "{\\i1}a{\\i0} ｛b｝\\N\\\u{2060}N")
    }
}
