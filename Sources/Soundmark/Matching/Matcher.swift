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
    /// plus, when `tempoOnly` is set, tempo-only changes (a DJ's key lock, `sox tempo`) and, when
    /// `pitchOnly` is set, pitch-only changes (`sox pitch`, a transposition by up to about a
    /// semitone and a half) over the same range.
    public static func grid(limit: Double = 0.09, step: Double = 0.01, tempoOnly: Bool = false, pitchOnly: Bool = false) -> [SpeedCandidate] {
        let n = Int((limit / step).rounded())
        var result = (-n...n).map { i -> SpeedCandidate in
            let s = 1 + Double(i) * step
            return SpeedCandidate(timeScale: s, frequencyScale: s)
        }
        if tempoOnly {
            result += (-n...n).filter { $0 != 0 }.map { SpeedCandidate(timeScale: 1 + Double($0) * step, frequencyScale: 1) }
        }
        if pitchOnly {
            result += (-n...n).filter { $0 != 0 }.map { SpeedCandidate(timeScale: 1, frequencyScale: 1 + Double($0) * step) }
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
    /// Calibrated score in 0…1: the smaller of ``Matcher/confidence(aligned:background:)`` (against
    /// ``Matcher/chanceFloor(seconds:)``) and ``Matcher/confidence(significance:)`` (the line check);
    /// ``Matcher/match(_:reframed:spectrum:)`` raises it where the query's spectrum holds the
    /// reference's peaks (see ``SpectralCheck``).
    public var confidence: Double
    /// How unlikely the alignment is by chance, in decades (see
    /// ``Matcher/significance(occupied:slots:chancePerSlot:trials:)``); 0 until scored.
    public var significance: Double = 0
    /// Aligned landmarks summed over every framing the query was analysed with (equal to
    /// `alignedCount` with one framing); matches are ranked by it (see ``Matcher/match(_:reframed:)``).
    public var framingTotal: Int = 0
    /// Number (0, 1, …, in rank order of their best member) of the group of matches this one cannot
    /// be told apart from, or `nil` when it stands alone (see ``Matcher/indistinguishable(_:_:framings:)``).
    public var ambiguityGroup: Int?
}

/// Options of the matcher.
public struct MatchOptions: Sendable {
    /// Speed candidates searched. Default: ±9 % in 1 % steps, pitch and tempo together, plus
    /// tempo-only changes over the same range. Pitch-only changes (`grid(tempoOnly: true,
    /// pitchOnly: true)`) are not searched by default: at time scale 1 a transposed candidate
    /// lines up sustained tones of other, stationary music along the whole clip, and the line check
    /// does not reject that yet (`scripts/fp-sweep.sh`: 30 s Hedgewars clips reached 1.0 against
    /// Warzone 2100 tracks at "pitch only").
    public var candidates: [SpeedCandidate] = SpeedCandidate.grid(tempoOnly: true)
    /// Matches whose confidence is below this are not returned. Default 0.5.
    public var threshold: Double = 0.5
    /// Skip hash buckets holding more postings than this (uninformative hashes). Default 2000.
    public var maxBucket: Int = 2000
    /// In the first pass over the catalog, the unchanged speed votes with every landmark and
    /// every other candidate with every `sparseStride`-th landmark only; the references those
    /// sparse votes rank highest are then voted for in full (see ``speedShortlist``). 1 (or a
    /// candidate list without the unchanged speed) lets every candidate vote in full. Default 8.
    public var sparseStride: Int = 8
    /// Number of references whose best speed candidates in the sparse first pass (the two best of
    /// each) are voted for in full, with every landmark, over that reference alone. Default 12.
    public var speedShortlist: Int = 12
    /// Most vote keys (8 bytes each, and as many again while they are sorted) one speed
    /// candidate's votes over the whole catalog hold at once: votes over more postings are counted
    /// a range of references at a time, with the same result, so a large catalog's memory stays
    /// bounded. Default 2^18 (4 MB of keys and their sort's scratch per thread): on a 211-hour
    /// catalog (2,817 references) the unchanged speed's votes of a 10 s clip are 2.1 million
    /// keys, and over 16 clips (interleaved) identify's peak RSS was at most 84.0 MB with 2^18,
    /// 94.6 MB with 2^19 and 95.0 MB with 2^20 (median 81.1, 85.6, 90.9 MB); mean CPU time 978,
    /// 882 and 851 ms when each part read the candidate's whole buckets again (now the first part
    /// notes where each part's references lie in each bucket and the others read only that).
    public var voteKeysPerPart: Int = 1 << 18

    /// The defaults.
    public init() {}
}

/// Finds references in a query by voting on time offsets (Wang 2003), over a grid of
/// candidate speed changes.
///
/// For each candidate the query's landmarks are rescaled and hashed (``LandmarkHasher``); every
/// posting of a hash votes for (reference, reference frame − timeScale · query frame). A true
/// match piles its votes into one offset (±1 frame); chance collisions spread out. Over the whole
/// catalog only the unchanged speed votes with every landmark; the other candidates vote with
/// every ``MatchOptions/sparseStride``-th landmark, and the ``MatchOptions/speedShortlist``
/// references those sparse votes rank highest are voted for in full at their two best candidates,
/// over their own postings only (so the work over whole buckets, which grows with the catalog, is
/// that of about `1 + 36 / sparseStride` candidates instead of 37). The best candidate of each
/// shortlisted reference is refined on a 0.1 % grid around it. Each match is scored from the query and its
/// reference alone (``confidence(aligned:background:)`` against ``chanceFloor(seconds:)``, and the
/// line check ``significance(occupied:slots:chancePerSlot:trials:)``), so its confidence does not
/// depend on the catalog's size.
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
    /// `background` is what a reference that is *not* in the query reaches by chance
    /// (``match(_:reframed:)`` uses ``chanceFloor(seconds:)``). Measured on the benchmark's 60
    /// non-catalog clips (music, speech, pink noise, silence, a tone) against its 128-reference
    /// catalog, the best reference exceeded the 6th-best by at most 9; true matches exceed it by
    /// 10 to over 1000. The logistic curve puts 0.5 at an excess of 11 (a non-catalog clip at 9
    /// scores 0.21) and 0.95 at 15.5.
    public static func confidence(aligned: Int, background: Int) -> Double {
        1 / (1 + exp(-(Double(aligned - background) - 11) / 1.5))
    }

    /// Length of one slot of the line check, in frames: 16 (256 ms). See ``significance(occupied:slots:chancePerSlot:trials:)``.
    public static let slotFrames = 16

    /// How unlikely an alignment is by chance, as `−log10` of the expected number of chance
    /// alignments at least as good among `trials` tried.
    ///
    /// The aligned landmarks of a true match lie on a line through the whole clip; chance
    /// collisions, and passages of *other* music that share a chord or a rhythm for a moment,
    /// pile up in a few places. So the statistic is the number of `slots` (stretches of
    /// ``slotFrames`` query frames that overlap the reference at the alignment) holding at least one
    /// aligned landmark, `occupied`. By chance a slot is occupied with probability
    /// `p = 1 − exp(−chancePerSlot)`, where `chancePerSlot` is the expected number of chance
    /// votes one slot puts into one offset window (±1 frame): the reference's votes at that speed
    /// × 3 / the span of possible offsets / the query's slots. The tail `P(Binomial(slots, p) ≥
    /// occupied)` times `trials` (offset windows × speed candidates tried for that reference) is the
    /// expected number of chance lines this good. Nothing here depends on the other references,
    /// so a match scores the same in a catalog of one reference or of ten thousand.
    /// - Returns: `−log10(trials · tail)`; large is significant, 0 is what chance reaches once.
    public static func significance(occupied: Int, slots: Int, chancePerSlot: Double, trials: Double) -> Double {
        guard occupied > 0, slots > 0 else { return -log10(max(trials, 1)) }
        let k = min(occupied, slots)
        let p = min(max(1 - exp(-chancePerSlot), 1e-9), 1 - 1e-9)
        // log10 of the binomial tail, summed in log space.
        func term(_ i: Int) -> Double {
            (lgamma(Double(slots + 1)) - lgamma(Double(i + 1)) - lgamma(Double(slots - i + 1))
                + Double(i) * log(p) + Double(slots - i) * log(1 - p)) / log(10)
        }
        let terms = (k...slots).map(term)
        let top = terms.max()!
        let tail = top + log10(terms.reduce(0) { $0 + pow(10, $1 - top) })
        return -(min(tail, 0) + log10(max(trials, 1)))
    }

    /// Maps a ``significance(occupied:slots:chancePerSlot:trials:)`` to a confidence in 0…1: a
    /// logistic curve with 0.5 at 1.5 decades and 0.95 at 3. The line check: a match's confidence
    /// is the smaller of this and ``confidence(aligned:background:)``. Passages of other music
    /// that share a few chords with a reference (a cluster of aligned landmarks in part of the
    /// clip) score below 1 (an 8 s clip of Wesnoth's *wanderer* against an excerpt of *knolls*:
    /// 0.6–0.8); the benchmark's true matches at −5 dB SNR score 4 to 44, one at 0.7.
    public static func confidence(significance: Double) -> Double {
        1 / (1 + exp(-(significance - 1.5) / (1.5 / log(19))))
    }

    /// The chance level ``match(_:reframed:)`` assumes for a query of `seconds`, whatever the
    /// catalog holds, in aligned landmarks: `7 + 0.27 · seconds` up to 10 s (8 for 5 s, 10 for
    /// 10 s), then one per second (20 for 20 s, 30 for 30 s, 60 for 60 s), rounded.
    /// Up to 10 s this is about what the best of the references a clip of other music is *not*
    /// in reaches by chance (measured as the 6th-best reference of the benchmark's
    /// 128-reference catalog, which a catalog of one or ten references does not have), so a
    /// match scores the same in a catalog of any size. Beyond 10 s chance grows with the clip
    /// (the expected chance votes at one offset grow with its landmarks): in
    /// `scripts/fp-sweep.sh` the best chance alignment of 10 s clips of other music reached 19
    /// aligned landmarks and of 30 s clips 40 (Hedgewars' *Desert* against Warzone 2100's
    /// *track8*, no waveform correlation; with the former floor of 15 it scored 0.97), about 9–10
    /// over this floor at both lengths, a confidence of 0.2–0.34.
    public static func chanceFloor(seconds: Double) -> Int {
        seconds <= 10 ? 7 + Int((0.27 * seconds).rounded()) : Int(seconds.rounded())
    }

    /// Aligned landmarks added to the chance level of a match whose speed is more than
    /// ``unchangedSpeedRange`` from the unchanged speed (see ``MatchOptions/candidates``): 4. The
    /// best chance count rises with the number of alignments tried, and the speed search tries
    /// 28 candidates beyond the nine within ±2 %.
    /// `scripts/fp-sweep.sh` (10 s clips of Hedgewars music against the 128-reference benchmark
    /// catalog) found the three chance alignments that reached 0.5 at skew −9 %, tempo 0.92 and
    /// skew +6 %, 21–23 aligned landmarks; on the benchmark every speed and tempo clip is
    /// found at 0.95 or more (an excess of 15.5 or more), so 4 more costs none of them.
    public static let speedSearchPenalty = 4
    /// How far (as a factor − 1) a match's speed may be from 1 and still count as unchanged for
    /// ``speedSearchPenalty``: 0.02 (noise moves the best votes of an unchanged clip: a
    /// benchmark clip under pink noise at −5 dB SNR was found at tempo 0.987).
    public static let unchangedSpeedRange = 0.02

    /// Whether `speed` lies beyond ``unchangedSpeedRange`` of the unchanged speed in time scale
    /// or frequency scale: a speed the search reached, not one noise moved an unchanged clip to.
    public static func isSearched(_ speed: SpeedCandidate) -> Bool {
        max(abs(speed.timeScale - 1), abs(speed.frequencyScale - 1)) > unchangedSpeedRange
    }

    /// Bits of a vote key: reference index (18), offset + 2^24 (25), hash (21).
    static let hashBits: UInt64 = 21, offsetBits: UInt64 = 25, offsetBias = 1 << 24

    /// Votes of one candidate as sorted runs `(key, count)` with
    /// `key = referenceIndex << 25 | (offset + 2^24)` and `count` the number of *distinct hashes*
    /// voting for it: a repeated note or beat that lines up with a repeated pattern in the
    /// reference counts once, so rhythm alone does not make a match.
    private func bestVotes(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate, only reference: Int? = nil) -> [Int: (offset: Int, count: Int)] {
        let shift = hasher.logShift(frequencyScale: c.frequencyScale)
        let hashBits = Matcher.hashBits, offsetLimit = 1 << Matcher.offsetBits
        let referenceCount = UInt64(index.references.count)
        // The buckets to read first (hash, scaled query frame, postings), then every posting's
        // key written once into an array of their total size (no growing and copying).
        var buckets: [(hash: UInt64, q: Int, lo: Int, hi: Int)] = []
        buckets.reserveCapacity(landmarks.count)
        var total = 0
        index.postings.start.withUnsafeBufferPointer { start in
            for l in landmarks {
                guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                if hi - lo > options.maxBucket || hi == lo { continue }
                buckets.append((UInt64(h), Int((Double(l.anchorFrame) * c.timeScale).rounded()), lo, hi))
                total += hi - lo
            }
        }
        // In bucket order: a mapped index's buckets are read with few system calls and none of
        // their pages stays resident (PostingIndex.forEachRange).
        buckets.sort { $0.lo < $1.lo }
        let ranges = buckets.map { $0.lo..<$0.hi }
        // Keys of the postings `sweep[k]` of bucket `bucket[k]` (of the references `part` when
        // given, all when nil), `capacity` of them expected; `split` is called with each
        // bucket's postings as read.
        func collect(_ sweep: [Range<Int>], bucket: (Int) -> Int, part: Range<Int>?, capacity: Int,
                     split: (Int, UnsafeBufferPointer<UInt64>) -> Void = { _, _ in }) -> [UInt64] {
            var keys: [UInt64] = []
            keys.reserveCapacity(capacity)
            index.postings.forEachRange(sweep) { k, entries in
                split(k, entries)
                let b = buckets[bucket(k)]
                var range = 0..<entries.count
                if let reference { range = PostingIndex.run(of: reference, in: entries, 0, entries.count) }
                if let part {
                    let lo = PostingIndex.run(of: part.lowerBound, in: entries, 0, entries.count).lowerBound
                    range = lo..<PostingIndex.run(of: part.upperBound - 1, in: entries, lo, entries.count).upperBound
                }
                for e in range {
                    let entry = entries[e]
                    let ref = PostingIndex.reference(of: entry)
                    let off = PostingIndex.frame(of: entry) - b.q + Matcher.offsetBias
                    // (A posting of no reference can only come from a damaged index file.)
                    guard off >= 0 && off < offsetLimit && ref < referenceCount else { continue }
                    keys.append((ref << Matcher.offsetBits | UInt64(off)) << hashBits | b.hash)
                }
            }
            return keys
        }
        // Votes of more than voteKeysPerPart postings (a large catalog's) are counted a range of
        // references at a time, so the keys held at once stay bounded; the best of each
        // reference is the same.
        let perPart = max(1, options.voteKeysPerPart)
        let parts = reference == nil ? min(index.references.count, (total + perPart - 1) / perPart) : 1
        guard parts > 1 else {
            var keys = collect(ranges, bucket: { $0 }, part: nil, capacity: total)
            return Matcher.bestPerReference(sorting: &keys)
        }
        var best: [Int: (offset: Int, count: Int)] = [:]
        let references = index.references.count
        let bounds = (0...parts).map { $0 * references / parts }
        // The first part's sweep reads whole buckets and notes where each part's references
        // start in each (buckets are ordered by reference); the later parts read only their
        // stretch of each bucket (re-reading and widening whole buckets per part was about 130 ms
        // of a 10 s clip's CPU on a 211-hour catalog).
        var splits = [Int](repeating: 0, count: ranges.count * (parts + 1))
        for part in 0..<parts {
            let first = bounds[part], last = bounds[part + 1]
            let capacity = total / parts + total / (4 * parts)
            var keys: [UInt64]
            if part == 0 {
                keys = collect(ranges, bucket: { $0 }, part: first..<last, capacity: capacity) { k, entries in
                    var at = 0
                    for p in 1..<parts {
                        at = PostingIndex.run(of: bounds[p], in: entries, at, entries.count).lowerBound
                        splits[k * (parts + 1) + p] = at
                    }
                    splits[k * (parts + 1) + parts] = entries.count
                }
            } else {
                var sweep: [Range<Int>] = [], bucketOf: [Int] = []
                sweep.reserveCapacity(ranges.count)
                bucketOf.reserveCapacity(ranges.count)
                for k in ranges.indices {
                    let lo = ranges[k].lowerBound + splits[k * (parts + 1) + part]
                    let hi = ranges[k].lowerBound + splits[k * (parts + 1) + part + 1]
                    guard hi > lo else { continue }
                    sweep.append(lo..<hi)
                    bucketOf.append(k)
                }
                keys = collect(sweep, bucket: { bucketOf[$0] }, part: nil, capacity: capacity)
            }
            best.merge(Matcher.bestPerReference(sorting: &keys)) { a, _ in a }
        }
        return best
    }

    /// The best alignment per reference (``BestAlignments``) of ``runs(sorting:)`` of `keys`, without holding the runs (a
    /// large catalog's votes at one speed are millions of keys, and their runs twice their size).
    ///
    /// When the keys' offsets span few enough bits that (reference, offset) fits in fewer 11-bit
    /// digits of ``radixSort(_:ignoringBitsBelow:)`` than the 25 offset bits allow, the keys are
    /// first rewritten with the offset less the smallest one in just those bits (one sequential
    /// pass; the order and the ±1 neighbours of every key stay the same, so the result does too): a
    /// catalog of more than 256 references needs 4 digits otherwise, 3 with the span of a
    /// clip's offsets. On a 211-hour catalog (2,817 references) that is one scatter pass fewer
    /// over the 11 million vote keys of one 10 s clip.
    static func bestPerReference(sorting keys: inout [UInt64]) -> [Int: (offset: Int, count: Int)] {
        let hashBits = Matcher.hashBits, offsetBits = Matcher.offsetBits
        var best = BestAlignments(offsetBits: offsetBits, lowestOffset: 0)
        if keys.count > 64 {
            let mask: UInt64 = (1 << offsetBits) - 1
            var low = UInt64.max, high: UInt64 = 0, highestReference: UInt64 = 0
            keys.withUnsafeBufferPointer { k in
                for key in k {
                    let v = key >> hashBits, o = v & mask
                    low = min(low, o)
                    high = max(high, o)
                    highestReference = max(highestReference, v >> offsetBits)
                }
            }
            // Offsets less `low` are at most 2^bits - 2, so no key's neighbour crosses into the next reference.
            let bits = UInt64(64 - (high - low + 1).leadingZeroBitCount)
            let referenceBits = UInt64(64 - highestReference.leadingZeroBitCount)
            let digits = { (b: UInt64) in (b + 10) / 11 }
            if digits(referenceBits + bits) < digits(referenceBits + offsetBits) {
                keys.withUnsafeMutableBufferPointer { k in
                    for i in k.indices {
                        let key = k[i], v = key >> hashBits
                        k[i] = ((v >> offsetBits) << bits | ((v & mask) - low)) << hashBits | (key & ((1 << hashBits) - 1))
                    }
                }
                best = BestAlignments(offsetBits: bits, lowestOffset: low)
            }
        }
        radixSort(&keys, ignoringBitsBelow: Int(hashBits))
        Matcher.forEachRun(ofSorted: &keys) { key, distinct in best.add(key, distinct) }
        return best.finish()
    }

    /// The best alignment per reference over vote runs `(key, distinct hashes)` given in key
    /// order: a run of at least 2 counts with the runs one frame either side (as
    /// ``alignedTotal(_:_:)``), and the first run of the highest total wins. Each run is judged
    /// once the next is known, so the runs need not be held.
    /// Keys are `reference << offsetBits | (offset + 2^24 - lowestOffset)` (``decode(_:)``'s
    /// layout when `offsetBits` is 25 and `lowestOffset` 0).
    private struct BestAlignments {
        private var previous: (key: UInt64, count: Int) = (.max, 0)
        private var current: (key: UInt64, count: Int)?
        private var best: [Int: (offset: Int, count: Int)] = [:]
        private let offsetBits: UInt64, lowestOffset: Int

        init(offsetBits: UInt64, lowestOffset: UInt64) {
            self.offsetBits = offsetBits
            self.lowestOffset = Int(lowestOffset)
        }

        mutating func add(_ key: UInt64, _ count: Int) {
            judge(next: (key, count))
            if let c = current { previous = c }
            current = (key, count)
        }

        /// Best (offset, aligned count) per reference of the runs added.
        mutating func finish() -> [Int: (offset: Int, count: Int)] {
            judge(next: nil)
            current = nil
            return best
        }

        private mutating func judge(next: (key: UInt64, count: Int)?) {
            guard let c = current, c.count >= 2 else { return }
            let before = previous.key == c.key &- 1 ? previous.count : 0
            let after = next.map { $0.key == c.key &+ 1 ? $0.count : 0 } ?? 0
            let total = before + c.count + after
            let ref = Int(c.key >> offsetBits)
            let off = Int(c.key & ((1 << offsetBits) - 1)) + lowestOffset - Matcher.offsetBias
            if let b = best[ref], b.count >= total { return }
            best[ref] = (off, total)
        }
    }

    /// Calls `body` with each run of `keys` (sorted by their bits above the hash): the key
    /// without the hash and the number of distinct hashes in it, in order. The hashes of a run
    /// of more than two keys are ordered in place to count them (most runs hold one or two).
    private static func forEachRun(ofSorted keys: inout [UInt64], _ body: (UInt64, Int) -> Void) {
        let hashBits = Matcher.hashBits
        keys.withUnsafeMutableBufferPointer { k in
            var i = 0
            while i < k.count {
                let key = k[i] >> hashBits
                var j = i + 1
                while j < k.count && k[j] >> hashBits == key { j += 1 }
                var distinct = 1
                if j - i == 2 {
                    if k[i] != k[i + 1] { distinct = 2 }
                } else if j - i > 2 {
                    var group = UnsafeMutableBufferPointer(rebasing: k[i..<j])
                    group.sort()
                    for t in (i + 1)..<j where k[t] != k[t - 1] { distinct += 1 }
                }
                body(key, distinct)
                i = j
            }
        }
    }

    /// Sorts vote keys (`(referenceIndex << 25 | offset + 2^24) << 21 | hash`) and turns them into
    /// runs `(key without the hash, number of distinct hashes)`.
    private static func runs(sorting keys: inout [UInt64]) -> [(key: UInt64, count: Int32)] {
        // Grouped by (reference, offset) only (see forEachRun(ofSorted:_:)).
        radixSort(&keys, ignoringBitsBelow: Int(Matcher.hashBits))
        var runs: [(key: UInt64, count: Int32)] = []
        forEachRun(ofSorted: &keys) { key, distinct in runs.append((key, Int32(distinct))) }
        return runs
    }

    /// One reference's postings for a query's landmarks at one speed: each landmark whose hash
    /// has a bucket of at most ``MatchOptions/maxBucket`` postings holding some of the
    /// reference's, with its hash and the range of those postings in the index's entries.
    /// Voting for one reference, the repeat search and the line check read the same postings
    /// from it instead of looking every landmark up again (one lookup per landmark, not one per
    /// landmark and use).
    private struct ReferenceRuns {
        var source: ReferencePostings
        var landmarks: [LandmarkHasher.Prepared] = []
        var hashes: [UInt32] = []
        var ranges: [Range<Int>] = []
    }

    /// Where one reference's postings are looked up by hash: from a mapped index, a table of the
    /// reference's own postings read from its per-reference section, ordered by hash, with a
    /// directory of cells over it (``PostingIndex/hashDirectory(of:)``: the pages a query holds
    /// do not grow with the catalog); from an index built in memory, the reference's run in each
    /// bucket. Either way a lookup yields the same frames (as the low 32 bits of each value).
    private struct ReferencePostings: @unchecked Sendable {
        let reference: Int
        /// `hash << 32 | frame`, ordered by hash, then frame; `nil`: read the buckets.
        let byHash: [UInt64]?
        /// Cell `c` of hashes (`hash >> shift == c`) is `byHash[cellStart[c] ..< cellStart[c + 1]]`.
        private let cellStart: [UInt32]
        private let shift: Int

        init(reference: Int, directory: (keys: [UInt64], cellStart: [UInt32], shift: Int)?) {
            self.reference = reference
            byHash = directory?.keys
            cellStart = directory?.cellStart ?? []
            shift = directory?.shift ?? 0
        }

        /// Positions in `byHash` of hash `h` (empty when the reference has none).
        @inline(__always)
        func positions(of h: UInt32) -> Range<Int> {
            guard let keys = byHash else { return 0..<0 }
            let cell = Int(h) >> shift
            guard cell + 1 < cellStart.count else { return 0..<0 }
            return cellStart.withUnsafeBufferPointer { c in
                keys.withUnsafeBufferPointer { k in
                    var first = Int(c[cell])
                    let end = Int(c[cell + 1])
                    while first < end && PostingIndex.hash(ofDirectoryKey: k[first]) < h { first += 1 }
                    var last = first
                    while last < end && PostingIndex.hash(ofDirectoryKey: k[last]) == h { last += 1 }
                    return first..<last
                }
            }
        }
    }

    /// The lookup source of `reference` (see ``ReferencePostings``).
    private func referencePostings(_ reference: Int) -> ReferencePostings {
        ReferencePostings(reference: reference, directory: index.postings.hashDirectory(of: reference))
    }

    /// The lookup source of `reference` for the hashes of `landmarks` at `speeds` only
    /// (``PostingIndex/hashDirectory(of:onlyHashes:)``): a lookup of any other hash finds nothing,
    /// so it serves only lookups of those landmarks at those speeds.
    private func referencePostings(_ reference: Int, onlyHashesOf landmarks: [LandmarkHasher.Prepared],
                                   at speeds: [SpeedCandidate]) -> ReferencePostings {
        var wanted: [UInt32] = []
        wanted.reserveCapacity(landmarks.count * speeds.count)
        for c in speeds {
            let shift = hasher.logShift(frequencyScale: c.frequencyScale)
            for l in landmarks { if let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) { wanted.append(h) } }
        }
        return ReferencePostings(reference: reference, directory: index.postings.hashDirectory(of: reference, onlyHashes: wanted))
    }

    /// `source`'s postings of hash `h` (positions for ``withFrames(_:in:_:)``); empty when it has
    /// none or, with `skippingCommonHashes`, when the hash's bucket holds more than
    /// ``MatchOptions/maxBucket`` postings (as voting skips it).
    @inline(__always)
    private func lookup(_ h: UInt32, in source: ReferencePostings, start: UnsafeBufferPointer<UInt32>, skippingCommonHashes: Bool) -> Range<Int> {
        if source.byHash != nil {
            let found = source.positions(of: h)
            if found.isEmpty || !skippingCommonHashes { return found }
            return Int(start[Int(h) + 1]) - Int(start[Int(h)]) > options.maxBucket ? 0..<0 : found
        }
        let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
        if hi == lo || (skippingCommonHashes && hi - lo > options.maxBucket) { return lo..<lo }
        return index.postings.run(of: source.reference, in: lo..<hi)
    }

    /// Calls `body` with `source`'s postings `range` (see ``lookup(_:in:start:skippingCommonHashes:)``),
    /// each holding its frame in the low 32 bits.
    @inline(__always)
    private func withFrames<R>(_ range: Range<Int>, in source: ReferencePostings, _ body: (UnsafeBufferPointer<UInt64>) -> R) -> R {
        guard let table = source.byHash else { return index.postings.withPostings(range, body) }
        return table.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// The last lookup of each landmark (its hash and the reference's postings in that bucket):
    /// the fine speed steps of ``refine(_:reference:around:count:offset:)`` mostly give a
    /// landmark the hash of the step before, whose bucket is then not searched again.
    private struct LookupMemo {
        var hashes: [UInt32]
        var ranges: [Range<Int>]
        init(count: Int) {
            hashes = [UInt32](repeating: .max, count: count)
            ranges = [Range<Int>](repeating: 0..<0, count: count)
        }
    }

    /// Looks `landmarks` up at speed `c` for `reference` only (see ``ReferenceRuns``), reusing
    /// and updating `memo`'s lookups when given.
    /// With `hashes`, the landmarks' hashes at `c` are read from it (``stepHashes(_:_:)``: `.max` for none).
    private func referenceRuns(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate, source: ReferencePostings,
                               memo: inout LookupMemo?, hashes: ArraySlice<UInt32>? = nil) -> ReferenceRuns {
        let shift = hasher.logShift(frequencyScale: c.frequencyScale)
        var result = ReferenceRuns(source: source)
        // The memo's arrays are written in place (taken out of the optional, so not shared).
        var m = memo ?? LookupMemo(count: 0)
        memo = nil
        let useMemo = m.hashes.count == landmarks.count
        index.postings.start.withUnsafeBufferPointer { start in
            m.hashes.withUnsafeMutableBufferPointer { memoHashes in
                m.ranges.withUnsafeMutableBufferPointer { memoRanges in
                    for (i, l) in landmarks.enumerated() {
                        let h: UInt32
                        if let hashes {
                            h = hashes[hashes.startIndex + i]
                            if h == .max { continue }
                        } else {
                            guard let found = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                            h = found
                        }
                        let range: Range<Int>
                        if useMemo && memoHashes[i] == h {
                            range = memoRanges[i]
                        } else {
                            range = lookup(h, in: source, start: start, skippingCommonHashes: true)
                            if useMemo {
                                memoHashes[i] = h
                                memoRanges[i] = range
                            }
                        }
                        guard !range.isEmpty else { continue }
                        result.landmarks.append(l)
                        result.hashes.append(h)
                        result.ranges.append(range)
                    }
                }
            }
        }
        if useMemo { memo = m }
        return result
    }

    /// The fine speed steps ``refine(_:source:around:count:offset:hashes:)`` tries around `c`, in order.
    private static func refineSteps(around c: SpeedCandidate) -> [(step: Int, speed: SpeedCandidate)] {
        let tempoOnly = c.frequencyScale == 1 && c.timeScale != 1
        let pitchOnly = c.timeScale == 1 && c.frequencyScale != 1
        return (-10...10).filter { $0 != 0 }.map { i in
            let d = Double(i) * 0.001
            return (i, SpeedCandidate(timeScale: pitchOnly ? 1 : c.timeScale + d, frequencyScale: tempoOnly ? 1 : c.frequencyScale + d))
        }
    }

    /// The hashes of `landmarks` at every fine step around `c` (``refineSteps(around:)``), step
    /// after step, `.max` where a landmark has none: shared by the references refined around one candidate.
    private func stepHashes(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate) -> [UInt32] {
        var result: [UInt32] = []
        result.reserveCapacity(20 * landmarks.count)
        for (_, s) in Matcher.refineSteps(around: c) {
            let shift = hasher.logShift(frequencyScale: s.frequencyScale)
            for l in landmarks { result.append(hasher.hash(l, timeScale: s.timeScale, logShift: shift) ?? .max) }
        }
        return result
    }

    /// ``votes(_:_:only:)`` for one reference from its looked-up postings (the same runs).
    private func votes(_ runs: ReferenceRuns, _ c: SpeedCandidate) -> [(key: UInt64, count: Int32)] {
        var keys = voteKeys(runs, c)
        return Matcher.runs(sorting: &keys)
    }

    /// The best (offset, aligned count) of one reference from its looked-up postings: the best
    /// alignment (``BestAlignments``) of ``votes(_:_:)``, without holding the runs (the fine steps
    /// of ``refine(_:source:around:count:offset:hashes:)`` and the shortlist's full votes need no more).
    private func bestVote(_ runs: ReferenceRuns, _ c: SpeedCandidate) -> (offset: Int, count: Int)? {
        var keys = voteKeys(runs, c)
        return Matcher.bestPerReference(sorting: &keys)[runs.source.reference]
    }

    /// Unsorted vote keys (as ``bestVotes(_:_:only:)`` makes them) of one reference from its looked-up postings.
    private func voteKeys(_ runs: ReferenceRuns, _ c: SpeedCandidate) -> [UInt64] {
        var keys: [UInt64] = []
        keys.reserveCapacity(runs.ranges.reduce(0) { $0 + $1.count })
        let offsetLimit = 1 << Matcher.offsetBits
        let ref = UInt64(runs.source.reference)
        for i in runs.landmarks.indices {
            let h = UInt64(runs.hashes[i])
            let q = Int((Double(runs.landmarks[i].anchorFrame) * c.timeScale).rounded())
            withFrames(runs.ranges[i], in: runs.source) { entries in
                for entry in entries {
                    let off = PostingIndex.frame(of: entry) - q + Matcher.offsetBias
                    guard off >= 0 && off < offsetLimit else { continue }
                    keys.append((ref << Matcher.offsetBits | UInt64(off)) << Matcher.hashBits | h)
                }
            }
        }
        return keys
    }

    /// ``alignedFrames(_:_:reference:offset:)`` from a reference's looked-up postings.
    private func alignedFrames(_ runs: ReferenceRuns, _ c: SpeedCandidate, offset: Int) -> [Int] {
        var frames: [Int] = []
        for i in runs.landmarks.indices {
            let l = runs.landmarks[i]
            let q = Int((Double(l.anchorFrame) * c.timeScale).rounded())
            let agreed = withFrames(runs.ranges[i], in: runs.source) { entries in
                entries.contains { abs(PostingIndex.frame(of: $0) - q - offset) <= 1 }
            }
            if agreed { frames.append(Int(l.anchorFrame)) }
        }
        return frames
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
        return Double(Matcher.decode(runs[i].key).offset) + Double(n.after - n.before) / sum
    }

    /// (reference index, offset in frames) of a vote key.
    private static func decode(_ key: UInt64) -> (reference: Int, offset: Int) {
        (Int(key >> Matcher.offsetBits), Int(key & ((1 << Matcher.offsetBits) - 1)) - Matcher.offsetBias)
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
    ///
    /// Looking each query landmark up also with the frame difference one frame shorter and
    /// longer (a tolerant lookup as in Olaf and Panako; a landmark counted once however many of its
    /// cells agree) was measured and not kept. Of the reference landmarks of the true passage in
    /// 40 clips of 10 s under pink noise at −5 dB SNR, the query held 2,046 with the same hash,
    /// 3,061 within one anchor and ratio step and 7,136 within one frame of difference as well;
    /// against other references, 14, 89 and 258. The three-cell lookup raised the found clips at
    /// the default threshold from 23 to 28 of the 40, but the best chance alignment of 10 s
    /// clips of other music against the benchmark's 128 references rose from 23 to 49 aligned
    /// landmarks (80 of 240 clips reached 0.5), and at a count above each one's chance maximum
    /// both found 23 (5 s at 0 dB: 32 and 33 of 40), for three times the votes.
    /// Denser query peaks (±5 frames × ±8 bins) and a query fan-out of 20 likewise added chance
    /// agreements faster than true ones (same-hash agreements +13 % and +7 %, chance +64 % and +36 %).
    public func match(_ query: [Landmark], reframed: [[Landmark]] = []) -> [MatchCandidate] {
        var unitVotes: [Int: (offset: Int, count: Int)] = [:]
        return match(query, reframed: reframed, threshold: options.threshold, unitVotes: &unitVotes)
    }

    /// ``match(_:reframed:)`` keeping the matches whose confidence reaches `threshold`, with
    /// `unitVotes` set to the best alignment (offset, aligned count) per reference of the
    /// unchanged speed's votes over the whole catalog (empty when that speed is not searched).
    func match(_ query: [Landmark], reframed: [[Landmark]], threshold: Double,
               unitVotes: inout [Int: (offset: Int, count: Int)]) -> [MatchCandidate] {
        guard !query.isEmpty else { return [] }
        let framings = ([query] + reframed).map { $0.compactMap { hasher.prepare($0) } }
        let landmarks = framings[0]
        let candidates = options.candidates
        var best: [Int: (candidate: Int, offset: Int, count: Int)] = [:]
        // The best count of each reference over the candidates; of equal counts the first candidate's.
        func merge(_ ci: Int, _ ref: Int, _ b: (offset: Int, count: Int)) {
            if let old = best[ref], old.count > b.count || (old.count == b.count && old.candidate < ci) { return }
            best[ref] = (ci, b.offset, b.count)
        }
        // First pass over the whole catalog: the unchanged speed with every landmark, the other
        // candidates with every sparseStride-th (their votes over whole buckets were most of
        // the work, and grow with the catalog); each candidate on its own thread.
        let unit = candidates.firstIndex { $0.timeScale == 1 && $0.frequencyScale == 1 }
        let sparseStride = unit == nil ? 1 : max(1, options.sparseStride)
        let sparse = sparseStride == 1 ? landmarks : stride(from: 0, to: landmarks.count, by: sparseStride).map { landmarks[$0] }
        let full = { (ci: Int) in sparseStride == 1 || ci == unit }
        let perCandidate = concurrentMap(candidates.count) { ci in
            bestVotes(full(ci) ? landmarks : sparse, candidates[ci])
        }
        for ci in candidates.indices where full(ci) {
            for (ref, b) in perCandidate[ci] { merge(ci, ref, b) }
        }
        if let unit { unitVotes = perCandidate[unit] }
        // The references the sparse votes rank highest, each voted for in full at its two best
        // candidates over its own postings only (a true match at a changed speed keeps about
        // 1/sparseStride of its votes there, chance alignments of other references as few).
        var sources: [Int: ReferencePostings] = [:]
        if sparseStride > 1 {
            var sparseBest: [Int: [(candidate: Int, count: Int)]] = [:]
            for ci in candidates.indices where !full(ci) {
                for (ref, b) in perCandidate[ci] { sparseBest[ref, default: []].append((ci, b.count)) }
            }
            let ranked = sparseBest.map { ref, list in
                (ref, list.sorted { ($0.count, $1.candidate) > ($1.count, $0.candidate) }.prefix(2).map(\.candidate))
            }.sorted { a, b in
                let ca = sparseBest[a.0]!.map(\.count).max()!, cb = sparseBest[b.0]!.map(\.count).max()!
                return (ca, b.0) > (cb, a.0)
            }.prefix(options.speedShortlist)
            let shortlisted = Array(ranked)
            // (Each reference's postings of the hashes these votes look up only: most of these
            // references are not refined, and those that are get their whole table then.)
            let fullVotes = concurrentMap(shortlisted.count) { i -> (Int, [(Int, (offset: Int, count: Int))]) in
                let (ref, cis) = shortlisted[i]
                let source = referencePostings(ref, onlyHashesOf: landmarks, at: cis.map { candidates[$0] })
                var found: [(Int, (offset: Int, count: Int))] = []
                for ci in cis.sorted() {
                    var noMemo: LookupMemo? = nil
                    if let b = bestVote(referenceRuns(landmarks, candidates[ci], source: source, memo: &noMemo), candidates[ci]) {
                        found.append((ci, b))
                    }
                }
                return (ref, found)
            }
            for (ref, found) in fullVotes {
                for (ci, b) in found { merge(ci, ref, b) }
            }
        }
        // The references worth refining: the strongest vote peaks (chance alone rarely puts more
        // than a few landmarks in one offset window, so 16 is plenty).
        let queryFrames = Int(landmarks.map(\.anchorFrame).max() ?? 0) + 1
        let background = Matcher.chanceFloor(seconds: Double(queryFrames) * index.configuration.hopDuration)
        let shortlist = best.filter { $0.value.count >= Matcher.minimumAligned }
            .sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }.prefix(Matcher.shortlist)
        // Each shortlisted reference is refined on its own thread; results kept in shortlist order.
        let shortlisted = Array(shortlist)
        // (Only the tables of the shortlisted references are kept: each is a reference's postings.)
        sources = sources.filter { ref, _ in shortlisted.contains { $0.key == ref } }
        // The fine steps' hashes of a candidate that several references are refined around are
        // worked out once (most of refining is hashing the landmarks at each step).
        let shared = Dictionary(grouping: shortlisted.map(\.value.candidate), by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        let sharedHashes = Dictionary(uniqueKeysWithValues: zip(shared, concurrentMap(shared.count) { stepHashes(landmarks, candidates[shared[$0]]) }))
        let scored = concurrentMap(shortlisted.count) { i -> (ReferencePostings?, [MatchCandidate]) in
            let (ref, b) = shortlisted[i]
            let source = sources[ref] ?? referencePostings(ref)
            var results: [MatchCandidate] = []
            var refined = refine(landmarks, source: source, around: options.candidates[b.candidate], count: b.count, offset: b.offset,
                                 hashes: sharedHashes[b.candidate])
            // A transposition (pitch changed, tempo not) lines up with a speed change of the same
            // pitch well enough to be found as one, but at the wrong time scale: `sox pitch 100`
            // came out as speed 1.06, its offset 0.15-0.5 s early on 10 s clips and 1.7 s on 30 s
            // ones. A speed change found is therefore also counted as the transposition of its
            // pitch, which replaces it where it aligns a quarter more landmarks (at least 5); a
            // true speed change loses most of its alignment that way.
            if refined.speed.timeScale == refined.speed.frequencyScale, abs(refined.speed.frequencyScale - 1) > 0.005,
               refined.count >= 2 * Matcher.minimumAligned {
                let transposed = SpeedCandidate(timeScale: 1, frequencyScale: refined.speed.frequencyScale)
                var noMemo: LookupMemo? = nil
                if let t = bestVote(referenceRuns(landmarks, transposed, source: source, memo: &noMemo), transposed),
                   t.count >= refined.count + max(5, refined.count / 4) {
                    refined = refine(landmarks, source: source, around: transposed, count: t.count, offset: t.offset)
                }
            }
            // This reference's postings and votes at the refined speed, once per framing: the
            // repeat search, every copy's recount and its line check read them.
            var noMemo: LookupMemo? = nil
            let lookups = framings.map { referenceRuns($0, refined.speed, source: source, memo: &noMemo) }
            let framingRuns = lookups.map { votes($0, refined.speed) }
            // A reference that repeats the passage matches it again elsewhere: each repeat is a
            // match of its own, ranked by its own count.
            var offsets = [(offset: refined.offset, count: refined.count)]
            while offsets.count < Matcher.maxRepeats,
                  let again = repeatOffset(framingRuns[0], besides: offsets.map(\.offset), atLeast: max(refined.count * 4 / 10, 1)) {
                offsets.append(again)
            }
            // A reference that the query lines up with almost anywhere (stationary music: a drone,
            // a sustained chord) has a chance level of its own: its best alignment beyond the copies.
            // A match found far out in the speed search has had many more candidates to reach its
            // count by chance than one near the unchanged speed (where noise often moves an
            // unchanged clip's best votes).
            let searched = Matcher.isSearched(refined.speed)
            let ownBackground = max(background, chanceLine(framingRuns[0], besides: offsets.map(\.offset)))
                + (searched ? Matcher.speedSearchPenalty : 0)
            let chance = chanceModel(reference: ref, speed: refined.speed, queryFrames: queryFrames, runs: framingRuns[0])
            for o in offsets {
                var m = recount(MatchCandidate(referenceIndex: ref, offsetFrames: Double(o.offset), speed: refined.speed,
                                               alignedCount: o.count, queryCount: query.count, confidence: 0),
                                framingRuns: framingRuns)
                m.significance = lineSignificance(m, lookups: lookups, queryFrames: queryFrames, chance: chance)
                m.confidence = min(Matcher.confidence(aligned: m.alignedCount, background: ownBackground),
                                   Matcher.confidence(significance: m.significance))
                if m.confidence >= threshold { results.append(m) }
            }
            return (results.isEmpty ? nil : source, results)
        }
        sources = [:]
        for case (let source?, _) in scored { sources[source.reference] = source }
        var results = scored.flatMap(\.1)
        results.sort {
            if $0.framingTotal != $1.framingTotal { return $0.framingTotal > $1.framingTotal }
            if $0.referenceIndex != $1.referenceIndex {
                return index.references[$0.referenceIndex].item.id < index.references[$1.referenceIndex].item.id
            }
            return $0.offsetFrames < $1.offsetFrames
        }
        // Where in the query each match lies (computed only for matches of equal strength).
        var stretches: [Int: ClosedRange<Int>] = [:]
        func stretch(_ i: Int) -> ClosedRange<Int> {
            if let s = stretches[i] { return s }
            let m = results[i]
            let s = Matcher.core(alignedFrames(landmarks, m.speed, source: sources[m.referenceIndex] ?? referencePostings(m.referenceIndex),
                                               offset: Int(m.offsetFrames.rounded())))
            stretches[i] = s
            return s
        }
        // Only matches that reach the options' threshold (and ``ambiguityFloor``) are grouped:
        // asked for at a lower one (by match(_:reframed:spectrum:)), the weak alignments are not compared.
        let grouped = results.indices.filter { results[$0].confidence >= max(threshold, options.threshold, Matcher.ambiguityFloor) }
        var group = 0
        for i in grouped where results[i].ambiguityGroup == nil {
            let members = grouped.filter { $0 > i && results[$0].ambiguityGroup == nil
                && Matcher.indistinguishable(results[i].framingTotal, results[$0].framingTotal, framings: framings.count)
                && Matcher.sameStretch(stretch(i), stretch($0)) }
            guard !members.isEmpty else { continue }
            for j in [i] + members { results[j].ambiguityGroup = group }
            group += 1
        }
        return results
    }

    /// Whether two matches of one query are equally strong: their aligned counts summed over
    /// `framings` framings (``MatchCandidate/framingTotal``) differ by at most twice the standard
    /// deviation of a difference of two chance counts, `2·√(framings·(a + b))` (the framings
    /// count nearly the same landmarks, so their sum varies `framings` times as much as one
    /// count). Two references that share the clip's passage (versions of a song with the same
    /// opening) and the bit-identical copies of a passage a reference repeats land here (copies
    /// that fall differently on the reference's frame grid differ by up to 7 %): the clip cannot
    /// tell which one it came from, and ``match(_:reframed:)`` marks them as one ambiguity group
    /// when they also lie over the same stretch of the query (``sameStretch(_:_:)``).
    public static func indistinguishable(_ a: Int, _ b: Int, framings: Int = 1) -> Bool {
        Double(abs(a - b)) <= 2 * (Double(max(framings, 1)) * Double(a + b)).squareRoot()
    }

    /// The stretch of query frames holding the middle 80 % of `frames` (a match's aligned
    /// landmarks; chance agreements far from the match fall outside it); `0...0` when empty.
    static func core(_ frames: [Int]) -> ClosedRange<Int> {
        guard !frames.isEmpty else { return 0...0 }
        let sorted = frames.sorted()
        return sorted[sorted.count / 10]...sorted[(sorted.count - 1) * 9 / 10]
    }

    /// Whether two matches lie over the same stretch of the query (``core(_:)`` of each): they
    /// overlap by at least half of the shorter one. Two songs heard one after the other in a
    /// long query are told apart by where they lie, whatever their strength.
    static func sameStretch(_ a: ClosedRange<Int>, _ b: ClosedRange<Int>) -> Bool {
        let overlap = min(a.upperBound, b.upperBound) - max(a.lowerBound, b.lowerBound)
        let shorter = min(a.upperBound - a.lowerBound, b.upperBound - b.lowerBound)
        return overlap >= 0 && 2 * overlap >= shorter
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
                let off = Matcher.decode(runs[i].key).offset
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

    /// The chance level of one reference for this query: the best aligned count (±1 frame) among
    /// its vote peaks at least one second apart and one second away from every offset in `taken`
    /// (the match and its repeats). Where the query has one true alignment this is what chance
    /// reaches; where it lines up with the reference almost anywhere (a drone, a sustained chord
    /// of other music) it is nearly the match's own count, so the match is not believed.
    private func chanceLine(_ runs: [(key: UInt64, count: Int32)], besides taken: [Int]) -> Int {
        let apart = Int((1 / index.configuration.hopDuration).rounded())
        var best = 0
        for i in runs.indices {
            let off = Matcher.decode(runs[i].key).offset
            guard taken.allSatisfy({ abs(off - $0) > apart }) else { continue }
            best = max(best, alignedTotal(runs, i))
        }
        return best
    }

    /// Lowest confidence of a match compared with the others for an ambiguity group
    /// (``MatchCandidate/ambiguityGroup``): 0.1. Below it an alignment is chance, whatever
    /// threshold was asked for: with `identify --threshold 0` the chance alignments of other
    /// audio whose few landmarks lay in the same place were listed as indistinguishable copies.
    public static let ambiguityFloor = 0.1

    /// Fewest aligned landmarks (±1 frame, one framing) a reference needs to be considered: 6.
    static let minimumAligned = 6
    /// Most references refined and scored per query (the strongest vote peaks): 16.
    static let shortlist = 16

    /// The chance model of one reference at one speed (see ``significance(occupied:slots:chancePerSlot:trials:)``):
    /// expected chance votes per slot and offset window, and the number of offset windows × speed
    /// candidates (and framings) searched for this reference.
    private func chanceModel(reference: Int, speed: SpeedCandidate, queryFrames: Int, runs: [(key: UInt64, count: Int32)])
        -> (perSlot: Double, trials: Double) {
        let votes = Double(runs.reduce(0) { $0 + Int($1.count) })
        let referenceFrames = index.references[reference].duration / index.configuration.hopDuration
        let span = referenceFrames + Double(queryFrames) * speed.timeScale
        let slots = Double((queryFrames + Matcher.slotFrames - 1) / Matcher.slotFrames)
        let perSlot = votes * 3 / max(span, 1) / max(slots, 1)
        // Coarse candidates, the 20 fine steps of the refinement, and the framings.
        let trials = max(span, 1) / 3 * Double(options.candidates.count + 20) * Double(Matcher.framings)
        return (perSlot, trials)
    }

    /// Query frames (of framing `f`'s landmarks) of the landmarks that vote within ±1 frame of `offset`
    /// for `reference` at speed `c`.
    private func alignedFrames(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate, source: ReferencePostings, offset: Int) -> [Int] {
        agreeing(landmarks, c, source: source, skippingCommonHashes: true) { frame, l in
            abs(frame - Int((Double(l.anchorFrame) * c.timeScale).rounded()) - offset) <= 1
        }.map { Int($0.anchorFrame) }
    }

    /// The landmarks of `landmarks` whose hash at speed `c` has a posting of `reference` at a
    /// reference frame for which `agrees(frame, landmark)` holds (each landmark once, in order).
    /// With `skippingCommonHashes`, buckets longer than ``MatchOptions/maxBucket`` are skipped,
    /// as voting skips them.
    private func agreeing(_ landmarks: [LandmarkHasher.Prepared], _ c: SpeedCandidate, source: ReferencePostings, skippingCommonHashes: Bool,
                          _ agrees: (Int, LandmarkHasher.Prepared) -> Bool) -> [LandmarkHasher.Prepared] {
        let shift = hasher.logShift(frequencyScale: c.frequencyScale)
        var found: [LandmarkHasher.Prepared] = []
        index.postings.start.withUnsafeBufferPointer { start in
            for l in landmarks {
                guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                let range = lookup(h, in: source, start: start, skippingCommonHashes: skippingCommonHashes)
                if range.isEmpty { continue }
                let agreed = withFrames(range, in: source) { entries in
                    entries.contains { agrees(PostingIndex.frame(of: $0), l) }
                }
                if agreed { found.append(l) }
            }
        }
        return found
    }

    /// The line check of a match: on every framing, the slots of the query (``slotFrames`` long,
    /// counted where the alignment overlaps the reference) holding an aligned landmark, scored
    /// with ``significance(occupied:slots:chancePerSlot:trials:)``; the best framing's score.
    /// `lookups[f]` are the reference's postings for framing `f`'s landmarks at the match's speed.
    private func lineSignificance(_ m: MatchCandidate, lookups: [ReferenceRuns], queryFrames: Int,
                                  chance: (perSlot: Double, trials: Double)) -> Double {
        let referenceFrames = index.references[m.referenceIndex].duration / index.configuration.hopDuration
        let slotCount = (queryFrames + Matcher.slotFrames - 1) / Matcher.slotFrames
        // Slots whose middle falls inside the reference at this alignment.
        let inside = (0..<slotCount).filter { slot in
            let r = m.offsetFrames + m.speed.timeScale * (Double(slot) + 0.5) * Double(Matcher.slotFrames)
            return r >= 0 && r <= referenceFrames
        }.count
        let n = Double(lookups.count)
        var best = -Double.infinity
        for (f, runs) in lookups.enumerated() {
            let expected = Int((m.offsetFrames + Double(f) / n * m.speed.timeScale).rounded())
            let occupied = Set(alignedFrames(runs, m.speed, offset: expected)
                .map { $0 / Matcher.slotFrames }).count
            best = max(best, Matcher.significance(occupied: occupied, slots: max(inside, occupied), chancePerSlot: chance.perSlot,
                                                  trials: chance.trials))
        }
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
            let off = Matcher.decode(runs[i].key).offset
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
        let landmarks = query.compactMap { hasher.prepare($0) }
        let source = referencePostings(candidate.referenceIndex, onlyHashesOf: landmarks, at: [c])
        var matched = agreeing(landmarks, c, source: source, skippingCommonHashes: false) { frame, l in
            abs(Double(frame) - (candidate.offsetFrames + c.timeScale * Double(l.anchorFrame))) <= 1.5
        }
        // A clip with a pause or a seek inside (the reference goes on a moment earlier or later)
        // lines up on two lines of the reference, and the music is like itself a moment away, so
        // this line finds a few agreements over the other line's part too: the stretch leaves out
        // the part at either end that the reference's strongest other line within ±2 s
        // dominates (``undominated(_:by:)``, as a scan's lines). A 20 s clip with a
        // 0.5 s pause in its middle was reported from 1.8 s on the line of its second half.
        let reach = 2 / index.configuration.hopDuration
        var others: [(frame: Int32, shift: Int)] = []
        _ = agreeing(landmarks, c, source: source, skippingCommonHashes: false) { frame, l in
            let d = Double(frame) - (candidate.offsetFrames + c.timeScale * Double(l.anchorFrame))
            if abs(d) >= 3 && abs(d) <= reach { others.append((l.anchorFrame, Int(d.rounded()))) }
            return false
        }
        let shifts = Dictionary(grouping: others, by: \.shift).mapValues(\.count)
        if let rival = shifts.keys.max(by: { a, b in
            let ca = (a - 1 ... a + 1).reduce(0) { $0 + (shifts[$1] ?? 0) }, cb = (b - 1 ... b + 1).reduce(0) { $0 + (shifts[$1] ?? 0) }
            return (ca, b) < (cb, a)
        }) {
            let theirs = Array(Set(others.filter { abs($0.shift - rival) <= 1 }.map(\.frame))).sorted()
            let kept = Matcher.undominated(matched.map(\.anchorFrame).sorted(), by: theirs)
            matched = matched.filter { kept.contains($0.anchorFrame) }
        }
        let first = matched.map(\.anchorFrame).min() ?? Int32.max
        let last = matched.map { $0.anchorFrame + Int32($0.deltaFrames) }.max() ?? Int32.min
        guard first <= last else { return nil }
        return (Double(first), Double(last), candidate.offsetFrames + c.timeScale * Double(first),
                candidate.offsetFrames + c.timeScale * Double(last))
    }

    /// The query frames of a match's own part when `other` (ascending anchor frames agreeing
    /// with another line of the reference) explains a part of the query at either end: over
    /// stretches of ``dominanceBlock`` frames, the range whose sum of (own − other)
    /// agreements is largest (`mine`, ascending, holds the match's), with a part at either end
    /// left out only when the other line holds at least ``dominance`` times the match's
    /// agreements there and at least ``dominanceMinimum``; every frame when none is.
    static func undominated(_ mine: [Int32], by other: [Int32]) -> Range<Int32> {
        guard let first = mine.first, let last = mine.last else { return Int32.min ..< Int32.max }
        let block = Int32(Matcher.dominanceBlock)
        let lo = min(first, other.first ?? first)
        let count = Int((last - lo) / block) + 1
        let starts = (0..<count).map { lo + Int32($0) * block }
        let ours = starts.map { Matcher.hits(mine, $0, $0 + block) }, theirs = starts.map { Matcher.hits(other, $0, $0 + block) }
        // Largest-sum run of (ours − theirs) (Kadane), then each end kept unless dominated.
        var best = (sum: Int.min, from: 0, to: 0), run = 0, runFrom = 0
        for b in 0..<count {
            if run <= 0 { run = 0; runFrom = b }
            run += ours[b] - theirs[b]
            if run > best.sum { best = (run, runFrom, b + 1) }
        }
        func dominated(_ r: Range<Int>) -> Bool {
            let o = r.reduce(0) { $0 + ours[$1] }, t = r.reduce(0) { $0 + theirs[$1] }
            return t >= Matcher.dominanceMinimum && t >= Matcher.dominance * o
        }
        let from = dominated(0 ..< best.from) ? starts[best.from] : Int32.min
        let to = best.to < count && dominated(best.to ..< count) ? starts[best.to] : Int32.max
        return from ..< to
    }

    /// Re-votes for one reference on a fine grid (0.1 % steps, ±1 %) around the coarse candidate,
    /// keeping its kind (a tempo-only candidate varies the tempo, a pitch-only one the pitch). Of the steps within 1 landmark (or 1 %) of the best count, the one nearest the coarse
    /// candidate wins: a count that a 0.1 % skew raises by chance (a repeated passage, where the
    /// copies' votes are equal) does not move an unchanged speed off the grid point.
    /// `hashes`, when given, are ``stepHashes(_:_:)`` of `landmarks` around `c`.
    private func refine(_ landmarks: [LandmarkHasher.Prepared], source: ReferencePostings, around c: SpeedCandidate, count: Int, offset: Int,
                        hashes: [UInt32]? = nil) -> (speed: SpeedCandidate, offset: Int, count: Int) {
        var tried = [(step: 0, speed: c, offset: offset, count: count)]
        var memo: LookupMemo? = LookupMemo(count: landmarks.count)
        for (k, (i, s)) in Matcher.refineSteps(around: c).enumerated() {
            let stepped = hashes.map { $0[(k * landmarks.count) ..< ((k + 1) * landmarks.count)] }
            if let b = bestVote(referenceRuns(landmarks, s, source: source, memo: &memo, hashes: stepped), s) {
                tried.append((i, s, b.offset, b.count))
            }
        }
        // The unchanged speed, when the candidate lies next to it, is counted too and chosen
        // first among the alignments within the slack: a clip whose match covers part of it
        // (a loop point, a noisy stretch) aligns about as well at a 1 % tempo change, which the
        // first pass's tie went to (an unchanged clip reported "tempo only, time scale 0.990",
        // its offset 42 ms off; 5 of 1,252 unchanged benchmark clips reported a tempo or skew).
        let unit = SpeedCandidate(timeScale: 1, frequencyScale: 1)
        var unchanged: (offset: Int, count: Int)? = nil
        if c != unit, max(abs(c.timeScale - 1), abs(c.frequencyScale - 1)) <= 0.0105 {
            unchanged = bestVote(referenceRuns(landmarks, unit, source: source, memo: &memo), unit)
        }
        let top = max(tried.map(\.count).max() ?? count, unchanged?.count ?? 0)
        let slack = max(1, top / 100)
        if let u = unchanged, u.count >= top - slack { return (unit, u.offset, u.count) }
        let chosen = tried.filter { $0.count >= top - slack }.min { (abs($0.step), $0.step) < (abs($1.step), $1.step) }!
        return (chosen.speed, chosen.offset, chosen.count)
    }
}

extension Matcher {
    /// `query`'s landmarks as they would be of the same audio played backwards: each pair of
    /// peaks (anchor at frame `t`, bin `a`; target at `t + Δ`, bin `b`) becomes the pair whose
    /// anchor is `b` at `last − t − Δ` and whose target is `a` at `last − t` (`last`: the
    /// query's last target frame). The peak picker's choice of a zone's strongest targets
    /// (fan-out) is not mirrored, so a reversed clip's own landmarks are mostly, not all, among these.
    static func mirrored(_ query: [Landmark]) -> [Landmark] {
        let last = query.map { Int($0.anchorFrame) + Int($0.deltaFrames) }.max() ?? 0
        return query.map { l in
            Landmark(anchorFrame: Int32(last - Int(l.anchorFrame) - Int(l.deltaFrames)), anchorBin: l.targetBin,
                     targetBin: l.anchorBin, deltaFrames: l.deltaFrames)
        }.sorted { ($0.anchorFrame, $0.anchorBin, $0.targetBin, $0.deltaFrames) < ($1.anchorFrame, $1.anchorBin, $1.targetBin, $1.deltaFrames) }
    }

    /// How many times more landmarks a query must line up with a reference played backwards
    /// (``reversedAlignment(_:reference:)``) than its best match of that reference forwards for
    /// the query to count as the reference played backwards, whose forward matches are then
    /// dropped: 3. Music is rarely the same backwards, yet loops, arpeggios and held chords
    /// line up with stretches of themselves reversed: of a helper's 120 reversed 10 s and 30 s
    /// clips of 30 bench references, 33 matched their own reference forwards, 24 at confidence
    /// 0.9 or more (75–160 landmarks), where played backwards the same clips line up 685–2,833.
    /// Over 240 bench clips (clean, noisy, re-encoded, sped up) the backwards count was at most
    /// 0.045 times the forward one; a palindromic passage counts about the same both ways and
    /// keeps its match.
    public static let reversalRatio = 3.0
    /// Fewest landmarks lined up backwards for ``reversalRatio`` to apply: 40 (well above chance).
    public static let reversalMinimum = 40
    /// Most references whose matches are checked backwards per query: 8.
    public static let reversalChecks = 8

    /// The most landmarks of `query` played backwards (``mirrored(_:)``) that line up with
    /// reference `reference` at one offset, at the unchanged speed.
    func reversedAlignment(_ query: [Landmark], reference: Int) -> Int {
        let landmarks = Matcher.mirrored(query).compactMap { hasher.prepare($0) }
        let unit = SpeedCandidate(timeScale: 1, frequencyScale: 1)
        var noMemo: LookupMemo? = nil
        return bestVote(referenceRuns(landmarks, unit, source: referencePostings(reference), memo: &noMemo), unit)?.count ?? 0
    }
}

extension Matcher {
    /// The share of `signature`'s line slots (``Matcher/slotFrames`` frames each) that must hold a
    /// landmark aligned with an existing reference for the two to count as one recording: 0.8.
    public static let duplicateCoverage = 0.8

    /// Seconds two recordings' lengths may differ by and still be one recording: 0.25. A
    /// re-encoding adds or drops at most a codec frame or two of priming and padding (MP3 and
    /// AAC about 0.05 s, Opus none once its pre-skip is honoured; resampling none); a 60 s file
    /// with its last 0.5 s cut, or a 9.5 s cut-down of a 10 s spot, is another edit (within the
    /// 1 s or 1 % allowed before, both were skipped as duplicates).
    public static let duplicateLengthTolerance = 0.25

    /// The reference that holds the same recording as `signature` (a re-encoding, a resampled or
    /// re-wrapped copy), if any: the first of ``alignedCopies(of:)`` that is one
    /// (``RecordingComparison/isSameRecording``). A different edit of the same music (cut,
    /// extended, sped up, another intro) or another spot on the same music bed is not.
    /// - Parameter signature: a reference signature (as ``Catalog/addReferenceSignature(_:representing:annotations:source:replacingOtherAudio:)`` stores it).
    /// - Returns: the reference's index in ``CatalogIndex/references`` and the covered share of slots, or `nil`.
    public func sameRecording(as signature: Signature) -> (referenceIndex: Int, coverage: Double)? {
        alignedCopies(of: signature).first { $0.comparison.isSameRecording }.map { ($0.referenceIndex, $0.coverage) }
    }

    /// A stored reference aligned with a new signature from start to end: see ``alignedCopies(of:)``.
    public struct AlignedCopy: Equatable, Sendable {
        /// Its index in ``CatalogIndex/references``.
        public var referenceIndex: Int
        /// The share of the signature's slots holding a landmark aligned with it, 0…1.
        public var coverage: Double
        /// The two compared window by window.
        public var comparison: RecordingComparison
    }

    /// The references that hold much of `signature` where it has it: the same length (within
    /// ``duplicateLengthTolerance``), aligned from start to end at skew 0 and offset 0 (±2
    /// frames), with aligned landmarks in at least ``duplicateCoverage`` of its slots; each
    /// compared with it window by window (``RecordingComparison``). Those whose comparison
    /// finds no stretch that differs are the same recording; the others share most of it (a
    /// music bed under other speech, looped music under another melody, all but another intro)
    /// and are near-duplicates. Best first: the same recordings, then by coverage.
    public func alignedCopies(of signature: Signature) -> [AlignedCopy] {
        let landmarks = signature.landmarks.compactMap { hasher.prepare($0) }
        guard !landmarks.isEmpty else { return [] }
        let unit = SpeedCandidate(timeScale: 1, frequencyScale: 1)
        let slotCount = max(1, (Int(landmarks.map(\.anchorFrame).max() ?? 0) + Matcher.slotFrames) / Matcher.slotFrames)
        let postings = PostingCodec.postings(of: signature)
        var found: [AlignedCopy] = []
        // Only references of the same length can hold the same recording: each is voted for on
        // its own (the same votes as over the whole catalog), so the check costs nothing when
        // no reference has this length, whatever the catalog's size.
        let sameLength = index.references.indices.filter {
            abs(index.references[$0].duration - signature.duration) <= Matcher.duplicateLengthTolerance
        }
        for ref in sameLength {
            guard let b = bestVotes(landmarks, unit, only: ref)[ref], abs(b.offset) <= 2 else { continue }
            let occupied = Set(alignedFrames(landmarks, unit, source: referencePostings(ref), offset: b.offset).map { $0 / Matcher.slotFrames }).count
            let coverage = Double(occupied) / Double(slotCount)
            guard coverage >= Matcher.duplicateCoverage else { continue }
            let comparison = RecordingComparison(query: postings, reference: index.postings.postings(of: ref), offset: b.offset,
                                                 hop: index.configuration.hopDuration)
            found.append(AlignedCopy(referenceIndex: ref, coverage: coverage, comparison: comparison))
        }
        return found.sorted { ($0.comparison.isSameRecording ? 1 : 0, $0.coverage) > ($1.comparison.isSameRecording ? 1 : 0, $1.coverage) }
    }
}

/// `body(0) … body(count - 1)` computed on every core (`DispatchQueue.concurrentPerform`), in
/// index order: the same array as a sequential `map`.
func concurrentMap<T>(_ count: Int, _ body: (Int) -> T) -> [T] {
    guard count > 1 else { return (0..<count).map(body) }
    var slots = [T?](repeating: nil, count: count)
    slots.withUnsafeMutableBufferPointer { out in
        nonisolated(unsafe) let out = out
        DispatchQueue.concurrentPerform(iterations: count) { i in out[i] = body(i) }
    }
    return slots.map { $0! }
}

