import Foundation

/// Thresholds of the version matcher, each with its unit and reason.
public struct VersionTuning: Equatable, Sendable {
    /// Minimum ``VersionMatch/confidence`` of an answer (identify) or a window (scan). Default
    /// 0.98: the chance model's probability of a lead this large by chance is 2 %, about one
    /// false answer in 50 non-catalog clips (see ``VersionMatcher``).
    public var threshold: Double = 0.98
    /// Scan window, seconds. Default 30: the length of an identify excerpt, so one chance model
    /// serves both.
    public var windowSeconds: Double = 30
    /// Scan hop between windows, seconds. Default 10.
    public var hopSeconds: Double = 10
    /// Windows of one song in a row that may be missed (below threshold or another answer)
    /// without ending its entry. Default 2 (20 s: a drum break, a quiet bridge).
    public var maximumGapWindows: Int = 2
    /// A set-list entry needs this many accepted windows. Default 2: one window of 30 s alone
    /// is too little for a whole song.
    public var minimumWindows: Int = 2
    /// Two entries of one reference at most this many windows apart are one (a song is not
    /// played twice in a row; what lay between was a misreading). Default 6 (60 s).
    public var mergeGapWindows: Int = 6
    /// Key shifts tried per reference: the best ones by global chroma profile (Ellis &
    /// Poliner's "optimal transposition" on the mean chroma; Serrà et al.'s OTI). Default 12
    /// (all): affordable at 100 references and better under the room's colouring.
    public var keyShifts: Int = 12
    /// Edge evidence (``VersionMatcher/trimmed(_:in:)``): length of the short windows that test
    /// whether a set-list entry's song is still playing, seconds. Default 6: a fifth of a scan
    /// window, short enough to place an edge within a few seconds, long enough (15 chroma
    /// frames) for an alignment to tell the song's key from the others.
    public var edgeWindowSeconds: Double = 6
    /// Step between edge windows, seconds. Default 0.8 (2 chroma frames).
    public var edgeStepSeconds: Double = 0.8
    /// How far inward from an entry's edge the evidence is looked for, seconds. Default 40:
    /// past that the entry keeps its edge (the scan windows already vouch for its middle).
    public var edgeReachSeconds: Double = 40
    /// Edge windows in a row whose evidence must hold for the song to be playing there. Default
    /// 3 (2.4 s of steps): one window alone is often a chance chord.
    public var edgeRun: Int = 3
    /// Margin of the evidence, in mean frame cost (0…1): the entry's key must align this much
    /// better than every key at least 3 semitones away. Default 0.01.
    public var edgeMargin: Double = 0.01

    /// The defaults.
    public init() {}
}

/// One answer of the version matcher.
public struct VersionMatch: Equatable, Sendable {
    /// Index into the matcher's references.
    public var referenceIndex: Int
    /// Semitones the query is above the reference (−5…6).
    public var transposition: Int
    /// Reference seconds per query second along the alignment (1.1: the performance is 10 %
    /// faster than the reference), as identify's `timeScale`.
    public var timeScale: Double
    /// Reference time at the start and end of the aligned stretch, seconds.
    public var referenceStart: Double
    public var referenceEnd: Double
    /// Mean frame cost of the alignment (0…1).
    public var distance: Double
    /// The answer's lead over the runner-up in the null sample's standard deviations
    /// (``VersionMatcher/gapScore(best:null:)``).
    public var score: Double
    /// 0…1: the chance model's probability that this is not chance (see ``VersionMatcher``).
    public var confidence: Double

    /// The transposition as ShazamKit's `frequencySkew`: query pitch / reference pitch − 1,
    /// 2^(transposition/12) − 1 in equal temperament (+2 semitones: 0.1225).
    public var frequencySkew: Double { pow(2, Double(transposition) / 12) - 1 }
}

