import Foundation

/// A 128-bit digest of decoded audio (the Float32 samples' bit patterns, in order) and of its
/// length: what identifies a recording in the ``Library`` whatever its file name. Two
/// independent 64-bit multiply–xorshift lanes; not cryptographic (it tells recordings apart,
/// it does not resist forgery). Alongside it, an ``AudioPrint`` of the same samples: what still
/// names the recording when another decoder trims or pads its start and end.
public struct AudioDigest: Sendable {
    private var a: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    /// Samples digested so far.
    public private(set) var sampleCount: Int = 0

    /// Creates an empty digest.
    public init() {}

    /// The coarse print of the samples digested so far (empty for bytes).
    public private(set) var audioPrint = AudioPrint()

    /// Adds samples.
    public mutating func append(_ samples: UnsafeBufferPointer<Float>) {
        absorb(samples) { UInt64($0.bitPattern) }
        audioPrint.append(samples)
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

/// A coarse print of decoded audio that survives a decoder's lead and trim: from the first
/// sample at or above −54 dBFS (so silence a decoder adds before the audio is skipped), per
/// block of 512 samples, the block's mean power (0.5 dB steps) and its zero crossings (in
/// twos). Two decodings of one file (gapless-trimmed from a file, untrimmed from a pipe) give
/// prints that agree block for block; other audio does not (``sameAudio(as:)``).
///
/// Every block of the first ``wholeBlocks`` is kept, then one in ``laterStride``, so a print
/// stays small (a day at 8 kHz: 50 KB, not 2.7 MB); the count of all blocks is kept too.
public struct AudioPrint: Sendable, Equatable {
    /// Samples a block.
    public static let blockLength = 512
    /// Blocks kept one by one from the start (4.4 minutes at 8 kHz).
    public static let wholeBlocks = 4096
    /// After those, one block kept in this many.
    public static let laterStride = 64
    /// Whole blocks printed.
    public private(set) var blockCount = 0
    /// Two bytes a kept block: power (0.5 dB steps above −100 dB) and zero crossings / 2.
    private var pairs: [UInt8] = []
    private var started = false
    private var power = 0.0
    private var crossings = 0
    private var count = 0
    private var lastNegative = false

    /// Creates an empty print.
    public init() {}

    /// A print as stored (``bytes``); anything shorter than its 4-byte header is an empty print.
    public init(bytes: [UInt8]) {
        guard bytes.count >= 4 else { return }
        blockCount = bytes.prefix(4).enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        pairs = Array(bytes.dropFirst(4))
    }

    /// The print as stored: the block count (4 bytes, little-endian), then the kept blocks;
    /// empty when no block was printed.
    public var bytes: [UInt8] {
        blockCount == 0 ? [] : (0..<4).map { UInt8(truncatingIfNeeded: blockCount >> (8 * $0)) } + pairs
    }

    /// Equal when the whole blocks printed are (a part block still being summed is not compared).
    public static func == (a: AudioPrint, b: AudioPrint) -> Bool { a.blockCount == b.blockCount && a.pairs == b.pairs }

    /// Adds samples.
    public mutating func append(_ samples: UnsafeBufferPointer<Float>) {
        var i = 0
        if !started {
            while i < samples.count && abs(samples[i]) < 1.0 / 512 { i += 1 }
            guard i < samples.count else { return }
            started = true
            lastNegative = samples[i] < 0
        }
        while i < samples.count {
            let x = samples[i]
            power += Double(x) * Double(x)
            let negative = x < 0
            if negative != lastNegative { crossings += 1 }
            lastNegative = negative
            count += 1
            i += 1
            if count == Self.blockLength {
                if blockCount < Self.wholeBlocks || blockCount % Self.laterStride == 0 {
                    let db = 10 * log10(max(power / Double(count), 1e-10))
                    pairs.append(UInt8(max(0, min(255, ((db + 100) * 2).rounded()))))
                    pairs.append(UInt8(min(255, crossings / 2)))
                }
                blockCount += 1
                power = 0
                crossings = 0
                count = 0
            }
        }
    }

    /// Whether `other` prints the same audio: both hold 8 or more blocks (½ s at 8 kHz),
    /// their lengths differ by at most 2 blocks, and in 9 of 10 of the kept blocks they share,
    /// power agrees within 1 dB and zero crossings within 6.
    public func sameAudio(as other: AudioPrint) -> Bool {
        guard min(blockCount, other.blockCount) >= 8, abs(blockCount - other.blockCount) <= 2 else { return false }
        let n = min(pairs.count, other.pairs.count) / 2
        var agree = 0
        for b in 0..<n {
            let i = 2 * b
            if abs(Int(pairs[i]) - Int(other.pairs[i])) <= 2 && abs(Int(pairs[i + 1]) - Int(other.pairs[i + 1])) <= 3 { agree += 1 }
        }
        return n > 0 && agree * 10 >= n * 9
    }
}
