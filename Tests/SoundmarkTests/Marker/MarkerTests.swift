import XCTest
@testable import Soundmark

final class MarkerTests: XCTestCase {
    /// Deterministic music-like test signal at 16 kHz: chords of harmonic tones changing every
    /// 250 ms with a decaying envelope, over quiet noise.
    static func music(seconds: Double, seed: UInt64 = 7) -> [Float] {
        var rng = SplitMix64(seed: seed)
        let rate = 16_000, count = Int(seconds * Double(rate))
        var out = [Float](repeating: 0, count: count)
        let note = rate / 4
        var start = 0
        while start < count {
            let root = 110 * pow(2, Double(rng.next() % 24) / 12)
            for voice in 0..<3 {
                let f = root * [1, 1.26, 1.5][voice]
                for h in 1...8 where f * Double(h) < 7000 {
                    let amp = 0.08 / Double(h)
                    let phase = Double(rng.next() % 1000) / 1000 * 2 * .pi
                    for i in start..<min(count, start + note) {
                        let t = Double(i - start) / Double(rate)
                        out[i] += Float(amp * exp(-3 * t) * sin(2 * .pi * f * Double(h) * t + phase))
                    }
                }
            }
            start += note
        }
        for i in 0..<count { out[i] += Float(Int(rng.next() % 2001) - 1000) / 1000 * 0.003 }
        return out
    }

    /// Pink noise (power falling 3 dB per octave) at 16 kHz: white noise through Paul Kellett's
    /// three-pole filter (±0.05 dB from 10 Hz to 7 kHz), seeded.
    static func pinkNoise(count: Int, seed: UInt64) -> [Float] {
        var rng = SplitMix64(seed: seed)
        var b0: Float = 0, b1: Float = 0, b2: Float = 0
        return (0..<count).map { _ in
            let white = Float(Int(rng.next() % 2001) - 1000) / 1000
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            return b0 + b1 + b2 + white * 0.1848
        }
    }

    /// 10 s of ``music(seconds:seed:)`` marked with payload 0xC0FFEE, plus ``pinkNoise(count:seed:)``
    /// (seed + 100) `snr` dB under it.
    static func markedInPinkNoise(seed: UInt64, snr: Float) -> [Float] {
        let audio = music(seconds: 10, seed: seed)
        let marked = zip(audio, MarkerEmbedder(payload: 0xC0FFEE).mark(for: audio)).map { $0 + $1 }
        let noise = pinkNoise(count: marked.count, seed: seed + 100)
        let gain = (marked.reduce(0) { $0 + $1 * $1 } / noise.reduce(0) { $0 + $1 * $1 } / pow(10, snr / 10)).squareRoot()
        return zip(marked, noise).map { $0 + $1 * gain }
    }

    func testAWindowStraddlingANeighbouringMarkedSpotIsNotTheSegmentsMarker() throws {
        // A recording: 8 s of other music, spot-b (payload 222) from 8 to 23 s, forest (not marked)
        // from 23 to 33 s. The window 20–30 s decoded 222 (its marked audio is before 23 s) and lies
        // 70 % inside forest's segment: forest was reported with spot-b's marker.
        let items = ["spot-a", "spot-b", "forest"].map { MediaItem(id: $0, title: $0) }
        let index = CatalogIndex(configuration: Configuration(), items: try items.map { ($0, try TestSupport.referenceSignature(
            $0.id == "forest" ? "supertux-forest" : "wesnoth-knolls")) })
        func segment(_ id: String, _ start: Double, _ end: Double) -> Segment {
            let i = index.references.firstIndex { $0.item.id == id }!
            return Segment(referenceIndex: i, item: index.references[i].item, start: start, end: end, referenceStart: 0,
                           referenceEnd: end - start, frequencySkew: 0, timeScale: 1, confidence: 1, hits: 100)
        }
        let windows = [MarkerDetection(payload: 222, start: 10, end: 20, confidence: 0.9, windows: 1),
                       MarkerDetection(payload: 222, start: 20, end: 30, confidence: 0.8, windows: 1)]
        let result = MarkerRefinement.apply(to: [segment("spot-b", 8, 23), segment("forest", 23, 33)], windows: windows,
                                            markers: ["spot-a": 111, "spot-b": 222], index: index)
        XCTAssertEqual(result.map(\.segment.item.id), ["spot-b", "forest"])
        XCTAssertEqual(result[0].marker?.payload, 222)
        XCTAssertEqual(result[0].marker?.referenceID, "spot-b")
        XCTAssertNil(result[1].marker, "forest's audio carries no marker")
        // A payload no reference records is still reported for the segment it lies in.
        let unknown = MarkerRefinement.apply(to: [segment("forest", 23, 33)],
                                             windows: [MarkerDetection(payload: 999, start: 23, end: 33, confidence: 0.9, windows: 1)],
                                             markers: ["spot-b": 222], index: index)
        XCTAssertEqual(unknown[0].marker?.payload, 999)
    }

