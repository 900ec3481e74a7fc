import Foundation

/// A candidate speed change tried by the matcher: the query is assumed to play `timeScale`
/// times faster and `frequencyScale` times higher than the reference.
///
/// A DJ pitching a record changes both together (`timeScale == frequencyScale == 1 + skew`);
/// a time-stretch that keeps the pitch ("key lock") changes only `timeScale`.
public struct SpeedCandidate: Equatable, Sendable {
    /// Tempo factor (query duration × timeScale = reference duration).
    public var timeScale: Double
    /// Pitch factor (query frequency / reference frequency).
    public var frequencyScale: Double

    /// Creates a candidate.
    public init(timeScale: Double, frequencyScale: Double) {
        self.timeScale = timeScale
        self.frequencyScale = frequencyScale
    }

    /// `frequencyScale − 1`: ShazamKit's `frequencySkew` (0.05: the query plays 5 % higher).
    public var frequencySkew: Double { frequencyScale - 1 }

    /// Speed changes (pitch and tempo together) from `−limit` to `+limit` in steps of `step`,
    /// plus, when `tempoOnly` is set, tempo-only changes over the same range.
    public static func grid(limit: Double = 0.09, step: Double = 0.01, tempoOnly: Bool = false) -> [SpeedCandidate] {
        let n = Int((limit / step).rounded())
        var result = (-n...n).map { i -> SpeedCandidate in
            let s = 1 + Double(i) * step
            return SpeedCandidate(timeScale: s, frequencyScale: s)
        }
        if tempoOnly {
            result += (-n...n).filter { $0 != 0 }.map { SpeedCandidate(timeScale: 1 + Double($0) * step, frequencyScale: 1) }
        }
        return result
    }
}

/// One reference found in a query, before metadata is attached.
public struct MatchCandidate: Equatable, Sendable {
    /// Index into ``CatalogIndex/references``.
    public var referenceIndex: Int
    /// Reference frame at query frame 0: `referenceFrame = offsetFrames + timeScale · queryFrame`.
    public var offsetFrames: Double
    /// The speed change that aligned best.
    public var speed: SpeedCandidate
    /// Number of query landmarks whose hash and time agree with the alignment.
    public var alignedCount: Int
    /// Number of query landmarks.
    public var queryCount: Int
    /// Calibrated score in 0…1 (see ``Matcher/confidence(aligned:background:)``).
    public var confidence: Double
    /// Aligned landmarks summed over every framing the query was analysed with (equal to
    /// `alignedCount` with one framing); matches are ranked by it (see ``Matcher/match(_:reframed:)``).
    public var framingTotal: Int = 0
}

/// Options of the matcher.
public struct MatchOptions: Sendable {
    /// Speed candidates searched. Default: ±9 % in 1 % steps, pitch and tempo together, plus
    /// tempo-only changes over the same range.
    public var candidates: [SpeedCandidate] = SpeedCandidate.grid(tempoOnly: true)
    /// Matches whose confidence is below this are not returned. Default 0.5.
    public var threshold: Double = 0.5
    /// Skip hash buckets holding more postings than this (uninformative hashes). Default 2000.
    public var maxBucket: Int = 2000

    /// The defaults.
    public init() {}
}

/// Finds references in a query by voting on time offsets (Wang 2003), over a grid of
/// candidate speed changes.
///
/// For each candidate the query's landmarks are rescaled and hashed (``LandmarkHasher``); every
/// posting of a hash votes for (reference, reference frame − timeScale · query frame). A true
/// match piles its votes into one offset (±1 frame); chance collisions spread out. The best
/// candidate is refined on a 0.1 % grid around it.
public final class Matcher {
    /// The catalog snapshot searched.
    public let index: CatalogIndex
    /// The options in force.
    public let options: MatchOptions
    private let hasher: LandmarkHasher

    /// Creates a matcher over `index`.
    public init(index: CatalogIndex, options: MatchOptions = MatchOptions()) {
        self.index = index
        self.options = options
        hasher = LandmarkHasher(configuration: index.configuration)
    }

    /// Maps an aligned-landmark count to a confidence in 0…1, given the chance level of the
    /// same query.
    ///
    /// `background` is what a reference that is *not* in the query reaches by chance: the
    /// 6th-best reference's count (at least 6). It grows with the query's length and with how
    /// stationary its spectrum is, so comparing against it keeps the threshold meaningful for
    /// any query. Measured on the benchmark's 60 non-catalog clips (music, speech, pink noise,
    /// silence, a tone) against its 128-reference catalog, the best reference exceeded the
    /// background by at most 9; true matches exceed it by 10 to over 1000. The logistic curve
    /// puts 0.5 at an excess of 11 (a non-catalog clip at 9 scores 0.21) and 0.95 at 15.5.
    public static func confidence(aligned: Int, background: Int) -> Double {
        1 / (1 + exp(-(Double(aligned - background) - 11) / 1.5))
    }

