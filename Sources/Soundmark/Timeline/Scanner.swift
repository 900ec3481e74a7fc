import Foundation

/// A span of a recording assigned to one reference.
public struct Segment: Equatable, Sendable {
    /// Index into ``CatalogIndex/references``.
    public var referenceIndex: Int
    /// The reference's metadata.
    public var item: MediaItem
    /// Start in the recording, seconds.
    public var start: Double
    /// End in the recording, seconds.
    public var end: Double
    /// Reference time at `start`, seconds.
    public var referenceStart: Double
    /// Reference time at `end`, seconds.
    public var referenceEnd: Double
    /// Recording frequency / reference frequency − 1 (0.05: played 5 % fast and high).
    public var frequencySkew: Double
    /// Reference seconds per recording second (1 + skew for a pitched record).
    public var timeScale: Double
    /// 0…1, see ``Scanner/confidence(hits:duration:)``.
    public var confidence: Double
    /// Landmarks of the recording that agree with this segment's alignment.
    public var hits: Int

    /// Reference time (seconds) at recording time `t` (seconds), on this segment's line.
    public func referenceTime(at t: Double) -> Double { referenceStart + timeScale * (t - start) }
}

/// What a scanner reports while it runs (for live monitoring).
public enum ScanEvent: Equatable, Sendable {
    /// A segment reached the confidence threshold: the first answer. `id` is unique per segment
    /// within the scan (1, 2, …).
    case started(id: Int, segment: Segment)
    /// New information about an announced segment: its alignment (offset or speed) moved by
    /// more than 50 ms or 0.2 %.
    case refined(id: Int, segment: Segment)
    /// The segment is over (nothing extended it for ``ScanOptions/closeAfterSeconds``).
    case ended(id: Int, segment: Segment)
}

/// Options of ``Scanner``.
public struct ScanOptions: Sendable {
    /// Speed candidates (pitch and tempo together), in ascending order of speed and one step
    /// apart (neighbouring indices are compared), at most 32 (vote keys hold the index in 5
    /// bits). Default ±9 % in 1 % steps (19).
    public var candidates: [SpeedCandidate] = SpeedCandidate.grid()
    /// Length of the sliding matching window, seconds. Default 6.
    public var windowSeconds: Double = 6
    /// Hop of the window, seconds. Default 1.5.
    public var hopSeconds: Double = 1.5
    /// A window must align at least this many landmarks with a reference to report it.
    /// Default 8: a spot mixed 10 dB under speech gathers about 10 per window; chance lines of a
    /// non-catalog stretch stay under it, and a segment must still reach
    /// ``Scanner/confidence(hits:duration:)`` ≥ ``threshold``.
    public var minWindowHits: Int = 8
    /// A segment is closed when no window has extended it for this long, seconds. Default 4.
    public var closeAfterSeconds: Double = 4
    /// Segments whose confidence is below this are dropped. Default 0.5.
    public var threshold: Double = 0.5
    /// Skip hash buckets holding more postings than this: such hashes (steady low tones,
    /// common intervals) vote everywhere and cost most of the time. Default 30, five times
    /// the mean bucket of a 128-reference catalog; on the benchmark mixes it halves the scan
    /// time and changes no segment by more than a second.
    public var maxBucket: Int = 30

    /// Detection votes with every `coarseStride`-th speed candidate only (default 2: 2 % steps);
    /// the exact hits of a detection are then taken at the best of its neighbouring 1 % steps.
    public var coarseStride: Int = 2
    /// Detection votes with one landmark in `voteSubsample` (default 2: those whose frequency
    /// ratio step is even, a choice a speed change does not alter); exact hits use them all.
    public var voteSubsample: Int = 2

    /// Keep every decided segment for ``Scanner/finish()``. Default `true`; a live monitor that
    /// only needs ``ScanEvent``s sets `false`, so memory does not grow with the stream's length.
    public var keepsSegments: Bool = true

    /// The defaults.
    public init() {}
}