/// One entry of a concert's set-list.
public struct VersionSegment: Equatable, Sendable {
    /// Recording time, seconds.
    public var start: Double
    public var end: Double
    /// The best window's match (reference, transposition, confidence).
    public var match: VersionMatch
    /// Reference time at `start` and `end` (estimated), seconds.
    public var referenceStart: Double
    public var referenceEnd: Double
    /// Median time scale over the entry's windows.
    public var timeScale: Double
    /// Accepted windows in the entry.
    public var windows: Int
}

/// Recognises other performances of catalogued songs (another tempo, key, instruments) from
/// chroma: every reference is aligned with the query under each key shift by subsequence DTW
/// (``SubsequenceDTW``), and the best (reference, shift) is judged against a chance model.
///
/// The chance model is the a-contrario view of the design notes: the distances of the query
/// to the references that are *not* the answer (each other reference's best over its shifts;
/// in a catalog of fewer than 9 references every other (reference, shift) pair and the
/// answer's own reference under shifts 3 or more semitones away, the "shifted lines") sample
/// what chance gives for this very query (its length, density and timbre). The answer's lead
/// over the best of that sample, in its standard deviations, is turned into the probability
/// that chance alone leads this far (``confidence(gap:nullCount:)``). A lead, not a level: the
/// issue measured that the best distances of non-catalog excerpts overlap those of correct
/// answers, while their leads do not (see the issue note). Serrà et al. ("Chroma binary
/// similarity and local alignment applied to cover song identification", IEEE TASLP 2008;
/// Qmax: "Cross recurrence quantification for cover song identification", New J. Phys. 2009)
/// align cross-recurrence plots locally; the subsequence DTW used here is the same family,
/// with a bounded slope instead of free gaps.
public struct VersionMatcher: Sendable {
    /// The references' prepared chroma, in index order.
    public let references: [PreparedChroma]
    /// The thresholds.
    public let tuning: VersionTuning

    /// A matcher over `references` (in the caller's reference order).
    public init(references: [ChromaSequence], tuning: VersionTuning = VersionTuning()) {
        self.references = references.map(PreparedChroma.init)
        self.tuning = tuning
    }

    /// The shifts to try for `query` against `reference`: all 12, or the `keyShifts` best by
    /// the dot product of the transposed global profiles.
    func shifts(_ query: PreparedChroma, _ reference: PreparedChroma) -> [Int] {
        guard tuning.keyShifts < 12 else { return Array(0..<12) }
        let scored = (0..<12).map { s -> (Int, Float) in
            var dot: Float = 0
            for k in 0..<12 { dot += query.profile[(k + s) % 12] * reference.profile[k] }
            return (s, dot)
        }
        return scored.sorted { $0.1 > $1.1 }.prefix(max(1, tuning.keyShifts)).map(\.0)
    }

    /// Aligns `query` with every reference under every tried shift.
    /// - Returns: per reference, per shift (0…11; `nil` when not tried), the alignment.
    public func alignments(_ query: PreparedChroma) -> [[SubsequenceDTW.Alignment?]] {
        let transposed = (0..<12).map { query.transposed(by: $0) }
        return references.map { reference in
            var row = [SubsequenceDTW.Alignment?](repeating: nil, count: 12)
            for s in shifts(query, reference) { row[s] = SubsequenceDTW.align(transposed[s], in: reference) }
            return row
        }
    }