    func testCodeRoundTripAndCRC() {
        for payload: UInt32 in [0, 1, 0xDEAD_BEEF, 0xFFFF_FFFF, 123_456] {
            let coded = MarkerCode.encode(payload: payload)
            XCTAssertEqual(coded.count, 186)
            XCTAssertEqual(MarkerCode.decode(soft: coded.map { $0 ? 1 : -1 }), payload)
            // 12 coded bits flipped out of 186 are corrected.
            var soft: [Float] = coded.map { $0 ? 1 : -1 }
            for i in stride(from: 3, to: 186, by: 15) { soft[i] = -soft[i] }
            XCTAssertEqual(MarkerCode.decode(soft: soft), payload)
        }
        // CRC-24/OpenPGP check value of "123456789" is 0x21CF02; here over 4 bytes, fixed values.
        XCTAssertNotEqual(MarkerCode.crc24(1), MarkerCode.crc24(2))
    }

    func testRoundTripInMemory() {
        let audio = Self.music(seconds: 12)
        let mark = MarkerEmbedder(payload: 0xC0FFEE).mark(for: audio)
        XCTAssertEqual(mark.count, audio.count)
        // The mark sits at least 12 dB under the audio (lower on the chords' harmonics; energy outside the band is not marked).
        let markPower = mark.reduce(0) { $0 + Double($1 * $1) }, audioPower = audio.reduce(0) { $0 + Double($1 * $1) }
        let ratio = 10 * log10(markPower / audioPower)
        XCTAssertLessThan(ratio, -12)
        XCTAssertGreaterThan(ratio, -40)
        let marked = zip(audio, mark).map { $0 + $1 }
        let found = MarkerDetector().detect(samples: marked)
        XCTAssertEqual(found.map(\.payload), [0xC0FFEE])
        XCTAssertEqual(found.first?.start, 0)
        XCTAssertEqual(found.first?.end ?? 0, 12, accuracy: 0.001)
        XCTAssertGreaterThan(found.first?.confidence ?? 0, 0.8)
        XCTAssertEqual(MarkerDetector().detect(samples: audio), [])
    }

    /// Speed changes (pitch and tempo together) up to ±2.5 % are read by default, also between
    /// the coarse steps of the search; ±4 % only with the wider search.
    func testSpeedChanges() {
        let audio = Self.music(seconds: 8, seed: 5) // one window
        let marked = zip(audio, MarkerEmbedder(payload: 77).mark(for: audio)).map { $0 + $1 }
        func played(_ speed: Double) -> [Float] {
            // Played `speed` times fast: output sample n is input sample n · speed.
            let count = Int(Double(marked.count - 1) / speed)
            return (0..<count).map { n -> Float in
                let x = Double(n) * speed, i = Int(x), f = Float(x - Double(i))
                return marked[i] + f * (marked[min(i + 1, marked.count - 1)] - marked[i])
            }
        }
        for speed in [1.02, 0.98, 1.013, 0.9935] {
            XCTAssertEqual(MarkerDetector().detect(samples: played(speed)).map(\.payload), [77], "\(speed)")
        }
        XCTAssertEqual(MarkerDetector().detect(samples: played(1.04)), [])
        XCTAssertEqual(MarkerDetector(speedSearch: true).detect(samples: played(1.04)).map(\.payload), [77])
        XCTAssertEqual(MarkerDetector().detect(samples: audio), [])
        XCTAssertEqual(MarkerDetector(speedSearch: true).detect(samples: audio), [])
    }

