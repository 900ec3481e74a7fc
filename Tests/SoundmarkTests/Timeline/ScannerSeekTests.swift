import Foundation
import XCTest
@testable import Soundmark

/// Issue 10 (helper-found): a pause or a seek inside one play of a reference. The reference goes
/// on a moment earlier or later, and the music is like itself a moment away, so the line after
/// the break gathered hits over the play before it too: traced back, it started at the play's
/// start and was dropped as a repeat of the first line (the second 15 s missing); within 0.4 s it
/// extended the first line, fitted through both (one play at speed 0.985, its start 3.6 s late);
/// and two parts 0.5 s apart on lines 0.5 s apart were joined as one play, half of it mapped 0.5 s
/// off. Recordings are assembled from the sample references at 8000 Hz mono, so the truth is exact.
final class ScannerSeekTests: XCTestCase {
    private let rate = 8000.0

    /// 3 s of chipdisko, knolls 2-17 s, then a pause of `pause` s or a seek of `seek` s, knolls
    /// from 17 (+ `seek`) s for 15 s, 3 s of forest; knolls alone catalogued. Two plays: 3-18 s at
    /// reference 2 s, and from 18 + `pause` s at reference 17 + `seek` s, each mapped within
    /// 0.05 s in its middle and each edge within 0.35 s.
    private func check(pause: Double = 0, seek: Double = 0, file: StaticString = #filePath, line: UInt = #line) throws {
        let knolls = try TestSupport.referenceSamples("wesnoth-knolls")
        func cut(_ from: Double, _ seconds: Double) -> [Float] { Array(knolls[Int(from * rate) ..< Int((from + seconds) * rate)]) }
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "knolls"), TestSupport.signature(of: knolls, role: .reference))])
        let recording = (try TestSupport.piece("supertux-chipdisko", from: 3, seconds: 3)) + cut(2, 15)
            + [Float](repeating: 0, count: Int(pause * rate)) + cut(17 + seek, 15) + (try TestSupport.piece("supertux-forest", from: 20, seconds: 3))
        let segments = TestSupport.scan(recording, index: index)
        let name = "pause \(pause) s, seek \(seek) s"
        XCTAssertEqual(segments.count, 2, name, file: file, line: line)
        guard segments.count == 2 else { return }
        let (a, b) = (segments[0], segments[1])
        XCTAssertEqual(a.start, 3, accuracy: 0.35, name, file: file, line: line)
        XCTAssertEqual(a.end, 18, accuracy: 0.35, name, file: file, line: line)
        XCTAssertEqual(a.referenceTime(at: 10.5), 9.5, accuracy: 0.05, name, file: file, line: line)
        XCTAssertEqual(b.start, 18 + pause, accuracy: 0.35, name, file: file, line: line)
        XCTAssertEqual(b.end, 33 + pause, accuracy: 0.35, name, file: file, line: line)
        XCTAssertEqual(b.referenceTime(at: 25.5 + pause), 24.5 + seek, accuracy: 0.05, name, file: file, line: line)
        for s in segments { XCTAssertEqual(s.timeScale, 1, accuracy: 0.002, name, file: file, line: line) }
    }

    func testAPauseInsideAPlayStartsASecondPlay() throws {
        for pause in [0.3, 0.5, 0.7, 1.5] { try check(pause: pause) }
    }

    func testASeekInsideAPlayStartsASecondPlay() throws {
        for seek in [-0.5, -0.3, 0.3, 0.5, 1] { try check(seek: seek) }
    }

    /// ``RecordingScanner/afterDominated(_:by:)``: the new line's hits before the last stretch another
    /// line has three times as many hits in are not its own; none when no stretch is dominated.
    func testAfterDominated() {
        let other: [Int32] = (0..<60).map { Int32($0 * 4) }     // 0 ..< 240, 4 hits a 16-frame stretch
        let sparse: [Int32] = (0..<15).map { Int32($0 * 16) }
        let after: [Int32] = (0..<60).map { Int32(240 + $0 * 2) }
        let mine = sparse + after
        // Stretches from frame 0 hold 1 of mine and 4 of theirs: under the minimum of 6, not dominated.
        XCTAssertEqual(RecordingScanner.afterDominated(mine, by: other), 0)
        let dense: [Int32] = (0..<240).map { Int32($0) }               // 16 a stretch up to frame 240
        let cut = RecordingScanner.afterDominated(mine, by: dense)
        XCTAssertEqual(mine[cut], 240)
        XCTAssertEqual(RecordingScanner.afterDominated(dense, by: dense), 0)
    }

    /// ``RecordingScanner/dominatedEnd(_:by:)``: the end of a line that a later one dominates (a pause
    /// of few hits between passed), none when the line's own hits stand at its end.
    func testDominatedEnd() {
        let dense: [Int32] = (0..<240).map { Int32($0) }
        let sparse: [Int32] = (0..<10).map { Int32(300 + $0 * 8) }
        let mine = dense + sparse                                  // dense to 240, sparse to 372
        let later: [Int32] = (0..<200).map { Int32(290 + $0) }
        XCTAssertEqual(RecordingScanner.dominatedEnd(mine, by: later).map { $0 <= 300 && $0 > 240 }, true)
        let early: [Int32] = (0..<50).map { Int32($0) }
        XCTAssertNil(RecordingScanner.dominatedEnd(mine, by: early))
    }
}