    /// Bits of a vote key: reference index (18), offset + 2^24 (25), hash (21).
    static let hashBits: UInt64 = 21, offsetBits: UInt64 = 25, offsetBias = 1 << 24

    /// Votes of one candidate as sorted runs `(key, count)` with
    /// `key = referenceIndex << 25 | (offset + 2^24)` and `count` the number of *distinct hashes*
    /// voting for it: a repeated note or beat that lines up with a repeated pattern in the
    /// reference counts once, so rhythm alone does not make a match.
    private func votes(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate, only reference: Int? = nil) -> [(key: UInt64, count: Int32)] {
        let shift = hasher.logShift(frequencyScale: c.frequencyScale)
        var keys: [UInt64] = []
        keys.reserveCapacity(landmarks.count * 4)
        let hashBits = Matcher.hashBits, offsetLimit = 1 << Matcher.offsetBits
        index.postings.start.withUnsafeBufferPointer { start in
            index.postings.entries.withUnsafeBufferPointer { entries in
                for l in landmarks {
                    guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                    let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                    if hi - lo > options.maxBucket { continue }
                    let range = reference.map { PostingIndex.run(of: $0, in: entries, lo, hi) } ?? lo..<hi
                    let q = Int((Double(l.anchorFrame) * c.timeScale).rounded())
                    for e in range {
                        let entry = entries[e]
                        let ref = entry >> 32
                        let off = Int(entry & 0xFFFF_FFFF) - q + Matcher.offsetBias
                        guard off >= 0 && off < offsetLimit else { continue }
                        keys.append((ref << Matcher.offsetBits | UInt64(off)) << hashBits | UInt64(h))
                    }
                }
            }
        }
        radixSort(&keys)
        var runs: [(key: UInt64, count: Int32)] = []
        var i = 0
        while i < keys.count {
            let key = keys[i] >> hashBits
            var distinct: Int32 = 1
            var j = i + 1
            while j < keys.count && keys[j] >> hashBits == key {
                if keys[j] != keys[j - 1] { distinct += 1 }
                j += 1
            }
            runs.append((key, distinct))
            i = j
        }
        return runs
    }

    /// Counts of the runs one frame before and after vote run `i` (0 where there is none).
    @inline(__always)
    private func neighbours(_ runs: [(key: UInt64, count: Int32)], _ i: Int) -> (before: Int, after: Int) {
        let key = runs[i].key
        let before = i > 0 && runs[i - 1].key == key &- 1 ? Int(runs[i - 1].count) : 0
        let after = i + 1 < runs.count && runs[i + 1].key == key &+ 1 ? Int(runs[i + 1].count) : 0
        return (before, after)
    }

    /// Aligned count of vote run `i`: its own count plus those of the runs one frame either side.
    private func alignedTotal(_ runs: [(key: UInt64, count: Int32)], _ i: Int) -> Int {
        let n = neighbours(runs, i)
        return n.before + Int(runs[i].count) + n.after
    }

    /// Vote-weighted mean offset (frames) of vote run `i` and the runs one frame either side:
    /// a sub-frame estimate of where the alignment lies (votes split between two neighbouring
    /// frames when the true offset falls between them).
    private func alignedCentre(_ runs: [(key: UInt64, count: Int32)], _ i: Int) -> Double {
        let n = neighbours(runs, i)
        let sum = Double(n.before + Int(runs[i].count) + n.after)
        return Double(decode(runs[i].key).offset) + Double(n.after - n.before) / sum
    }

    /// (reference index, offset in frames) of a vote key.
    private func decode(_ key: UInt64) -> (reference: Int, offset: Int) {
        (Int(key >> Matcher.offsetBits), Int(key & ((1 << Matcher.offsetBits) - 1)) - Matcher.offsetBias)
    }

    /// Best (offset, aligned count) per reference from sorted vote runs, summing ±1 frame.
    private func bestPerReference(_ runs: [(key: UInt64, count: Int32)]) -> [Int: (offset: Int, count: Int)] {
        var best: [Int: (offset: Int, count: Int)] = [:]
        for i in runs.indices where runs[i].count >= 2 {
            let total = alignedTotal(runs, i)
            let (ref, off) = decode(runs[i].key)
            if let b = best[ref], b.count >= total { continue }
            best[ref] = (off, total)
        }
        return best
    }

