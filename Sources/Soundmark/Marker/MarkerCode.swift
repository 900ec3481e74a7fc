import Foundation

/// The frame layout of the audio marker, shared by ``MarkerEmbedder`` and ``MarkerDetector``;
/// what differs between format versions is in ``MarkerFormat``.
///
/// The marker lives in a 16 kHz mono analysis domain: frames of 512 samples (32 ms, periodic
/// square-root Hann window) every 256 samples (16 ms hop, 50 % overlap, so analysis and
/// synthesis windows reconstruct perfectly). A band of bins of each frame (31.25 Hz apart; up to
/// 4000 Hz, from ``MarkerFormat/firstBin``) forms *cells* of 2 adjacent bins. A *block* is 320
/// frames (5.12 s); blocks repeat back to back from the first sample of the file, so a 10 s
/// window holds about two of them.
///
/// In block frame `q`, cell `c` is a *sync cell* when `(q + c) % 4 == 0` (a quarter of the
/// cells) and carries a fixed pseudo-random chip ±1; every other cell carries one coded bit, XOR
/// a pseudo-random scrambling chip, through a fixed pseudo-random interleaver: each of the 186
/// coded bits rides on about 72 (version 1) or 81 (version 2) cells spread over the whole block
/// in time and frequency.
///
/// Coded bits: the 32-bit payload, then its CRC-24 (OpenPGP polynomial 0x864CFB, initial value
/// 0xB704CE, over the payload's 4 bytes big-endian), then 6 zero tail bits, through a rate 1/3
/// convolutional code of constraint length 7 (generators 133, 171, 165 octal), decoded with a
/// soft-decision Viterbi decoder.
public enum MarkerLayout {
    /// Analysis sample rate in Hz (the detector decodes mono audio at this rate).
    public static let sampleRate = 16_000
    /// Frame length in samples (32 ms).
    public static let frameLength = 512
    /// Hop between frames in samples (16 ms).
    public static let hopLength = 256
    /// Bins per cell.
    public static let cellWidth = 2
    /// One past the last bin of the marked band (bin 128: 4000 Hz), in every format version.
    public static let endBin = 128
    /// Frames per block (5.12 s).
    public static let blockFrames = 320
    /// Payload bits.
    public static let payloadBits = 32
    /// CRC bits appended to the payload.
    public static let crcBits = 24
    /// Convolutional code constraint length.
    static let constraint = 7
    /// Coded bits per block: (32 + 24 + 6 tail) × 3.
    public static let codedBits = (payloadBits + crcBits + constraint - 1) * 3
    /// Block length in seconds.
    public static var blockDuration: Double { Double(blockFrames * hopLength) / Double(sampleRate) }

    /// Whether cell `c` of block frame `q` is a sync cell.
    @inline(__always) static func isSync(_ q: Int, _ c: Int) -> Bool { (q + c) & 3 == 0 }
}

/// A version of the marker's frame layout (``MarkerLayout``): the band its cells cover and its
/// pseudo-random chips and interleaver. ``MarkerEmbedder`` writes ``current``; ``MarkerDetector``
/// reads every version in ``all`` (the sync search picks the version, so the false-payload bound
/// does not change).
///
/// - Version 1 (first builds): bins 16 ..< 128, 500–4000 Hz, 56 cells per frame.
/// - Version 2: bins 2 ..< 128, 62.5–4000 Hz, 63 cells per frame: the 7 cells under 500 Hz carry the
///   mark (at ``MarkerEmbedder/lowBandGain`` of the strength) where bass-heavy music has its
///   energy (music with 1 % of its power at 500–4000 Hz kept only noise there at 10 dB SNR). Its
///   cell `c + 7` is version 1's cell `c`, but its chips and interleaver are drawn from other
///   seeds, so neither version's sync matches the other's.
public struct MarkerFormat: Sendable, Equatable {
    /// Version number (1 or 2).
    public let version: Int
    /// First bin of the marked band (bin k is at k × 31.25 Hz).
    public let firstBin: Int
    /// Cells per frame (2 bins each), from ``firstBin`` to bin 128 (4000 Hz).
    public let cellsPerFrame: Int
    /// Per (block frame, cell), `q * cellsPerFrame + c`: the chip (±1) of a sync cell, or the scrambling chip of a data cell.
    let chips: [Float]
    /// Per (block frame, cell): the coded bit a data cell carries, or -1 for a sync cell.
    let bitOfCell: [Int32]