    /// The masking model lowers the mark on a tone standing above a quiet neighbourhood (its
    /// modulation would be heard beside it) and keeps the whole strength on dense noise.
    func testMarkIsLoweredOnIsolatedTones() {
        let rate = 16_000.0
        let tone = (0..<96_000).map { Float(0.3 * sin(2 * .pi * 1000 * Double($0) / rate)) }
        var rng = SplitMix64(seed: 9)
        let noise = (0..<96_000).map { _ in Float(Int(rng.next() % 2001) - 1000) / 1000 * 0.3 }
        func markLevel(_ audio: [Float], band: Bool) -> Double {
            let mark = MarkerEmbedder(payload: 5).mark(for: audio)
            let m = mark.reduce(0) { $0 + Double($1 * $1) }, x = audio.reduce(0) { $0 + Double($1 * $1) }
            // White noise: 7/16 of its power lies in the marked band (500–4000 Hz of 8000 Hz).
            return 10 * log10(m / (x * (band ? 3500.0 / 8000 : 1)))
        }
        // Dense noise: about the default strength (-12 dB) in its band (random dips between cells
        // lower a little of it at the low end).
        let dense = markLevel(noise, band: true)
        XCTAssertLessThanOrEqual(dense, MarkerEmbedder.defaultStrength + 0.5)
        XCTAssertGreaterThan(dense, MarkerEmbedder.defaultStrength - 3.5)
        // A pure 1 kHz tone: its cells stand far above their neighbours, the mark lies at least 10 dB lower.
        XCTAssertLessThan(markLevel(tone, band: false), MarkerEmbedder.defaultStrength - 10)
    }

    /// Files marked by the first builds (format version 1, 500–4000 Hz) still decode; the default
    /// embedder writes version 2, and both versions decode after a cut.
    func testBothFormatVersionsDecode() {
        let audio = Self.music(seconds: 12, seed: 21)
        XCTAssertEqual(MarkerEmbedder(payload: 1).format.version, 2)
        for format in [MarkerFormat.v1, MarkerFormat.v2] {
            let mark = MarkerEmbedder(payload: 0x5EED_0000 + UInt32(format.version), format: format).mark(for: audio)
            let marked = Array(zip(audio, mark).map { $0 + $1 }.dropFirst(7_777))
            XCTAssertEqual(MarkerDetector().detect(samples: marked).map(\.payload), [0x5EED_0000 + UInt32(format.version)], "version \(format.version)")
        }
        XCTAssertEqual(MarkerFormat.v2.cellsPerFrame, 63)
        XCTAssertEqual(MarkerFormat.v1.cellsPerFrame, 56)
    }

    /// Bass-heavy audio (most of its power under 500 Hz) under white noise 10 dB below it: the noise
    /// owns most of 500–4000 Hz, so version 1 loses the payload and version 2's cells under 500 Hz
    /// carry it through. The coded cells' column weights (from the sync cells) give version 1 its
    /// payload back: its few columns that the audio still holds outweigh those the noise owns.
    func testBassHeavyAudioUnderNoiseNeedsTheLowBand() {
        var rng = SplitMix64(seed: 17)
        func uniform() -> Float { Float(Int(rng.next() % 2001) - 1000) / 1000 }
        let count = 12 * 16_000
        // Noise through two one-pole low-passes at about 250 Hz, its level changing every 250 ms.
        var bass = [Float](repeating: 0, count: count)
        var stages: [Float] = [0, 0]
        let a: Float = 0.1
        var level: Float = 1
        for i in 0..<count {
            if i % 4_000 == 0 { level = 0.5 + abs(uniform()) }
            var x = uniform() * level
            for s in 0..<2 { stages[s] += a * (x - stages[s]); x = stages[s] }
            bass[i] = x
        }
        let power = bass.reduce(0) { $0 + $1 * $1 } / Float(count)
        let scale = 0.2 / power.squareRoot()
        bass = bass.map { $0 * scale }
        let noiseLevel = 0.2 / Float(10).squareRoot() * Float(3).squareRoot() // uniform ±1 has power 1/3
        let noise = (0..<count).map { _ in uniform() * noiseLevel }
        func found(_ format: MarkerFormat, weighted: Bool) -> [UInt32] {
            let mark = MarkerEmbedder(payload: 909, format: format).mark(for: bass)
            let detector = MarkerDetector()
            detector.weighsColumns = weighted
            return detector.detect(samples: (0..<count).map { bass[$0] + mark[$0] + noise[$0] }).map(\.payload)
        }
        XCTAssertEqual(found(.v2, weighted: false), [909])
        XCTAssertEqual(found(.v1, weighted: false), [])
        XCTAssertEqual(found(.v2, weighted: true), [909])
        XCTAssertEqual(found(.v1, weighted: true), [909])
    }