    /// Matches a query signature against the catalog.
    /// - Parameters:
    ///   - query: the query's landmarks (frames counted from the query's start).
    ///   - reframed: optionally, the same audio analysed on shifted frame grids: entry `j` of
    ///     `n` is the signature of the query with its first `(j + 1) · hopLength / (n + 1)`
    ///     samples dropped (``SignatureGenerator/signatures(ofMedia:configuration:role:framings:streamIndex:warning:)``
    ///     makes them). Default: none.
    /// - Returns: the matching references with confidence ≥ `options.threshold`, best first
    ///   (ties broken by reference id, then offset, so the order is stable). A reference that
    ///   contains the query's passage more than once (a loop, a repeated chorus) appears once
    ///   per copy (at most ``maxRepeats``) when that copy's alignment reaches 40 % of the best
    ///   one's count.
    ///
    /// Why `reframed` helps: landmarks depend on where frame boundaries fall. A query cut half a
    /// hop off the reference's frame grid keeps between half and 80 % of the aligned landmarks
    /// it keeps on the reference's grid. Each match is re-counted on every framing near its
    /// offset: `alignedCount` is the best framing's count, and matches are ranked by
    /// `framingTotal`, the sum over framings, which averages out where the frame boundaries
    /// happen to fall. Among the copies of a repeated passage the one the clip was taken from
    /// then ranks first (the others differ by mixing or coding noise; bit-identical copies
    /// tie and are ordered by offset). `offsetFrames` averages the vote-weighted centres of
    /// every framing, so it has a fraction of a frame (over 100 random cuts of 8 s: mean error
    /// 1.8 ms, max 8.4 ms, with 16 ms frames).
    /// (Letting every framing vote over the whole catalog was measured too: +5 points at
    /// −5 dB SNR for twice the time, so only the plain framing votes.)
    public func match(_ query: [Landmark], reframed: [[Landmark]] = []) -> [MatchCandidate] {
        guard !query.isEmpty else { return [] }
        let framings = ([query] + reframed).map { $0.compactMap { hasher.prepare($0) } }
        let landmarks = framings[0]
        var best: [Int: (candidate: Int, offset: Int, count: Int)] = [:]
        for (ci, c) in options.candidates.enumerated() {
            for (ref, b) in bestPerReference(votes(landmarks, c)) {
                if let old = best[ref], old.count >= b.count { continue }
                best[ref] = (ci, b.offset, b.count)
            }
        }
        let ranked = best.values.map(\.count).sorted(by: >)
        let background = max(6, ranked.count > 5 ? ranked[5] : 0)
        var results: [MatchCandidate] = []
        for (ref, b) in best where Matcher.confidence(aligned: b.count, background: background) >= options.threshold * 0.2 {
            let refined = refine(landmarks, reference: ref, around: options.candidates[b.candidate], count: b.count, offset: b.offset)
            // This reference's votes at the refined speed, once per framing: the repeat search
            // and every copy's recount read them.
            let framingRuns = framings.map { votes($0, refined.speed, only: ref) }
            // A reference that repeats the passage matches it again elsewhere: each repeat is a
            // match of its own, ranked by its own count.
            var offsets = [(offset: refined.offset, count: refined.count)]
            while offsets.count < Matcher.maxRepeats,
                  let again = repeatOffset(framingRuns[0], besides: offsets.map(\.offset), atLeast: max(refined.count * 4 / 10, 1)) {
                offsets.append(again)
            }
            for o in offsets {
                var m = recount(MatchCandidate(referenceIndex: ref, offsetFrames: Double(o.offset), speed: refined.speed,
                                               alignedCount: o.count, queryCount: query.count, confidence: 0),
                                framingRuns: framingRuns)
                m.confidence = Matcher.confidence(aligned: m.alignedCount, background: background)
                if m.confidence >= options.threshold { results.append(m) }
            }
        }
        results.sort {
            if $0.framingTotal != $1.framingTotal { return $0.framingTotal > $1.framingTotal }
            if $0.referenceIndex != $1.referenceIndex {
                return index.references[$0.referenceIndex].item.id < index.references[$1.referenceIndex].item.id
            }
            return $0.offsetFrames < $1.offsetFrames
        }
        return results
    }

