import Foundation
import XCTest
import Soundmark

final class MatcherTests: XCTestCase {
    private static let rate = 8000

    nonisolated(unsafe) private static var cachedIndex: CatalogIndex?

    /// An in-memory index of the 5 sample references (reference signatures, default configuration).
    private func index() throws -> CatalogIndex {
        if let i = Self.cachedIndex { return i }
        var items: [(MediaItem, Signature)] = []
        for id in TestSupport.referenceIDs {
            items.append((MediaItem(id: id, title: id), try TestSupport.referenceSignature(id)))
        }
        let i = CatalogIndex(configuration: Configuration(), items: items)
        Self.cachedIndex = i
        return i
    }

    private func match(_ samples: [Float], options: MatchOptions = MatchOptions()) throws -> [MatchedMediaItem] {
        let query = TestSupport.signature(of: samples, role: .query)
        return Matcher(index: try index(), options: options).matchedItems(for: query)
    }

    private func slice(_ id: String, from start: Double, seconds: Double) throws -> [Float] {
        let s = try TestSupport.referenceSamples(id)
        let a = Int(start * Double(Self.rate)), b = a + Int(seconds * Double(Self.rate))
        XCTAssertLessThanOrEqual(b, s.count)
        return Array(s[a..<min(b, s.count)])
    }

    func testIndexHoldsEveryReference() throws {
        let index = try index()
        XCTAssertEqual(index.references.map(\.item.id), TestSupport.referenceIDs)
        XCTAssertEqual(index.postings.referenceCount, 5)
        let total = index.references.reduce(0) { $0 + $1.postingCount }
        XCTAssertEqual(index.postings.count, total)
        for r in index.references {
            XCTAssertEqual(r.duration, 40, accuracy: 0.05, r.item.id)
            XCTAssertGreaterThan(r.postingCount, 1000, r.item.id)
        }
    }

    func testClipFromKnownOffsetMatchesItsReference() throws {
        for id in ["wesnoth-battle", "supertux-forest"] {
            let matches = try match(try slice(id, from: 12.0, seconds: 10))
            let first = try XCTUnwrap(matches.first, "no match for \(id)")
            XCTAssertEqual(first.item.id, id)
            XCTAssertEqual(first.matchOffset, 12.0, accuracy: 0.05, id)
            XCTAssertEqual(first.predictedCurrentMatchOffset, 22.0, accuracy: 0.06, id)
            XCTAssertLessThan(abs(first.frequencySkew), 0.005, id)
            XCTAssertGreaterThanOrEqual(first.confidence, 0.9, id)
            XCTAssertLessThanOrEqual(first.confidence, 1, id)
            XCTAssertGreaterThan(first.alignedCount, 20, id)
            // Nothing else reaches the threshold.
            XCTAssertEqual(matches.count, 1, "\(matches.map(\.item.id))")
        }
    }

    /// Plays `samples[start...]` `speed` times faster (pitch and tempo together) by linear
    /// interpolation, for `seconds` of output.
    private func varispeed(_ samples: [Float], from start: Double, speed: Double, seconds: Double) -> [Float] {
        let n = Int(seconds * Double(Self.rate))
        let first = start * Double(Self.rate)
        return (0..<n).map { j in
            let x = first + speed * Double(j)
            let i = Int(x), f = Float(x - Double(i))
            guard i + 1 < samples.count else { return 0 }
            return samples[i] * (1 - f) + samples[i + 1] * f
        }
    }

    func testSpedUpClipReportsFrequencySkew() throws {
        let source = try TestSupport.referenceSamples("wesnoth-knolls")
        let clip = varispeed(source, from: 12.0, speed: 1.05, seconds: 10)
        let matches = try match(clip)
        let first = try XCTUnwrap(matches.first, "no match for the ×1.05 clip")
        XCTAssertEqual(first.item.id, "wesnoth-knolls")
        XCTAssertEqual(first.frequencySkew, 0.05, accuracy: 0.01)
        XCTAssertEqual(first.matchOffset, 12.0, accuracy: 0.1)
        // 10 s of query cover 10.5 s of reference.
        XCTAssertEqual(first.predictedCurrentMatchOffset, 22.5, accuracy: 0.2)
        XCTAssertGreaterThanOrEqual(first.confidence, 0.9)

        // And slowed down by 3 %.
        let slow = try XCTUnwrap(try match(varispeed(source, from: 20.0, speed: 0.97, seconds: 10)).first)
        XCTAssertEqual(slow.item.id, "wesnoth-knolls")
        XCTAssertEqual(slow.frequencySkew, -0.03, accuracy: 0.01)
        XCTAssertEqual(slow.matchOffset, 20.0, accuracy: 0.1)
    }

