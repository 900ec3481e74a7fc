import Foundation
import XCTest
import Soundmark

/// Choosing the audio stream by language (issue 9.10).
final class AudioStreamTests: XCTestCase {
    func testLanguageCodesOfBothISO639Parts() {
        XCTAssertEqual(LanguageCode.equivalents(of: "en"), ["eng"])
        XCTAssertEqual(LanguageCode.equivalents(of: "DE"), ["deu", "ger"])
        XCTAssertEqual(LanguageCode.equivalents(of: "ger"), ["deu", "ger"])
        XCTAssertEqual(LanguageCode.equivalents(of: "zho"), ["zho", "chi"])
        XCTAssertEqual(LanguageCode.equivalents(of: "gsw"), ["gsw"]) // three letters, no 639-1 code
        for bad in ["", "e", "xx", "english", "e1", "en-US"] { XCTAssertNil(LanguageCode.equivalents(of: bad), bad) }
        XCTAssertTrue(LanguageCode.matches("fre", "fr"))
        XCTAssertTrue(LanguageCode.matches("fra", "fre"))
        XCTAssertFalse(LanguageCode.matches("eng", "de"))
        XCTAssertFalse(LanguageCode.matches(nil, "en"))
    }

    func testDecoderPicksTheStreamInTheLanguageAndListsThemOtherwise() throws {
        let directory = try TestSupport.temporaryDirectory(self)
        let path = directory.appendingPathComponent("three.mkv").path
        // 0: 440 Hz German (default), 1: 1 kHz English, 2: 2 kHz English (not default), 3: untagged.
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1",
                                "-f", "lavfi", "-i", "sine=frequency=1000:duration=1",
                                "-f", "lavfi", "-i", "sine=frequency=2000:duration=1",
                                "-f", "lavfi", "-i", "sine=frequency=3000:duration=1",
                                "-map", "0", "-map", "1", "-map", "2", "-map", "3", "-c:a", "flac",
                                "-metadata:s:a:0", "language=ger", "-metadata:s:a:1", "language=eng",
                                "-metadata:s:a:2", "language=eng",
                                "-disposition:a:0", "default", "-disposition:a:1", "0", "-disposition:a:2", "0",
                                "-disposition:a:3", "0"], output: path)
        let plain = try MediaDecoder(source: path, sampleRate: 8000)
        XCTAssertEqual(plain.streamIndex, 0)
        XCTAssertEqual(plain.audioStreams.map(\.label), ["0 (ger)", "1 (eng)", "2 (eng)", "3 (no language)"])
        XCTAssertEqual(plain.chosenStream.details, "0 (ger, flac, 1 channel, default)")
        XCTAssertEqual(try MediaDecoder(source: path, sampleRate: 8000, language: "en").streamIndex, 1)
        XCTAssertEqual(try MediaDecoder(source: path, sampleRate: 8000, language: "deu").streamIndex, 0)
        // An explicit index wins over the language.
        XCTAssertEqual(try MediaDecoder(source: path, sampleRate: 8000, streamIndex: 2, language: "ger").streamIndex, 2)
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: 8000, language: "fr")) { error in
            XCTAssertEqual(error as? MediaDecodingError, .noStreamInLanguage(path: path, language: "fr", streams: plain.audioStreams))
            XCTAssertEqual((error as? LocalizedError)?.errorDescription,
                           "\(path): no audio stream in language 'fr'; audio streams: 0 (ger), 1 (eng), 2 (eng), 3 (no language)")
        }
    }

    func testLanguageOfAFileWithoutLanguageTagsIsIgnoredWithAWarning() throws {
        let directory = try TestSupport.temporaryDirectory(self)
        let path = directory.appendingPathComponent("plain.flac").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-c:a", "flac"], output: path)
        var warnings: [String] = []
        let decoder = try MediaDecoder(source: path, sampleRate: 8000, language: "eng") { warnings.append($0) }
        XCTAssertEqual(decoder.streamIndex, 0)
        XCTAssertEqual(warnings, ["\(path): no audio stream is tagged with a language; 'eng' ignored"])
    }
}