    /// The best match of `query` with its chance-model confidence (whatever the threshold), or
    /// `nil` for an empty catalog or a query under 2 frames.
    public func best(_ query: PreparedChroma) -> VersionMatch? {
        let all = alignments(query)
        var bestRef = -1, bestShift = 0
        var bestDistance = Float.greatestFiniteMagnitude
        for (r, row) in all.enumerated() {
            for (s, a) in row.enumerated() {
                if let a, a.distance < bestDistance { bestDistance = a.distance; bestRef = r; bestShift = s }
            }
        }
        guard bestRef >= 0, let a = all[bestRef][bestShift] else { return nil }
        // The null sample: what the other references give this query. With enough references,
        // each one's best distance over its shifts (like for like with the answer); with few,
        // every (reference, shift) pair but the answer's own near shifts (the shifted lines).
        var null: [Double] = []
        if all.count - 1 >= VersionMatcher.minimumNullReferences {
            for (r, row) in all.enumerated() where r != bestRef {
                if let d = row.compactMap({ $0?.distance }).min() { null.append(Double(d)) }
            }
        } else {
            for (r, row) in all.enumerated() {
                for (s, alignment) in row.enumerated() {
                    guard let alignment else { continue }
                    let apart = min((s - bestShift + 12) % 12, (bestShift - s + 12) % 12)
                    if r != bestRef || apart >= 3 { null.append(Double(alignment.distance)) }
                }
            }
        }
        let gap = VersionMatcher.gapScore(best: Double(bestDistance), null: null)
        let confidence = VersionMatcher.confidence(gap: gap, nullCount: null.count)
        let frames = Double(max(1, query.count - 1))
        let span = Double(a.referenceEnd - a.referenceStart)
        let frame = references[bestRef].frameDuration
        return VersionMatch(referenceIndex: bestRef, transposition: bestShift > 6 ? bestShift - 12 : bestShift,
                            timeScale: span / frames * (frame / query.frameDuration),
                            referenceStart: Double(a.referenceStart) * frame,
                            referenceEnd: Double(a.referenceEnd + 1) * frame,
                            distance: Double(bestDistance), score: gap, confidence: confidence)
    }

    /// References besides the answer needed for a null sample of per-reference minima. Default 8.
    public static let minimumNullReferences = 8

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// `(smallest null value − best) / sd(null)`: how far the answer stands ahead of the
    /// runner-up, in the null sample's standard deviations (0 with fewer than 2 values or no spread;
    /// negative values are 0).
    public static func gapScore(best: Double, null: [Double]) -> Double {
        guard null.count >= 2, let second = null.min() else { return 0 }
        let mean = null.reduce(0, +) / Double(null.count)
        let variance = null.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(null.count - 1)
        guard variance > 1e-12 else { return 0 }
        return max(0, (second - best) / variance.squareRoot())
    }

    /// `1 − exp(−a_N · gap)` with `a_N = √(2 ln N)`: under the null, the answer is only the
    /// lowest of `N + 1` draws of one distribution, and the spacing between the two lowest of N
    /// roughly Gaussian values, in standard deviations, is close to exponential with rate a_N
    /// (extreme-value theory: the normalising constant of the Gumbel limit; H. A. David &
    /// H. N. Nagaraja, "Order Statistics", 3rd ed., §10.5). So `1 − confidence` is the chance
    /// probability of a lead this large. Checked on the non-catalog excerpts of both corpora
    /// (see the issue note): their gaps follow this law (mean ≈ 1/a_N).
    public static func confidence(gap: Double, nullCount: Int) -> Double {
        guard nullCount >= 2 else { return 0 }
        let rate = (2 * log(Double(nullCount))).squareRoot()
        return 1 - exp(-rate * gap)
    }

    /// Names the song of a clip: the best match when its confidence reaches the threshold.
    public func identify(_ query: ChromaSequence) -> VersionMatch? {
        guard let m = best(PreparedChroma(query)), m.confidence >= tuning.threshold else { return nil }
        return m
    }

