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
}
