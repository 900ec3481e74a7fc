import Foundation
import XCTest
import Soundmark

/// Issue 10, items 1 and 5: confidence in catalogs of one or a few references, the line check,
/// and recognising the same recording added twice.
final class SmallCatalogTests: XCTestCase {
    private static let rate = 8000

    private func index(_ ids: [String]) throws -> CatalogIndex {
        CatalogIndex(configuration: Configuration(),
                     items: try ids.map { (MediaItem(id: $0, title: $0), try TestSupport.referenceSignature($0)) })
    }

    private func slice(_ id: String, from start: Double, seconds: Double) throws -> [Float] {
        let s = try TestSupport.referenceSamples(id)
        let a = Int(start * Double(Self.rate)), b = a + Int(seconds * Double(Self.rate))
        return Array(s[a..<min(b, s.count)])
    }

    /// Every reference's matches (threshold 0) for `samples`, analysed on the four frame grids as `identify` does.
    private func scores(_ samples: [Float], _ matcher: Matcher) -> [MatchedMediaItem] {
        let query = TestSupport.signature(of: samples, role: .query)
        let reframed = (1..<Matcher.framings).map {
            TestSupport.signature(of: Array(samples.dropFirst($0 * 128 / Matcher.framings)), role: .query)
        }
        return matcher.matchedItems(for: query, reframed: reframed)
    }

    /// `sox REFERENCE OUTPUT pitch CENTS` of sample reference `id` (8 kHz mono WAV): the same
    /// music transposed, outside the ±9 % speed grid, so it has no real alignment with anything.
    private func transposed(_ id: String, cents: Int) throws -> [Float] {
        let dir = try TestSupport.temporaryDirectory(self)
        let out = dir.appendingPathComponent("\(id)\(cents).wav").path
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { throw XCTSkip("no sox") }
        let r = try TestSupport.run("/usr/bin/sox", [TestSupport.referencePath(id), "-r", "8000", "-c", "1", out, "pitch", "\(cents)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return try MediaDecoder.decodeAll(source: out, sampleRate: 8000)
    }

    func testOtherMusicIsNotReportedAgainstOneReference() throws {
        // The example: a catalog of one Wesnoth excerpt and an 8 s clip of another
        // Wesnoth track in the same style scored 0.66 (0.88 and 0.97 as MP3). With the sample
        // music: Wesnoth "battle" transposed down 300 cents (40 s) scored 0.50 against a catalog
        // of "supertux-forest" alone (skew −6.3 %) and 0.79 against "battle" alone (at −5.1 s,
        // skew 0: a transposition that far has no alignment), each with a cluster of aligned
        // landmarks in part of the clip and a count the 6-landmark chance floor let through.
        let low = try transposed("wesnoth-battle", cents: -300)
        for catalogued in ["supertux-forest", "wesnoth-battle"] {
            let found = scores(low, Matcher(index: try index([catalogued])))
            XCTAssertEqual(found.map(\.item.id), [], "against \(catalogued): \(found.map(\.confidence))")
        }
        // Clips of the other sample tracks (30 s and 8 s) against each track alone: all under 0.5.
        var everything = MatchOptions()
        everything.threshold = 0
        var highest = 0.0, worst = ""
        for catalogued in TestSupport.referenceIDs {
            let matcher = Matcher(index: try index([catalogued]), options: everything)
            for other in TestSupport.referenceIDs where other != catalogued {
                for (start, seconds) in [(5.0, 30.0), (20, 8)] {
                    let best = scores(try slice(other, from: start, seconds: seconds), matcher).map(\.confidence).max() ?? 0
                    if best > highest { highest = best; worst = "\(other) \(start)+\(seconds) s against \(catalogued)" }
                }
            }
            // Control: the catalogued track's own clip matches, at its offset.
            let own = try XCTUnwrap(scores(try slice(catalogued, from: 16, seconds: 8), matcher).first, catalogued)
            XCTAssertEqual(own.matchOffset, 16, accuracy: 0.02, catalogued)
            XCTAssertGreaterThan(own.confidence, 0.95, catalogued)
        }
        XCTAssertLessThan(highest, 0.5, worst)
    }

    func testConfidenceDoesNotDependOnTheCatalogSize() throws {
        // The same clip against its reference alone and in a catalog of 15: the 5 samples, each
        // time-reversed, and each played 25 % faster (outside the speed grid). Before, the
        // chance level was the 6th-best reference, so the second catalog lowered the confidence.
        var items = try TestSupport.referenceIDs.map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) }
        for id in TestSupport.referenceIDs {
            let s = try TestSupport.referenceSamples(id)
            items.append((MediaItem(id: id + "-reversed"), TestSupport.signature(of: s.reversed(), role: .reference)))
            let fast = stride(from: 0.0, to: Double(s.count - 1), by: 1.25).map { x -> Float in
                let i = Int(x), f = Float(x - Double(i))
                return s[i] * (1 - f) + s[i + 1] * f
            }
            items.append((MediaItem(id: id + "-fast"), TestSupport.signature(of: fast, role: .reference)))
        }
        let large = CatalogIndex(configuration: Configuration(), items: items)
        XCTAssertEqual(large.references.count, 15)
        for (id, start, length, noise) in [("wesnoth-battle", 12.0, 6.0, Float(0)), ("supertux-chipdisko", 3, 5, 0.14), ("supertux-chipdisko", 3, 5, 0.16)] {
            // White noise (uniform, ±noise) so the second clip's confidence is not saturated.
            var seed: UInt32 = 99
            let clip = try slice(id, from: start, seconds: length).map { x -> Float in
                seed = seed &* 1_664_525 &+ 1_013_904_223
                return x + (Float(seed >> 8) / Float(1 << 24) - 0.5) * 2 * noise
            }
            var everything = MatchOptions()
            everything.threshold = 0
            let alone = try XCTUnwrap(scores(clip, Matcher(index: try index([id]), options: everything)).first, id)
            let all = try XCTUnwrap(scores(clip, Matcher(index: large, options: everything)).first { $0.item.id == id }, id)
            XCTAssertEqual(alone.item.id, id)
            XCTAssertEqual(alone.confidence, all.confidence, accuracy: 1e-9, id)
            XCTAssertEqual(alone.matchOffset, all.matchOffset, accuracy: 1e-9, id)
        }
    }

