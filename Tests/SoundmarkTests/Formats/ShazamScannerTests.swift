import Foundation
import XCTest
@testable import Soundmark

/// ``ShazamScanner``: a recording's set-list from Shazam-format peaks.
final class ShazamScannerTests: XCTestCase {
    func samples16k(_ id: String) throws -> [Float] {
        try MediaDecoder.decodeAll(source: TestSupport.referencePath(id), sampleRate: 16000)
    }

    func shazam(_ samples: [Float]) -> ShazamSignature {
        let g = ShazamPeakGenerator()
        g.append(samples)
        return g.finish()
    }

    /// 12 s of supertux-forest from 5 s, then 14 s of wesnoth-battle from 10 s, then 6 s of
    /// wesnoth-knolls (not among the references): two segments on the right lines (forest:
    /// reference = recording + 5; battle: reference = recording − 2), nothing for knolls.
    func testTwoPiecesOnTheirLines() throws {
        let forest = try samples16k("supertux-forest"), battle = try samples16k("wesnoth-battle")
        let knolls = try samples16k("wesnoth-knolls")
        let recording = Array(forest[(5 * 16000)..<(17 * 16000)]) + Array(battle[(10 * 16000)..<(24 * 16000)])
            + Array(knolls[(3 * 16000)..<(9 * 16000)])
        let refs = [(MediaItem(id: "forest"), shazam(forest)), (MediaItem(id: "battle"), shazam(battle)),
                    (MediaItem(id: "chipdisko"), shazam(try samples16k("supertux-chipdisko")))]
        let index = CatalogIndex(configuration: Configuration(), items: [])
        let segments = ShazamScanner(references: refs, index: index).segments(of: shazam(recording))
        XCTAssertEqual(segments.map(\.item.id), ["forest", "battle"], "\(segments)")
        guard segments.count == 2 else { return }
        XCTAssertEqual(segments[0].referenceTime(at: 0), 5, accuracy: 0.02)
        XCTAssertEqual(segments[1].referenceTime(at: 12), 10, accuracy: 0.02)
        XCTAssertEqual(segments[0].start, 0, accuracy: 1)
        XCTAssertEqual(segments[0].end, 12, accuracy: 1)
        XCTAssertEqual(segments[1].start, 12, accuracy: 1)
        XCTAssertEqual(segments[1].end, 26, accuracy: 1)
        XCTAssertLessThanOrEqual(segments[0].end, segments[1].start)
        for s in segments {
            XCTAssertEqual(s.frequencySkew, 0)
            XCTAssertEqual(s.timeScale, 1)
            XCTAssertGreaterThanOrEqual(s.confidence, 0.5)
        }
    }
}