    /// Version 1: 500–4000 Hz.
    public static let v1 = MarkerFormat(version: 1, firstBin: 16, chipSeed: 0x536F_756E_644D_6B31, // "SoundMk1"
                                        layoutSeed: 0x4D61_726B_4C61_7931) // "MarkLay1"
    /// Version 2: 62.5–4000 Hz.
    public static let v2 = MarkerFormat(version: 2, firstBin: 2, chipSeed: 0x536F_756E_644D_6B32, // "SoundMk2"
                                        layoutSeed: 0x4D61_726B_4C61_7932) // "MarkLay2"
    /// The version ``MarkerEmbedder`` writes by default.
    public static let current = v2
    /// Every version the detector reads, widest band first.
    public static let all = [v2, v1]

    /// Formats compare by version.
    public static func == (a: MarkerFormat, b: MarkerFormat) -> Bool { a.version == b.version }

    private init(version: Int, firstBin: Int, chipSeed: UInt64, layoutSeed: UInt64) {
        self.version = version
        self.firstBin = firstBin
        let cells = (MarkerLayout.endBin - firstBin) / MarkerLayout.cellWidth
        cellsPerFrame = cells
        let count = MarkerLayout.blockFrames * cells
        var rng = SplitMix64(seed: chipSeed)
        chips = (0..<count).map { _ in rng.next() & 1 == 0 ? 1 : -1 }
        var dataCells: [Int] = []
        for q in 0..<MarkerLayout.blockFrames {
            for c in 0..<cells where !MarkerLayout.isSync(q, c) { dataCells.append(q * cells + c) }
        }
        var shuffle = SplitMix64(seed: layoutSeed)
        // Fisher–Yates shuffle: the cell order, then bits dealt round-robin.
        for i in stride(from: dataCells.count - 1, to: 0, by: -1) {
            let j = Int(shuffle.next() % UInt64(i + 1))
            dataCells.swapAt(i, j)
        }
        var map = [Int32](repeating: -1, count: count)
        for (i, cell) in dataCells.enumerated() { map[cell] = Int32(i % MarkerLayout.codedBits) }
        bitOfCell = map
    }

    /// The sign (±1) every cell of a block gets for `payload`: sync chips and scrambled coded bits,
    /// indexed `q * cellsPerFrame + c`.
    func cellSigns(payload: UInt32) -> [Float] {
        let coded = MarkerCode.encode(payload: payload)
        return (0..<(MarkerLayout.blockFrames * cellsPerFrame)).map { i in
            let bit = bitOfCell[i]
            return bit < 0 ? chips[i] : (coded[Int(bit)] ? chips[i] : -chips[i])
        }
    }
}

/// The marker's error-correcting code: CRC-24 over the payload and a rate 1/3, K = 7
/// convolutional code with a soft-decision Viterbi decoder.
enum MarkerCode {
    static let generators: [UInt32] = [0o133, 0o171, 0o165]

    /// CRC-24 (OpenPGP: polynomial 0x864CFB, initial value 0xB704CE) of the payload's 4 bytes, big-endian.
    static func crc24(_ payload: UInt32) -> UInt32 {
        var crc: UInt32 = 0xB704CE
        for shift in stride(from: 24, through: 0, by: -8) {
            crc ^= ((payload >> UInt32(shift)) & 0xFF) << 16
            for _ in 0..<8 {
                crc <<= 1
                if crc & 0x100_0000 != 0 { crc ^= 0x864CFB }
            }
        }
        return crc & 0xFF_FFFF
    }

