import XCTest
@testable import Soundmark

/// Edges of spots mixed under louder audio, moved outwards by the reference's peaks in the
/// recording's spectrum (``SpectrumEdge``).
final class SpectrumEdgeTests: XCTestCase {
    private let rate = 8000

    private func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    /// Scans `samples`, feeding the spectrum rows when `spectrum`.
    private func scan(_ samples: [Float], index: CatalogIndex, spectrum: Bool = true) -> [Segment] {
        let scanner = RecordingScanner(index: index)
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        samples.withUnsafeBufferPointer { p in
            g.append(p, emit: { scanner.consume($0) },
                     spectrum: spectrum ? { scanner.consumeSpectrum(frame: $0, levels: SpectrumRing.quantise($1)) } : nil)
        }
        g.finish { scanner.consume($0) }
        return scanner.finish(recordingDuration: Double(samples.count) / Double(rate))
    }

    /// `seconds` of reference `id` from `from` s mixed `db` dB under a bed of `bed` from 0 s, at `at` s
    /// of a 36 s recording.
    private func mix(_ id: String, from: Double, seconds: Double, under bed: String, db: Double, at: Double) throws -> [Float] {
        let reference = try TestSupport.referenceSamples(id)
        let a = Int(from * Double(rate))
        let spot = Array(reference[a..<(a + Int(seconds * Double(rate)))])
        var out = Array(try TestSupport.referenceSamples(bed)[0..<(36 * rate)])
        let start = Int(at * Double(rate))
        let gain = Float(rms(out[start..<(start + spot.count)]) / rms(spot[...]) * pow(10, -db / 20))
        for (i, v) in spot.enumerated() { out[start + i] += gain * v }
        return out
    }

    /// About 40 s of synthetic speech (espeak-ng), 8000 Hz mono; skips when espeak-ng is missing.
    private func speech() throws -> [Float] {
        let espeak = "/usr/bin/espeak-ng"
        guard FileManager.default.isExecutableFile(atPath: espeak) else { throw XCTSkip("espeak-ng not found at \(espeak)") }
        let dir = try TestSupport.temporaryDirectory(self)
        let wav = dir.appendingPathComponent("speech.wav").path
        let text = String(repeating: "Good evening, here is the news and the weather for the whole region tonight. "
                          + "Traffic is slow on the bridge, and the trains are running about ten minutes late. ", count: 4)
        let r = try TestSupport.run(espeak, ["-s", "150", "-w", wav, text])
        guard r.status == 0 else { throw XCTSkip("espeak-ng failed: \(r.stderr)") }
        return try MediaDecoder.decodeAll(source: wav, sampleRate: rate)
    }