    func testPinkNoiseMatchesNothing() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let path = dir.appendingPathComponent("pink.wav").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:seed=7:amplitude=0.3:duration=10",
                                "-ac", "1", "-ar", "8000"], output: path)
        let noise = try MediaDecoder.decodeAll(source: path, sampleRate: 8000)
        XCTAssertEqual(Double(noise.count), 80000, accuracy: 100)
        XCTAssertGreaterThan(TestSupport.signature(of: noise, role: .query).landmarks.count, 100,
                             "pink noise should make landmarks, or the test proves nothing")
        let matches = try match(noise)
        XCTAssertEqual(matches.map(\.item.id), [], "confidences \(matches.map(\.confidence))")
    }

    func testDigitalSilenceMatchesNothing() throws {
        XCTAssertEqual(try match([Float](repeating: 0, count: 80000)).map(\.item.id), [])
    }

    func testNonCatalogMusicMatchesNothing() throws {
        // recording.mp3 70–86 s is Hedgewars "City" (not in the catalog), see samples/README.md.
        let recording = try TestSupport.samples(ofFile: TestSupport.samples.appendingPathComponent("recording.mp3").path)
        XCTAssertEqual(Double(recording.count) / 8000, 158, accuracy: 0.1)
        let clip = Array(recording[(70 * 8000)..<(86 * 8000)])
        XCTAssertGreaterThan(TestSupport.signature(of: clip, role: .query).landmarks.count, 500)
        let matches = try match(clip)
        XCTAssertEqual(matches.map(\.item.id), [], "confidences \(matches.map(\.confidence))")
        // Control: a catalog passage of the same recording (knolls, 10–20 s, at reference 11.5 s) does match.
        let known = try XCTUnwrap(try match(Array(recording[(10 * 8000)..<(20 * 8000)])).first)
        XCTAssertEqual(known.item.id, "wesnoth-knolls")
        XCTAssertEqual(known.matchOffset, 11.5, accuracy: 0.1)
    }

    func testQueryStartingBeforeTheReferenceGivesNegativeOffset() throws {
        let id = "wesnoth-the-dangerous-symphony"
        let clip = [Float](repeating: 0, count: 2 * 8000) + (try slice(id, from: 0, seconds: 10))
        let first = try XCTUnwrap(try match(clip).first)
        XCTAssertEqual(first.item.id, id)
        XCTAssertEqual(first.matchOffset, -2.0, accuracy: 0.1)
        XCTAssertEqual(first.predictedCurrentMatchOffset, 10.0, accuracy: 0.15)
        XCTAssertLessThan(abs(first.frequencySkew), 0.005)
    }

    func testThresholdOptionFiltersMatches() throws {
        var strict = MatchOptions()
        strict.threshold = 1.0000001
        XCTAssertEqual(try match(try slice("wesnoth-battle", from: 5, seconds: 10), options: strict).count, 0)
    }

    func testConfidenceCurve() {
        // 0.5 at an excess of 11 over the background, whatever the background.
        XCTAssertEqual(Matcher.confidence(aligned: 6 + 11, background: 6), 0.5, accuracy: 1e-12)
        XCTAssertEqual(Matcher.confidence(aligned: 11, background: 0), 0.5, accuracy: 1e-12)
        // The strongest non-catalog clip of the benchmark (excess 9) stays well under 0.5.
        XCTAssertEqual(Matcher.confidence(aligned: 6 + 9, background: 6), 1 / (1 + exp(2 / 1.5)), accuracy: 1e-12)
        XCTAssertLessThan(Matcher.confidence(aligned: 15, background: 6), 0.25)
        XCTAssertGreaterThan(Matcher.confidence(aligned: 6 + 16, background: 6), 0.95)
    }

    func testAPassageRepeatedInTheReferenceIsReturnedAtEveryOffset() throws {
        // A reference that plays knolls 0–15 s, battle 0–10 s, knolls 0–15 s again, battle
        // 10–20 s and knolls 0–15 s a third time (a loop).
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls"), battle = try TestSupport.referenceSamples("wesnoth-battle")
        let a = Array(knolls[0..<(15 * Self.rate)]), b = Array(battle[0..<(10 * Self.rate)])
        let c = Array(battle[(10 * Self.rate)..<(20 * Self.rate)])
        let looped = TestSupport.signature(of: a + b + a + c + a, role: .reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "looped"), looped)])
        let clip = Array(knolls[(4 * Self.rate)..<(12 * Self.rate)])
        let found = Matcher(index: index).matchedItems(for: TestSupport.signature(of: clip, role: .query))
        XCTAssertEqual(found.map(\.item.id), ["looped", "looped", "looped"])
        XCTAssertEqual(Set(found.map { ($0.matchOffset * 10).rounded() / 10 }), [4.0, 29.0, 54.0])
    }

    func testReframingRanksTheCopyTheClipWasCutFromFirst() throws {
        // The passage (knolls 0–15 s) twice: first with faint noise, on the hop grid, then clean
        // at 25 s, half a hop (64 samples) off the grid. The clip is the clean copy's 4–12 s, so
        // its frames fall on the noisy copy's grid.
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls"), battle = try TestSupport.referenceSamples("wesnoth-battle")
        let passage = Array(knolls[0..<(15 * Self.rate)])
        var seed: UInt32 = 12345
        let noisy = passage.map { x -> Float in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return x + (Float(seed >> 8) / Float(1 << 24) - 0.5) * 0.004
        }
        let gap = Array(battle[0..<(10 * Self.rate)])
        let reference = TestSupport.signature(of: noisy + gap + passage, role: .reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "looped"), reference)])
        let clip = Array(passage[(4 * Self.rate)..<(12 * Self.rate)])
        let matcher = Matcher(index: index)
        let plain = matcher.matchedItems(for: TestSupport.signature(of: clip, role: .query))
        // On the plain framing alone the noisy copy wins: that is what reframing is for.
        XCTAssertEqual(try XCTUnwrap(plain.first).matchOffset, 4.0, accuracy: 0.02)
        let reframed = (1..<4).map { TestSupport.signature(of: Array(clip.dropFirst($0 * 32)), role: .query) }
        let found = matcher.matchedItems(for: TestSupport.signature(of: clip, role: .query), reframed: reframed)
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found[0].matchOffset, 29.0, accuracy: 0.005)
        XCTAssertEqual(found[1].matchOffset, 4.0, accuracy: 0.02)
        XCTAssertGreaterThan(found[0].alignedCount, found[1].alignedCount)
    }

    func testOffsetIsExactToAFewMillisecondsWhereverTheClipIsCut() throws {
        // Cuts between frame-grid points (a hop is 128 samples, a quarter hop 32): before the
        // vote-weighted centre, cuts 17–31 samples past a quarter hop came out a hop (16 ms) early.
        let matcher = Matcher(index: try index())
        let samples = try TestSupport.referenceSamples("wesnoth-the-dangerous-symphony")
        var errors: [Double] = []
        for extra in [0, 5, 17, 25, 31, 44, 64, 89, 100, 120, 127] {
            let start = 5 * Self.rate + 4444 + extra
            let clip = Array(samples[start..<(start + 8 * Self.rate)])
            let framings = (0..<4).map { TestSupport.signature(of: Array(clip.dropFirst($0 * 32)), role: .query) }
            let found = matcher.matchedItems(for: framings[0], reframed: Array(framings.dropFirst()))
            let first = try XCTUnwrap(found.first, "no match for a cut at sample \(start)")
            XCTAssertEqual(first.item.id, "wesnoth-the-dangerous-symphony")
            errors.append(abs(first.matchOffset - Double(start) / Double(Self.rate)))
        }
        XCTAssertLessThan(errors.max() ?? 1, 0.006, "offset errors (s): \(errors)")
        XCTAssertLessThan(errors.reduce(0, +) / Double(errors.count), 0.003, "offset errors (s): \(errors)")
    }
}