    /// A set-list of a recording: the recording is cut into windows of
    /// ``VersionTuning/windowSeconds`` every ``VersionTuning/hopSeconds``, each matched as a clip;
    /// runs of accepted windows naming one reference (gaps of at most
    /// ``VersionTuning/maximumGapWindows``) become one entry. The entry's start and end are
    /// extrapolated from the alignment of its first and last windows to the reference's start and
    /// end at the measured time scale, and clipped to the neighbouring entries and the recording.
    /// - Parameter referenceDurations: each reference's duration in seconds.
    public func scan(_ recording: ChromaSequence, referenceDurations: [Double]) -> [VersionSegment] {
        let prepared = PreparedChroma(recording)
        let frame = recording.frameDuration
        let window = max(2, Int((tuning.windowSeconds / frame).rounded()))
        let hop = max(1, Int((tuning.hopSeconds / frame).rounded()))
        var starts: [Int] = []
        var s = 0
        while s + window <= prepared.count { starts.append(s); s += hop }
        if starts.isEmpty && prepared.count >= 2 { starts = [0] }
        else if let last = starts.last, last + window < prepared.count { starts.append(prepared.count - window) }
        let results: [VersionMatch?] = starts.map { best(prepared.slice($0..<($0 + window))) }
        // Runs of accepted windows of one reference; a window of another reference ends a run.
        var runs: [[Int]] = []
        var current: [Int] = []
        for (w, result) in results.enumerated() {
            guard let m = result, m.confidence >= tuning.threshold else { continue }
            if let last = current.last, let lm = results[last], lm.referenceIndex == m.referenceIndex, w - last - 1 <= tuning.maximumGapWindows {
                current.append(w)
            } else {
                if !current.isEmpty { runs.append(current) }
                current = [w]
            }
        }
        if !current.isEmpty { runs.append(current) }
        // Too short runs go; then runs of one reference that only such a run (or a gap of at most
        // ``VersionTuning/mergeGapWindows``) separated are one entry.
        runs = runs.filter { $0.count >= tuning.minimumWindows }
        var merged: [[Int]] = []
        for run in runs {
            if let last = merged.last, results[last.last!]!.referenceIndex == results[run.first!]!.referenceIndex,
               run.first! - last.last! - 1 <= tuning.mergeGapWindows {
                merged[merged.count - 1] += run
            } else {
                merged.append(run)
            }
        }
        runs = merged
        var segments: [VersionSegment] = []
        for run in runs {
            let matches = run.compactMap { results[$0] }
            let best = matches.max { $0.confidence < $1.confidence }!
            let scales = matches.map(\.timeScale).sorted()
            let scale = min(2, max(0.5, scales[scales.count / 2]))
            let first = matches.first!, last = matches.last!
            let firstStart = Double(starts[run.first!]) * frame
            let lastEnd = Double(starts[run.last!] + window) * frame
            let duration = referenceDurations.indices.contains(best.referenceIndex) ? referenceDurations[best.referenceIndex] : last.referenceEnd
            // The song's start and end as the first and last few windows place them (each window's
            // alignment extrapolated to the reference's start or end at the entry's time scale),
            // the median of up to 3, within half a window of the first and last accepted windows:
            // a window is accepted when most of it is the song.
            let edge = 3, half = Double(window) * frame / 2
            let startGuesses = run.prefix(edge).compactMap { w in results[w].map { Double(starts[w]) * frame - $0.referenceStart / scale } }
            let endGuesses = run.suffix(edge).compactMap { w in results[w].map { Double(starts[w] + window) * frame + max(0, duration - $0.referenceEnd) / scale } }
            let start = max(0, min(firstStart + half, max(firstStart - half, VersionMatcher.median(startGuesses))))
            let end = min(recording.duration, max(lastEnd - half, min(lastEnd + half, VersionMatcher.median(endGuesses))))
            var shifts = [Int: Int]()
            for m in matches { shifts[m.transposition, default: 0] += 1 }
            var match = best
            match.transposition = shifts.max { $0.value < $1.value || ($0.value == $1.value && abs($0.key) > abs($1.key)) }!.key
            segments.append(VersionSegment(start: start, end: end, match: match,
                                           referenceStart: max(0, first.referenceStart - (firstStart - start) * scale),
                                           referenceEnd: min(duration, last.referenceEnd + (end - lastEnd) * scale),
                                           timeScale: scale, windows: run.count))
        }
        // Neighbours do not overlap: a boundary between two entries is put where the earlier
        // one's extrapolated end and the later one's extrapolated start meet halfway, within
        // the windows each was seen in.
        for i in segments.indices.dropFirst() where segments[i].start < segments[i - 1].end {
            let cut = (segments[i].start + segments[i - 1].end) / 2
            segments[i - 1].end = cut
            segments[i].start = cut
        }
        return segments.filter { $0.end > $0.start }.map { trimmed($0, in: prepared) }
    }

