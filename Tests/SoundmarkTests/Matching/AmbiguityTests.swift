import Foundation
import XCTest
import Soundmark

/// Issue 10, item 4: references that share material, and passages a reference repeats.
final class AmbiguityTests: XCTestCase {
    private static let rate = 8000

    private func seconds(_ id: String, _ from: Int, _ to: Int) throws -> [Float] {
        Array(try TestSupport.referenceSamples(id)[(from * Self.rate)..<(to * Self.rate)])
    }

    /// Matches of `clip` analysed on the four frame grids, as `identify` does.
    private func identify(_ clip: [Float], _ index: CatalogIndex) -> [MatchedMediaItem] {
        let reframed = (1..<Matcher.framings).map {
            TestSupport.signature(of: Array(clip.dropFirst($0 * 128 / Matcher.framings)), role: .query)
        }
        return Matcher(index: index).matchedItems(for: TestSupport.signature(of: clip, role: .query), reframed: reframed)
    }

    /// Asked for every match (`identify --threshold 0`), the chance alignments of other audio
    /// were grouped as "indistinguishable" whenever their few landmarks lay in the same place
    /// (10 s of Wesnoth's *The King is Dead* and 27 s of *Revelation* 7 % slower, neither
    /// catalogued, against the five sample references: groups of chance alignments at
    /// confidence 0.00). Matches under ``Matcher/ambiguityFloor`` are not compared.
    func testChanceAlignmentsAreNotAnAmbiguityGroup() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try TestSupport.referenceIDs.map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        var options = MatchOptions()
        options.threshold = 0
        let matcher = Matcher(index: index, options: options)
        let fixtures = TestSupport.packageRoot.appendingPathComponent("Tests/SoundmarkTests/Fixtures")
        for file in ["straddle/wesnoth-the-king-is-dead.ogg", "quoted-theme/wesnoth-revelation-slow-25s.flac"] {
            let clip = try TestSupport.samples(ofFile: fixtures.appendingPathComponent(file).path)
            let reframed = (1..<Matcher.framings).map {
                TestSupport.signature(of: Array(clip.dropFirst($0 * 128 / Matcher.framings)), role: .query)
            }
            let found = matcher.matchedItems(for: TestSupport.signature(of: clip, role: .query), reframed: reframed)
            XCTAssertGreaterThan(found.count, 1, file)
            XCTAssertTrue(found.allSatisfy { $0.confidence < Matcher.ambiguityFloor }, "\(file): \(found.map(\.confidence))")
            XCTAssertEqual(found.filter { !$0.ambiguous.isEmpty }.map(\.item.id), [], file)
        }
    }

    func testVersionsSharingTheirOpeningAreOneAmbiguityGroup() throws {
        // Two versions: the same first 20 s (knolls 0–20 s), then battle or forest.
        let opening = try seconds("wesnoth-knolls", 0, 20)
        let a = TestSupport.signature(of: opening + (try seconds("wesnoth-battle", 0, 20)), role: .reference)
        let b = TestSupport.signature(of: opening + (try seconds("supertux-forest", 0, 20)), role: .reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "version-a"), a), (MediaItem(id: "version-b"), b)])
        let shared = identify(try seconds("wesnoth-knolls", 5, 13), index)
        XCTAssertEqual(Set(shared.map(\.item.id)), ["version-a", "version-b"])
        for m in shared {
            XCTAssertEqual(m.matchOffset, 5, accuracy: 0.005, m.item.id)
            XCTAssertEqual(m.frequencySkew, 0, m.item.id)
            XCTAssertEqual(m.ambiguous.map(\.id), shared.map(\.item.id), m.item.id)
        }
        let json = shared[0].json.text
        XCTAssertTrue(json.contains("\"ambiguous\":[{\"id\":\"\(shared[0].item.id)\",\"matchOffset\":"), json)
        XCTAssertTrue(json.contains("{\"id\":\"\(shared[1].item.id)\",\"matchOffset\":"), json)
        // Past the shared opening only version A matches, and nothing is ambiguous.
        let own = identify(try seconds("wesnoth-battle", 5, 13), index)
        XCTAssertEqual(own.map(\.item.id), ["version-a"])
        XCTAssertEqual(own[0].matchOffset, 25, accuracy: 0.005)
        XCTAssertEqual(own[0].ambiguous.count, 0)
        XCTAssertFalse(own[0].json.text.contains("ambiguous"))
    }

    /// A tester's example: `identify` of a whole DJ mix listed different songs of it as
    /// "indistinguishable" from each other because their strengths were alike. Songs heard one
    /// after the other lie over different stretches of the query: none is ambiguous.
    func testSongsOneAfterTheOtherAreNotAmbiguous() throws {
        let ids = ["wesnoth-knolls", "wesnoth-battle", "supertux-forest"]
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ids.map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let query = try seconds("wesnoth-knolls", 5, 15) + seconds("wesnoth-battle", 8, 18) + seconds("supertux-forest", 3, 13)
        let matches = identify(query, index)
        XCTAssertEqual(Set(matches.map(\.item.id)), Set(ids))
        for m in matches { XCTAssertEqual(m.ambiguous.count, 0, "\(m.item.id): \(m.ambiguous.map(\.id))") }
        let offsets = Dictionary(uniqueKeysWithValues: matches.map { ($0.item.id, $0.matchOffset) })
        XCTAssertEqual(offsets["wesnoth-knolls"] ?? 0, 5, accuracy: 0.02)
        XCTAssertEqual(offsets["wesnoth-battle"] ?? 0, -2, accuracy: 0.02)
        XCTAssertEqual(offsets["supertux-forest"] ?? 0, -17, accuracy: 0.02)
    }

    func testBitExactRepeatsAreIndistinguishableAtExactOffsetsAndSkewZero() throws {
        // knolls 0–15 s played three times, with battle between (copies at 0, 25 and 50 s;
        // 25 s is half a hop off the first copy's frame grid). Before: offsets 8–20 ms off and
        // skew ±0.1–0.2 %.
        let a = try seconds("wesnoth-knolls", 0, 15)
        let looped = TestSupport.signature(of: a + (try seconds("wesnoth-battle", 0, 10)) + a + (try seconds("wesnoth-battle", 10, 20)) + a,
                                           role: .reference)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "looped"), looped)])
        for start in [4, 7] {
            let found = identify(try seconds("wesnoth-knolls", start, start + 8), index)
            XCTAssertEqual(found.map(\.item.id), ["looped", "looped", "looped"])
            let offsets = found.map(\.matchOffset).sorted()
            for (offset, copy) in zip(offsets, [0.0, 25, 50]) {
                XCTAssertEqual(offset, copy + Double(start), accuracy: 0.004, "\(offsets)")
            }
            for m in found {
                XCTAssertEqual(m.frequencySkew, 0, "\(found.map(\.frequencySkew))")
                XCTAssertEqual(m.ambiguous.count, 3, "\(found.map(\.alignedCount))")
                XCTAssertEqual(m.ambiguous.map(\.matchOffset), found.map(\.matchOffset))
            }
        }
    }
}