/// Slides the matcher over a long recording and turns its matches into segments.
///
/// Feed the recording's landmarks in anchor-frame order (``consume(_:)``), then call
/// ``finish()``. Memory is bounded by the window length and the number of open segments,
/// plus the list of segments found; it does not grow with the length of the recording.
///
/// Each window (``ScanOptions/windowSeconds``, every ``ScanOptions/hopSeconds``) votes per
/// (reference, speed candidate, offset in 4-frame bins) with each hop's votes counted once in an
/// open-addressing table. The best alignment of each reference that reaches
/// ``ScanOptions/minWindowHits`` is re-voted exactly to get its landmark hits
/// (recording frame, reference frame). Hits on the same line (same reference, offset within
/// 0.4 s, speed within 2 %) extend an open segment; others open a new one, so a reference played
/// twice, a seek or an edit start new segments. When segments overlap (a crossfade) the
/// boundary is put at the middle of the overlap.
public final class Scanner {
    /// The catalog snapshot.
    public let index: CatalogIndex
    /// The options in force.
    public let options: ScanOptions
    private let hasher: LandmarkHasher
    private let hop: Double
    private let hopFrames: Int
    private let blocksPerWindow: Int
    private var window: [LandmarkHasher.Prepared] = []
    private let logShifts: [Double]
    private var nextBlockEnd: Int
    private var blockVotes: [[(key: UInt64, count: Int32)]] = []
    private var table: VoteTable
    private var open: [OpenSegment] = []
    private var finished: [Segment] = []
    private var nextID = 1
    /// Receives ``ScanEvent``s as soon as they are decided; events come in the order they
    /// were decided and an `ended` always follows its `started`.
    public var onEvent: ((ScanEvent) -> Void)?

    /// Creates a scanner over `index`. Traps when `options.candidates` holds more than 32 speeds.
    public init(index: CatalogIndex, options: ScanOptions = ScanOptions()) {
        precondition(options.candidates.count <= 32, "ScanOptions.candidates holds at most 32 speeds")
        self.index = index
        self.options = options
        hasher = LandmarkHasher(configuration: index.configuration)
        hop = index.configuration.hopDuration
        hopFrames = max(1, Int((options.hopSeconds / hop).rounded()))
        blocksPerWindow = max(1, Int((options.windowSeconds / options.hopSeconds).rounded()))
        nextBlockEnd = hopFrames
        table = VoteTable(capacity: 1 << 16)
        logShifts = options.candidates.map { LandmarkHasher(configuration: index.configuration).logShift(frequencyScale: $0.frequencyScale) }
    }

    /// Maps a segment's hits and length to a confidence in 0…1. Chance alignments of one
    /// reference gather about one hit per second of window; the logistic curve puts 0.5 at
    /// 12 + 0.5 hits per second of segment.
    public static func confidence(hits: Int, duration: Double) -> Double {
        let expected = 12 + 0.5 * duration
        return 1 / (1 + exp(-(Double(hits) - expected) / 3))
    }

    /// Adds landmarks of the recording (anchor frames counted from the recording's start, in
    /// non-decreasing order).
    public func consume(_ landmarks: [Landmark]) {
        for l in landmarks { consume(l) }
    }

    /// Adds one landmark; see ``consume(_:)``.
    public func consume(_ l: Landmark) {
        while Int(l.anchorFrame) >= nextBlockEnd { closeBlock() }
        guard let p = hasher.prepare(l) else { return }
        window.append(p)
        vote(p)
    }

    /// Moves the scanner's clock to recording frame `frame` without a landmark — silence, or a
    /// live source that is down — so that windows ending before it are decided and open
    /// segments end on time. Landmarks consumed afterwards should not be older than `frame`.
    public func advance(toFrame frame: Int) {
        while frame >= nextBlockEnd { closeBlock() }
    }

    /// Ends the recording and returns every segment in start order.
    public func finish() -> [Segment] {
        closeBlock()
        for s in open { close(s) }
        open.removeAll()
        return Scanner.resolveOverlaps(finished)
    }

    // MARK: voting

    /// Window vote keys: a marker bit (63), the speed candidate (5 bits from 58), the reference
    /// (18 bits from 24) and the offset bin (24 bits: (offset + ``offsetBias``) / 4 frames).
    private static let candidateShift: UInt64 = 58, referenceShift: UInt64 = 24, offsetBias = 1 << 24

    private func key(ref: UInt64, candidate: Int, offsetBin: Int) -> UInt64 {
        1 << 63 | UInt64(candidate) << Scanner.candidateShift | ref << Scanner.referenceShift | UInt64(offsetBin)
    }

    /// The parts of a window vote key made by ``key(ref:candidate:offsetBin:)``.
    private func decodeKey(_ k: UInt64) -> (candidate: Int, ref: UInt64, offsetBin: Int) {
        (Int((k >> Scanner.candidateShift) & 0x1F), (k >> Scanner.referenceShift) & 0x3FFFF,
         Int(k & ((1 << Scanner.referenceShift) - 1)))
    }