    /// Generated music (10 s, seeds 1–4) marked and buried in seeded pink noise 6 and 3 dB under
    /// it: the weighted cell difference (the 4 frames either side, from 16 ms) decodes every clip
    /// at 6 dB and 2 of 4 at 3 dB; the four-neighbour difference it replaced (32 and 64 ms) missed
    /// seed 2 at 6 dB and all 4 at 3 dB. No clip gives another payload. (Without the column
    /// weights, as measured when the difference changed: they decode more of these clips with either difference.)
    func testWeightedCellDifferenceDecodesUnderPinkNoise() {
        func decoded(snr: Float, _ difference: MarkerDetector.CellDifference) -> [UInt64] {
            (UInt64(1)...4).filter { seed in
                let detector = MarkerDetector()
                detector.cellDifference = difference
                detector.weighsColumns = false
                let found = detector.detect(samples: Self.markedInPinkNoise(seed: seed, snr: snr)).map(\.payload)
                XCTAssertTrue(found.allSatisfy { $0 == 0xC0FFEE }, "seed \(seed) at \(snr) dB: \(found)")
                return !found.isEmpty
            }
        }
        XCTAssertEqual(decoded(snr: 6, .weighted), [1, 2, 3, 4])
        XCTAssertEqual(decoded(snr: 6, .fourNeighbours), [1, 3, 4])
        XCTAssertEqual(decoded(snr: 3, .weighted), [1, 4])
        XCTAssertEqual(decoded(snr: 3, .fourNeighbours), [])
    }

