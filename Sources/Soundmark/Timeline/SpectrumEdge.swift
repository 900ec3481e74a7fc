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
