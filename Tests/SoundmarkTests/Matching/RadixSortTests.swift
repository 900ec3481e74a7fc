import XCTest
@testable import Soundmark

final class RadixSortTests: XCTestCase {
    func testSortsLikeTheStandardLibrary() {
        var generator = SystemRandomNumberGenerator()
        // Vote-key shaped values (few distinct high bits, varied low bits), full-range values,
        // duplicates, sizes on both sides of the small-array cut-off, and the empty array.
        for n in [0, 1, 5, 64, 65, 1000, 50_000] {
            let voteKeys = (0..<n).map { _ in UInt64.random(in: 0..<8, using: &generator) << 46 | UInt64.random(in: 0..<(1 << 30), using: &generator) }
            let full = (0..<n).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
            let repeated = (0..<n).map { UInt64($0 % 7) }
            for input in [voteKeys, full, repeated] {
                var keys = input
                radixSort(&keys)
                XCTAssertEqual(keys, input.sorted(), "n = \(n)")
            }
        }
    }

    func testOrderingByTheHighBitsKeepsEveryKeyAndOrdersTheHighBits() {
        var generator = SystemRandomNumberGenerator()
        for n in [0, 1, 5, 64, 65, 1000, 50_000] {
            // Vote keys: (reference << 25 | offset) << 21 | hash, with repeated (reference, offset).
            let voteKeys = (0..<n).map { _ in
                (UInt64.random(in: 0..<130, using: &generator) << 25 | UInt64.random(in: (1 << 24) - 50 ..< (1 << 24) + 50, using: &generator)) << 21
                    | UInt64.random(in: 0..<(1 << 21), using: &generator)
            }
            let full = (0..<n).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) }
            for (input, low) in [(voteKeys, 21), (full, 21), (full, 1), (full, 63), (voteKeys, 0)] {
                var keys = input
                radixSort(&keys, ignoringBitsBelow: low)
                XCTAssertEqual(keys.map { $0 >> UInt64(low) }, input.map { $0 >> UInt64(low) }.sorted(), "n = \(n), low = \(low)")
                XCTAssertEqual(keys.sorted(), input.sorted(), "n = \(n), low = \(low)")
            }
        }
    }
}