    func testSignificanceOfALineAndOfACluster() {
        // 20 of 20 slots occupied, chance 0.05 per slot (p = 1 − e^−0.05), 10^5 trials:
        // −log10(10^5 · p^20).
        let p = 1 - exp(-0.05)
        XCTAssertEqual(Matcher.significance(occupied: 20, slots: 20, chancePerSlot: 0.05, trials: 1e5),
                       -(5 + 20 * log10(p)), accuracy: 1e-9)
        // One slot of 20: P(at least one) = 1 − (1 − p)^20.
        XCTAssertEqual(Matcher.significance(occupied: 1, slots: 20, chancePerSlot: 0.05, trials: 100),
                       -(2 + log10(1 - pow(1 - p, 20))), accuracy: 1e-9)
        // The same aligned landmarks packed into 4 slots (a cluster) are not significant.
        XCTAssertLessThan(Matcher.significance(occupied: 4, slots: 20, chancePerSlot: 0.05, trials: 1e5), 0)
        XCTAssertEqual(Matcher.confidence(significance: 1.5), 0.5, accuracy: 1e-12)
        XCTAssertEqual(Matcher.confidence(significance: 3), 0.95, accuracy: 1e-12)
        XCTAssertLessThan(Matcher.confidence(significance: 0.8), 0.25)
        XCTAssertEqual(Matcher.chanceFloor(seconds: 5), 8)
        XCTAssertEqual(Matcher.chanceFloor(seconds: 10), 10)
        // Longer clips: one per second beyond 10 s (the sweep's 30 s clips reached 40 by chance).
        XCTAssertEqual(Matcher.chanceFloor(seconds: 20), 20)
        XCTAssertEqual(Matcher.chanceFloor(seconds: 30), 30)
        XCTAssertEqual(Matcher.chanceFloor(seconds: 60), 60)
    }