    /// Generated music (10 s, seeds 1–6) marked and buried in seeded pink noise 3 dB under
    /// it: with the coded cells weighted per column from the sync cells every clip decodes at 3 dB
    /// (and seeds 1 and 3 at 1.5 dB, none unweighted); unweighted (the detector before the
    /// weights) only seeds 1, 4 and 5. No clip gives another payload.
    func testColumnWeightsDecodeUnderPinkNoise() {
        func decoded(snr: Float, weighted: Bool) -> [UInt64] {
            (UInt64(1)...6).filter { seed in
                let detector = MarkerDetector()
                detector.weighsColumns = weighted
                let found = detector.detect(samples: Self.markedInPinkNoise(seed: seed, snr: snr)).map(\.payload)
                XCTAssertTrue(found.allSatisfy { $0 == 0xC0FFEE }, "seed \(seed) at \(snr) dB: \(found)")
                return !found.isEmpty
            }
        }
        XCTAssertEqual(decoded(snr: 3, weighted: true), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(decoded(snr: 3, weighted: false), [1, 4, 5])
    }

    /// Windows of a stream reuse the sub-frame spectra they share with the previous window: each
    /// window's sync z-score, payload and confidence are those of the window analysed alone, for
    /// windows 5 s apart (half shared), 2.5 s apart, one not on the sub-frame grid (3 samples on)
    /// and one before the last (nothing shared).
    func testStreamWindowsReuseSharedSpectra() {
        let audio = Self.music(seconds: 24, seed: 9)
        let marked = zip(audio, MarkerEmbedder(payload: 31337).mark(for: audio)).map { $0 + $1 }
        let noise = Self.pinkNoise(count: marked.count, seed: 77)
        let noisy = zip(marked, noise).map { $0 + $1 * 0.01 }
        let window = 160_000
        let streaming = MarkerDetector()
        var decoded = 0
        for start in [0, 80_000, 120_000, 120_003, 40_000] {
            let (alone, streamed) = noisy.withUnsafeBufferPointer { all in
                let slice = UnsafeBufferPointer(rebasing: all[start ..< start + window])
                return (MarkerDetector().analyseSearchingSpeed(slice), streaming.analyseSearchingSpeed(slice, at: start))
            }
            XCTAssertEqual(streamed.z, alone.z, "window at sample \(start)")
            XCTAssertEqual(streamed.payload, alone.payload, "window at sample \(start)")
            XCTAssertEqual(streamed.confidence, alone.confidence, "window at sample \(start)")
            if alone.payload == 31337 { decoded += 1 }
        }
        XCTAssertEqual(decoded, 5)
    }

    func testSelectionIsTheSortedValue() {
        var rng = SplitMix64(seed: 12)
        for count in [1, 2, 3, 10, 63, 626] {
            // Values with many ties (0 ..< 20) and without.
            for range in [20, 1_000_000] {
                let values = (0..<count).map { _ in Float(rng.next() % UInt64(range)) }
                for k in Set([0, count / 10, count / 2, count - 1]) {
                    var copy = values
                    XCTAssertEqual(MarkerDetector.select(&copy, k), values.sorted()[k], "count \(count), k \(k)")
                }
            }
        }
    }

    func testDecodesAfterCutAndNoise() {
        let audio = Self.music(seconds: 20, seed: 11)
        let mark = MarkerEmbedder(payload: 42).mark(for: audio)
        var rng = SplitMix64(seed: 3)
        // Cut 3.3317 s off the start (not on the frame grid), add noise about 25 dB under the audio.
        let cut = Array(zip(audio, mark).map { $0 + $1 }.dropFirst(53_307))
        let noisy = cut.map { $0 + Float(Int(rng.next() % 2001) - 1000) / 1000 * 0.004 }
        let found = MarkerDetector().detect(samples: noisy)
        XCTAssertEqual(found.map(\.payload), [42])
    }

    /// The library writer, then detection at 16 kHz and at the fingerprint's 8 kHz, in chunks.
    func testWriterAndDetectionAtEightKilohertz() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let original = dir.appendingPathComponent("original.flac").path
        try TestSupport.ffmpeg(["-ss", "2", "-t", "16", "-i", TestSupport.referencePath("wesnoth-battle")], output: original)
        let marked = dir.appendingPathComponent("marked.mp3").path
        let summary = try MarkerWriter.embed(input: original, output: marked, embedder: MarkerEmbedder(payload: 0xABCD_0123))
        XCTAssertEqual(summary.encoder, "libmp3lame")
        XCTAssertEqual(summary.duration, 16, accuracy: 0.01)
        for rate in [16_000, 8_000] {
            let decoder = try MediaDecoder(source: marked, sampleRate: rate)
            let found = try MarkerDetector(sampleRate: rate).detect(decoding: decoder)
            XCTAssertEqual(found.map(\.payload), [0xABCD_0123], "\(rate) Hz")
            XCTAssertEqual(found.first?.windows, 3, "\(rate) Hz") // 0–10, 5–15 and the last 10 s
            XCTAssertEqual(found.first?.start, 0)
        }
        // Streaming in odd chunks gives the same windows as a whole array.
        let samples = try MediaDecoder.decodeAll(source: marked, sampleRate: 8_000)
        let stream = MarkerDetector(sampleRate: 8_000)
        var windows: [MarkerDetection] = []
        var i = 0
        while i < samples.count {
            windows += stream.consume(Array(samples[i ..< min(samples.count, i + 3_333)]))
            i += 3_333
        }
        windows += stream.finish()
        XCTAssertEqual(MarkerDetector.merge(windows), MarkerDetector(sampleRate: 8_000).detect(samples: samples))
        XCTAssertEqual(windows.map(\.start), [0, 5, Double(samples.count) / 8_000 - 10])
    }
}
