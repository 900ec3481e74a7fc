import XCTest
@testable import Soundmark

/// ``RecordingScanner`` on recordings whose speed, tempo or pitch differ from the reference's, made with
/// sox from a sample reference, and on recording times past 2^24 frames.
final class ScannerTimeScaleTests: XCTestCase {
    private let rate = 8000

    private func index() throws -> CatalogIndex {
        let items = try ["wesnoth-knolls", "wesnoth-battle"].map { id in
            (MediaItem(id: id), try TestSupport.referenceSignature(id))
        }
        return CatalogIndex(configuration: Configuration(), items: items)
    }

    private func scan(_ samples: [Float], index: CatalogIndex, frameOffset: Int32 = 0) -> [Segment] {
        let scanner = RecordingScanner(index: index)
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        func feed(_ l: Landmark) {
            var l = l
            l.anchorFrame += frameOffset
            scanner.consume(l)
        }
        samples.withUnsafeBufferPointer { p in g.append(p) { feed($0) } }
        g.finish { feed($0) }
        return scanner.finish(recordingDuration: Double(Int(frameOffset) * index.configuration.hopLength + samples.count) / Double(rate))
    }

    /// knolls from 2 s for 30 s, through `sox EFFECT…`, decoded at 8000 Hz.
    private func processed(_ effect: [String]) throws -> [Float] {
        let dir = try TestSupport.temporaryDirectory(self)
        let source = dir.appendingPathComponent("in.wav").path, output = dir.appendingPathComponent("out.wav").path
        try TestSupport.ffmpeg(["-i", TestSupport.referencePath("wesnoth-knolls"), "-ss", "2", "-t", "30", "-ac", "1"], output: source)
        let r = try TestSupport.run("/usr/bin/sox", [source, output] + effect)
        guard r.status == 0 else { throw XCTSkip("sox failed: \(r.stderr)") }
        return try MediaDecoder.decodeAll(source: output, sampleRate: rate)
    }

    private func assertOnePlay(_ segments: [Segment], timeScale: Double, skew: Double, duration: Double,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(segments.map(\.item.id), ["wesnoth-knolls"], file: file, line: line)
        guard let s = segments.first else { return }
        XCTAssertEqual(s.timeScale, timeScale, accuracy: 0.003, "time scale", file: file, line: line)
        XCTAssertEqual(s.frequencySkew, skew, accuracy: 0.006, "skew", file: file, line: line)
        XCTAssertEqual(s.start, 0, accuracy: 0.15, file: file, line: line)
        XCTAssertEqual(s.end, duration, accuracy: 0.3, file: file, line: line)
        // The line maps the recording onto the reference: 2 s at the start, 32 s at the end.
        XCTAssertEqual(s.referenceTime(at: 0), 2, accuracy: 0.1, file: file, line: line)
        XCTAssertEqual(s.referenceTime(at: duration), 32, accuracy: 0.1, file: file, line: line)
    }

    /// Issue example: a DJ's key-lock (+5 % tempo, same pitch) is one play with time scale
    /// 1.05 and skew 0 (it was split in two with a false jump).
    func testKeyLockTempoChangeIsOnePlay() throws {
        let samples = try processed(["tempo", "1.05"])
        assertOnePlay(scan(samples, index: try index()), timeScale: 1.05, skew: 0, duration: 30 / 1.05)
    }

    /// Issue example: a film converted from 25 to 23.976 frames per second with pitch
    /// correction (`tempo -s 0.95904`) is one piece with time scale 0.959.
    func testFrameRateConversionWithPitchCorrectionIsOnePlay() throws {
        let samples = try processed(["tempo", "-s", "0.95904"])
        assertOnePlay(scan(samples, index: try index()), timeScale: 0.95904, skew: 0, duration: 30 / 0.95904)
    }

    /// Issue example: +100 cents without a tempo change: skew +5.9 %, time scale 1.
    func testPitchShiftWithoutTempoChange() throws {
        let samples = try processed(["pitch", "100"])
        assertOnePlay(scan(samples, index: try index()), timeScale: 1, skew: pow(2, 1.0 / 12) - 1, duration: 30)
    }

    /// Speed (pitch and tempo together, +4 %): time scale and skew both 1.04.
    func testSpeedChange() throws {
        let samples = try processed(["speed", "1.04"])
        assertOnePlay(scan(samples, index: try index()), timeScale: 1.04, skew: 0.04, duration: 30 / 1.04)
    }

    /// A monitor running for months: recording frames past 2^24 (74.6 h) and 2^30 (about
    /// 200 days) are matched like any other (they were silently not before).
    func testRecordingTimesPastTwoToTheTwentyFour() throws {
        let index = try index()
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls")
        let piece = Array(knolls[(5 * rate)..<(25 * rate)])
        for offset: Int32 in [1 << 24 + 12_345, 1 << 30] {
            let segments = scan(piece, index: index, frameOffset: offset)
            XCTAssertEqual(segments.map(\.item.id), ["wesnoth-knolls"], "offset \(offset)")
            guard let s = segments.first else { continue }
            let start = Double(offset) * index.configuration.hopDuration
            XCTAssertEqual(s.start, start, accuracy: 0.15, "offset \(offset)")
            XCTAssertEqual(s.referenceTime(at: start), 5, accuracy: 0.05, "offset \(offset)")
        }
    }
}
