import Foundation
import XCTest
import Soundmark

final class FingerprintTests: XCTestCase {
    private let configuration = Configuration()
    private var width: Int { configuration.maxBin - configuration.minBin + 1 }
    private let quiet: Float = -100   // below the −75 dB peak floor

    // MARK: - PeakPicker

    /// A synthetic spectrogram of `frames` rows at `quiet`, with `cells` (frame, column, dB) set.
    private func spectrogram(frames: Int, _ cells: [(Int, Int, Float)]) -> [[Float]] {
        var rows = [[Float]](repeating: [Float](repeating: quiet, count: width), count: frames)
        for (f, c, v) in cells { rows[f][c] = v }
        return rows
    }

    /// Peaks of a dB spectrogram: rows are fed as linear power, as ``Spectrogram`` emits them;
    /// peak powers and bins come back rounded to 0.001 dB / 0.0001 bin.
    private func peaks(_ rows: [[Float]], configuration: Configuration? = nil) -> [Peak] {
        let picker = PeakPicker(configuration: configuration ?? self.configuration)
        var result: [Peak] = []
        let collect: (Peak) -> Void = { p in
            result.append(Peak(frame: p.frame, bin: (p.bin * 10000).rounded() / 10000, power: (p.power * 1000).rounded() / 1000))
        }
        for (i, row) in rows.enumerated() {
            let linear = row.map { Float(pow(10, Double($0) / 10)) }
            linear.withUnsafeBufferPointer { picker.consume(frame: i, row: $0, emit: collect) }
        }
        picker.flush(emit: collect)
        return result
    }

    /// Bin index of column `c` of a row.
    private func bin(_ c: Int) -> Float { Float(configuration.minBin + c) }

    func testIsolatedMaximumIsExactlyOnePeak() {
        let rows = spectrogram(frames: 40, [(20, 50, -20)])
        XCTAssertEqual(peaks(rows), [Peak(frame: 20, bin: bin(50), power: -20)])
        // At the very first and last frame too (outside the stream counts as −∞).
        XCTAssertEqual(peaks(spectrogram(frames: 5, [(0, 10, -30)])), [Peak(frame: 0, bin: bin(10), power: -30)])
        XCTAssertEqual(peaks(spectrogram(frames: 5, [(4, 10, -30)])), [Peak(frame: 4, bin: bin(10), power: -30)])
    }

    func testPeaksBelowTheFloorAreDropped() {
        XCTAssertEqual(peaks(spectrogram(frames: 30, [(10, 50, -80)])), [])
        XCTAssertEqual(peaks(spectrogram(frames: 30, [(10, 50, -74)])).count, 1)
    }

    func testParabolicInterpolationOfTheBin() {
        // Neighbours −26 (below) and −23 (above) around −20: δ = ½(l − r)/(l − 2v + r) = ½·(−3)/(−9) = 1/6.
        let rows = spectrogram(frames: 30, [(10, 100, -20), (10, 99, -26), (10, 101, -23)])
        let found = peaks(rows)
        XCTAssertEqual(found.count, 1)
        XCTAssertEqual(found.first?.frame, 10)
        XCTAssertEqual(Double(found.first?.bin ?? 0), Double(bin(100)) + 1.0 / 6.0, accuracy: 1e-4)
        XCTAssertEqual(found.first?.power, -20)
    }

