import Foundation
import XCTest
@testable import Soundmark

/// What FuzzShazamFile checks, on the inputs it found: every signature the reader accepts is
/// written back and read again with the same peaks.
final class ShazamRoundTripTests: XCTestCase {
    /// Bare "vnd.shazam.sig" data (CRC left zero: read with requireValidCRC false) holding one
    /// band record with `body` as its peak data.
    func signature(band: Int, body: [UInt8]) -> Data {
        var records: [UInt8] = []
        func u32(_ v: UInt32, into b: inout [UInt8]) { for k in 0..<4 { b.append(UInt8((v >> (8 * UInt32(k))) & 0xFF)) } }
        u32(0x6003_0040 + UInt32(band), into: &records)
        u32(UInt32(body.count), into: &records)
        records += body
        while records.count % 4 != 0 { records.append(0) }
        var header: [UInt8] = []
        u32(0xCAFE_2580, into: &header); u32(0, into: &header); u32(UInt32(records.count + 8), into: &header)
        u32(0x9420_9C00, into: &header); for _ in 0..<3 { u32(0, into: &header) }
        u32(3 << 27, into: &header); u32(0, into: &header); u32(0, into: &header)
        u32(16000, into: &header); u32(0x007C_0000, into: &header)
        u32(0x4000_0000, into: &header); u32(UInt32(records.count + 8), into: &header)
        return Data(header + records)
    }

    func peak(_ delta: UInt8, _ magnitude: UInt16, _ bin: UInt16) -> [UInt8] {
        [delta, UInt8(magnitude & 0xFF), UInt8(magnitude >> 8), UInt8(bin & 0xFF), UInt8(bin >> 8)]
    }

    /// An absolute pass that jumps back (the fuzzer's find: the writer sorted the band, so the
    /// peaks read back in another order): the band is read in pass order, peaks of one pass in
    /// file order, and written back and read again it is the same.
    func testAbsolutePassJumpingBackReadsInPassOrder() throws {
        let body = peak(10, 100, 2000) + [0xFF, 5, 0, 0, 0] + peak(0, 200, 3000) + peak(0, 300, 3100) + peak(20, 400, 4000)
        let s = try ShazamSignature(data: signature(band: 1, body: body), requireValidCRC: false)
        XCTAssertFalse(s.crcValid)
        XCTAssertEqual(s.bands[1].map(\.pass), [5, 5, 10, 25])
        XCTAssertEqual(s.bands[1].map(\.magnitude), [200, 300, 100, 400])
        let again = try ShazamSignature(data: s.dataRepresentation())
        XCTAssertEqual(again.bands, s.bands)
        XCTAssertEqual(again.sampleCount, s.sampleCount)
        XCTAssertTrue(again.crcValid)
        // Written back once more: byte for byte the same.
        XCTAssertEqual(again.dataRepresentation(), s.dataRepresentation())
    }

    /// A pass delta after an absolute pass near 2³² would make a pass number no file can hold:
    /// refused with a line naming the band and the byte.
    func testPassBeyond32BitsIsRefused() throws {
        let body = [0xFF, 0xF0, 0xFF, 0xFF, 0xFF] + peak(0, 1, 2000) + peak(0x20, 2, 2100)
        XCTAssertThrowsError(try ShazamSignature(data: signature(band: 2, body: body), requireValidCRC: false)) {
            XCTAssertEqual(($0 as? ShazamFormatError)?.reason, "band 2: pass number beyond 32 bits at byte 10")
        }
        // Up to 0xFFFFFFFF itself it reads and writes back.
        let edge = [0xFF, 0xF0, 0xFF, 0xFF, 0xFF] + peak(0x0F, 1, 2000)
        let s = try ShazamSignature(data: signature(band: 2, body: edge), requireValidCRC: false)
        XCTAssertEqual(s.bands[2].map(\.pass), [0xFFFF_FFFF])
        XCTAssertEqual(try ShazamSignature(data: s.dataRepresentation()).bands, s.bands)
    }
}
