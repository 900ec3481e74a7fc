import Foundation
import XCTest
@testable import Soundmark

/// Inputs the fuzz targets (Fuzz/, `make fuzz`) found to crash a parser, and their kin: each must
/// now give an error (or no hash), never a trap.
final class FuzzRegressionTests: XCTestCase {
    private let goodLandmark = Landmark(anchorFrame: 10, anchorBin: 40, targetBin: 50, deltaFrames: 12)

    /// The message of the `invalidSignature` error `data` throws, or a failure.
    private func signatureError(_ data: Data, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let s = try Signature(dataRepresentation: data)
            XCTFail("read a signature of \(s.landmarks.count) landmark(s)", file: file, line: line)
        } catch SoundmarkError.invalidSignature(let why) {
            return why
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
        return ""
    }

    private func signatureData(_ landmarks: [Landmark], configuration: Configuration = Configuration(),
                               sampleCount: Int64 = 8000) -> Data {
        Signature(configuration: configuration, landmarks: landmarks, sampleCount: sampleCount).dataRepresentation
    }

    func testSignatureWithNegativeAnchorFrameGivesNoPosting() throws {
        // Found by FuzzSignature (Fuzz/corpus/FuzzSignature/crash-negative-anchor-frame.smsig):
        // PostingCodec.postings(of:) trapped converting a negative anchor frame to UInt32. The
        // file still reads (frames keep their sign), but that landmark gives no posting.
        let bad = Landmark(anchorFrame: -3, anchorBin: 40, targetBin: 50, deltaFrames: 12)
        let sig = try Signature(dataRepresentation: signatureData([bad, goodLandmark]))
        XCTAssertEqual(sig.landmarks, [bad, goodLandmark])
        XCTAssertEqual(PostingCodec.postings(of: sig).map(\.frame), [10])
        XCTAssertEqual(PostingCodec.postings(of: sig).map(\.hash), [LandmarkHasher().hash(goodLandmark)])
    }

    func testSignatureWithNonFiniteOrNonPositiveBinsIsRejected() {
        // Found by FuzzSignature: a NaN bin trapped in LandmarkHasher.prepare (Int(NaN)).
        for (anchor, target) in [(Float.nan, 50), (40, Float.nan), (0, 50), (40, -1), (Float.infinity, 50),
                                 (40, -Float.infinity)] as [(Float, Float)] {
            let why = signatureError(signatureData([Landmark(anchorFrame: 1, anchorBin: anchor, targetBin: target, deltaFrames: 12)]))
            XCTAssertTrue(why.hasPrefix("landmark 0: frequency bin "), why)
            XCTAssertTrue(why.hasSuffix("(expected finite and > 0)"), why)
        }
    }

    func testHasherGivesNoHashForDegenerateBins() {
        let hasher = LandmarkHasher()
        for (anchor, target) in [(Float.nan, 50), (40, Float.nan), (0, 50), (40, 0), (Float.infinity, 50),
                                 (Float.leastNonzeroMagnitude, Float.greatestFiniteMagnitude),
                                 (Float.greatestFiniteMagnitude, Float.greatestFiniteMagnitude), (-40, -50)] as [(Float, Float)] {
            let l = Landmark(anchorFrame: 1, anchorBin: anchor, targetBin: target, deltaFrames: 12)
            XCTAssertNil(hasher.hash(l), "\(anchor) \(target)")
            XCTAssertNil(hasher.hash(l, timeScale: 1.05, frequencyScale: 0.95), "\(anchor) \(target)")
        }
        XCTAssertNotNil(hasher.hash(goodLandmark))
    }

    func testSignatureWithOutOfRangeConfigurationIsRejected() {
        var zeroMin = Configuration(); zeroMin.minFrequency = 0
        var noSteps = Configuration(); noSteps.logStepsPerOctave = 0
        var wideZone = Configuration(); wideZone.targetZoneMaxFrames = 40_000
        var reversedZone = Configuration(); reversedZone.targetZoneMinFrames = 50
        var hugeSpace = Configuration(); hugeSpace.logStepsPerOctave = 4096; hugeSpace.targetZoneOctaves = 64
        var noRate = Configuration(); noRate.sampleRate = 0
        let cases: [(Configuration, String)] = [
            (zeroMin, "minFrequency 0.0 (expected > 0)"),
            (noSteps, "logStepsPerOctave 0 (expected 1...4096)"),
            (wideZone, "targetZoneMaxFrames 40000 (expected 2...32767)"),
            (reversedZone, "targetZoneMaxFrames 48 (expected 50...32767)"),
            (hugeSpace, "hash space 470680672377 (expected ≤ 2^32)"),
            (noRate, "sampleRate 0 (expected 1...1000000)"),
        ]
        for (configuration, problem) in cases {
            XCTAssertEqual(configuration.problem, problem)
            XCTAssertEqual(signatureError(signatureData([goodLandmark], configuration: configuration)),
                           "configuration out of range: \(problem)")
        }
        XCTAssertNil(Configuration().problem)
    }

    func testSignatureWithImpossibleCountsIsRejected() throws {
        let data = signatureData([goodLandmark])
        // Header: magic, version, JSON length, JSON, sample count (u64), landmark count (u32).
        let jsonLength = Int(data[8]) | Int(data[9]) << 8 | Int(data[10]) << 16 | Int(data[11]) << 24
        let samplesAt = 12 + jsonLength, countAt = samplesAt + 8
        var hugeCount = data
        hugeCount.replaceSubrange(countAt..<countAt + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(signatureError(hugeCount), "truncated landmarks")
        var hugeSamples = data
        hugeSamples.replaceSubrange(samplesAt..<samplesAt + 8, with: [UInt8](repeating: 0xFF, count: 8))
        XCTAssertEqual(signatureError(hugeSamples), "sample count 18446744073709551615 out of range")
        XCTAssertEqual(try Signature(dataRepresentation: data).landmarks, [goodLandmark])
    }

    func testPostingsBlobWhoseDeltaOverflowsIsCorrupt() {
        // Two postings, k = 39, 1-bit frames: hash 1, then a Golomb–Rice delta of 2^64 − 1 (a
        // quotient of 2^25 − 1 ones): the running hash overflowed (a trap) instead of failing.
        var header = ByteWriter()
        header.varint(2); header.varint(39); header.varint(1)
        var bits = BitWriter()
        bits.rice(1, k: 39); bits.write(1, bits: 1)
        bits.rice(UInt64.max, k: 39); bits.write(0, bits: 1)
        let blob = header.bytes + bits.finish()
        XCTAssertFalse(PostingCodec.decode(blob, into: { _ in }))
        // The same blob with a small second delta decodes.
        var small = BitWriter()
        small.rice(1, k: 39); small.write(1, bits: 1)
        small.rice(5, k: 39); small.write(0, bits: 1)
        var out: [Posting] = []
        XCTAssertTrue(PostingCodec.decode(header.bytes + small.finish(), into: { out.append($0) }))
        XCTAssertEqual(out, [Posting(hash: 1, frame: 1), Posting(hash: 6, frame: 0)])
    }
}
