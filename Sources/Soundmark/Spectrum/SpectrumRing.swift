import Foundation

/// The recording's recent spectrogram, quantised, for ``SpectrumEdge``: one row of levels per
/// frame (bins ``Configuration/minBin`` … ``Configuration/maxBin``), the last ``capacity``
/// frames kept.
///
/// A level is the bin's power in dB relative to a full-scale sine (see ``Spectrogram``), in
/// half-decibel steps from −120 dB (0) to +7.5 dB (255).
public struct SpectrumRing: Sendable {
    /// Frames kept: 2048 (33 s at the default 16 ms hop), more than the scanner's landmark
    /// history and the 5 s an edge may move.
    public static let capacity = 2048
    /// Bins per row.
    public let width: Int
    private var levels: [UInt8]
    private var frames: [Int]
    /// The latest frame stored, −1 before any.
    public private(set) var latest = -1

    /// An empty ring for rows of `width` bins.
    public init(width: Int) {
        self.width = max(1, width)
        levels = [UInt8](repeating: 0, count: SpectrumRing.capacity * self.width)
        frames = [Int](repeating: -1, count: SpectrumRing.capacity)
    }

    /// Row `power` (linear power, see ``Spectrogram``) quantised to levels: level
    /// `round(2 · (10 · log10(max(p, 1e-13)) + 120))` clamped to 0…255 (half-dB steps from
    /// −120 dB), computed in Float.
    ///
    /// The level is found from `p`'s bit pattern instead of a logarithm (the scan quantises
    /// every row of the recording: 31,000 logarithms per second of audio): positive floats
    /// order as their bit patterns do and the level never decreases with `p` (checked over
    /// every float from 1e-16 to 1e6), so it is the number of ``levelThresholds`` at or below
    /// `p`. A table indexed by the exponent and the top 4 bits of the mantissa (a cell spans at
    /// most a factor 17/16 of power, 0.26 dB, less than a level's 0.5 dB: it holds at most one
    /// threshold; with 3 bits the first cell of each octave spans 0.51 dB and could hold two)
    /// gives the level at the cell's start, and one comparison with the next threshold
    /// finishes it: the same levels as the formula.
    public static func quantise(_ power: UnsafeBufferPointer<Float>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: power.count) { out, written in
            quantise(power, into: out)
            written = power.count
        }
    }

    /// ``quantise(_:)`` of `power` written into `out` (at least `power.count` values).
    public static func quantise(_ power: UnsafeBufferPointer<Float>, into out: UnsafeMutableBufferPointer<UInt8>) {
        let table = levelTable
        levelThresholds.withUnsafeBufferPointer { thresholds in
            table.withUnsafeBufferPointer { cells in
                for i in 0..<power.count {
                    let p = power[i]
                    // Zero, negative and non-finite values (never from a spectrogram) take the formula.
                    guard p > 0, p.isFinite else { out[i] = level(p); continue }
                    let bits = p.bitPattern
                    let low = cells[Int(bits >> cellShift)]
                    out[i] = bits >= thresholds[Int(low) + 1] ? low + 1 : low
                }
            }
        }
    }

    /// The level of `p` by the formula of ``quantise(_:)``.
    static func level(_ p: Float) -> UInt8 {
        let db = 10 * log10f(max(p, 1e-13))
        return UInt8(max(0, min(255, ((db + 120) * 2).rounded())))
    }

    /// Bits of a float below the table's cell: 19 (8 exponent and 4 mantissa bits index it).
    private static let cellShift: UInt32 = 19

    /// `levelThresholds[l]` (l = 1…255): the bit pattern of the smallest positive float whose
    /// ``level(_:)`` is at least `l`; `[0]` is 0 and `[256]` above every float's pattern.
    static let levelThresholds: [UInt32] = {
        var thresholds = [UInt32](repeating: 0, count: 257)
        thresholds[256] = .max
        for l in 1...255 {
            // Smallest pattern of a positive finite float with level ≥ l (the level is monotone).
            var lo: UInt32 = 1, hi = Float.greatestFiniteMagnitude.bitPattern
            while lo < hi {
                let mid = lo + (hi - lo) / 2
                if level(Float(bitPattern: mid)) >= UInt8(l) { hi = mid } else { lo = mid + 1 }
            }
            thresholds[l] = lo
        }
        return thresholds
    }()

    /// The level of the smallest positive float of each cell (patterns `c << cellShift` on).
    private static let levelTable: [UInt8] = {
        let thresholds = levelThresholds
        return (0 ..< (1 << (32 - Int(cellShift)))).map { c -> UInt8 in
            let bits = UInt32(c) << cellShift
            // Cells of negative floats and of infinities and NaNs are never read.
            guard bits < Float.infinity.bitPattern else { return 255 }
            var l = 0
            while l < 255 && thresholds[l + 1] <= max(bits, 1) { l += 1 }
            return UInt8(l)
        }
    }()

    /// Stores the levels of frame `frame` (from ``quantise(_:)``; frames in ascending order).
    /// Rows of another width are ignored.
    public mutating func append(frame: Int, levels row: [UInt8]) {
        guard row.count == width, frame >= 0 else { return }
        let slot = frame % SpectrumRing.capacity
        frames[slot] = frame
        levels.withUnsafeMutableBufferPointer { l in
            for i in 0..<width { l[slot * width + i] = row[i] }
        }
        latest = max(latest, frame)
    }

    /// Whether frame `frame` is stored.
    public func holds(_ frame: Int) -> Bool {
        frame >= 0 && frames[frame % SpectrumRing.capacity] == frame
    }

    /// Highest level of a row that counts as digital silence: 40 (−100 dB). Digital zeros give
    /// level 0; 16-bit dither spreads about −116 dB over each bin.
    static let silenceLevel: UInt8 = 40

    /// Whether frame `frame` is stored and silent: every bin at or below ``silenceLevel``
    /// (digital silence over the frame's whole window); `nil` when the frame is not stored.
    func isSilent(_ frame: Int) -> Bool? {
        guard holds(frame) else { return nil }
        let base = (frame % SpectrumRing.capacity) * width
        for i in 0..<width where levels[base + i] > SpectrumRing.silenceLevel { return false }
        return true
    }

    /// Quantised level (half-dB steps from −120 dB) of bin index `bin` (0 = ``Configuration/minBin``)
    /// in frame `frame`, which must be stored (``holds(_:)``) and `bin` in `0 ..< width`.
    @inline(__always)
    func rawLevel(_ frame: Int, _ bin: Int) -> UInt8 { levels[(frame % SpectrumRing.capacity) * width + bin] }

    /// Level (dB) of bin index `bin` (0 = ``Configuration/minBin``) in frame `frame`, as
    /// ``rawLevel(_:_:)`` in dB.
    @inline(__always)
    func level(_ frame: Int, _ bin: Int) -> Double {
        Double(levels[(frame % SpectrumRing.capacity) * width + bin]) / 2 - 120
    }
}
