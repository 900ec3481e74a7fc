import XCTest
@testable import Soundmark

final class PostingCodecTests: XCTestCase {
    private func roundTrip(_ postings: [Posting]) -> [Posting]? {
        var out: [Posting] = []
        return PostingCodec.decode(PostingCodec.encode(postings), into: { out.append($0) }) ? out : nil
    }

    func testRoundTripSortsAndDropsDuplicates() {
        let input = [Posting(hash: 500, frame: 7), Posting(hash: 3, frame: 9), Posting(hash: 500, frame: 2),
                     Posting(hash: 3, frame: 9), Posting(hash: 1_046_924, frame: 0)]
        XCTAssertEqual(roundTrip(input), [Posting(hash: 3, frame: 9), Posting(hash: 500, frame: 2),
                                          Posting(hash: 500, frame: 7), Posting(hash: 1_046_924, frame: 0)])
        XCTAssertEqual(roundTrip([]), [])
    }

    func testFramesOfALongReferenceDoNotWrap() {
        // 30 hours at 62.5 frames per second needs 23 bits; every frame must come back exactly.
        var input: [Posting] = []
        for i in 0..<2000 {
            let hash = UInt32(i * 523 % 1_000_000)
            let frame = UInt32(6_750_000 - i * 3371)
            input.append(Posting(hash: hash, frame: frame))
        }
        let out: [Posting] = roundTrip(input) ?? []
        XCTAssertEqual(out.count, 2000)
        XCTAssertEqual(out, input.sorted { $0.hash < $1.hash })
    }

    func testDenseListTakesUnderThreeBytesPerPosting() {
        var state: UInt32 = 7
        let input = (0..<20_000).map { i -> Posting in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Posting(hash: state % 1_046_925, frame: UInt32(i / 2))
        }
        let bytes = PostingCodec.encode(input)
        XCTAssertLessThan(Double(bytes.count) / 20_000, 3.0)
        XCTAssertEqual(roundTrip(input)?.count, Set(input.map { "\($0.hash):\($0.frame)" }).count)
    }

    func testCorruptDataIsRefused() {
        var bytes = PostingCodec.encode([Posting(hash: 10, frame: 10), Posting(hash: 20, frame: 20)])
        bytes.removeLast()
        XCTAssertFalse(PostingCodec.decode(bytes, into: { _ in }))
        XCTAssertFalse(PostingCodec.decode([0xFF], into: { _ in }))
    }

    func testBitReaderReadsWhatBitWriterWrote() {
        // Random Rice codes (k 0…20, long unary runs too) and fixed-width fields (1…32 bits),
        // so reads cross byte and 64-bit window boundaries and run up to the last byte.
        var generator = SystemRandomNumberGenerator()
        var fields: [(rice: Bool, value: UInt64, width: Int)] = []
        var writer = BitWriter()
        for _ in 0..<5000 {
            if Bool.random(using: &generator) {
                let k = Int.random(in: 0...20, using: &generator)
                let value = UInt64.random(in: 0..<(UInt64(1) << UInt64(k + Int.random(in: 0...7, using: &generator))), using: &generator)
                writer.rice(value, k: k)
                fields.append((true, value, k))
            } else {
                let width = Int.random(in: 1...32, using: &generator)
                let value = UInt64.random(in: 0..<(UInt64(1) << UInt64(width)), using: &generator)
                writer.write(value, bits: width)
                fields.append((false, value, width))
            }
        }
        let bytes = writer.finish()
        bytes.withUnsafeBufferPointer { b in
            var reader = BitReader(b, byteOffset: 0)
            for (i, f) in fields.enumerated() {
                let got = f.rice ? reader.rice(k: f.width) : reader.read(bits: f.width)
                XCTAssertEqual(got, f.value, "field \(i)")
                if got != f.value { break }
            }
            // Past the end: nil, not a crash.
            XCTAssertNil(reader.read(bits: 16))
        }
    }
}