    /// The information bits: payload (MSB first), CRC-24 (MSB first), 6 zero tail bits.
    static func infoBits(_ payload: UInt32) -> [Bool] {
        let crc = crc24(payload)
        var bits: [Bool] = (0..<32).map { payload >> UInt32(31 - $0) & 1 == 1 }
        bits += (0..<24).map { crc >> UInt32(23 - $0) & 1 == 1 }
        bits += [Bool](repeating: false, count: MarkerLayout.constraint - 1)
        return bits
    }

    @inline(__always) static func parity(_ x: UInt32) -> Bool { x.nonzeroBitCount & 1 == 1 }

    /// Convolutional encoding of ``infoBits(_:)``: 186 coded bits, three per information bit.
    static func encode(payload: UInt32) -> [Bool] {
        var state: UInt32 = 0
        var out: [Bool] = []
        for bit in infoBits(payload) {
            state = ((state << 1) | (bit ? 1 : 0)) & 0x7F
            for g in generators { out.append(parity(state & g)) }
        }
        return out
    }

    /// Soft-decision Viterbi decoding of 186 soft values (positive: bit 1 more likely).
    /// - Returns: the payload when its CRC-24 matches, else `nil`.
    static func decode(soft: [Float]) -> UInt32? {
        let steps = MarkerLayout.payloadBits + MarkerLayout.crcBits + MarkerLayout.constraint - 1
        precondition(soft.count == steps * 3)
        let states = 64
        var metric = [Float](repeating: -.infinity, count: states)
        metric[0] = 0
        var next = [Float](repeating: 0, count: states)
        var decisions = [UInt8](repeating: 0, count: steps * states) // which predecessor (its top bit)
        // Expected outputs per 7-bit register value, as ±1 sums precomputed.
        var branch = [[Float]](repeating: [0, 0, 0], count: 128)
        for r in 0..<128 { branch[r] = generators.map { parity(UInt32(r) & $0) ? 1 : -1 } }
        for step in 0..<steps {
            let s0 = soft[3 * step], s1 = soft[3 * step + 1], s2 = soft[3 * step + 2]
            let tail = step >= MarkerLayout.payloadBits + MarkerLayout.crcBits
            for ns in 0..<states {
                let input = ns & 1
                if tail && input == 1 { next[ns] = -.infinity; continue }
                var best: Float = -.infinity
                var choice: UInt8 = 0
                for top in 0..<2 {
                    let ps = (ns >> 1) | (top << 5)
                    let m = metric[ps]
                    if m == -.infinity { continue }
                    let reg = (ps << 1 | input) & 0x7F
                    let b = branch[reg]
                    let value = m + b[0] * s0 + b[1] * s1 + b[2] * s2
                    if value > best { best = value; choice = UInt8(top) }
                }
                next[ns] = best
                decisions[step * states + ns] = choice
            }
            swap(&metric, &next)
        }
        var state = 0
        var bits = [Bool](repeating: false, count: steps)
        for step in stride(from: steps - 1, through: 0, by: -1) {
            bits[step] = state & 1 == 1
            let top = Int(decisions[step * states + state])
            state = (state >> 1) | (top << 5)
        }
        var payload: UInt32 = 0
        for i in 0..<32 where bits[i] { payload |= 1 << UInt32(31 - i) }
        var crc: UInt32 = 0
        for i in 0..<24 where bits[32 + i] { crc |= 1 << UInt32(23 - i) }
        return crc == crc24(payload) ? payload : nil
    }
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): a small deterministic generator of 64-bit words. It draws the marker's fixed
/// pseudo-random layout, and gives tests and simulations repeatable random input.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state; the same seed always gives the same sequence.
    public var state: UInt64
    /// Creates a generator whose sequence is fixed by `seed` (any value, 0 included).
    public init(seed: UInt64) { state = seed }
    /// The next 64-bit word of the sequence.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
