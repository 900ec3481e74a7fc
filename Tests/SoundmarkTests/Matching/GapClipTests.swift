import Foundation
import XCTest
@testable import Soundmark

/// Issue 10 (helper-found): a clip with a pause or a seek inside lines up on two lines of the
/// reference, and the music is like itself a moment away, so each line also finds a few
/// agreements over the other's part. A 20 s clip of Wesnoth's *Knolls* with 0.5 s of silence
/// in its middle was reported on its second half's line from 1.8 s of the clip (1 s of silence:
/// from 0 s), its first half mapped 0.5 s (1 s) off. Each reported match covers its own part.
final class GapClipTests: XCTestCase {
    private let rate = 8000.0

    /// Matches of `clip` analysed on the four frame grids, as `identify` does.
    private func identify(_ clip: [Float], _ index: CatalogIndex) -> [MatchedMediaItem] {
        let reframed = (1..<Matcher.framings).map {
            TestSupport.signature(of: Array(clip.dropFirst($0 * 128 / Matcher.framings)), role: .query)
        }
        return Matcher(index: index).matchedItems(for: TestSupport.signature(of: clip, role: .query), reframed: reframed)
    }

    /// Knolls (the sample reference, 40 s) 5-15 s, `gap` s of silence or a seek of `seek` s,
    /// then 10 s from 15 (+ `seek`) s: every match on knolls maps its own part, its stretch
    /// within 0.3 s of that part, and the best one covers one part only.
    private func check(gap: Double = 0, seek: Double = 0, file: StaticString = #filePath, line: UInt = #line) throws {
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls")
        func cut(_ from: Double, _ seconds: Double) -> [Float] { Array(knolls[Int(from * rate) ..< Int((from + seconds) * rate)]) }
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "knolls"), TestSupport.signature(of: knolls, role: .reference))])
        let clip = cut(5, 10) + [Float](repeating: 0, count: Int(gap * rate)) + cut(15 + seek, 10)
        let matches = identify(clip, index)
        let name = "gap \(gap) s, seek \(seek) s"
        XCTAssertFalse(matches.isEmpty, name, file: file, line: line)
        // The two parts: (query start, query end, reference time at query start).
        let parts = [(0.0, 10.0, 5.0), (10 + gap, 20 + gap, 15 + seek)]
        for m in matches {
            guard let part = parts.min(by: { abs(m.referenceStart - $0.2 - (m.queryStart - $0.0)) < abs(m.referenceStart - $1.2 - (m.queryStart - $1.0)) })
            else { continue }
            // On the part's line: the reference time at the stretch's start.
            XCTAssertEqual(m.referenceStart, part.2 + (m.queryStart - part.0), accuracy: 0.05, name, file: file, line: line)
            XCTAssertGreaterThanOrEqual(m.queryStart, part.0 - 0.3, name, file: file, line: line)
            XCTAssertLessThanOrEqual(m.queryEnd, part.1 + 0.3, name, file: file, line: line)
        }
        let best = matches[0]
        XCTAssertLessThan(best.queryEnd - best.queryStart, 10.6, name, file: file, line: line)
    }

    func testAPauseInsideAClipIsNotPartOfEitherMatch() throws {
        for gap in [0.5, 1.0] { try check(gap: gap) }
    }

    func testASeekInsideAClipIsNotPartOfEitherMatch() throws {
        for seek in [-0.5, 0.7] { try check(seek: seek) }
    }

    /// ``Matcher/undominated(_:by:)``: the part at the start that another line holds three
    /// times over is left out; a few stray agreements of the other line are not.
    func testUndominated() {
        let mine: [Int32] = (0..<20).map { Int32($0 * 16) } + (0..<160).map { Int32(320 + $0) }   // 1 a stretch, then 16
        let other: [Int32] = (0..<320).map { Int32($0) }                                            // 16 a stretch up to 320
        XCTAssertEqual(Matcher.undominated(mine, by: other), 320 ..< Int32.max)
        let strays: [Int32] = [100, 200, 400]
        XCTAssertEqual(Matcher.undominated(mine, by: strays), Int32.min ..< Int32.max)
    }
}
