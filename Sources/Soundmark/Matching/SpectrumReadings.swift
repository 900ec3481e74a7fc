import Foundation

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

    /// Margins (dB) are clipped to ±15 before they count: one reading over a loud onset or a
    /// gap in the masking sound is no stronger evidence than a clear one.
    static let marginClip = 15.0
}