    private func vote(_ l: LandmarkHasher.Prepared) {
        if options.voteSubsample > 1 && Int(l.ratioStep) % options.voteSubsample != 0 { return }
        let start = index.postings.start, entries = index.postings.entries
        let stride = max(1, options.coarseStride)
        for ci in Swift.stride(from: (options.candidates.count / 2) % stride, to: options.candidates.count, by: stride) {
            let c = options.candidates[ci]
            guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: logShifts[ci]) else { continue }
            let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
            if hi - lo > options.maxBucket { continue }
            let q = Int((Double(l.anchorFrame) * c.timeScale).rounded())
            for e in lo..<hi {
                let entry = entries[e]
                let off = Int(entry & 0xFFFF_FFFF) - q + Scanner.offsetBias
                guard off >= 0 else { continue }
                table.add(key(ref: entry >> 32, candidate: ci, offsetBin: off >> 2))
            }
        }
    }

    private func closeBlock() {
        blockVotes.append(table.drain(minimum: 2))
        if blockVotes.count > blocksPerWindow { blockVotes.removeFirst() }
        let windowEnd = nextBlockEnd
        let windowStart = windowEnd - blocksPerWindow * hopFrames
        window.removeAll { Int($0.anchorFrame) < windowStart }
        detect(windowStart: windowStart, windowEnd: windowEnd)
        if onEvent != nil { announce() }
        nextBlockEnd += hopFrames
        // Close segments not extended for a while.
        let limit = windowEnd - Int(options.closeAfterSeconds / hop)
        var keep: [OpenSegment] = []
        for s in open {
            if s.lastHitFrame < limit { close(s) } else { keep.append(s) }
        }
        open = keep
    }

    private func detect(windowStart: Int, windowEnd: Int) {
        var sums: [UInt64: Int32] = [:]
        for block in blockVotes { for v in block { sums[v.key, default: 0] += v.count } }
        // Best (candidate, offset bin) per reference, counting neighbouring offset bins.
        var best: [UInt64: (key: UInt64, count: Int32)] = [:]
        for (k, n) in sums {
            let total = n + (sums[k &- 1] ?? 0) + (sums[k &+ 1] ?? 0)
            guard total >= Int32(max(3, options.minWindowHits / max(1, options.voteSubsample))) else { continue }
            let ref = decodeKey(k).ref
            if let b = best[ref], b.count > total || (b.count == total && b.key < k) { continue }
            best[ref] = (k, total)
        }
        for (ref, b) in best.sorted(by: { $0.value.count > $1.value.count }) {
            // A reference that repeats itself matches a window at several offsets with similar
            // counts. Every open line of the reference that still holds in this window is
            // extended, so each repeat gathers its own evidence; the weaker duplicate is
            // dropped when segments are cleaned up (``resolveOverlaps(_:)``).
            let windowMid = (windowStart + windowEnd) / 2
            var strongest = 0
            for s in open where s.ref == Int(ref) {
                let c = options.candidates[s.candidate]
                let offset = Int((s.referenceFrame(at: windowMid) - c.timeScale * Double(windowMid)).rounded())
                let own = exactHits(ref: Int(ref), candidate: s.candidate, around: offset)
                if own.count >= options.minWindowHits { attach(ref: Int(ref), candidate: s.candidate, hits: own) }
                strongest = max(strongest, own.count)
            }
            // An open line that explains the window's best vote already: no new line to look for.
            if strongest >= Int(b.count) * max(1, options.voteSubsample) { continue }
            let (coarse, _, offsetBin) = decodeKey(b.key)
            // The coarse offset was measured at the window's middle with the coarse speed;
            // each neighbouring fine speed shifts it by (its speed − coarse speed) · middle.
            var bestHits: [(Int, Int)] = [], bestCandidate = coarse
            for ci in max(0, coarse - 1)...min(options.candidates.count - 1, coarse + 1) {
                let shift = (options.candidates[ci].timeScale - options.candidates[coarse].timeScale) * Double(windowMid)
                let around = offsetBin * 4 + 2 - Scanner.offsetBias - Int(shift.rounded())
                let hits = exactHits(ref: Int(ref), candidate: ci, around: around)
                if hits.count > bestHits.count { bestHits = hits; bestCandidate = ci }
            }
            guard bestHits.count >= options.minWindowHits else { continue }
            attach(ref: Int(ref), candidate: bestCandidate, hits: bestHits)
        }
    }

    /// Hits (recording frame, reference frame) of the window's landmarks near an offset.
    private func exactHits(ref: Int, candidate ci: Int, around offset: Int) -> [(Int, Int)] {
        let start = index.postings.start
        let c = options.candidates[ci], shift = logShifts[ci]
        var hits: [(Int, Int)] = []
        index.postings.entries.withUnsafeBufferPointer { entries in
            for l in window {
                guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: shift) else { continue }
                let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                if hi - lo > options.maxBucket { continue }
                let q = Int((Double(l.anchorFrame) * c.timeScale).rounded())
                for e in PostingIndex.run(of: ref, in: entries, lo, hi) {
                    let f = Int(entries[e] & 0xFFFF_FFFF)
                    if abs(f - q - offset) <= 6 { hits.append((Int(l.anchorFrame), f)) }
                }
            }
        }
        return hits
    }

    // MARK: segments

    private struct OpenSegment {
        var id = 0
        var announced = false
        /// Reference time and speed last reported, at recording time `reportedAt`.
        var reported: (referenceStart: Double, timeScale: Double) = (0, 0)
        var reportedAt = 0.0
        var ref: Int
        var candidate: Int
        var timeScale: Double
        var firstHitFrame: Int
        var lastHitFrame: Int
        /// Landmark hits added so far.
        var hits: Int { Int(n) }
        /// Hits per bin of `Scanner.binFrames` frames, from bin `firstBin`.
        var bins: [Int32] = []
        var firstBin = 0
        // Least-squares sums of reference frame against recording frame.
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        var x0 = 0.0

        mutating func add(_ x: Int, _ y: Int) {
            let b = x / Scanner.binFrames
            if bins.isEmpty { firstBin = b }
            if b < firstBin {
                bins.insert(contentsOf: [Int32](repeating: 0, count: firstBin - b), at: 0)
                firstBin = b
            }
            while b - firstBin >= bins.count { bins.append(0) }
            bins[b - firstBin] += 1
            let dx = Double(x) - x0
            n += 1; sx += dx; sy += Double(y); sxx += dx * dx; sxy += dx * Double(y)
        }

        /// (slope, reference frame at recording frame x0).
        var line: (slope: Double, intercept: Double) {
            let d = n * sxx - sx * sx
            if n >= 8 && d > 1e-6 && sxx / n > 2000 {
                let slope = (n * sxy - sx * sy) / d
                if abs(slope - timeScale) < 0.015 { return (slope, (sy - slope * sx) / n) }
            }
            return (timeScale, (sy - timeScale * sx) / max(n, 1))
        }

        func referenceFrame(at x: Int) -> Double {
            let l = line
            return l.intercept + l.slope * (Double(x) - x0)
        }
    }

    private func attach(ref: Int, candidate ci: Int, hits: [(Int, Int)]) {
        let c = options.candidates[ci]
        let offsets = hits.map { Double($0.1) - c.timeScale * Double($0.0) }.sorted()
        let median = offsets[offsets.count / 2]
        let good = hits.filter { abs(Double($0.1) - c.timeScale * Double($0.0) - median) <= 2.5 }
        guard good.count >= options.minWindowHits else { return }
        let mid = good.map(\.0).reduce(0, +) / good.count
        let refAtMid = median + c.timeScale * Double(mid)
        let tolerance = 0.4 / hop
        if let i = open.firstIndex(where: { s in
            s.ref == ref && abs(s.candidate - ci) <= 2 && abs(s.referenceFrame(at: mid) - refAtMid) <= tolerance
        }) {
            var s = open[i]
            for h in good where h.0 > s.lastHitFrame { s.add(h.0, h.1) }
            s.lastHitFrame = max(s.lastHitFrame, good.map(\.0).max()!)
            s.firstHitFrame = min(s.firstHitFrame, good.map(\.0).min()!)
            open[i] = s
        } else {
            var s = OpenSegment(id: 0, ref: ref, candidate: ci, timeScale: c.timeScale,
                                firstHitFrame: good.map(\.0).min()!, lastHitFrame: good.map(\.0).max()!)
            s.x0 = Double(s.firstHitFrame)
            for h in good { s.add(h.0, h.1) }
            open.append(s)
        }
    }

    /// Frames per bin of a segment's hit histogram (16 frames = 0.256 s at the defaults).
    static let binFrames = 16

    /// First and last histogram bins where the hit rate (over ±2 bins) reaches 20 % of the
    /// segment's median rate: a track fading in or out of a crossfade is counted from about
    /// the crossfade's middle, where both tracks are equally loud.
    static func audibleBins(_ bins: [Int32]) -> (first: Int, last: Int) {
        guard bins.count >= 24 else { return (0, bins.count - 1) }
        var smooth = [Int32](repeating: 0, count: bins.count)
        for i in bins.indices {
            var sum: Int32 = 0
            for j in max(0, i - 2)...min(bins.count - 1, i + 2) { sum += bins[j] }
            smooth[i] = sum
        }
        let median = smooth.sorted()[smooth.count / 2]
        let level = max(1, Int32((Double(median) * 0.2).rounded()))
        let first = smooth.firstIndex { $0 >= level } ?? 0
        let last = smooth.lastIndex { $0 >= level } ?? bins.count - 1
        return (first, max(first, last))
    }

    /// The segment an open segment stands for now (no threshold applied).
    private func segment(_ s: OpenSegment) -> Segment {
        let line = s.line
        let audible = Scanner.audibleBins(s.bins)
        let firstFrame = max(s.firstHitFrame, (s.firstBin + audible.first) * Scanner.binFrames)
        let lastFrame = min(s.lastHitFrame, (s.firstBin + audible.last + 1) * Scanner.binFrames)
        // The last hit is an anchor; its landmark spans about half a target zone more.
        let endFrame = lastFrame + index.configuration.targetZoneMaxFrames / 2
        let start = Double(firstFrame) * hop, end = Double(endFrame) * hop
        let refStart = (line.intercept + line.slope * (Double(firstFrame) - s.x0)) * hop
        return Segment(referenceIndex: s.ref, item: index.references[s.ref].item, start: start, end: end,
                       referenceStart: refStart, referenceEnd: refStart + line.slope * (end - start),
                       frequencySkew: options.candidates[s.candidate].frequencySkew + (line.slope - s.timeScale),
                       timeScale: line.slope, confidence: Scanner.confidence(hits: s.hits, duration: end - start),
                       hits: s.hits)
    }

    /// Emits `started` for open segments that reached the threshold and `refined` for
    /// announced ones whose alignment moved.
    private func announce() {
        for i in open.indices {
            let seg = segment(open[i])
            if !open[i].announced {
                guard seg.confidence >= options.threshold else { continue }
                // Only the strongest open line of a reference is announced: a repeat of the
                // passage caught at a fade is dropped later and must not start an activity.
                let ref = open[i].ref, hits = open[i].hits, first = open[i].firstHitFrame
                if open.contains(where: { $0.ref == ref && $0.hits > hits }) { continue }
                // A stronger line of a reference whose announced line still plays alongside it
                // (the same passage repeated in the reference): the activity moves to it.
                if let j = open.indices.first(where: { $0 != i && open[$0].ref == ref && open[$0].announced
                                                        && open[$0].lastHitFrame >= first }) {
                    open[i].announced = true
                    open[i].id = open[j].id
                    open[j].announced = false
                    open[i].reported = (seg.referenceTime(at: seg.end), seg.timeScale)
                    open[i].reportedAt = seg.end
                    onEvent?(.refined(id: open[i].id, segment: seg))
                    continue
                }
                open[i].announced = true
                open[i].id = nextID
                nextID += 1
                open[i].reported = (seg.referenceTime(at: seg.end), seg.timeScale)
                open[i].reportedAt = seg.end
                onEvent?(.started(id: open[i].id, segment: seg))
            } else {
                // Reference time now, against what the last reported line predicts for it.
                let now = seg.referenceTime(at: seg.end)
                let old = open[i].reported
                let predicted = old.referenceStart + old.timeScale * (seg.end - open[i].reportedAt)
                if abs(old.timeScale - seg.timeScale) > 0.002 || abs(predicted - now) > 0.05 {
                    open[i].reported = (now, seg.timeScale)
                    open[i].reportedAt = seg.end
                    onEvent?(.refined(id: open[i].id, segment: seg))
                }
            }
        }
    }

    private func close(_ s: OpenSegment) {
        let segment = segment(s)
        if s.announced { onEvent?(.ended(id: s.id, segment: segment)) }
        guard segment.confidence >= options.threshold, options.keepsSegments else { return }
        finished.append(segment)
    }

    /// Cleans up decided segments:
    /// - joins consecutive segments of one reference on the same line (the reference time
    ///   predicted at the second's start within 0.5 s) less than 20 s apart: a quiet passage,
    ///   not a new airing;
    /// - drops segments shorter than 4 s with fewer than 100 hits (a repeated passage of a
    ///   neighbouring segment's reference caught at a fade);
    /// - drops a segment that overlaps a stronger one of the same reference by 30 % of its
    ///   length (another repeat of the passage matched at a fade), or lies mostly (≥ 60 %)
    ///   inside one of another reference with four times its hits;
    /// - puts the boundary between consecutive segments that overlap or leave a gap of less
    ///   than 6 s (a crossfade) in the middle.
    static func resolveOverlaps(_ segments: [Segment]) -> [Segment] {
        var joined: [Segment] = []
        for s in segments.sorted(by: { $0.start < $1.start }) {
            if let i = joined.lastIndex(where: { $0.referenceIndex == s.referenceIndex }),
               s.start - joined[i].end < 20, s.start >= joined[i].start,
               abs(joined[i].referenceTime(at: s.start) - s.referenceStart) < 0.5 {
                var a = joined[i]
                let total = Double(a.hits + s.hits)
                a.timeScale = (a.timeScale * Double(a.hits) + s.timeScale * Double(s.hits)) / total
                a.frequencySkew = (a.frequencySkew * Double(a.hits) + s.frequencySkew * Double(s.hits)) / total
                a.end = max(a.end, s.end)
                a.referenceEnd = s.referenceEnd
                a.hits += s.hits
                a.confidence = max(a.confidence, s.confidence)
                joined[i] = a
                continue
            }
            joined.append(s)
        }
        let candidates = joined.filter { $0.end - $0.start >= 4 || $0.hits >= 100 }
        var kept: [Segment] = []
        for s in candidates {
            let length = max(s.end - s.start, 1e-3)
            let covered = candidates.contains { o in
                guard o != s else { return false }
                let overlap = (min(o.end, s.end) - max(o.start, s.start)) / length
                if o.referenceIndex == s.referenceIndex {
                    return overlap >= 0.3 && (o.hits > s.hits || (o.hits == s.hits && o.start < s.start))
                }
                return overlap >= 0.6 && o.hits >= 4 * s.hits
            }
            if !covered { kept.append(s) }
        }
        var all = kept.sorted { $0.start < $1.start }
        guard all.count > 1 else { return all }
        for i in 1..<all.count {
            var a = all[i - 1], b = all[i]
            if a.start < b.start && a.end < b.end && b.start - a.end < 6 {
                let middle = (a.end + b.start) / 2
                a.referenceEnd = a.referenceTime(at: middle)
                a.end = middle
                b.referenceStart = b.referenceTime(at: middle)
                b.start = middle
                all[i - 1] = a
                all[i] = b
            }
        }
        return all
    }
}

