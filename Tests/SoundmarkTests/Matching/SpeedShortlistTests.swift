import Foundation
import XCTest
import Soundmark

/// The matcher's first pass (the unchanged speed with every landmark, the other speed
/// candidates with a sparse subset, then the best of those references voted for in full) and
/// the per-reference posting tables a mapped index is read through: a query at a changed speed
/// is found at the same speed and offset as when every candidate votes in full, and a mapped
/// index matches as the same index built in memory.
final class SpeedShortlistTests: XCTestCase {
    private static let rate = 8000.0

    nonisolated(unsafe) private static var cachedIndex: CatalogIndex?

    private func index() throws -> CatalogIndex {
        if let i = Self.cachedIndex { return i }
        let items = try TestSupport.referenceIDs.map { (MediaItem(id: $0, title: $0), try TestSupport.referenceSignature($0)) }
        let i = CatalogIndex(configuration: Configuration(), items: items)
        Self.cachedIndex = i
        return i
    }

    /// `seconds` of reference `id` from `start`, played `speed` times faster (pitch and tempo
    /// together, linear interpolation).
    private func varispeed(_ id: String, from start: Double, speed: Double, seconds: Double) throws -> [Float] {
        let samples = try TestSupport.referenceSamples(id)
        let first = start * Self.rate
        return (0..<Int(seconds * Self.rate)).map { j in
            let x = first + speed * Double(j)
            let i = Int(x), f = Float(x - Double(i))
            guard i + 1 < samples.count else { return 0 }
            return samples[i] * (1 - f) + samples[i + 1] * f
        }
    }

    private func match(_ samples: [Float], _ index: CatalogIndex, _ configure: (inout MatchOptions) -> Void = { _ in }) -> [MatchCandidate] {
        var options = MatchOptions()
        configure(&options)
        return Matcher(index: index, options: options).match(TestSupport.signature(of: samples, role: .query).landmarks)
    }

    func testSkewedQueryIsFoundThroughTheShortlistAtTheSpeedAndOffsetOfTheFullSearch() throws {
        let index = try index()
        let knolls = try XCTUnwrap(index.references.firstIndex { $0.item.id == "wesnoth-knolls" })
        // 6.3 % fast (between the 1 % grid's candidates) and 4.6 % slow, 8 s each.
        for (speed, start) in [(1.063, 15.0), (0.954, 22.0)] {
            let clip = try varispeed("wesnoth-knolls", from: start, speed: speed, seconds: 8)
            let shortlisted = try XCTUnwrap(match(clip, index).first, "×\(speed)")
            let full = try XCTUnwrap(match(clip, index) { $0.sparseStride = 1 }.first, "×\(speed), every candidate in full")
            XCTAssertEqual(shortlisted.referenceIndex, knolls)
            XCTAssertEqual(shortlisted.speed.frequencyScale, speed, accuracy: 0.002, "×\(speed)")
            XCTAssertEqual(shortlisted.speed.timeScale, shortlisted.speed.frequencyScale, "×\(speed): pitch and tempo together")
            XCTAssertEqual(shortlisted.offsetFrames * index.configuration.hopDuration, start, accuracy: 0.05, "×\(speed)")
            XCTAssertGreaterThanOrEqual(shortlisted.confidence, 0.9, "×\(speed)")
            // The same answer as the full search.
            XCTAssertEqual(shortlisted.referenceIndex, full.referenceIndex)
            XCTAssertEqual(shortlisted.speed, full.speed, "×\(speed)")
            XCTAssertEqual(shortlisted.offsetFrames, full.offsetFrames, accuracy: 1e-9, "×\(speed)")
            XCTAssertEqual(shortlisted.alignedCount, full.alignedCount, "×\(speed)")
        }
    }

    func testQueryOnlyReachedAtAChangedSpeedIsFoundByTheShortlistAlone() throws {
        let index = try index()
        let battle = try XCTUnwrap(index.references.firstIndex { $0.item.id == "wesnoth-battle" })
        let clip = try varispeed("wesnoth-battle", from: 9, speed: 1.08, seconds: 10)
        // At the unchanged speed alone the clip is not found ...
        XCTAssertFalse(match(clip, index) { $0.candidates = [SpeedCandidate(timeScale: 1, frequencyScale: 1)] }
            .contains { $0.referenceIndex == battle })
        // ... nor when no reference of the sparse votes is voted for in full ...
        XCTAssertFalse(match(clip, index) { $0.speedShortlist = 0 }.contains { $0.referenceIndex == battle })
        // ... but through the shortlist it is, at +8 % and 9 s.
        let found = try XCTUnwrap(match(clip, index).first)
        XCTAssertEqual(found.referenceIndex, battle)
        XCTAssertEqual(found.speed.frequencyScale, 1.08, accuracy: 0.002)
        XCTAssertEqual(found.offsetFrames * index.configuration.hopDuration, 9, accuracy: 0.05)
        XCTAssertGreaterThanOrEqual(found.confidence, 0.9)
    }

