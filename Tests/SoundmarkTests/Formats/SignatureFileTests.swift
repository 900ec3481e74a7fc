import Foundation
import XCTest
@testable import Soundmark

/// soundmark's own signature files: made from audio, read back, matched like the audio.
final class SignatureFileTests: XCTestCase {
    /// A 10 s clip of a sample reference, 15.3 s in (not on a frame boundary).
    private func clip() throws -> [Float] {
        let all = try TestSupport.referenceSamples("supertux-forest")
        let start = Int(15.3 * 8000)
        return Array(all[start..<(start + 80_000)])
    }

    private func file(of samples: [Float]) throws -> SignatureFile {
        let wav = FileManager.default.temporaryDirectory.appendingPathComponent("sigfile-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: wav) }
        try Self.writeFloatWAV(samples, sampleRate: 8000, to: wav)
        let decoder = try MediaDecoder(source: wav.path, sampleRate: 8000)
        return try SignatureFile.make(decoding: decoder)
    }

    func testRoundTripAndMatchLikeTheAudio() throws {
        let samples = try clip()
        let file = try file(of: samples)
        XCTAssertEqual(file.sets.count, 1 + Matcher.framings)
        XCTAssertEqual(file.duration, 10, accuracy: 0.001)
        let data = file.dataRepresentation
        let back = try SignatureFile(data: data)
        XCTAssertEqual(back.sets.map(\.peaks.count), file.sets.map(\.peaks.count))
        XCTAssertEqual(back.sets.map(\.sampleCount), file.sets.map(\.sampleCount))
        // Peaks come back to 1/64 bin and 0.01 dB.
        for (a, b) in zip(back.sets[1].peaks, file.sets[1].peaks) {
            XCTAssertEqual(a.frame, b.frame)
            XCTAssertEqual(a.bin, b.bin, accuracy: 1.0 / 128 + 1e-4)
            XCTAssertEqual(a.power, b.power, accuracy: 0.005 + 1e-4)
        }
        // The query landmarks rebuilt from the file are those the generator makes from the audio.
        let generators = SignatureGenerator.framings(Matcher.framings, configuration: Configuration(), role: .query)
        for g in generators { g.append(samples) }
        let direct = generators.map { $0.signature() }
        let fromFile = back.querySignatures
        XCTAssertEqual(fromFile.count, direct.count)
        for (a, b) in zip(fromFile, direct) {
            XCTAssertEqual(a.sampleCount, b.sampleCount)
            XCTAssertEqual(a.landmarks.map(\.anchorFrame), b.landmarks.map(\.anchorFrame))
        }
        // And identify finds the same reference at the same offset (15.3 s).
        let matcher = Matcher(index: CatalogIndex(configuration: Configuration(), items: [
            (MediaItem(id: "supertux-forest"), try TestSupport.referenceSignature("supertux-forest")),
            (MediaItem(id: "wesnoth-battle"), try TestSupport.referenceSignature("wesnoth-battle"))]))
        let a = matcher.matchedItems(for: direct[0], reframed: Array(direct.dropFirst()))
        let b = matcher.matchedItems(for: fromFile[0], reframed: Array(fromFile.dropFirst()))
        XCTAssertEqual(a.first?.item.id, "supertux-forest")
        XCTAssertEqual(b.first?.item.id, "supertux-forest")
        XCTAssertEqual(b.first?.matchOffset ?? 0, 15.3, accuracy: 0.005)
        XCTAssertEqual(b.first?.matchOffset ?? 0, a.first?.matchOffset ?? 1, accuracy: 0.005)
        // A 10 s query signature stays small.
        XCTAssertLessThan(data.count, 20_000)
    }

    func testDamagedForeignAndOtherVersionFilesAreRefused() throws {
        let data = try file(of: Array(try clip().prefix(24_000))).dataRepresentation
        var damaged = data
        damaged[data.count / 2] ^= 0x40
        XCTAssertThrowsError(try SignatureFile(data: damaged)) { XCTAssertTrue("\($0)".contains("CRC-32 mismatch"), "\($0)") }
        XCTAssertThrowsError(try SignatureFile(data: data.prefix(data.count - 10))) { XCTAssertTrue("\($0)".contains("CRC-32"), "\($0)") }
        XCTAssertThrowsError(try SignatureFile(data: Data("RIFF....WAVEfmt ".utf8))) { XCTAssertTrue("\($0)".contains("SMQF"), "\($0)") }
        var other = data
        other[4] = 9
        XCTAssertThrowsError(try SignatureFile(data: other)) { XCTAssertTrue("\($0)".contains("file version 9"), "\($0)") }
    }

    /// Issue 40, item 8 (the kind): a signature file whose header declares more inflated peak
    /// data than ``InflationBound`` allows for its packed bytes is refused before inflating
    /// (up to 256 MB was inflated whatever the file's size).
    func testPeakDataDeclaringMoreThanTheInflationBoundIsRefused() throws {
        var bytes = Array(try file(of: Array(try clip().prefix(24_000))).dataRepresentation)
        let jsonLength = Int(ShazamSignature.le32(bytes, 8))
        let packedAt = 12 + jsonLength + 1, rawAt = packedAt + 4
        let packed = Int(ShazamSignature.le32(bytes, packedAt))
        XCTAssertEqual(packedAt + 8 + packed + 4, bytes.count, "layout as written")
        let declared = InflationBound.limit(compressedBytes: packed) + 1
        XCTAssertEqual(declared, 64 * packed + 1_048_577)
        withUnsafeBytes(of: UInt32(declared).littleEndian) { bytes.replaceSubrange(rawAt..<(rawAt + 4), with: $0) }
        let crc = Self.crc32(bytes.dropLast(4))
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..<bytes.count, with: $0) }
        XCTAssertThrowsError(try SignatureFile(data: Data(bytes))) {
            XCTAssertEqual("\($0)", "\(SoundmarkError.invalidSignature("peak data of \(packed) bytes declares \(declared) bytes inflated, more than \(declared - 1) bytes (64 times its \(packed) bytes plus 1 MiB): refused as a decompression bomb"))")
        }
    }

    /// CRC-32 (IEEE 802.3, reflected, as zlib's `crc32`).
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A mono IEEE-float WAV file (format 3), so the decoder gives back exactly these samples.
    static func writeFloatWAV(_ samples: [Float], sampleRate: Int, to url: URL) throws {
        var d = Data()
        func u32(_ v: Int) { var x = UInt32(v).littleEndian; d.append(Data(bytes: &x, count: 4)) }
        func u16(_ v: Int) { var x = UInt16(v).littleEndian; d.append(Data(bytes: &x, count: 2)) }
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + samples.count * 4); d.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(3); u16(1); u32(sampleRate); u32(sampleRate * 4); u16(4); u16(32)
        d.append(contentsOf: Array("data".utf8)); u32(samples.count * 4)
        samples.withUnsafeBufferPointer { d.append(UnsafeBufferPointer(start: UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: UInt8.self), count: $0.count * 4)) }
        try d.write(to: url)
    }
}