/// Open-addressing vote counter (linear probing) for one hop of votes.
struct VoteTable {
    private var keys: [UInt64]
    private var counts: [Int32]
    private var used: [Int] = []
    private var mask: Int

    init(capacity: Int) {
        keys = [UInt64](repeating: 0, count: capacity)
        counts = [Int32](repeating: 0, count: capacity)
        mask = capacity - 1
    }

    mutating func add(_ key: UInt64) {
        if used.count * 2 > keys.count { grow() }
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while true {
            let k = keys[i]
            if k == key { counts[i] += 1; return }
            if k == 0 {
                keys[i] = key
                counts[i] = 1
                used.append(i)
                return
            }
            i = (i + 1) & mask
        }
    }

    private mutating func grow() {
        let old = used.map { (keys[$0], counts[$0]) }
        keys = [UInt64](repeating: 0, count: keys.count * 2)
        counts = [Int32](repeating: 0, count: keys.count)
        mask = keys.count - 1
        used.removeAll()
        for (k, c) in old {
            add(k)
            counts[used.last!] = c
        }
    }

    /// Entries with at least `minimum` votes; empties the table.
    mutating func drain(minimum: Int32) -> [(key: UInt64, count: Int32)] {
        var result: [(key: UInt64, count: Int32)] = []
        for i in used {
            if counts[i] >= minimum { result.append((keys[i], counts[i])) }
            keys[i] = 0
            counts[i] = 0
        }
        used.removeAll(keepingCapacity: true)
        return result
    }
}
