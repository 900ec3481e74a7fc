import Foundation
import XCTest
import Soundmark

final class SpectrogramTests: XCTestCase {
    private let configuration = Configuration()

    /// Runs `samples` through a fresh spectrogram in chunks of `chunk` samples and returns every
    /// emitted (frame index, row).
    private func rows(of samples: [Float], chunk: Int) -> [(Int, [Float])] {
        let spectrogram = Spectrogram(configuration: configuration)
        var result: [(Int, [Float])] = []
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + chunk)
            spectrogram.consume(Array(samples[start..<end])) { frame, row in result.append((frame, Array(row))) }
            start = end
        }
        XCTAssertEqual(spectrogram.frameCount, result.count)
        return result
    }

    private func sine(bin k: Int, count n: Int, amplitude: Float = 1) -> [Float] {
        let f = Double(k) * Double(configuration.sampleRate) / Double(configuration.frameLength)
        return (0..<n).map { i in amplitude * Float(sin(2 * Double.pi * f * Double(i) / Double(configuration.sampleRate))) }
    }

    /// Rows are linear power relative to a full-scale sine; this is the same in dB.
    func db(_ power: Float) -> Double { 10 * log10(Double(max(power, 1e-20))) }

    func testRowLayoutOfDefaultConfiguration() {
        // 150 Hz / 7.8125 Hz = 19.2 → bin 19; 3800 Hz / 7.8125 Hz = 486.4 → bin 487.
        XCTAssertEqual(configuration.minBin, 19)
        XCTAssertEqual(configuration.maxBin, 487)
        let out = rows(of: sine(bin: 64, count: 1024), chunk: 1024)
        XCTAssertEqual(out.count, 1)
        XCTAssertEqual(out.first?.1.count, 487 - 19 + 1)
    }

    func testSineAtBinCentreReadsZeroDecibelsAtThatBin() {
        for (k, n) in [(64, 8000), (200, 5000), (25, 1024 + 128 * 7 + 50)] {
            let out = rows(of: sine(bin: k, count: n), chunk: n)
            XCTAssertEqual(out.count, (n - 1024) / 128 + 1, "frame count for \(n) samples")
            XCTAssertEqual(out.map(\.0), Array(0..<out.count), "frame indices are consecutive from 0")
            for (frame, row) in out {
                let maxIndex = row.indices.max { row[$0] < row[$1] }!
                XCTAssertEqual(maxIndex + configuration.minBin, k, "bin of the maximum, frame \(frame)")
                XCTAssertEqual(db(row[maxIndex]), 0, accuracy: 0.5, "level of a full-scale sine, frame \(frame)")
                // A Hann window leaks into the neighbours (−6 dB) and nothing far away.
                XCTAssertEqual(db(row[maxIndex + 1]), -6.02, accuracy: 0.5)
                if maxIndex + 10 < row.count { XCTAssertLessThan(db(row[maxIndex + 10]), -60) }
            }
        }
        // Half amplitude is −6 dB.
        let half = rows(of: sine(bin: 64, count: 2048, amplitude: 0.5), chunk: 2048)
        XCTAssertEqual(db(half[0].1[64 - configuration.minBin]), -6.02, accuracy: 0.5)
    }

    func testFewerSamplesThanOneFrameEmitNothing() {
        XCTAssertEqual(rows(of: sine(bin: 64, count: 1023), chunk: 100).count, 0)
        XCTAssertEqual(rows(of: sine(bin: 64, count: 1024 + 127), chunk: 100).count, 1)
        XCTAssertEqual(rows(of: sine(bin: 64, count: 1024 + 128), chunk: 100).count, 2)
    }

    func testChunkingDoesNotChangeTheRows() {
        // Deterministic broadband test signal: two tones plus LCG noise.
        var state: UInt32 = 12345
        let n = 8000
        let samples: [Float] = (0..<n).map { i in
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Float(state >> 8) / Float(1 << 24) - 0.5
            let t = Double(i) / 8000
            return 0.4 * Float(sin(2 * .pi * 440 * t)) + 0.2 * Float(sin(2 * .pi * 1234.5 * t)) + 0.1 * noise
        }
        let whole = rows(of: samples, chunk: n)
        XCTAssertEqual(whole.count, (n - 1024) / 128 + 1)
        for chunk in [1, 77, 1000] {
            let chunked = rows(of: samples, chunk: chunk)
            XCTAssertEqual(chunked.count, whole.count, "chunk \(chunk)")
            XCTAssertEqual(chunked.map(\.0), whole.map(\.0), "chunk \(chunk)")
            XCTAssertTrue(zip(chunked, whole).allSatisfy { $0.1 == $1.1 }, "rows differ with chunks of \(chunk)")
        }
    }
}
