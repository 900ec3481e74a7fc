/// A 128-bit digest of decoded audio (the Float32 samples' bit patterns, in order) and of its
/// length: what identifies a recording in the ``Library`` whatever its file name. Two
/// independent 64-bit multiply–xorshift lanes; not cryptographic (it tells recordings apart,
/// it does not resist forgery).
public struct AudioDigest: Sendable {
    private var a: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    /// Samples digested so far.
    public private(set) var sampleCount: Int = 0

    /// Creates an empty digest.
    public init() {}

    /// Adds samples.
    public mutating func append(_ samples: UnsafeBufferPointer<Float>) {
        absorb(samples) { UInt64($0.bitPattern) }
    }

    /// Adds samples.
    public mutating func append(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { append($0) }
    }

    /// Adds bytes (an imported event file: its digest is of its content).
    public mutating func append(bytes: [UInt8]) {
        absorb(bytes) { UInt64($0) }
    }

    /// Mixes each of `values` (as the 64-bit word `word` gives) into both lanes and counts them.
    @inline(__always)
    private mutating func absorb<C: Collection>(_ values: C, _ word: (C.Element) -> UInt64) {
        var a = self.a, b = self.b
        for value in values {
            let v = word(value)
            a = (a ^ v) &* 0x0000_0100_0000_01B3
            a ^= a >> 29
            b = (b &+ v &+ 0x632B_E59B_D9B4_E019) &* 0xFF51_AFD7_ED55_8CCD
            b ^= b >> 33
        }
        self.a = a
        self.b = b
        sampleCount += values.count
    }

    /// The digest: 32 lowercase hex digits (both lanes, finalised with the length).
    public var hex: String {
        func mix(_ x: UInt64) -> UInt64 {
            var z = x &+ UInt64(truncatingIfNeeded: sampleCount) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func hex16(_ v: UInt64) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 16 - s.count) + s
        }
        return hex16(mix(a)) + hex16(mix(b ^ 0x5851_F42D_4C95_7F2D))
    }
}