    func testTwoMaximaWithinOneNeighbourhoodKeepOnlyTheLarger() {
        // 4 frames and 5 bins apart: inside ±9 frames × ±13 bins.
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (24, 55, -15)])),
                       [Peak(frame: 24, bin: bin(55), power: -15)])
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -10), (24, 45, -15)])),
                       [Peak(frame: 20, bin: bin(50), power: -10)])
        // Same frame, 13 bins apart: still one neighbourhood.
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (20, 63, -25)])),
                       [Peak(frame: 20, bin: bin(50), power: -20)])
        // Control: 10 frames apart, or 14 bins apart, both are peaks.
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (30, 50, -15)])).count, 2)
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (20, 64, -15)])).count, 2)
    }

    func testEqualMaximaAreBrokenTowardsEarlierFrameAndLowerBin() {
        // Same value 3 frames apart: the earlier one.
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (23, 50, -20)])),
                       [Peak(frame: 20, bin: bin(50), power: -20)])
        // Same value in one frame 6 bins apart: the lower one.
        XCTAssertEqual(peaks(spectrogram(frames: 40, [(20, 50, -20), (20, 56, -20)])),
                       [Peak(frame: 20, bin: bin(50), power: -20)])
    }

    func testSteadyToneIsNotAPeakInEveryFrame() {
        let radius = configuration.peakFrameRadius
        // A plateau no longer than one neighbourhood: exactly one peak, at its first frame.
        let short = peaks(spectrogram(frames: 40, (10..<15).map { ($0, 100, Float(-20)) }))
        XCTAssertEqual(short, [Peak(frame: 10, bin: bin(100), power: -20)])
        // A long steady tone: one peak per neighbourhood at most, starting at its first frame.
        let length = 60
        let long = peaks(spectrogram(frames: 90, (10..<(10 + length)).map { ($0, 100, Float(-20)) }))
        XCTAssertFalse(long.isEmpty)
        XCTAssertEqual(long.first?.frame, 10)
        XCTAssertLessThanOrEqual(long.count, (length + radius) / (radius + 1), "peaks \(long.map(\.frame))")
        for (a, b) in zip(long, long.dropFirst()) {
            XCTAssertGreaterThan(b.frame - a.frame, radius, "two peaks of a steady tone inside one neighbourhood")
        }
        XCTAssertTrue(long.allSatisfy { $0.bin == bin(100) && $0.power == -20 })
    }

    func testPeaksDoNotDependOnWhenRowsArrive() {
        // Random spectrogram; the picker's decision only depends on the rows, and they are
        // emitted in frame order, then bin order.
        var state: UInt32 = 99
        let rows: [[Float]] = (0..<120).map { _ in
            (0..<width).map { _ in
                state = state &* 1_664_525 &+ 1_013_904_223
                return -70 + 60 * Float(state >> 8) / Float(1 << 24)
            }
        }
        let found = peaks(rows)
        XCTAssertFalse(found.isEmpty)
        for (a, b) in zip(found, found.dropFirst()) {
            XCTAssertTrue(a.frame < b.frame || (a.frame == b.frame && a.bin < b.bin))
        }
        // Brute force: strict maximum of its neighbourhood with the documented tie-break.
        var expected: [(Int, Int)] = []
        let r = configuration.peakFrameRadius, br = configuration.peakBinRadius
        for t in rows.indices {
            for b in 0..<width {
                let v = rows[t][b]
                var ok = v >= Float(configuration.peakFloor)
                for dt in -r...r where ok {
                    let u = t + dt
                    guard u >= 0 && u < rows.count else { continue }
                    for db in -br...br {
                        let c = b + db
                        guard c >= 0 && c < width, dt != 0 || db != 0 else { continue }
                        let w = rows[u][c]
                        let earlier = dt < 0 || (dt == 0 && db < 0)
                        if w > v || (w == v && earlier) { ok = false; break }
                    }
                }
                if ok { expected.append((t, b)) }
            }
        }
        XCTAssertEqual(found.map(\.frame), expected.map(\.0))
        XCTAssertEqual(found.count, expected.count)
        for (p, e) in zip(found, expected) {
            XCTAssertLessThanOrEqual(abs(Double(p.bin) - Double(configuration.minBin + e.1)), 0.5)
            XCTAssertEqual(p.power, rows[e.0][e.1], accuracy: 0.001)
        }
    }

    // MARK: - LandmarkBuilder

    private func landmarks(_ peaks: [Peak], configuration: Configuration? = nil) -> [Landmark] {
        let builder = LandmarkBuilder(configuration: configuration ?? self.configuration)
        var result: [Landmark] = []
        for p in peaks { builder.consume(p) { result.append($0) } }
        builder.flush { result.append($0) }
        return result
    }

    func testTwoPeaksInTheTargetZoneMakeOneLandmark() {
        let out = landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 20, bin: 96, power: -12)])
        XCTAssertEqual(out, [Landmark(anchorFrame: 10, anchorBin: 64, targetBin: 96, deltaFrames: 10)])
        // Zone edges are inclusive: 2 and 48 frames later, exactly one octave up or down.
        XCTAssertEqual(landmarks([Peak(frame: 0, bin: 64, power: -10), Peak(frame: 2, bin: 128, power: -10)]),
                       [Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 128, deltaFrames: 2)])
        XCTAssertEqual(landmarks([Peak(frame: 0, bin: 64, power: -10), Peak(frame: 48, bin: 32, power: -10)]),
                       [Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 32, deltaFrames: 48)])
    }

    func testPeaksOutsideTheTargetZoneMakeNoLandmark() {
        // Too late (49 frames), too early (1 frame, and same frame), more than an octave up or down.
        XCTAssertEqual(landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 59, bin: 70, power: -10)]), [])
        XCTAssertEqual(landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 11, bin: 70, power: -10)]), [])
        XCTAssertEqual(landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 10, bin: 90, power: -10)]), [])
        XCTAssertEqual(landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 20, bin: 129, power: -10)]), [])
        XCTAssertEqual(landmarks([Peak(frame: 10, bin: 64, power: -10), Peak(frame: 20, bin: 31.5, power: -10)]), [])
    }

    func testFanOutKeepsTheStrongestTargets() {
        var config = Configuration()
        config.fanOut = 3
        let anchor = Peak(frame: 0, bin: 100, power: -10)
        let powers: [Float] = [-30, -12, -25, -5, -40, -8, -20, -15]
        let targets = powers.enumerated().map { Peak(frame: 5 + $0.offset, bin: Float(110 + 10 * $0.offset), power: $0.element) }
        let out = landmarks([anchor] + targets, configuration: config).filter { $0.anchorFrame == 0 }
        // The three strongest: −5 (frame 8), −8 (frame 10), −12 (frame 6), emitted in time order.
        XCTAssertEqual(out.map(\.deltaFrames), [6, 8, 10])
        XCTAssertEqual(out.map(\.targetBin), [120, 140, 160])
        XCTAssertTrue(out.allSatisfy { $0.anchorBin == 100 })
        // Default fan-out 5: −5, −8, −12, −15, −20.
        let five = landmarks([anchor] + targets).filter { $0.anchorFrame == 0 }
        XCTAssertEqual(Configuration().fanOut, 5)
        XCTAssertEqual(five.map(\.deltaFrames), [6, 8, 10, 11, 12])
        // Every anchor gets at most fanOut targets.
        let all = landmarks([anchor] + targets, configuration: config)
        let perAnchor = Dictionary(grouping: all, by: \.anchorFrame).mapValues(\.count)
        XCTAssertTrue(perAnchor.values.allSatisfy { $0 <= 3 }, "\(perAnchor)")
    }

    // MARK: - LandmarkHasher

    func testHashOfAFixedLandmarkFollowsTheDocumentedFormula() {
        let hasher = LandmarkHasher(configuration: configuration)
        // anchorCount = ⌈log2(3800/150)·48⌉ + 1 = ⌈223.82⌉ + 1 = 225
        // ratioHalf = ⌈1·48⌉ + 1 = 49, ratioCount = 99; deltaCount = 48 − 2 + 1 = 47.
        XCTAssertEqual(hasher.anchorCount, 225)
        XCTAssertEqual(hasher.ratioCount, 99)
        XCTAssertEqual(hasher.deltaCount, 47)
        XCTAssertEqual(hasher.hashCount, 225 * 99 * 47)
        // Anchor bin 64 = 500 Hz: ⌊log2(500/150)·48⌋ = ⌊83.374⌋ = 83.
        // Ratio 96/64 = 1.5: ⌊log2(1.5)·48⌋ = ⌊28.078⌋ = 28, + 49 = 77. Delta 10 − 2 = 8.
        // (83·99 + 77)·47 + 8 = 389826.
        let l = Landmark(anchorFrame: 123, anchorBin: 64, targetBin: 96, deltaFrames: 10)
        XCTAssertEqual(hasher.hash(l), 389_826)
        // The anchor frame is not part of the hash.
        XCTAssertEqual(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 96, deltaFrames: 10)), 389_826)
        // One more frame of delta is the next hash; a target an octave down is ratio step 1.
        XCTAssertEqual(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 96, deltaFrames: 11)), 389_827)
        XCTAssertEqual(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 32, deltaFrames: 2)),
                       UInt32((83 * 99 + 1) * 47 + 0))
    }

    func testHashOutOfRangeIsNil() {
        let hasher = LandmarkHasher(configuration: configuration)
        // Below 150 Hz (bin 19 = 148.4 Hz) and above the top of the anchor scale.
        XCTAssertNil(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 19, targetBin: 30, deltaFrames: 10)))
        XCTAssertNil(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 600, targetBin: 600, deltaFrames: 10)))
        // Delta outside 2...48.
        XCTAssertNil(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 96, deltaFrames: 1)))
        XCTAssertNil(hasher.hash(Landmark(anchorFrame: 0, anchorBin: 64, targetBin: 96, deltaFrames: 49)))
    }

    func testRescalingUndoesASpeedChange() {
        let hasher = LandmarkHasher(configuration: configuration)
        let original = Landmark(anchorFrame: 50, anchorBin: 64, targetBin: 96, deltaFrames: 21)
        // Played 5 % faster and higher: bins ×1.05, 21 frames become 20.
        let fast = Landmark(anchorFrame: 48, anchorBin: 64 * 1.05, targetBin: 96 * 1.05, deltaFrames: 20)
        let expected = hasher.hash(original)
        XCTAssertNotNil(expected)
        XCTAssertEqual(hasher.hash(fast, timeScale: 1.05, frequencyScale: 1.05), expected)
        // Without undoing the change the hash differs (anchor moves ≈ 3.4 steps, delta by one).
        XCTAssertNotEqual(hasher.hash(fast), expected)
        // Tempo only: bins unchanged, delta rescaled.
        let stretched = Landmark(anchorFrame: 48, anchorBin: 64, targetBin: 96, deltaFrames: 20)
        XCTAssertEqual(hasher.hash(stretched, timeScale: 1.05, frequencyScale: 1), expected)
    }

    // MARK: - SignatureGenerator and Signature

    private func signature(_ samples: [Float], chunk: Int, role: SignatureGenerator.Role) -> Signature {
        let g = SignatureGenerator(configuration: configuration, role: role)
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + chunk)
            g.append(Array(samples[start..<end]))
            start = end
        }
        return g.signature()
    }

    func testSignatureDoesNotDependOnChunkSize() throws {
        let samples = try TestSupport.referenceSamples("wesnoth-knolls")
        XCTAssertEqual(Double(samples.count) / 8000, 40, accuracy: 0.05)
        for role in [SignatureGenerator.Role.reference, .query] {
            let a = signature(samples, chunk: 4096, role: role)
            let b = signature(samples, chunk: 777, role: role)
            XCTAssertEqual(a.sampleCount, Int64(samples.count))
            XCTAssertGreaterThan(a.landmarks.count, 1000, "\(role)")
            XCTAssertEqual(a.landmarks.count, b.landmarks.count, "\(role)")
            XCTAssertTrue(a == b, "landmarks differ between chunks of 4096 and 777 (\(role))")
            // Landmarks come in anchor-frame order, with deltas inside the target zone.
            XCTAssertTrue(zip(a.landmarks, a.landmarks.dropFirst()).allSatisfy { $0.anchorFrame <= $1.anchorFrame })
            XCTAssertTrue(a.landmarks.allSatisfy { (2...48).contains($0.deltaFrames) })
        }
        // A query signature is denser than a reference signature.
        XCTAssertGreaterThan(signature(samples, chunk: 8000, role: .query).landmarks.count,
                             signature(samples, chunk: 8000, role: .reference).landmarks.count)
    }

    func testSignaturesOfMediaWithShiftedFramingsDropAQuarterHopEach() throws {
        let path = TestSupport.referencePath("wesnoth-knolls")
        let samples = try TestSupport.referenceSamples("wesnoth-knolls")
        let (signatures, tags) = try SignatureGenerator.signatures(ofMedia: path, role: .query, framings: 4)
        XCTAssertEqual(signatures.count, 4)
        XCTAssertFalse(tags.isEmpty)
        for (k, s) in signatures.enumerated() {
            // 1024-sample frames every 128 samples: framing k starts k · 32 samples in.
            let expected = signature(Array(samples.dropFirst(k * 32)), chunk: 4096, role: .query)
            XCTAssertEqual(s.sampleCount, Int64(samples.count - k * 32))
            XCTAssertTrue(s == expected, "framing \(k) differs from the samples with \(k * 32) dropped")
        }
        XCTAssertNotEqual(signatures[0].landmarks, signatures[2].landmarks)
    }

    func testSilenceGivesNoLandmarks() {
        let s = signature([Float](repeating: 0, count: 80000), chunk: 8000, role: .query)
        XCTAssertEqual(s.landmarks, [])
        XCTAssertEqual(s.duration, 10, accuracy: 1e-9)
    }

    func testSignatureDataRepresentationRoundTrip() throws {
        let sig = try TestSupport.referenceSignature("supertux-forest")
        let data = sig.dataRepresentation
        // magic "SMSG" little-endian, then version 1.
        XCTAssertEqual(Array(data.prefix(8)), [0x47, 0x53, 0x4D, 0x53, 1, 0, 0, 0])
        let back = try Signature(dataRepresentation: data)
        XCTAssertEqual(back, sig)
        XCTAssertEqual(back.duration, 40, accuracy: 0.05)

        var custom = Configuration()
        custom.fanOut = 3
        let small = Signature(configuration: custom,
                              landmarks: [Landmark(anchorFrame: -1, anchorBin: 64.25, targetBin: 96.5, deltaFrames: 48)],
                              sampleCount: 12345)
        XCTAssertEqual(try Signature(dataRepresentation: small.dataRepresentation), small)
    }

    func testSignatureOfAnotherFormatVersionIsRefused() throws {
        let sig = try TestSupport.referenceSignature("supertux-forest")
        var data = sig.dataRepresentation
        data[data.startIndex + 4] = UInt8(Configuration.formatVersion + 1)
        XCTAssertThrowsError(try Signature(dataRepresentation: data)) { error in
            guard case SoundmarkError.invalidSignature(let why)? = error as? SoundmarkError else {
                return XCTFail("unexpected error \(error)")
            }
            XCTAssertTrue(why.contains("format version"), why)
        }
        // Foreign and truncated data are refused too.
        var foreign = sig.dataRepresentation
        foreign[foreign.startIndex] = 0
        XCTAssertThrowsError(try Signature(dataRepresentation: foreign))
        XCTAssertThrowsError(try Signature(dataRepresentation: sig.dataRepresentation.dropLast(3)))
        XCTAssertThrowsError(try Signature(dataRepresentation: Data()))
    }
}
