import XCTest
import Soundmark

final class SessionTests: XCTestCase {
    private func index() throws -> CatalogIndex {
        let items = try TestSupport.referenceIDs.map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) }
        return CatalogIndex(configuration: Configuration(), items: items)
    }

    func testMatchAndNoMatchArriveOnResultsInOrder() async throws {
        let session = Session(index: try index())
        let forest = try TestSupport.referenceSamples("supertux-forest")
        session.match(TestSupport.signature(of: Array(forest[(10 * 8000)..<(18 * 8000)]), role: .query))
        session.match(TestSupport.signature(of: [Float](repeating: 0, count: 8 * 8000), role: .query))
        session.finish()
        var outcomes: [String] = []
        for await result in session.results {
            switch result {
            case .match(let items, _):
                outcomes.append("match \(items[0].item.id) \(Int(items[0].matchOffset.rounded()))")
            case .noMatch: outcomes.append("no match")
            case .error(let e, _): outcomes.append("error \(e)")
            }
        }
        XCTAssertEqual(outcomes, ["match supertux-forest 10", "no match"])
    }

    func testStreamingBufferMatchesTheLatestWindowEveryHop() async throws {
        let session = Session(index: try index(), windowSeconds: 6, hopSeconds: 2)
        let battle = try TestSupport.referenceSamples("wesnoth-battle")
        // 14 s of battle from 5 s, fed in uneven chunks: windows end at 6, 8, 10, 12 and 14 s.
        let stream = Array(battle[(5 * 8000)..<(19 * 8000)])
        var i = 0
        while i < stream.count {
            let n = min(3001, stream.count - i)
            session.matchStreamingBuffer(Array(stream[i..<(i + n)]))
            i += n
        }
        session.finish()
        var offsets: [Double] = []
        for await result in session.results {
            guard case .match(let items, _) = result else { XCTFail("expected a match, got \(result)"); continue }
            XCTAssertEqual(items[0].item.id, "wesnoth-battle")
            offsets.append(items[0].matchOffset)
        }
        // Each window starts 6 s before its end: reference 5 + (end − 6). 5 s is half a hop off
        // the reference's frame grid; the four framings still find the offset within a quarter
        // hop (4 ms).
        XCTAssertEqual(offsets.count, 5)
        for (offset, expected) in zip(offsets, [5.0, 7, 9, 11, 13]) {
            XCTAssertEqual(offset, expected, accuracy: 0.004)
        }
    }
}
