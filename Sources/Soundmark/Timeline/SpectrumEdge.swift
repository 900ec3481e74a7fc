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

/// Edges moved outwards by the reference's peaks in the recording's spectrum.
///
/// A spot mixed under speech gathers few landmark hits: the speech takes most of the peaks, so
/// its first and last seconds can pass without a hit and the segment starts late and ends
/// early (by up to 3 s). The reference's own peaks still stand out in the recording's
/// spectrum there, above their neighbourhood, even where the speech's peaks mask them from
/// the peak picker. At a segment's alignment each reference peak is read at its place in the
/// recording: its *contrast* is the highest level within ±1 frame over the peak's log-frequency
/// step (±1 bin), minus the mean level of the 24 bins on either side in its frame. The peak
/// *stands out* when its contrast beats the contrasts of the same frame at the ``decoys``
/// (the step moved by ±5 and ±9 log-frequency steps, about 1.25 and 2.25 semitones): by
/// chance one time in five over speech or noise, never over digital silence (the contrasts
/// tie), more often over other music in the reference's key (hence only masked stretches,
/// ``maskedHitsPerSecond``, move up to ``maximumMove``; a stretch heard clearly moves at most
/// ``clearMove``, against the outside's own rate and only where the recording's peaks agree). Inside the stretch (measured over the 2 s from 0.5 s inside the
/// edge) a larger share `p` stand out, at least 1.75 times chance, or the edge stays. Walking
/// from the edge outwards, the edge moves to the peak where the log-likelihood ratio of
/// stretch over chance summed from the edge is largest, when that sum reaches
/// ``minimumEvidence`` (Page's CUSUM change point, 1954). A masked end also follows the
/// readings' margins over their decoys' mean (``outwardByMargin(_:inside:outside:)``), which
/// count a reading that beats the decoys by a few dB though not every one of them.
enum SpectrumEdge {
    /// Log-frequency step offsets of the decoy readings: −9, −5, 5, 9.
    static let decoys: [Int32] = [-9, -5, 5, 9]
    /// Minimum log-likelihood ratio (nats) for an edge to move outwards: 5.
    static let minimumEvidence = 5.0
    /// Hit frames per second (distinct frames, over the 2.5 s inside an edge) under which a
    /// stretch counts as masked and its edge is looked for in the spectrum: 8. Spots 6-9 dB
    /// under speech give 2-7 near their edges; a stretch heard clearly, or under other music
    /// at 6 dB, 10-20, and its hits find its edges within a fraction of a second: there the
    /// spectrum would only add the chance of other music in the same key (its peaks stand out
    /// at the reference's steps more often than at the decoys).
    static let maskedHitsPerSecond = 8.0
    /// Farthest an edge moves outwards, seconds: 5.
    static let maximumMove = 5.0
    /// Farthest the edge of a stretch that is not masked moves outwards, seconds: 0.6.
    static let clearMove = 0.6
    /// Seconds from the frame of a stretch's last peak standing out to the end of its audio:
    /// the frame's window (1024 samples) runs 0.13 s on. 0.1.
    static let endLead = 0.1

    /// Reference frames within which a later peak of the same step is not read again: 16
    /// (0.26 s). Readings of a held note (the reference's, or a bed's under it) are not
    /// independent evidence.
    static let repeatFrames: Int32 = 16

    /// A reference peak read in the recording: where it falls (recording frame), whether it
    /// stands out (beats its decoys) and by how much its contrast exceeds the decoys' mean
    /// contrast (`margin`, dB; 0 when not measured).
    struct Reading {
        var x: Double
        var stands: Bool
        var margin: Double = 0
    }

    /// The bins of a row (0-based, bin ``Configuration/minBin`` first, `width` of them) that
    /// reference log-frequency step `step` covers in audio playing `logShift` steps higher
    /// (``LandmarkHasher/logShift(frequencyScale:)``); `nil` outside the row. For the `bins`
    /// argument of ``readings(reference:ring:toRecording:toReference:from:to:bins:)``.
    static func bins(configuration: Configuration, logShift shift: Double, width: Int) -> (Int32) -> ClosedRange<Int>? {
        let steps = Double(configuration.logStepsPerOctave)
        let binToLog = log2(configuration.binWidth / configuration.minFrequency)
        let minBin = configuration.minBin
        return { step in
            let lo = Int(exp2((Double(step) + shift) / steps - binToLog).rounded(.up)) - minBin
            let hi = Int(exp2((Double(step) + 1 + shift) / steps - binToLog).rounded(.down)) - minBin
            guard hi >= 0, lo < width else { return nil }
            return max(0, min(lo, hi))...min(width - 1, max(lo, hi))
        }
    }

