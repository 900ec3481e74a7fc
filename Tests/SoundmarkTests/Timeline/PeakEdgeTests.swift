import XCTest
@testable import Soundmark

/// ``PeakEdge``: the change point that moves a start past chance hits.
final class PeakEdgeTests: XCTestCase {
    private func checks(_ pattern: String, from x: Double = 100) -> [PeakEdge.Check] {
        pattern.enumerated().map { PeakEdge.Check(x: x + Double($0.offset), matched: $0.element == "1") }
    }

    func testBinomialTail() {
        XCTAssertEqual(PeakEdge.binomialTail(atLeast: 0, of: 5, rate: 0.1), 1)
        XCTAssertEqual(PeakEdge.binomialTail(atLeast: 1, of: 6, rate: 0.053), 1 - pow(0.947, 6), accuracy: 1e-12)
        // P(X ≥ 3) for 12 trials at 0.0575: 1 − P0 − P1 − P2.
        let p = 0.0575, q = 1 - p
        let expected = 1 - pow(q, 12) - 12 * p * pow(q, 11) - 66 * p * p * pow(q, 10)
        XCTAssertEqual(PeakEdge.binomialTail(atLeast: 3, of: 12, rate: p), expected, accuracy: 1e-12)
        XCTAssertEqual(PeakEdge.binomialTail(atLeast: 7, of: 6, rate: 0.5), 0)
    }

    /// The bench's a11: one chance hit 0.17 s before the cut, the reference's peaks there
    /// absent (1 of 6 coincide, chance 5 %), then the stretch (90 of 93).
    func testLoneChanceHitIsSkipped() {
        let inside = checks(String(repeating: "1", count: 90) + "000")
        let moved = PeakEdge.later(checks("010000" + String(repeating: "1", count: 18)), inside: inside, chance: (27, 512))
        XCTAssertEqual(moved, 106)
    }

    /// A quiet or masked first second: its peaks coincide less than the stretch's but far
    /// more than chance (3 of 12 at 5.75 %): the start stays.
    func testFadeInStays() {
        let inside = checks(String(repeating: "1", count: 103) + String(repeating: "0", count: 9))
        XCTAssertNil(PeakEdge.later(checks("110010000000" + String(repeating: "1", count: 12)), inside: inside, chance: (37, 643)))
        // Too little inside to say anything.
        XCTAssertNil(PeakEdge.later(checks("000001111"), inside: checks("1111"), chance: (27, 512)))
    }
}
