import Foundation
import XCTest
@testable import Soundmark

/// The play rule (``PlayEvidence``): a line of hits is a play only beyond what chance gives over
/// the whole search (issue 36: other music scanned against a small catalog of the same composer
/// gave 88 false segments in 2.9 hours).
final class PlayEvidenceTests: XCTestCase {
    func testPoissonTail() {
        XCTAssertEqual(ChanceModel.logPoissonTail(0, mean: 3), 0)
        XCTAssertEqual(ChanceModel.logPoissonTail(1, mean: 1), log(1 - exp(-1)), accuracy: 1e-12)
        // P(X ≥ 3 | 0.5) = 1 − e^−0.5 (1 + 0.5 + 0.125), from the upper sum and from the lower one.
        XCTAssertEqual(ChanceModel.logPoissonTail(3, mean: 0.5), -4.241383135455769, accuracy: 1e-9)
        XCTAssertEqual(ChanceModel.logPoissonTail(1, mean: 2), log(1 - exp(-2)), accuracy: 1e-12)
        // Far in the tail, where 1 − P(X < k) would round to 0.
        XCTAssertEqual(ChanceModel.logPoissonTail(200, mean: 2), -726.5925514970195, accuracy: 1e-6)
        XCTAssertEqual(ChanceModel.logPoissonTail(5, mean: 0), -.infinity)
    }

    func testEvidenceOfSyntheticLines() {
        // A hit in each of 40 slots (one every 16 frames); the chance lines hold none: the chance
        // mean is the prior's one slot over 11 lines.
        let dense = PlayEvidence(hitFrames: (0..<40).map { Int32($0 * 16 + 3) }, shiftedSlots: Array(repeating: 0, count: 12),
                                 measuredSlots: 40, tests: 1e10)
        XCTAssertEqual(dense.slots, 40)
        XCTAssertEqual(dense.chanceSlots, 1.0 / 11, accuracy: 1e-12)
        XCTAssertEqual(dense.log10Tail, -89.60586981397176, accuracy: 1e-6)
        XCTAssertEqual(dense.log10FalseAlarmsPerHour, -79.60586981397176, accuracy: 1e-6)
        XCTAssertEqual(dense.confidence(falseAlarmsPerHour: 0.001), 1, accuracy: 1e-12)
        // Ten hits a slot count once: a chord's landmarks are one event.
        let burst = PlayEvidence(hitFrames: (0..<100).map { Int32($0 / 10 * 16) }, shiftedSlots: [], measuredSlots: 10, tests: 1)
        XCTAssertEqual(burst.slots, 10)
        // Chance lines measured over 10 slots of the span's 19 (hits every other slot): their
        // rate scales to the span; the two highest (9 and 3: a loop) are left out, the other ten
        // hold 4 slots, plus one of prior over 11 lines.
        let spread = PlayEvidence(hitFrames: (0..<10).map { Int32($0 * 32) }, shiftedSlots: [0, 1, 0, 2, 0, 0, 9, 0, 1, 0, 0, 3],
                                  measuredSlots: 10, tests: 1e6)
        XCTAssertEqual(spread.slots, 10)
        XCTAssertEqual(spread.chanceSlots, 5.0 / 11 * 19 / 10, accuracy: 1e-12)
        XCTAssertEqual(spread.log10Tail, -7.536271610500621, accuracy: 1e-6)
        // NFA = 10^−1.54 an hour: a play at a lax setting of 1 an hour, not at the default.
        XCTAssertGreaterThan(spread.confidence(falseAlarmsPerHour: 1), 0.5)
        XCTAssertLessThan(spread.confidence(falseAlarmsPerHour: 0.001), 0.5)
        XCTAssertEqual(spread.confidence(falseAlarmsPerHour: pow(10, spread.log10FalseAlarmsPerHour)), 0.5, accuracy: 1e-9)
    }

    func testTestsPerHour() {
        // 1,000 s of references at 16 ms frames (62,500 / 13 offsets), 19 speeds at 2 time scales,
        // 2,400 hops an hour: 4.38·10^8 lines an hour.
        XCTAssertEqual(log10(PlayEvidence.tests(catalogFrames: 1000 / 0.016, speeds: 19, hopSeconds: 1.5)), 8.641931503365655,
                       accuracy: 1e-9)
    }

    private func decode(_ name: String) throws -> [Float] {
        try MediaDecoder.decodeAll(source: TestSupport.packageRoot.appendingPathComponent("Tests/Fixtures/Chance/\(name)").path,
                                   sampleRate: 8000)
    }

    /// Issue 36's example 1 in miniature: Hedgewars' *Nature* (20–50 s) scanned against a 40 s
    /// excerpt of Wesnoth's *Still Another Wanderer* was reported as a 16 s play of it (confidence
    /// 0.96 from 30 hits in the whole tracks); `identify` said no match. Its line's occupied
    /// slots are what the same stretch gives any line of the reference: no play, and no event.
    func testOtherMusicLinedUpByChanceIsNotAPlay() throws {
        let wanderer = try decode("wanderer-45-85.ogg"), nature = try decode("nature-20-50.ogg")
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "wanderer"), TestSupport.signature(of: wanderer, role: .reference))])
        XCTAssertEqual(TestSupport.scan(nature, index: index), [])
        XCTAssertEqual(TestSupport.monitorEvents(nature, index: index), [])
        // The reference itself played inside the other music is a play, edges and offset right.
        let recording = Array(nature[0..<80_000]) + Array(wanderer[40_000..<200_000]) + Array(nature[80_000..<160_000])
        let segments = TestSupport.scan(recording, index: index)
        XCTAssertEqual(segments.count, 1)
        let play = try XCTUnwrap(segments.first)
        XCTAssertEqual(play.start, 10, accuracy: 0.3)
        XCTAssertEqual(play.end, 30, accuracy: 0.3)
        XCTAssertEqual(play.referenceTime(at: 20), 15, accuracy: 0.05)
        XCTAssertGreaterThan(play.confidence, 0.99)
    }
}