    func testMappedIndexReadThroughReferenceTablesMatchesAsTheIndexInMemory() throws {
        let path = try TestSupport.temporaryDirectory(self).appendingPathComponent("catalog.db").path
        let writer = try Catalog(path: path, create: true)
        for id in TestSupport.referenceIDs {
            XCTAssertEqual(try writer.addReferenceSignature(try TestSupport.referenceSignature(id), representing: MediaItem(id: id, title: id)),
                           .added)
        }
        let catalog = try Catalog(path: path, readOnly: true)
        _ = try catalog.loadIndex()   // writes the index file
        let mapped = try catalog.loadIndex()
        XCTAssertTrue(mapped.postings.isMapped)
        // The per-reference tables hold each reference's postings, ordered by hash, then frame
        // (the order the matcher's directory of hash cells over them relies on).
        let memory = try index()
        XCTAssertEqual(mapped.references.map(\.item.id), memory.references.map(\.item.id))
        for r in mapped.references.indices {
            let table = try XCTUnwrap(mapped.postings.postingsByHash(of: r))
            let postings = memory.postings.postings(of: r)
            XCTAssertEqual(table.count, postings.count)
            XCTAssertEqual(table, postings.map { UInt64($0.hash) << 32 | UInt64($0.frame) }.sorted(), "reference \(r)")
        }
        XCTAssertNil(memory.postings.postingsByHash(of: 0), "an index built in memory has no per-reference sections")
        XCTAssertNil(mapped.postings.postingsByHash(of: mapped.references.count))
        // Unchanged, sped up and slowed down clips: the same matches from either index.
        let clips = [try varispeed("supertux-forest", from: 12, speed: 1, seconds: 10),
                     try varispeed("wesnoth-knolls", from: 15, speed: 1.063, seconds: 8),
                     try varispeed("wesnoth-the-dangerous-symphony", from: 5, speed: 0.93, seconds: 10)]
        for (n, clip) in clips.enumerated() {
            let a = match(clip, mapped), b = match(clip, memory)
            XCTAssertFalse(a.isEmpty, "clip \(n)")
            XCTAssertEqual(a, b, "clip \(n)")
            let query = TestSupport.signature(of: clip, role: .query).landmarks
            let stretchA = try XCTUnwrap(Matcher(index: mapped).matchedStretch(of: a[0], in: query))
            let stretchB = try XCTUnwrap(Matcher(index: memory).matchedStretch(of: b[0], in: query))
            XCTAssertEqual(stretchA.queryStart, stretchB.queryStart)
            XCTAssertEqual(stretchA.queryEnd, stretchB.queryEnd)
            XCTAssertEqual(stretchA.referenceStart, stretchB.referenceStart)
        }
    }
}

extension SpeedShortlistTests {
    func testVotesCountedAFewReferencesAtATimeGiveTheSameMatches() throws {
        let index = try index()
        for (id, speed) in [("supertux-chipdisko", 1.0), ("wesnoth-knolls", 1.063), ("wesnoth-battle", 0.93)] {
            let clip = try varispeed(id, from: 11, speed: speed, seconds: 8)
            let whole = match(clip, index)
            // Each candidate's votes over about 300 postings at a time: one reference per part.
            let parted = match(clip, index) { $0.voteKeysPerPart = 300 }
            XCTAssertEqual(whole.first.map { index.references[$0.referenceIndex].item.id }, id)
            XCTAssertEqual(parted, whole, "\(id) ×\(speed)")
        }
    }

    /// Votes over a catalog of more than 256 references (whose vote keys the matcher rewrites
    /// into fewer bits before sorting them) find the reference at index 300 with the same
    /// offset, speed, counts and confidence as a catalog of that reference alone: 300 decoys,
    /// each every 300th landmark of one of the other references, come first.
    func testVotesOverMoreThan256ReferencesMatchAsOverTheReferenceAlone() throws {
        let configuration = Configuration()
        let others = try ["supertux-chipdisko", "wesnoth-battle", "wesnoth-knolls"].map { try TestSupport.referenceSignature($0) }
        var items: [(MediaItem, Signature)] = (0..<300).map { i in
            let source = others[i % 3]
            let landmarks = stride(from: i / 3, to: source.landmarks.count, by: 100).map { source.landmarks[$0] }
            let id = String(format: "decoy-%03d", i)
            return (MediaItem(id: id, title: id), Signature(configuration: configuration, landmarks: landmarks, sampleCount: source.sampleCount))
        }
        let forest = try TestSupport.referenceSignature("supertux-forest")
        items.append((MediaItem(id: "supertux-forest", title: "forest"), forest))
        let large = CatalogIndex(configuration: configuration, items: items)
        let alone = CatalogIndex(configuration: configuration, items: [(MediaItem(id: "supertux-forest", title: "forest"), forest)])
        XCTAssertEqual(large.references[300].item.id, "supertux-forest")
        for speed in [1.0, 1.04] {
            let clip = try varispeed("supertux-forest", from: 12, speed: speed, seconds: 10)
            let expected = try XCTUnwrap(match(clip, alone).first)
            XCTAssertEqual(expected.offsetFrames * configuration.hopDuration, 12, accuracy: 0.05)
            var found = try XCTUnwrap(match(clip, large).first, "×\(speed)")
            XCTAssertEqual(found.referenceIndex, 300, "×\(speed)")
            found.referenceIndex = 0
            XCTAssertEqual(found, expected, "×\(speed)")
        }
    }
}