    /// A 16 s spot (12…28 s of the reference) mixed 9 dB under speech at 10 s gives few hits near
    /// its end: from hits alone it ended 1.37 s early (24.63 s for knolls, 24.66 s for battle).
    /// The reference's peaks in the spectrum put its end at 26 s (within 0.15 s); its start,
    /// found from hits, stays within 0.1 s. At 6 dB the ends were 0.28 and 0.19 s early.
    func testSpotUnderSpeechEndsWhereItEnds() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let bed = try speech()
        for id in ["wesnoth-knolls", "wesnoth-battle"] {
            for db in [6.0, 9.0] {
                let reference = try TestSupport.referenceSamples(id)
                let spot = Array(reference[(12 * rate)..<(28 * rate)])
                var out = Array(bed[0..<(36 * rate)])
                let start = 10 * rate
                let gain = Float(rms(out[start..<(start + spot.count)]) / rms(spot[...]) * pow(10, -db / 20))
                for (i, v) in spot.enumerated() { out[start + i] += gain * v }
                let segments = scan(out, index: index)
                let name = "\(id) \(db) dB under speech"
                XCTAssertEqual(segments.map(\.item.id), [id], name)
                guard let s = segments.first else { continue }
                XCTAssertEqual(s.start, 10, accuracy: 0.1, name)
                XCTAssertEqual(s.end, 26, accuracy: db == 9 ? 0.15 : 0.25, name)
                XCTAssertEqual(s.referenceTime(at: 10), 12, accuracy: 0.05, name)
            }
        }
    }

    /// A spot whose last notes are quieter than its middle (20…36 s of knolls, the last 1.5 s
    /// 8 dB down, or the last 2.5 s 10 dB down) mixed 6 dB under speech at 10 s: its last
    /// seconds stand out against the decoys at about half the rate of its middle, and the
    /// share of readings standing out took them for chance, so it ended 1.53 and 1.40 s early
    /// (24.47 and 24.60 s). The readings' margins over the decoys follow it to its end at 26 s
    /// (within 0.15 s); the start stays within 0.1 s of 10 s.
    func testSpotUnderSpeechWithQuietEndingEndsWhereItEnds() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let bed = try speech()
        let reference = try TestSupport.referenceSamples("wesnoth-knolls")
        for (tail, down) in [(1.5, 8.0), (2.5, 10.0)] {
            var spot = Array(reference[(20 * rate)..<(36 * rate)])
            // The last `tail` seconds `down` dB quieter, after a 50 ms ramp.
            let quiet = Float(pow(10, -down / 20)), n = Int(tail * Double(rate)), ramp = rate / 20
            for i in 0..<spot.count {
                let k = i - (spot.count - n - ramp)
                guard k >= 0 else { continue }
                spot[i] *= k >= ramp ? quiet : 1 + (quiet - 1) * Float(k) / Float(ramp)
            }
            var out = Array(bed[0..<(36 * rate)])
            let start = 10 * rate
            let gain = Float(rms(out[start..<(start + spot.count)]) / rms(spot[...]) * pow(10, -6.0 / 20))
            for (i, v) in spot.enumerated() { out[start + i] += gain * v }
            let segments = scan(out, index: index)
            let name = "last \(tail) s \(down) dB down"
            XCTAssertEqual(segments.map(\.item.id), ["wesnoth-knolls"], name)
            guard let s = segments.first else { continue }
            XCTAssertEqual(s.start, 10, accuracy: 0.1, name)
            XCTAssertEqual(s.end, 26, accuracy: 0.15, name)
            XCTAssertEqual(s.referenceTime(at: 10), 20, accuracy: 0.05, name)
        }
    }

    /// Under other music at 6 and 9 dB the spot's hits are dense enough near its edges: the
    /// spectrum moves no edge away from the truth (10…26 s), since other music in the
    /// reference's key lets its peaks stand out by chance.
    func testSpotUnderOtherMusicIsNotStretched() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        for (id, bed) in [("wesnoth-knolls", "supertux-chipdisko"), ("wesnoth-battle", "supertux-forest"),
                          ("wesnoth-battle", "supertux-chipdisko")] {
            for db in [6.0, 9.0] {
                let x = try mix(id, from: 12, seconds: 16, under: bed, db: db, at: 10)
                let before = scan(x, index: index, spectrum: false), after = scan(x, index: index)
                let name = "\(id) \(db) dB under \(bed)"
                XCTAssertEqual(after.map(\.item.id), [id], name)
                guard let a = after.first, let b = before.first else { continue }
                XCTAssertLessThanOrEqual(abs(a.start - 10), abs(b.start - 10) + 0.05, name)
                XCTAssertLessThanOrEqual(abs(a.end - 26), abs(b.end - 26) + 0.05, name)
                XCTAssertEqual(a.start, 10, accuracy: 0.6, name)
                XCTAssertEqual(a.end, 26, accuracy: 0.6, name)
            }
        }
    }

    /// A spot 12 dB under other music in its key (12…28 s of battle under chipdisko at 10 s)
    /// gathers few hits near its end, so its end is looked for in the spectrum; the other
    /// music's passages beat the decoys' mean margin by several dB for a second at a time and
    /// the margins' change point carried the end over them to 27.2 s. The audio beyond stands
    /// out more often than chance there, so only the share standing out is used: the end stays
    /// within 0.15 s of 26 s.
    func testSpotUnderOtherMusicInItsKeyIsNotStretched() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let x = try mix("wesnoth-battle", from: 12, seconds: 16, under: "supertux-chipdisko", db: 12, at: 10)
        let segments = scan(x, index: index)
        XCTAssertEqual(segments.map(\.item.id), ["wesnoth-battle"])
        guard let s = segments.first else { return }
        XCTAssertEqual(s.end, 26, accuracy: 0.15)
        XCTAssertEqual(s.referenceTime(at: 10), 12, accuracy: 0.05)
    }

    /// Edges next to digital silence come from the spectrum: the last silent row and the first
    /// one put the onset and the end to a hop (16 ms). From hits alone, starts after a gap of
    /// silence came out about 0.09 s late (the bench's 2-5 s gaps) and ends before one up to
    /// 0.17 s early. Knolls from 5 s for 30 s at 4.05875 s (after a lead-in of silence), 3 s of
    /// silence, battle from 5 s for 20 s, 2 s of silence.
    func testEdgesAtDigitalSilenceComeFromTheSpectrum() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls"), battle = try TestSupport.referenceSamples("wesnoth-battle")
        let lead = 32_470   // 4.05875 s, off the frame grid
        let recording = [Float](repeating: 0, count: lead) + Array(knolls[(5 * rate)..<(35 * rate)])
            + [Float](repeating: 0, count: 3 * rate) + Array(battle[(5 * rate)..<(25 * rate)]) + [Float](repeating: 0, count: 2 * rate)
        let t0 = Double(lead) / Double(rate)
        let segments = scan(recording, index: index)
        XCTAssertEqual(segments.map(\.item.id), ["wesnoth-knolls", "wesnoth-battle"])
        guard segments.count == 2 else { return }
        XCTAssertEqual(segments[0].start, t0, accuracy: 0.02)
        XCTAssertEqual(segments[0].end, t0 + 30, accuracy: 0.02)
        XCTAssertEqual(segments[1].start, t0 + 33, accuracy: 0.02)
        XCTAssertEqual(segments[1].end, t0 + 53, accuracy: 0.02)
        XCTAssertEqual(segments[1].referenceTime(at: t0 + 33), 5, accuracy: 0.02)
        XCTAssertEqual(segments[0].referenceStart, 5 + (segments[0].start - t0), accuracy: 0.02)
    }

    /// A motif (ten 128 ms chords) that opens each of a reference's 40 phrases gives landmarks
    /// common to the whole piece: their hash buckets hold more postings than
    /// ``ScanOptions/maxBucket`` and are skipped, so a play that starts on the motif (1.28 s)
    /// gets its first hits only from landmarks whose targets reach past it, 0.58 s late. The
    /// reference's peaks stand out in the spectrum over the motif and the recording's own peaks
    /// coincide with them: the start is the motif's, 8 s (within 0.05 s), after other music;
    /// the end stays where the hits put it.
    func testClearStretchStartsOnItsPassageWithoutHits() throws {
        let notes: [[Double]] = [[330, 1250, 2700], [440, 1660, 3100], [550, 2100, 1000], [660, 2500, 1400], [770, 2900, 1800],
                                 [880, 1500, 3500], [990, 3300, 2000], [1100, 1900, 3000], [370, 1150, 2300], [490, 1750, 2800]]
        let motif: [Float] = notes.flatMap { tones -> [Float] in
            (0..<1024).map { i in
                let t = Double(i) / 8000, fade = min(1, Double(min(i, 1023 - i)) / 40)
                return Float(0.12 * fade * tones.reduce(0) { $0 + sin(2 * Double.pi * $1 * t) })
            }
        }
        let battle = try TestSupport.referenceSamples("wesnoth-battle"), knolls = try TestSupport.referenceSamples("wesnoth-knolls")
        var reference: [Float] = []
        for k in 0..<39 { reference += motif + Array(battle[(k * 8192)..<((k + 1) * 8192)]) }
        let passage = Array(knolls[(12 * rate)..<(32 * rate)])
        reference += motif + passage
        let g = SignatureGenerator(configuration: Configuration(), role: .reference)
        g.append(reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "phrases"), g.signature())])
        let lead = Array(try TestSupport.referenceSamples("supertux-chipdisko")[(3 * rate)..<(11 * rate)])
        let tail = Array(try TestSupport.referenceSamples("supertux-forest")[(20 * rate)..<(25 * rate)])
        let recording = lead + motif + passage + tail
        let end = 8 + Double(motif.count + passage.count) / Double(rate)
        let before = scan(recording, index: index, spectrum: false), after = scan(recording, index: index)
        XCTAssertEqual(before.map(\.item.id), ["phrases"])
        XCTAssertEqual(after.map(\.item.id), ["phrases"])
        guard let b = before.first, let a = after.first else { return }
        XCTAssertEqual(b.start, 8.58, accuracy: 0.05, "from hits alone")
        XCTAssertEqual(a.start, 8, accuracy: 0.05)
        XCTAssertEqual(a.referenceTime(at: 8), Double(reference.count - motif.count - passage.count) / Double(rate), accuracy: 0.02)
        XCTAssertEqual(a.end, end, accuracy: 0.15)
        XCTAssertEqual(a.end, b.end, accuracy: 0.02)
    }

    /// The levels read from a float's bit pattern (a table and one threshold) are those of the
    /// formula, `round(2 · (10 · log10(max(p, 1e-13)) + 120))` clamped to 0…255: at every
    /// level's threshold and the patterns on either side of it, over floats from 1e-15 to 1e3
    /// (every 251st pattern), and at zero, negative, tiny, huge and non-finite values.
    func testQuantisedLevelsAreTheFormulas() {
        var values: [Float] = [0, -0, -1, Float(bitPattern: 1), Float(bitPattern: 0x0001_0000), 1e-13, 1e30, .greatestFiniteMagnitude, .infinity, -.infinity, .nan]
        for t in SpectrumRing.levelThresholds[1...255] {
            for d in -2...2 { values.append(Float(bitPattern: UInt32(Int64(t) + Int64(d)))) }
        }
        var bits = Float(1e-15).bitPattern
        while bits < Float(1e3).bitPattern { values.append(Float(bitPattern: bits)); bits += 251 }
        let levels = values.withUnsafeBufferPointer { SpectrumRing.quantise($0) }
        var wrong: [String] = []
        for (p, level) in zip(values, levels) where level != SpectrumRing.level(p) {
            wrong.append("\(p) (\(String(p.bitPattern, radix: 16))): \(level), formula \(SpectrumRing.level(p))")
        }
        XCTAssertEqual(wrong.count, 0, wrong.prefix(8).joined(separator: "; "))
        XCTAssertEqual(SpectrumRing.level(1), 240)
        XCTAssertEqual(levels.count, values.count)
        // Every level from 1 to 255 has a threshold, in ascending order.
        XCTAssertEqual(SpectrumRing.levelThresholds[1...255].sorted(), Array(SpectrumRing.levelThresholds[1...255]))
        XCTAssertEqual(Set(SpectrumRing.levelThresholds[1...255]).count, 255)
    }

    /// Levels are half decibels from -120 dB: a full-scale sine's power (1.0) is 0 dB, level 240;
    /// silence is level 0, -60 dB level 120. The ring keeps the last 2048 frames.
    func testSpectrumRingLevels() {
        let row: [Float] = [1, 0, 1e-6, 4]
        XCTAssertEqual(row.withUnsafeBufferPointer { SpectrumRing.quantise($0) }, [240, 0, 120, 252])
        var ring = SpectrumRing(width: 4)
        ring.append(frame: 5, levels: [240, 0, 120, 252])
        XCTAssertTrue(ring.holds(5))
        XCTAssertFalse(ring.holds(4))
        XCTAssertEqual(ring.level(5, 0), 0, accuracy: 1e-9)
        XCTAssertEqual(ring.level(5, 2), -60, accuracy: 1e-9)
        ring.append(frame: 5 + SpectrumRing.capacity, levels: [0, 0, 0, 0])
        XCTAssertFalse(ring.holds(5))
        XCTAssertEqual(ring.latest, 5 + SpectrumRing.capacity)
        ring.append(frame: 7, levels: [1, 2])   // another width: ignored
        XCTAssertFalse(ring.holds(7))
    }

    /// The change point on margins: a run whose margins average 5 dB although only one reading
    /// in four beats every decoy, then chance (margins about 0). The share standing out (0.25
    /// against the inside's 0.6) does not move the edge; the margins move it to the run's last
    /// reading above half the margin (3 dB), measured against audio beyond that stands out at
    /// chance. Margins are clipped to ±15 dB; an inside mean under 2 dB above the outside's, or
    /// an outside standing out more often than chance (other music in the key), moves nothing.
    func testOutwardByMarginChangePoint() {
        let inside = (0..<40).map { (k: Int) -> SpectrumEdge.Reading in
            SpectrumEdge.Reading(x: Double(100 + k), stands: k % 5 < 3, margin: k % 5 < 3 ? 15.0 : -5.0)
        }
        // Mean margin 7 dB, capped at 6 (half: 3 dB).
        let pattern: [Double] = [9, 4, -2, 7, 7, 1, 6, 8, 4, 6]   // mean 5
        var outward = (0..<60).map { (k: Int) -> SpectrumEdge.Reading in
            SpectrumEdge.Reading(x: Double(k), stands: k % 4 == 0, margin: pattern[k % 10])
        }
        let noise: [Double] = [-6, 2, -9, 4, -1, -3, 5, -4, 0, -2]   // mean -1.4
        outward += (60..<150).map { (k: Int) -> SpectrumEdge.Reading in
            SpectrumEdge.Reading(x: Double(k), stands: k % 5 == 0, margin: noise[k % 10])
        }
        let beyond = Array(outward[100...])   // stands one in five, mean margin below 0
        XCTAssertNil(SpectrumEdge.outward(outward, inside: inside))
        XCTAssertEqual(SpectrumEdge.outwardByMargin(outward, inside: inside, outside: beyond), 59)
        // Chance only: the edge stays.
        XCTAssertNil(SpectrumEdge.outwardByMargin(Array(outward[60...]), inside: inside, outside: beyond))
        // One loud reading of chance is worth no more than 15 dB.
        var spike = Array(outward[60...])
        spike[3].margin = 200
        XCTAssertNil(SpectrumEdge.outwardByMargin(spike, inside: inside, outside: beyond))
        // Audio beyond whose margins average 3 dB (m0 = 3, m = 7, middle 5): the run's readings
        // of 4-6 dB no longer carry it far enough.
        let lifted = beyond.map { r -> SpectrumEdge.Reading in var r = r; r.margin += 4.4; return r }
        XCTAssertNil(SpectrumEdge.outwardByMargin(outward, inside: inside, outside: lifted))
        // Audio beyond standing out more often than chance (one in three).
        let inKey = beyond.enumerated().map { (k, r) -> SpectrumEdge.Reading in var r = r; r.stands = k % 3 == 0; return r }
        XCTAssertNil(SpectrumEdge.outwardByMargin(outward, inside: inside, outside: inKey))
        // An inside that does not tell itself from its decoys, or too few readings inside or beyond.
        let weak = (0..<40).map { (k: Int) -> SpectrumEdge.Reading in
            SpectrumEdge.Reading(x: Double(100 + k), stands: false, margin: k % 2 == 0 ? 4.0 : -1.0)
        }
        XCTAssertNil(SpectrumEdge.outwardByMargin(outward, inside: weak, outside: beyond))
        XCTAssertNil(SpectrumEdge.outwardByMargin(outward, inside: Array(inside.prefix(10)), outside: beyond))
        XCTAssertNil(SpectrumEdge.outwardByMargin(outward, inside: inside, outside: Array(beyond.prefix(10))))
    }

    /// A masked start: 20 readings at the inside's rate (one in two), 30 of a first passage
    /// masked more (one in three: the walk's sum stays level, between 3.8 and 4.9 nats), then 60
    /// of chance (one in five). The change point's argmax would stop at the first run's last
    /// standing reading (18) and, under ``SpectrumEdge/minimumEvidence``, not move at all; the
    /// start goes to the earliest reading within half a nat of the best sum: 48, the masked
    /// passage's last standing reading (sum 4.70 against the best 4.93). The chance readings
    /// beyond fall out of the interval at once.
    func testOutwardStartLikelihoodInterval() {
        let inside = (0..<40).map { SpectrumEdge.Reading(x: Double(100 + $0), stands: $0 % 2 == 0) }   // p = 0.5
        var outward = (0..<20).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 2 == 0) }
        outward += (20..<50).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 3 == 0) }
        outward += (50..<110).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 5 == 4) }
        let before = Array(outward[80...])   // one in five
        XCTAssertNil(SpectrumEdge.outward(outward, inside: inside))
        XCTAssertEqual(SpectrumEdge.outwardStart(outward, inside: inside, outside: before), 48)
        // Chance from the edge on (the first reading not standing): the start stays.
        XCTAssertNil(SpectrumEdge.outwardStart(Array(outward[50...]), inside: inside, outside: before))
        // Audio before the stretch standing out more often than chance, one time in four
        // (other music in the reference's key): only a change point of 5 nats moves the start,
        // and this one's best sum, 4.93, does not.
        let inKey = (0..<32).map { SpectrumEdge.Reading(x: Double(200 + $0), stands: $0 % 4 == 0) }
        XCTAssertNil(SpectrumEdge.outwardStart(outward, inside: inside, outside: inKey))
        // An inside that does not tell itself from its decoys, or too few readings inside or before.
        let weak = (0..<40).map { SpectrumEdge.Reading(x: Double(100 + $0), stands: $0 % 4 == 0) }   // p = 0.25
        XCTAssertNil(SpectrumEdge.outwardStart(outward, inside: weak, outside: before))
        XCTAssertNil(SpectrumEdge.outwardStart(outward, inside: Array(inside.prefix(20)), outside: before))
        // Too little audio before the edge to tell (a start within 5 s of the recording's
        // beginning): the change point's rule, which does not move this start...
        XCTAssertNil(SpectrumEdge.outwardStart(outward, inside: inside, outside: Array(before.prefix(20))))
        XCTAssertNil(SpectrumEdge.outwardStart(outward, inside: inside, outside: []))
        // ...and moves a clear one (30 readings at the stretch's rate, then chance) to its
        // last standing reading, as ``SpectrumEdge/outward(_:inside:outside:)`` does
        // (supertux-forest at sox tempo 0.9 stayed 0.19 s late without it).
        let rate = (0..<40).map { SpectrumEdge.Reading(x: Double(100 + $0), stands: $0 % 5 < 3) }   // p = 0.6
        var clear = (0..<30).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 5 < 3) }
        clear += (30..<90).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 5 == 0) }
        XCTAssertEqual(SpectrumEdge.outwardStart(clear, inside: rate, outside: []), 27)
        XCTAssertEqual(SpectrumEdge.outwardStart(clear, inside: rate, outside: Array(before.prefix(23))), 27)
    }

    /// The change point on readings: a run standing out at the stretch's rate, then chance.
    func testOutwardChangePoint() {
        let inside = (0..<40).map { SpectrumEdge.Reading(x: Double(100 + $0), stands: $0 % 5 < 3) }   // p = 0.6
        // 30 readings at the stretch's rate (the last standing one at x = 28), then 60 of chance.
        var outward = (0..<30).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 5 < 3) }
        outward += (30..<90).map { SpectrumEdge.Reading(x: Double($0), stands: $0 % 5 == 0) }
        XCTAssertEqual(SpectrumEdge.outward(outward, inside: inside), 27)
        // Chance only: the edge stays.
        XCTAssertNil(SpectrumEdge.outward(Array(outward[30...]), inside: inside))
        // A stretch that does not tell itself from its decoys moves nothing.
        let weak = (0..<40).map { SpectrumEdge.Reading(x: Double(100 + $0), stands: $0 % 4 == 0) }   // p = 0.25
        XCTAssertNil(SpectrumEdge.outward(outward, inside: weak))
        // Too few readings inside.
        XCTAssertNil(SpectrumEdge.outward(outward, inside: Array(inside.prefix(10))))
    }

    /// Helper-found example (real music, `Fixtures/quoted-theme`): Wesnoth's *Revelation* made
    /// 5 % faster (28.6 s) or 7 % slower (26.9 s), scanned against an excerpt of *Loyalists*, a
    /// track by the same composer that shares its theme. The lines at the speed change gathered
    /// about 2 hits a second: a play of 8.5 s at confidence 0.93 and one of 16 s at 0.998. The
    /// reference's peaks do not stand out in the recording's spectrum, and the hits are no more than
    /// chance gathers on shifted lines, so neither is a play. The
    /// excerpt itself made 5 % faster after the faster *Revelation* is one play, from 28.6 s.
    func testOtherMusicAtASearchedSpeedIsNotAPlay() throws {
        let dir = TestSupport.packageRoot.appendingPathComponent("Tests/SoundmarkTests/Fixtures/quoted-theme")
        let referencePath = dir.appendingPathComponent("wesnoth-loyalists-70-110.flac").path
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "loyalists"),
                                          TestSupport.signature(of: try TestSupport.samples(ofFile: referencePath), role: .reference))])
        let fast = try TestSupport.samples(ofFile: dir.appendingPathComponent("wesnoth-revelation-fast-30s.flac").path)
        for (name, recording) in [("fast", fast),
                                  ("slow", try TestSupport.samples(ofFile: dir.appendingPathComponent("wesnoth-revelation-slow-25s.flac").path))] {
            XCTAssertEqual(scan(recording, index: index).map { "\($0.start)-\($0.end) \($0.confidence)" }, [], name)
            // The play rule's chance model alone also refuses it: the hits are no more than the
            // shifted lines beside it gather (before the rule, the hits alone made a play).
            XCTAssertEqual(scan(recording, index: index, spectrum: false).count, 0, "\(name): the hits alone make no play")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { throw XCTSkip("no sox") }
        let sped = try TestSupport.temporaryDirectory(self).appendingPathComponent("loyalists-fast.wav").path
        let r = try TestSupport.run("/usr/bin/sox", [referencePath, sped, "trim", "5", "21", "speed", "1.05"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let segments = scan(fast + (try TestSupport.samples(ofFile: sped)), index: index)
        XCTAssertEqual(segments.map(\.item.id), ["loyalists"])
        guard let s = segments.first else { return }
        XCTAssertEqual(s.start, Double(fast.count) / Double(rate), accuracy: 0.1)
        XCTAssertEqual(s.referenceStart, 5, accuracy: 0.1)
        XCTAssertEqual(s.frequencySkew, 0.05, accuracy: 0.003)
    }
}
