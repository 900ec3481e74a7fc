import XCTest
@testable import Soundmark

/// ``RawStreamLoss``: lost bytes of a raw elementary stream, from packet positions and from the
/// demuxer's read-ahead, turned into seconds at the byte rate around the hole.
final class RawStreamLossTests: XCTestCase {
    /// Feeds `count` good frames of `size` bytes and `seconds` each from byte `start`, with the
    /// read-ahead `readAhead(i)` after frame `i`; returns the events and the next byte position.
    private func feed(_ loss: inout RawStreamLoss, from start: Int64, count: Int, size: Int = 400, seconds: Double = 0.025,
                      damagedFirst: Bool = false, readAhead: (Int64) -> Int64?) -> (events: [RawStreamLoss.Event?], next: Int64) {
        var events: [RawStreamLoss.Event?] = []
        var position = start
        for i in 0..<count {
            events.append(loss.frame(position: position, size: size, readAhead: readAhead(position + Int64(size)),
                                     seconds: seconds, damaged: damagedFirst && i == 0))
            position += Int64(size)
        }
        return (events, position)
    }

    func testSkippedBytesOutsidePacketPositionsCount() {
        // 16,000 bytes/s. 4,000 bytes of undecodable packets, then a demuxer that skipped 6,000
        // more bytes without counting them (its read-ahead rises from 0 to 6,000 and stays).
        var loss = RawStreamLoss()
        let (clean, next) = feed(&loss, from: 0, count: 40) { _ in 0 }
        XCTAssertTrue(clean.allSatisfy { $0 == nil })
        let (events, _) = feed(&loss, from: next + 4000, count: RawStreamLoss.window, damagedFirst: true) { _ in 6000 }
        XCTAssertEqual(events.first, .opened)
        XCTAssertFalse(loss.isMeasuring)
        guard case .decided(let seconds)? = events.last else { return XCTFail("\(events)") }
        XCTAssertEqual(seconds, 10_000.0 / 16_000, accuracy: 1e-9)
        XCTAssertTrue(events.dropFirst().dropLast().allSatisfy { $0 == nil })
    }

    func testBlockReadAheadIsNotTakenForLoss() {
        // A demuxer reading 1,024-byte blocks: the read-ahead wanders over the block from frame
        // to frame; damage of 2,000 bytes of packets must come out as 2,000 bytes (0.125 s), not
        // plus the wander.
        let block: (Int64) -> Int64? = { end in (1024 - end % 1024) % 1024 }
        var loss = RawStreamLoss()
        let (_, next) = feed(&loss, from: 0, count: 40, size: 418, readAhead: block)
        let (events, _) = feed(&loss, from: next + 2000, count: RawStreamLoss.window, size: 418, damagedFirst: true, readAhead: block)
        guard case .decided(let seconds)? = events.last else { return XCTFail("\(events)") }
        // 418 bytes per 25 ms; the wander's floors differ by at most one frame's share of a block.
        XCTAssertEqual(seconds, 2000.0 / (418 / 0.025), accuracy: 0.015)
    }

    func testByteRateComesFromTheFramesAroundTheHole() {
        // Variable bit rate: 800-byte frames early in the stream, 200-byte frames around the hole.
        var loss = RawStreamLoss()
        var (_, next) = feed(&loss, from: 0, count: 200, size: 800) { _ in 0 }
        (_, next) = feed(&loss, from: next, count: RawStreamLoss.window, size: 200) { _ in 0 }
        let (events, _) = feed(&loss, from: next + 8000, count: RawStreamLoss.window, size: 200, damagedFirst: true) { _ in 0 }
        guard case .decided(let seconds)? = events.last else { return XCTFail("\(events)") }
        XCTAssertEqual(seconds, 8000.0 / (200 / 0.025), accuracy: 1e-9) // 1 s, not the mean's 0.4 s
    }

    func testAHoleAtTheEndIsDecidedByFinish() {
        var loss = RawStreamLoss()
        let (_, next) = feed(&loss, from: 0, count: 20) { _ in 0 }
        let (events, _) = feed(&loss, from: next + 1600, count: 3, damagedFirst: true) { _ in 0 }
        XCTAssertEqual(events, [.opened, nil, nil])
        XCTAssertTrue(loss.isMeasuring)
        XCTAssertEqual(loss.finish() ?? -1, 0.1, accuracy: 1e-9)
        XCTAssertNil(loss.finish())
    }
}
