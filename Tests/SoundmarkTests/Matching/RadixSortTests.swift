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

    /// The best alignment per reference of vote keys (`(reference << 25 | offset + 2^24) << 21 |
    /// hash`), whether the keys are rewritten into fewer bits before sorting (3,000 references,
    /// offsets within a few thousand frames) or not (200 references, or offsets spread over
    /// the whole range): the (reference, offset) whose distinct hashes plus those one frame
    /// either side are most (of at least 2 distinct hashes in it; the lowest offset on ties).
    func testBestAlignmentPerReferenceOfVoteKeys() {
        var seed: UInt64 = 12345
        func next(_ n: UInt64) -> UInt64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (seed >> 33) % n
        }
        for (references, wide) in [(3000, false), (200, false), (3000, true)] as [(UInt64, Bool)] {
            var keys: [UInt64] = []
            for _ in 0..<60_000 {
                let ref = next(references), hash = next(64)
                // 40 offsets a reference (so runs of several hashes and neighbours occur): near
                // offset -500, or (wide) near either end of the offsets' range.
                let off = !wide ? (1 << 24) - 500 + next(40) : (ref % 2 == 0 ? 10 + next(40) : (1 << 25) - 60 + next(40))
                keys.append((ref << 25 | off) << 21 | hash)
            }
            var counts: [UInt64: Set<UInt64>] = [:]
            for k in keys { counts[k >> 21, default: []].insert(k & ((1 << 21) - 1)) }
            var expected: [Int: (offset: Int, count: Int)] = [:]
            for key in counts.keys.sorted() {
                let c = counts[key]!.count
                guard c >= 2 else { continue }
                let total = c + (counts[key - 1]?.count ?? 0) + (counts[key + 1]?.count ?? 0)
                let ref = Int(key >> 25), off = Int(key & ((1 << 25) - 1)) - (1 << 24)
                if let b = expected[ref], b.count >= total { continue }
                expected[ref] = (off, total)
            }
            let found = Matcher.bestPerReference(sorting: &keys)
            XCTAssertGreaterThan(expected.count, Int(references) / 2, "\(references) references, wide: \(wide)")
            XCTAssertEqual(found.count, expected.count, "\(references) references, wide: \(wide)")
            for (ref, b) in expected {
                XCTAssertEqual(found[ref]?.offset, b.offset, "reference \(ref)")
                XCTAssertEqual(found[ref]?.count, b.count, "reference \(ref)")
            }
        }
    }
}
