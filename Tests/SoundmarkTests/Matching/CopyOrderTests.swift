import Foundation
import XCTest
@testable import Soundmark

/// Issue 10, items 4 and 6: the copies of a passage a reference repeats, told apart where they
/// differ (``CopyOrder``) and left one ambiguity group where they do not.
extension SpectralCheckTests {
    private static let copyRate = 8000

    /// knolls 0–15 s (`passage`), then battle 0–10 s, then the passage again with `second`
    /// (1.5 s) mixed into it from 7 s when given (the copies at 0 and 25 s).
    private func repeated(second: [Float]?) throws -> (reference: [Float], passage: [Float], copy: [Float]) {
        let rate = Self.copyRate
        let passage = Array(try TestSupport.referenceSamples("wesnoth-knolls")[0..<(15 * rate)])
        var copy = passage
        if let second {
            for i in 0..<(3 * rate / 2) { copy[7 * rate + i] += second[i] }
        }
        let gap = Array(try TestSupport.referenceSamples("wesnoth-battle")[0..<(10 * rate)])
        return (passage + gap + copy, passage, copy)
    }

    func testTheCopyThatDiffersWhereTheClipPlaysIsRankedFirstUnderNoise() throws {
        let rate = Self.copyRate
        let battle = Array(try TestSupport.referenceSamples("wesnoth-battle")[(25 * rate)..<(25 * rate + 3 * rate / 2)])
        let (reference, _, copy) = try repeated(second: battle)
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "looped"), TestSupport.signature(of: reference, role: .reference))])
        let matcher = Matcher(index: index)
        let hop = Configuration().hopDuration
        // 8 s of the second copy (its 4–12 s: the differing spot at 3–4.5 s of the clip) under
        // pink noise as loud as the music.
        let (signatures, ring) = query(TestSupport.withPinkNoise(Array(copy[(4 * rate)..<(12 * rate)]), snr: 0))
        let found = matcher.match(signatures[0].landmarks, reframed: signatures.dropFirst().map(\.landmarks), spectrum: ring)
        XCTAssertEqual(found.map { ($0.offsetFrames * hop * 10).rounded() / 10 }.prefix(2), [29, 4], "\(found.map(\.framingTotal))")
        let own = try XCTUnwrap(found.first), other = try XCTUnwrap(found.dropFirst().first)
        // The paired comparison: the clip's own copy's peaks stand out, the other's do not.
        let tables = SpectrumTables(ring, first: 0, last: ring.latest)
        let c = try XCTUnwrap(matcher.compareCopies(reference: 0, speed: own.speed, offsets: (own.offsetFrames, other.offsetFrames),
                                                    tables: tables))
        XCTAssertGreaterThanOrEqual(c.score, CopyOrder.decisive, "\(c)")
        XCTAssertGreaterThanOrEqual(min(c.ownReadings, c.otherReadings), CopyOrder.minimumReadings, "\(c)")
        let back = try XCTUnwrap(matcher.compareCopies(reference: 0, speed: own.speed, offsets: (other.offsetFrames, own.offsetFrames),
                                                       tables: tables))
        XCTAssertEqual(back.score, -c.score, accuracy: 1e-9)
        // Ranked the other way round (as the landmark counts may rank them), and even marked as
        // one ambiguity group, the clip's own copy still comes first, alone.
        var swapped = [other, own]
        swapped[0].ambiguityGroup = 0
        swapped[1].ambiguityGroup = 0
        let ordered = matcher.orderingCopies(swapped, query: signatures[0].landmarks, spectrum: ring)
        XCTAssertEqual(ordered.map { ($0.offsetFrames * hop * 10).rounded() / 10 }, [29, 4])
        XCTAssertEqual(ordered.map(\.ambiguityGroup), [nil, nil])
    }

    func testBitExactCopiesStayOneAmbiguityGroupInEitherOrder() throws {
        let rate = Self.copyRate
        let (reference, passage, _) = try repeated(second: nil)
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "looped"), TestSupport.signature(of: reference, role: .reference))])
        let matcher = Matcher(index: index)
        let hop = Configuration().hopDuration
        for snr: Float in [20, 0] {
            let (signatures, ring) = query(TestSupport.withPinkNoise(Array(passage[(4 * rate)..<(12 * rate)]), snr: snr))
            let found = matcher.match(signatures[0].landmarks, reframed: signatures.dropFirst().map(\.landmarks), spectrum: ring)
            XCTAssertEqual(found.count, 2, "\(snr) dB")
            XCTAssertEqual(Set(found.map { ($0.offsetFrames * hop * 100).rounded() / 100 }), [4, 29], "\(snr) dB")
            XCTAssertEqual(found.map(\.ambiguityGroup), [0, 0], "\(snr) dB")
            for order in [found, found.reversed()] {
                let ordered = matcher.orderingCopies(Array(order), query: signatures[0].landmarks, spectrum: ring)
                XCTAssertEqual(ordered, Array(order), "\(snr) dB")
            }
        }
    }
}