    /// Each reference peak that `toRecording` places in recording frames `from ..< to`,
    /// read in `ring` (where it holds the frames around it), in recording order. `bins(step)`
    /// gives the bin indices (0-based in a row) of reference log-frequency step `step` in the
    /// recording, `nil` outside the row.
    static func readings(reference: [PeakEdge.Peak], ring: SpectrumRing, toRecording: (Double) -> Double,
                         toReference: (Double) -> Double, from: Int, to: Int,
                         bins: (Int32) -> ClosedRange<Int>?) -> [Reading] {
        readings(reference: reference, holds: { ring.holds($0) }, toRecording: toRecording, toReference: toReference,
                 from: from, to: to, bins: bins) { f, range in contrast(ring, f, range) }
    }

    /// Bins on either side of a reading whose mean level is its neighbourhood: 24.
    static let sideBins = 24

    /// The contrast of bins `range` in frame `f` of `ring` (frames `f − 1 … f + 1` stored): the
    /// highest level within ±1 frame over the range widened by one bin, minus the mean level of
    /// the ``sideBins`` bins on either side in frame `f`; `nil` without side bins.
    static func contrast(_ ring: SpectrumRing, _ f: Int, _ range: ClosedRange<Int>) -> Double? {
        let side = sideBins
        let b0 = max(0, range.lowerBound - 1), b1 = min(ring.width - 1, range.upperBound + 1)
        var top = -Double.infinity
        for df in -1...1 { for bin in b0...b1 { top = max(top, ring.level(f + df, bin)) } }
        var sum = 0.0, n = 0
        for bin in max(0, b0 - side)..<b0 { sum += ring.level(f, bin); n += 1 }
        if b1 + 1 < ring.width { for bin in (b1 + 1)...min(ring.width - 1, b1 + side) { sum += ring.level(f, bin); n += 1 } }
        return n > 0 ? top - sum / Double(n) : nil
    }

    /// The readings of ``readings(reference:ring:toRecording:toReference:from:to:bins:)`` from
    /// any spectrum: `holds(f)` tells whether frame `f` is stored and `contrast(f, bins)` gives
    /// the contrast of ``contrast(_:_:_:)``.
    static func readings(reference: [PeakEdge.Peak], holds: (Int) -> Bool, toRecording: (Double) -> Double,
                         toReference: (Double) -> Double, from: Int, to: Int,
                         bins: (Int32) -> ClosedRange<Int>?, contrast: (Int, ClosedRange<Int>) -> Double?) -> [Reading] {
        guard to > from else { return [] }
        let y0 = toReference(Double(from)), y1 = toReference(Double(to))
        let lo = min(y0, y1), hi = max(y0, y1)
        var out: [Reading] = []
        var lastFrame: [Int32: Int32] = [:]
        var i = PeakEdge.firstIndex(reference, atOrAfter: lo)
        while i < reference.count && Double(reference[i].frame) < hi {
            let p = reference[i]
            i += 1
            let x = toRecording(Double(p.frame))
            guard x >= Double(from) && x < Double(to), let range = bins(p.step) else { continue }
            // A held note gives a row of peaks in one step: read one per ``repeatFrames``.
            if let last = lastFrame[p.step], p.frame - last < repeatFrames { continue }
            lastFrame[p.step] = p.frame
            let f = Int(x.rounded())
            guard holds(f - 1), holds(f), holds(f + 1), let c = contrast(f, range) else { continue }
            let others = decoys.compactMap { d in bins(p.step + d).flatMap { contrast(f, $0) } }
            guard others.count == decoys.count else { continue }
            out.append(Reading(x: x, stands: others.allSatisfy { c > $0 },
                               margin: c - others.reduce(0, +) / Double(others.count)))
        }
        return out.sorted { $0.x < $1.x }
    }

