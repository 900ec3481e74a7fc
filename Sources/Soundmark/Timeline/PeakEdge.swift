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

    /// One reference peak checked against the recording: where it falls in the recording
    /// (frame) and whether a recording peak coincides with it.
    struct Check {
        var x: Double
        var matched: Bool
    }

    /// Minimum log-likelihood ratio (nats) for an edge to move: 4 (odds of about 55 to 1).
    static let minimumEvidence = 4.0
    /// Frames of the alignment shifts at which chance coincidences are counted.
    static let chanceShifts: [Double] = [-41, -27, 27, 41]

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

    /// The recording's anchor peaks among `landmarks`, on the reference's scale for a query
    /// `logShift` steps higher (see ``LandmarkHasher/logShift(frequencyScale:)``), as keys of
    /// ``key(frame:step:)``.
    static func recordingPeaks(_ landmarks: [LandmarkHasher.Prepared], logShift: Double) -> Set<Int64> {
        var keys = Set<Int64>()
        for l in landmarks {
            let s = (l.anchorStep - logShift).rounded(.down)
            guard s.isFinite, s >= 0, s < 65_536 else { continue }
            keys.insert(key(frame: l.anchorFrame, step: Int32(s)))
        }
        return keys
    }

    @inline(__always)
    static func key(frame: Int32, step: Int32) -> Int64 { Int64(frame) << 16 | Int64(step) }

    /// Each reference peak that `toRecording` places in recording frames `from ..< to`, checked
    /// against `recording` with the alignment moved by `shift` frames.
    static func checks(reference: [Peak], recording: Set<Int64>, toRecording: (Double) -> Double,
                       toReference: (Double) -> Double, from: Int, to: Int, shift: Double = 0) -> [Check] {
        guard to > from else { return [] }
        let y0 = toReference(Double(from) - shift), y1 = toReference(Double(to) - shift)
        let lo = min(y0, y1), hi = max(y0, y1)
        var out: [Check] = []
        var i = firstIndex(reference, atOrAfter: lo)
        while i < reference.count && Double(reference[i].frame) < hi {
            let p = reference[i]
            i += 1
            let x = toRecording(Double(p.frame)) + shift
            guard x >= Double(from) && x < Double(to) else { continue }
            let f = Int32(x.rounded())
            var matched = false
            search: for df in Int32(-1)...1 {
                for ds in Int32(-1)...1 where recording.contains(key(frame: f + df, step: p.step + ds)) {
                    matched = true
                    break search
                }
            }
            out.append(Check(x: x, matched: matched))
        }
        return out.sorted { $0.x < $1.x }
    }

    /// The start of a stretch moved later: the change point, within `checks` (the reference
    /// peaks from the start found from hits onwards, in order), after which the coincidences
    /// are the stretch's (rate measured on `inside`) rather than chance, when the checks before
    /// it are at least ``minimumEvidence`` more likely chance than stretch. `nil` when the
    /// start stays.
    static func later(_ checks: [Check], inside: [Check], chance: (matched: Int, total: Int)) -> Double? {
        let n = inside.count, m = inside.filter(\.matched).count
        guard n >= 24, chance.total >= 24, checks.count >= 2 else { return nil }
        let p0 = max(Double(chance.matched) / Double(chance.total), 0.005)
        let p = min(Double(m) / Double(n), 0.95)
        guard p >= 0.2, p >= 4 * p0 else { return nil }
        let hit = log(p / p0), miss = log((1 - p) / (1 - p0))
        // Evidence for chance over the checks before index k: −Σ llr.
        var sum = 0.0, best = 0.0, bestIndex: Int?
        for k in 1..<checks.count {
            sum -= checks[k - 1].matched ? hit : miss
            if sum > best && checks[k].matched { best = sum; bestIndex = k }
        }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        // The checks skipped must also look like chance on their own: a fade-in or a masked
        // first second coincides less than the stretch but clearly more than chance.
        let skipped = checks[..<k].filter(\.matched).count
        guard binomialTail(atLeast: skipped, of: k, rate: p0) >= chanceTail else { return nil }
        return checks[k].x
    }

    /// Least probability under chance of the coincidences skipped at a start (at least that
    /// many of that many checks): 0.1.
    static let chanceTail = 0.1

    /// P(X ≥ `m`) for X binomial with `n` trials of probability `rate`.
    static func binomialTail(atLeast m: Int, of n: Int, rate: Double) -> Double {
        guard m > 0 else { return 1 }
        guard m <= n else { return 0 }
        var below = 0.0, term = pow(1 - rate, Double(n))   // P(X = 0)
        for i in 0..<m {
            below += term
            term *= Double(n - i) / Double(i + 1) * rate / (1 - rate)
        }
        return max(0, 1 - below)
    }
}