    func testOtherMusicAtASearchedSpeedIsNotReported() throws {
        // From `scripts/fp-sweep.sh`: a 10 s clip of Hedgewars' "EarthRise" lined up with
        // Wesnoth's "Northerners" at skew −9 % (time scale 0.91) with 23–24 aligned landmarks
        // spread over the clip, and scored 0.79–0.88: the speed search's 36 candidates give chance
        // 36 times the tries of an unchanged clip.
        let fixtures = TestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/Chance")
        let reference = TestSupport.signature(of: try MediaDecoder.decodeAll(source: fixtures.appendingPathComponent("northerners-20-35.ogg").path,
                                                                              sampleRate: Self.rate), role: .reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "northerners", title: "Northerners"), reference)])
        var everything = MatchOptions()
        everything.threshold = 0
        let clip = try MediaDecoder.decodeAll(source: fixtures.appendingPathComponent("earthrise-81.3.ogg").path, sampleRate: Self.rate)
        // The default first pass votes the changed speeds with every 8th landmark only: this
        // chance alignment does not make its shortlist, and the clip's best is at the unchanged speed.
        let sparse = try XCTUnwrap(scores(clip, Matcher(index: index, options: everything)).first)
        XCTAssertEqual(sparse.frequencySkew, 0, accuracy: 0.01)
        XCTAssertLessThan(sparse.confidence, 0.5)
        // Every candidate voting with every landmark (the search this example was found with).
        everything.sparseStride = 1
        let found = scores(clip, Matcher(index: index, options: everything))
        let best = try XCTUnwrap(found.first)
        // The chance alignment is still there, as it was (the example is reproduced)…
        XCTAssertEqual(best.frequencySkew, -0.09, accuracy: 0.002)
        XCTAssertGreaterThanOrEqual(best.alignedCount, 22)
        XCTAssertLessThanOrEqual(best.alignedCount, 25)
        // …and scores under the threshold: 4 more aligned landmarks of chance for a searched speed.
        XCTAssertLessThan(best.confidence, 0.5)
        XCTAssertEqual(best.confidence, Matcher.confidence(aligned: best.alignedCount, background: 10 + Matcher.speedSearchPenalty),
                       accuracy: 1e-9)
    }

    func testReencodedAndResampledCopiesAreTheSameRecording() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let source = TestSupport.referencePath("wesnoth-knolls")
        let matcher = Matcher(index: try index(TestSupport.referenceIDs))
        for (name, arguments) in [("copy.mp3", ["-i", source, "-b:a", "128k"]), ("copy48k.wav", ["-i", source, "-ar", "48000"]),
                                  ("copy.opus", ["-i", source, "-b:a", "64k"])] {
            let path = dir.appendingPathComponent(name).path
            try TestSupport.ffmpeg(arguments, output: path)
            let signature = TestSupport.signature(of: try MediaDecoder.decodeAll(source: path, sampleRate: 8000), role: .reference)
            let same = try XCTUnwrap(matcher.sameRecording(as: signature), name)
            XCTAssertEqual(matcher.index.references[same.referenceIndex].item.id, "wesnoth-knolls", name)
            XCTAssertGreaterThanOrEqual(same.coverage, Matcher.duplicateCoverage, name)
        }
        // Not the same recording: a cut (starts 5 s later), the track sped up 2 %, another track.
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls")
        XCTAssertNil(matcher.sameRecording(as: TestSupport.signature(of: Array(knolls.dropFirst(5 * Self.rate)), role: .reference)))
        // Helper-found: the last 0.5 s or 0.9 s cut, or 0.5 s of other music added at the end
        // (within the 1 s allowed before, each was skipped as a duplicate).
        let battle = try TestSupport.referenceSamples("wesnoth-battle")
        for (name, edit) in [("last 0.5 s cut", Array(knolls.dropLast(Self.rate / 2))),
                             ("last 0.9 s cut", Array(knolls.dropLast(9 * Self.rate / 10))),
                             ("0.5 s added", knolls + battle.prefix(Self.rate / 2))] {
            XCTAssertNil(matcher.sameRecording(as: TestSupport.signature(of: edit, role: .reference)), name)
        }
        let fast = dir.appendingPathComponent("fast.wav").path
        try TestSupport.ffmpeg(["-i", source, "-af", "asetrate=44100*1.02,aresample=44100"], output: fast)
        XCTAssertNil(matcher.sameRecording(as: TestSupport.signature(of: try MediaDecoder.decodeAll(source: fast, sampleRate: 8000), role: .reference)))
        let other = Matcher(index: try index(["wesnoth-battle"]))
        XCTAssertNil(other.sameRecording(as: try TestSupport.referenceSignature("wesnoth-knolls")))
    }
}