    /// The edge moved outwards: `outward` are the readings from the edge outwards (nearest
    /// first), `inside` the readings where the stretch surely plays, `outside` (optional) the
    /// readings where it surely does not: their share standing out replaces chance (one in
    /// five) when higher, and fewer than 24 of them keep the edge. Returns the recording
    /// frame of the farthest peak of the run that the change point puts in the stretch, `nil`
    /// when the edge stays (fewer than 24 readings inside, the stretch not telling itself
    /// from its decoys or from the outside, or less than ``minimumEvidence``).
    static func outward(_ outward: [Reading], inside: [Reading], outside: [Reading]? = nil) -> Double? {
        guard inside.count >= 24, !outward.isEmpty else { return nil }
        var p0 = 1 / Double(decoys.count + 1)
        if let outside {
            // The audio beyond the edge's reach, where the stretch surely does not play: its
            // own rate of standing out (other music in the reference's key beats the decoys
            // more often than chance).
            guard outside.count >= 24 else { return nil }
            p0 = max(p0, Double(outside.filter(\.stands).count) / Double(outside.count))
        }
        let p = min(Double(inside.filter(\.stands).count) / Double(inside.count), 0.95)
        guard p >= 1.75 * p0 else { return nil }
        let hit = log(p / p0), miss = log((1 - p) / (1 - p0))
        var sum = 0.0, best = 0.0, bestIndex: Int?
        for (k, r) in outward.enumerated() {
            sum += r.stands ? hit : miss
            if r.stands && sum > best { best = sum; bestIndex = k }
        }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        return outward[k].x
    }

    /// Margins (dB) are clipped to ±15 before they count: one reading over a loud onset or a
    /// gap in the masking sound is no stronger evidence than a clear one.
    static let marginClip = 15.0
    /// Spread (dB) of a reading's margin, inside a stretch and out of it: 8, the standard
    /// deviation measured on the benchmark's edges (7-10 dB next to speech, other music and
    /// spots under speech).
    static let marginSpread = 8.0
    /// Largest mean margin (dB) the stretch is assumed to keep up to its edge: 6. The passage
    /// just inside a masked edge often stands out less than the 2 s measured further in (the
    /// spot's last notes quieter than its middle); a test tuned to the middle's margin (20-30 dB
    /// in the benchmark's spots under speech) takes such a passage for chance.
    static let marginStep = 6.0

    /// The edge moved outwards by the readings' margins rather than by the share standing out:
    /// the same change point as ``outward(_:inside:outside:)`` with each reading weighted by its
    /// margin `z` (clipped to ±``marginClip``) in a Gaussian log-likelihood ratio of stretch
    /// (mean `m`) over the audio beyond it (mean `m0`), spread ``marginSpread``: a reading adds
    /// `(m − m0) / spread² · (z − (m + m0) / 2)`. `m0` is the mean margin of `outside` (readings
    /// where the stretch surely does not play), at least 0: the decoys are the control, so over
    /// speech the margins centre on 0, while other music in the reference's key lifts them.
    /// `m` is the inside's mean margin but at most ``marginStep`` above `m0`. A reading whose
    /// margin is a few dB beats the decoys' mean although not every decoy, and still counts for
    /// the stretch: a stretch whose last second stands out at half its inside rate is followed
    /// to its end. Returns the recording frame of the farthest reading with `z > (m + m0) / 2`
    /// where the sum from the edge is largest, when it reaches ``minimumEvidence``; `nil` with
    /// fewer than 24 readings inside or outside, `m − m0` under 2 dB, or `outside` standing out
    /// more often than chance (one in five): other music in the reference's key has passages
    /// whose margins beat the middle for a second at a time, and there the margins stretched
    /// ends 0.6-1.2 s over it (generated: battle and knolls 9 and 12 dB under chipdisko, whose
    /// audio beyond stood out at 0.25-0.32; spots under speech 0.11-0.20).
    static func outwardByMargin(_ outward: [Reading], inside: [Reading], outside: [Reading]) -> Double? {
        guard inside.count >= 24, outside.count >= 24, !outward.isEmpty else { return nil }
        guard Double(outside.filter(\.stands).count) <= Double(outside.count) / Double(decoys.count + 1) else { return nil }
        func clipped(_ r: Reading) -> Double { max(-marginClip, min(marginClip, r.margin)) }
        func mean(_ rs: [Reading]) -> Double { rs.map(clipped).reduce(0, +) / Double(rs.count) }
        let m0 = max(0, mean(outside))
        let m = min(mean(inside), m0 + marginStep)
        guard m - m0 >= 2 else { return nil }
        let a = (m - m0) / (marginSpread * marginSpread), middle = (m + m0) / 2
        var sum = 0.0, best = 0.0, bestIndex: Int?
        for (k, r) in outward.enumerated() {
            let z = clipped(r)
            sum += a * (z - middle)
            if z > middle && sum > best { best = sum; bestIndex = k }
        }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        return outward[k].x
    }
}
