import Foundation

/// Start edges checked against single peaks at a known alignment.
///
/// A landmark of other audio just before a stretch can hit by chance: its anchor peak falls on
/// one of the reference's peaks and its target, inside the stretch, is the reference's own.
/// Such a hit puts the start up to a target zone (0.77 s) early, and from hits alone it looks
/// like the stretch's first. Once a segment's alignment is known, each peak of the reference
/// can be checked on its own: does the recording hold a peak within ±1 frame and ±1
/// log-frequency step of where the reference's peak falls? Inside the stretch a share `p` of
/// the reference's peaks coincide, outside only chance does (share `p0`, measured at shifted
/// alignments over the same audio). The start is moved past the first hits when the
/// log-likelihood ratio of chance over the stretch for the peaks before the next hit reaches
/// ``minimumEvidence`` (a change point as in Page's CUSUM test, 1954) and those peaks also
/// look like chance on their own (``chanceTail``).
///
/// Tried the other way, to move edges *outwards* (a spot under speech whose first seconds
/// give no hit), single peaks showed no evidence: the reference's peaks there coincide at the
/// chance rate, since the speech takes the peaks.
enum PeakEdge {
    /// A spectral peak: frame (hops) and log-frequency step (the anchor scale of
    /// ``LandmarkHasher``, ``Configuration/logStepsPerOctave`` steps per octave).
    struct Peak: Hashable {
        var frame: Int32
        var step: Int32
    }

    /// The anchor peaks of reference `reference`'s postings (frame, anchor step), each once,
    /// in frame order; with `frames`, only those whose frame lies in it. From a mapped index
    /// this reads only the reference's postings (with `frames`, only that stretch of them); an
    /// index built in memory walks every bucket once.
    static func referencePeaks(_ postings: PostingIndex, reference: Int, hasher: LandmarkHasher,
                               frames: ClosedRange<UInt32>? = nil) -> [Peak] {
        let perAnchor = hasher.ratioCount * hasher.deltaCount
        // The postings come by frame, then hash, and a hash's anchor step grows with it: the
        // peaks arrive in order, each one's repeats next to each other (a sort and a set were a
        // twentieth of a scan's CPU time). Out-of-order input is sorted all the same.
        var peaks: [Peak] = []
        var ordered = true
        for p in frames.map({ postings.postings(of: reference, inFrames: $0) }) ?? postings.postings(of: reference) {
            let peak = Peak(frame: Int32(truncatingIfNeeded: p.frame), step: Int32(Int(p.hash) / perAnchor))
            if let last = peaks.last {
                if last == peak { continue }
                if (peak.frame, peak.step) < (last.frame, last.step) { ordered = false }
            }
            peaks.append(peak)
        }
        guard !ordered else { return peaks }
        return Set(peaks).sorted { ($0.frame, $0.step) < ($1.frame, $1.step) }
    }

    /// Index of the first of `peaks` (in frame order) at or after reference frame `frame`
    /// (`peaks.count` when there is none), by binary search.
    static func firstIndex(_ peaks: [Peak], atOrAfter frame: Double) -> Int {
        var a = 0, b = peaks.count
        while a < b { let m = (a + b) / 2; if Double(peaks[m].frame) < frame { a = m + 1 } else { b = m } }
        return a
    }
}