    /// Whether the song of `segment` is playing in the frames `start ..< start + length` of
    /// `recording`: aligned with the segment's reference by ``SubsequenceDTW``, its key (the
    /// segment's transposition) beats every key at least 3 semitones away (the "shifted lines"
    /// of the chance model) by ``VersionTuning/edgeMargin``. Crowd, banter and other songs fit
    /// all keys about alike; the song fits its own. `false` for frames outside the recording.
    func songHolds(_ segment: VersionSegment, _ recording: PreparedChroma, start: Int, length: Int) -> Bool {
        guard start >= 0, start + length <= recording.count else { return false }
        let window = recording.slice(start..<(start + length))
        let reference = references[segment.match.referenceIndex]
        let key = ((segment.match.transposition % 12) + 12) % 12
        var own = Float.greatestFiniteMagnitude, others = Float.greatestFiniteMagnitude
        for s in 0..<12 {
            let apart = min((s - key + 12) % 12, (key - s + 12) % 12)
            guard s == key || apart >= 3, let a = SubsequenceDTW.align(window.transposed(by: s), in: reference) else { continue }
            if s == key { own = a.distance } else { others = min(others, a.distance) }
        }
        return Double(own) < Double(others) - tuning.edgeMargin
    }

    /// `segment` with its edges moved inward to where the alignment's evidence holds: windows of
    /// ``VersionTuning/edgeWindowSeconds`` every ``VersionTuning/edgeStepSeconds`` are tested
    /// (``songHolds(_:_:start:length:)``) from the start forward and from the end backward,
    /// up to ``VersionTuning/edgeReachSeconds``; the entry starts at the first window that begins
    /// ``VersionTuning/edgeRun`` holding windows in a row and ends at the end of the last such
    /// window. Edges only move inward (an entry never grows); without evidence within the
    /// reach an edge stays. The reference times move with the edges at the segment's time scale.
    public func trimmed(_ segment: VersionSegment, in recording: PreparedChroma) -> VersionSegment {
        let frame = recording.frameDuration
        let length = max(2, Int((tuning.edgeWindowSeconds / frame).rounded()))
        let step = max(1, Int((tuning.edgeStepSeconds / frame).rounded()))
        let reach = Int((tuning.edgeReachSeconds / frame).rounded())
        let first = Int(segment.start / frame), last = Int(segment.end / frame)
        var cache: [Int: Bool] = [:]
        func holds(_ t: Int) -> Bool {
            if let v = cache[t] { return v }
            let v = songHolds(segment, recording, start: t, length: length)
            cache[t] = v
            return v
        }
        var result = segment
        for t in stride(from: first, to: first + reach, by: step) where (0..<tuning.edgeRun).allSatisfy({ holds(t + $0 * step) }) {
            result.start = max(segment.start, Double(t) * frame)
            break
        }
        for t in stride(from: min(recording.count, last) - length, to: last - reach - length, by: -step)
        where (0..<tuning.edgeRun).allSatisfy({ holds(t - $0 * step) }) {
            result.end = min(segment.end, Double(t + length) * frame)
            break
        }
        guard result.end > result.start else { return segment }
        result.referenceStart = segment.referenceStart + (result.start - segment.start) * segment.timeScale
        result.referenceEnd = segment.referenceEnd - (segment.end - result.end) * segment.timeScale
        return result
    }
}