    /// `candidate` (offset in framing 0's frames) re-counted with every framing (see
    /// ``match(_:reframed:)``) at offsets within ±1 frame of its own. `alignedCount` is the best
    /// framing's count, `framingTotal` the sum of every framing's; the offset is the mean, weighted
    /// by those counts, of each framing's vote-weighted centre over ±1 frame (in framing 0's frames).
    /// `framingRuns[f]` are the candidate reference's votes from framing `f` at the candidate's speed.
    private func recount(_ candidate: MatchCandidate, framingRuns: [[(key: UInt64, count: Int32)]]) -> MatchCandidate {
        var best = candidate
        best.alignedCount = 0
        best.framingTotal = 0
        var weightedOffset = 0.0
        let n = Double(framingRuns.count)
        for (f, runs) in framingRuns.enumerated() {
            let shift = Double(f) / n * candidate.speed.timeScale
            let expected = Int((candidate.offsetFrames + shift).rounded())
            var framingBest = 0, centre = 0.0
            for i in runs.indices {
                let off = decode(runs[i].key).offset
                guard abs(off - expected) <= 1 else { continue }
                let total = alignedTotal(runs, i)
                if total > framingBest { framingBest = total; centre = alignedCentre(runs, i) - shift }
            }
            best.alignedCount = max(best.alignedCount, framingBest)
            best.framingTotal += framingBest
            weightedOffset += Double(framingBest) * centre
        }
        if best.framingTotal > 0 { best.offsetFrames = weightedOffset / Double(best.framingTotal) }
        if best.alignedCount == 0 { best.alignedCount = candidate.alignedCount }
        return best
    }

    /// Frame grids a query is analysed on by `identify` and ``Session`` (the plain one and
    /// `framings − 1` reframings, `hopLength / framings` samples apart; see ``match(_:reframed:)``): 4.
    public static let framings = 4

    /// Most offsets returned for one reference: the passage and up to 7 repeats of it.
    public static let maxRepeats = 8

    /// The best offset in one reference's vote `runs` more than one second away from every
    /// offset in `besides` with at least `atLeast` aligned landmarks (±1 frame); `nil` when
    /// there is none.
    private func repeatOffset(_ runs: [(key: UInt64, count: Int32)], besides taken: [Int], atLeast: Int) -> (offset: Int, count: Int)? {
        let apart = Int((1 / index.configuration.hopDuration).rounded())
        var best: (offset: Int, count: Int)?
        for i in runs.indices where runs[i].count >= 2 {
            let total = alignedTotal(runs, i)
            let off = decode(runs[i].key).offset
            guard total >= atLeast, taken.allSatisfy({ abs(off - $0) > apart }) else { continue }
            if let b = best, b.count >= total { continue }
            best = (off, total)
        }
        return best
    }

    /// Where a match lies in the query and in its reference, from the landmarks that agree
    /// with it: query landmarks (of `query`, frames from the query's start) whose hash has a
    /// posting of the candidate's reference within 1.5 frames of `offsetFrames + timeScale ·
    /// anchorFrame`. The stretch runs from the first matched anchor to the last matched
    /// landmark's target (anchor + its time span), in frames; the reference stretch is the same
    /// stretch mapped through the alignment. `nil` when no landmark agrees.
    public func matchedStretch(of candidate: MatchCandidate, in query: [Landmark])
        -> (queryStart: Double, queryEnd: Double, referenceStart: Double, referenceEnd: Double)? {
        let c = candidate.speed
        let shift = hasher.logShift(frequencyScale: c.frequencyScale)
        var first = Int32.max, last = Int32.min
        index.postings.start.withUnsafeBufferPointer { start in
            index.postings.entries.withUnsafeBufferPointer { entries in
                for landmark in query {
                    guard let l = hasher.prepare(landmark), let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                    let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                    let expected = candidate.offsetFrames + c.timeScale * Double(l.anchorFrame)
                    for e in PostingIndex.run(of: candidate.referenceIndex, in: entries, lo, hi)
                    where abs(Double(entries[e] & 0xFFFF_FFFF) - expected) <= 1.5 {
                        first = min(first, l.anchorFrame)
                        last = max(last, l.anchorFrame + Int32(l.deltaFrames))
                        break
                    }
                }
            }
        }
        guard first <= last else { return nil }
        return (Double(first), Double(last), candidate.offsetFrames + c.timeScale * Double(first),
                candidate.offsetFrames + c.timeScale * Double(last))
    }

    /// Re-votes for one reference on a fine grid (0.1 % steps, ±1 %) around the coarse candidate.
    private func refine(_ landmarks: [LandmarkHasher.Prepared], reference: Int, around c: SpeedCandidate, count: Int, offset: Int)
        -> (speed: SpeedCandidate, offset: Int, count: Int) {
        var best = (speed: c, offset: offset, count: count)
        let tempoOnly = c.frequencyScale == 1 && c.timeScale != 1
        for i in -10...10 where i != 0 {
            let d = Double(i) * 0.001
            let s = SpeedCandidate(timeScale: c.timeScale + d, frequencyScale: tempoOnly ? 1 : c.frequencyScale + d)
            if let b = bestPerReference(votes(landmarks, s, only: reference))[reference], b.count > best.count {
                best = (s, b.offset, b.count)
            }
        }
        return best
    }
}
