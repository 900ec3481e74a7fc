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
    /// 0…1, see ``RecordingScanner/confidence(hits:duration:)``.
    public var confidence: Double
    /// Landmarks of the recording that agree with this segment's alignment.
    public var hits: Int
    /// Other references that match a stretch of this segment as well as this one does (a
    /// version sharing material with it), each with the stretch (recording seconds) it
    /// explains; the segment's own reference is the one that also explains the rest. Empty
    /// when the audio tells them apart everywhere.
    public var alternatives: [(item: MediaItem, start: Double, end: Double)] = []
    /// Whether `start` is where the recording's spectrum changes to this play (``ChangeEdge``):
    /// at a butt splice the previous play ends there.
    var startsAtChange = false
    /// Where (recording seconds) the spectrum changes from this play to the next one's audio,
    /// when the next play starts from hits within ``ChangeEdge/spliceOverlap`` of this one's end
    /// (``ChangeEdge/end(ring:edge:hop:window:)``); the end at a butt splice
    /// (``RecordingScanner/boundary(_:_:)``).
    var changeEnd: Double?
    /// Whether `start` comes from hits (and single peaks) alone: not at an onset after digital
    /// silence, a change of the spectrum or a move outwards by it.
    var startsFromHits = false
    /// The highest confidence the recording's spectrum allows: that of a line at a searched
    /// speed whose reference peaks do not stand out (see `RecordingScanner.checkSearchedSpeed(_:at:)`), else 1.
    /// Parts of one line joined keep the highest of theirs.
    var spectralCap = 1.0

    /// Field-by-field equality (alternatives compared by reference, start and end).
    public static func == (a: Segment, b: Segment) -> Bool {
        a.referenceIndex == b.referenceIndex && a.item == b.item && a.start == b.start && a.end == b.end
            && a.referenceStart == b.referenceStart && a.referenceEnd == b.referenceEnd
            && a.frequencySkew == b.frequencySkew && a.timeScale == b.timeScale && a.confidence == b.confidence
            && a.hits == b.hits && a.alternatives.map(\.item) == b.alternatives.map(\.item)
            && a.alternatives.map(\.start) == b.alternatives.map(\.start) && a.alternatives.map(\.end) == b.alternatives.map(\.end)
    }

    /// Reference time (seconds) at recording time `t` (seconds), on this segment's line.
    public func referenceTime(at t: Double) -> Double { referenceStart + timeScale * (t - start) }
}

/// What a scanner reports while it runs (for live monitoring).
public enum ScanEvent: Equatable, Sendable {
    /// A play of `scan`'s decision over the audio so far (``RecordingScanner/finish(recordingDuration:)``'s
    /// rule), held for ``RecordingScanner/settleSeconds``: the first answer. `id` is unique per play
    /// within the scan (1, 2, …).
    case started(id: Int, segment: Segment)
    /// New information about an announced play: its alignment (offset or speed) moved by more
    /// than 50 ms or 0.2 %, or another reference now explains its audio (the decision moved the
    /// play to it: the segment carries that reference).
    case refined(id: Int, segment: Segment)
    /// The play is over: no later part can join it any more (``RecordingScanner/joinGap`` plus a window
    /// and a hop after its end), or the recording ended. Its segment is the one `scan` gives.
    case ended(id: Int, segment: Segment)
}

/// Options of ``RecordingScanner``.
public struct ScanOptions: Sendable {
    /// Speed candidates (pitch and tempo together), in ascending order of speed and one step
    /// apart (neighbouring indices are compared), at most 64 (vote keys hold the index in 6
    /// bits). Default ±9 % in 1 % steps (19). A tempo-only change (a DJ's key-lock) is
    /// followed from the unchanged-pitch candidate: a segment's line takes the time scale its
    /// hits show (up to ±10 % from its candidate's).
    public var candidates: [SpeedCandidate] = SpeedCandidate.grid()
    /// Length of the sliding matching window, seconds. Default 6.
    public var windowSeconds: Double = 6
    /// Hop of the window, seconds. Default 1.5.
    public var hopSeconds: Double = 1.5
    /// A window must align at least this many landmarks with a reference to report it.
    /// Default 8: a spot mixed 10 dB under speech gathers about 10 per window; chance lines of a
    /// non-catalog stretch stay under it, and a segment must still reach
    /// ``RecordingScanner/confidence(hits:duration:)`` ≥ ``threshold``.
    public var minWindowHits: Int = 8
    /// A segment is closed when no window has extended it for this long, seconds. Default 4.
    public var closeAfterSeconds: Double = 4
    /// Segments whose confidence is below this are dropped. Default 0.5.
    public var threshold: Double = 0.5
    /// False plays accepted per hour of audio that holds none of the catalog: a line of hits is a
    /// play only when the expected number of chance lines at least as strong over an hour of
    /// scanning is at most this (``PlayEvidence``). Default 0.001 (one in 1,000 hours).
    public var falseAlarmsPerHour: Double = 0.001
    /// Segments shorter than this, seconds, are dropped (and not announced as events).
    /// Default 2: a 3 s station id or spot is kept; raise it for fewer, surer segments.
    public var minimumDuration: Double = 2
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
    /// Exact hits also look a landmark up with its frame difference this many frames shorter
    /// and longer when the exact difference finds nothing (default 1): peaks fall between
    /// frames, so a recording cut half a hop off the reference's frame grid rounds about half
    /// of its differences the other way.
    public var deltaTolerance: Int = 1

    /// Keep every decided segment for ``RecordingScanner/finish()``. Default `true`; a live monitor that
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
/// boundary is put at the middle of the overlap; at a butt splice, where the recording's
/// spectrum changes from one play to the next (``ChangeEdge``, ``boundary(_:_:)``).
public final class RecordingScanner {
    /// The catalog snapshot.
    public let index: CatalogIndex
    /// The options in force.
    public let options: ScanOptions
    /// The tuned values of the edge and line decisions in force (default ``ScanTuning/init()``).
    public let tuning: ScanTuning
    private let hasher: LandmarkHasher
    private let hop: Double
    private let hopFrames: Int
    private let blocksPerWindow: Int
    private var window: [LandmarkHasher.Prepared] = []
    /// Landmarks of the last ``historyFrames`` frames (a superset of `window`): a line found in a
    /// window is traced back through them, so a weak stretch that took a whole window to reach
    /// ``ScanOptions/minWindowHits`` still starts where its first hit is. It reaches
    /// ``ScanTuning/historySeconds`` (20 s) before the window (26 s with the default 6 s window).
    private var history: [LandmarkHasher.Prepared] = []
    private let historyFrames: Int
    /// Landmarks appended to ``window`` and ``history`` so far; the sequence number of
    /// `window[i]` is `windowFirst + i`, of `history[i]` `historyFirst + i`.
    private var appended = 0
    private var windowFirst = 0, historyFirst = 0
    /// Each reference's postings that the history's landmarks look up at a speed candidate
    /// (see ``RunCache``), keyed by `ref << 6 | candidate`; `nil` once landmarks came out of
    /// order (then ``exactHits(ref:candidate:around:slope:inHistory:)`` looks every one up).
    private var runCaches: [Int: RunCache]? = [:]

    /// Whether lookups of a landmark in a reference's postings are kept for the windows that
    /// follow (``RunCache``; default `true`); `false` looks every landmark up again in each
    /// window, which gives the same hits. Set before the first landmark.
    var reusesLookups: Bool {
        get { runCaches != nil }
        set { runCaches = newValue ? (runCaches ?? [:]) : nil }
    }
    /// Frame just past the last landmark or clock advance seen: the recording's end so far.
    private var clockFrame = 0
    /// Ring of the recording's landmark counts per 16 frames (see ``landmarkCount(at:)``).
    private var landmarkBins = [Int32](repeating: 0, count: RecordingScanner.landmarkBinCount)
    private var latestLandmarkBin = 0
    /// ``referenceFrames(_:)`` of the references that had segments.
    private var referenceFrameCache: [Int: [UInt32]] = [:]
    /// ``referencePeaks(_:)`` of recent references.
    private var referencePeakCache: [Int: [PeakEdge.Peak]] = [:]
    /// Where the bytes of postings read only to start their memory reads early end up (so the
    /// reads are not optimised away); never used.
    private var sink: UInt8 = 0
    /// The recording's recent spectrum (``consumeSpectrum(frame:levels:)``), for edges moved
    /// outwards by ``SpectrumEdge``; empty when the caller feeds landmarks only.
    private var spectrum: SpectrumRing
    /// Hits per second under which a line at a searched speed is checked in the spectrum
    /// (``checkSearchedSpeed(_:at:)``): 4. Other music quoting a reference's theme gathered
    /// 2.0–2.7 (Wesnoth's *Revelation* 5 % faster or 7 % slower against *Loyalists*); a play
    /// 5 % faster under pink noise 3 dB louder than the music 4.6, at 0 dB 8.6. The spectral
    /// score cannot tell a looped piece's own lines from chance: the lines of the benchmark's
    /// mix01 over *Call of the Winding Path* at 0.97 (the play and its loop's other copies, 2 to
    /// 20 hits a second) scored 0.02–2.5, so a line heard more clearly is left to its hits.
    static let searchedSpeedCheckRate = 4.0
    /// Lowest spectral score (``SpectralCheck``) a sparse line at a searched speed keeps its
    /// confidence with: 2. The *Revelation* lines scored 0.33–1.62; only sparse lines are read,
    /// so a play heard at 4 hits a second or more is left to its hits whatever its score.
    static let searchedSpeedLineScore = 2.0
    /// Seconds after which a line held under ``searchedSpeedLineScore`` is read again: 5.
    static let searchedSpeedRecheckSeconds = 5.0
    /// Reads the spectral evidence of lines at searched speeds (``checkSearchedSpeed(_:at:)``).
    private lazy var searchedSpeedMatcher = Matcher(index: index)
    /// The recording's length in seconds, once ``finish(recordingDuration:)`` knows it.
    private var recordingEnd: Double?
    private let logShifts: [Double]
    private var nextBlockEnd: Int
    private var blockVotes: [[(key: UInt64, count: Int32)]] = []
    private var table: VoteTable
    private var open: [OpenSegment] = []
    /// Lines closed within the landmark history (see ``attach(ref:candidate:hits:slope:)``).
    private var recentlyClosed: [OpenSegment] = []
    private var finished: [Segment] = []
    private var nextID = 1
    /// Receives ``ScanEvent``s as soon as they are decided; events come in the order they
    /// were decided and an `ended` always follows its `started`.
    public var onEvent: ((ScanEvent) -> Void)?

    /// Creates a scanner over `index` with `options` and `tuning`. Traps when
    /// `options.candidates` holds more than 64 speeds or the catalog more than 2^20 references.
    public init(index: CatalogIndex, options: ScanOptions = ScanOptions(), tuning: ScanTuning = ScanTuning()) {
        precondition(options.candidates.count <= 64, "ScanOptions.candidates holds at most 64 speeds")
        precondition(index.references.count <= 1 << 20, "a scanner handles at most 2^20 references")
        self.index = index
        self.options = options
        self.tuning = tuning
        hasher = LandmarkHasher(configuration: index.configuration)
        hop = index.configuration.hopDuration
        hopFrames = max(1, Int((options.hopSeconds / hop).rounded()))
        blocksPerWindow = max(1, Int((options.windowSeconds / options.hopSeconds).rounded()))
        nextBlockEnd = hopFrames
        historyFrames = Int(((options.windowSeconds + tuning.historySeconds) / hop).rounded())
        // One hop's votes: a few thousand keys on the benchmark's mixes (the table grows when a
        // hop holds more). 2^14 slots stay in the processor's cache where 2^16 (768 KB) did not;
        // the keys drain in the order they were first voted for, whatever the capacity.
        table = VoteTable(capacity: 1 << 14)
        spectrum = SpectrumRing(width: index.configuration.maxBin - index.configuration.minBin + 1)
        logShifts = options.candidates.map { LandmarkHasher(configuration: index.configuration).logShift(frequencyScale: $0.frequencyScale) }
    }

    /// Maps a segment's hits and length to a confidence in 0…1. Chance alignments of one
    /// reference gather one to two hits per second of window (frame differences are looked up
    /// ±1 frame); the logistic curve puts 0.5 at 13 + 0.75 hits per second of segment.
    public static func confidence(hits: Int, duration: Double) -> Double {
        let expected = 13 + 0.75 * duration
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
        clockFrame = max(clockFrame, Int(l.anchorFrame) + Int(l.deltaFrames) + 1)
        let bin = Int(l.anchorFrame) / RecordingScanner.landmarkBinFrames
        while latestLandmarkBin < bin {
            latestLandmarkBin += 1
            landmarkBins[latestLandmarkBin % RecordingScanner.landmarkBinCount] = 0
        }
        if bin > latestLandmarkBin - RecordingScanner.landmarkBinCount { landmarkBins[bin % RecordingScanner.landmarkBinCount] += 1 }
        guard let p = hasher.prepare(l) else { return }
        window.append(p)
        history.append(p)
        appended += 1
        vote(p)
    }

    /// Adds the recording's spectrum row of frame `frame` (``SpectrumRing/quantise(_:)`` of a
    /// ``Spectrogram`` row of the catalog's configuration), in ascending frame order and ahead
    /// of the landmarks anchored there. Optional: with rows, a segment's edges move outwards
    /// where the reference's peaks still stand out in the spectrum (``SpectrumEdge``; a spot
    /// under speech whose first and last seconds give no landmark hit); without, edges come
    /// from hits alone.
    public func consumeSpectrum(frame: Int, levels: [UInt8]) {
        spectrum.append(frame: frame, levels: levels)
    }

    /// Moves the scanner's clock to recording frame `frame` without a landmark — silence, or a
    /// live source that is down — so that windows ending before it are decided and open
    /// segments end on time. Landmarks consumed afterwards should not be older than `frame`.
    public func advance(toFrame frame: Int) {
        clockFrame = max(clockFrame, frame)
        while frame >= nextBlockEnd { closeBlock() }
    }

    /// Ends the recording and returns every segment in start order.
    ///
    /// - Parameter recordingDuration: the recording's length in seconds, when known; segments
    ///   never reach past it. Default: the end of the last landmark or clock advance seen.
    public func finish(recordingDuration: Double? = nil) -> [Segment] {
        if let d = recordingDuration, d.isFinite, d >= 0 {
            clockFrame = max(clockFrame, Int((d / hop).rounded(.up)))
            recordingEnd = d
        }
        closeBlock()
        for s in open { close(s) }
        open.removeAll()
        if onEvent != nil { decideLive(now: Double(clockFrame) * hop, final: true) }
        let resolved = resolve(finished)
        partialMaterial = resolved.partial
        return resolved.plays
    }

    /// The partial material of the recording (see ``PartialMaterial``), in recording order: set
    /// by ``finish(recordingDuration:)``, empty before.
    public private(set) var partialMaterial: [PartialMaterial] = []

    // MARK: voting

    /// Window vote keys: a marker bit (63), the speed candidate (6 bits from 52), the reference
    /// (20 bits from 32) and the offset bin (32 bits: (offset + ``offsetBias``) / 4 frames).
    /// Offsets run over ±2^33 frames (about 4 years at 16 ms), so no recording or reference a
    /// monitor can reach leaves the key's range; reference indices are below 2^20.
    private static let candidateShift: UInt64 = 52, referenceShift: UInt64 = 32, offsetBias = 1 << 33

    private func key(ref: UInt64, candidate: Int, offsetBin: Int) -> UInt64 {
        1 << 63 | UInt64(candidate) << RecordingScanner.candidateShift | ref << RecordingScanner.referenceShift | UInt64(offsetBin)
    }

    /// The offset (reference frame − scaled recording frame) at the middle of offset bin
    /// `offsetBin` of a vote key: bins are 4 frames wide and biased by ``offsetBias``.
    private static func binCentre(_ offsetBin: Int) -> Int { offsetBin * 4 + 2 - offsetBias }

    /// The parts of a window vote key made by ``key(ref:candidate:offsetBin:)``.
    private func decodeKey(_ k: UInt64) -> (candidate: Int, ref: UInt64, offsetBin: Int) {
        (Int((k >> RecordingScanner.candidateShift) & 0x3F), (k >> RecordingScanner.referenceShift) & 0xFFFFF,
         Int(k & ((1 << RecordingScanner.referenceShift) - 1)))
    }

    private func vote(_ l: LandmarkHasher.Prepared) {
        if options.voteSubsample > 1 && Int(l.ratioStep) % options.voteSubsample != 0 { return }
        let postings = index.postings
        let referenceCount = UInt64(index.references.count)
        let stride = max(1, options.coarseStride)
        // The table is moved out of the object while it counts (no exclusivity check per vote).
        var table = self.table
        self.table = VoteTable.empty
        defer { self.table = table }
        // Every candidate's bucket is found (and its first posting read) before any is counted:
        // the reads, mostly cache misses, then overlap instead of waiting one after another.
        withUnsafeTemporaryAllocation(of: (lo: Int, hi: Int, ci: Int).self, capacity: options.candidates.count) { buckets in
            var n = 0
            postings.start.withUnsafeBufferPointer { start in
                for ci in Swift.stride(from: (options.candidates.count / 2) % stride, to: options.candidates.count, by: stride) {
                    let c = options.candidates[ci]
                    guard let h = hasher.hash(l, timeScale: c.timeScale, logShift: logShifts[ci]) else { continue }
                    let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                    if hi - lo > options.maxBucket || hi == lo { continue }
                    buckets[n] = (lo, hi, ci)
                    n += 1
                }
            }
            var touched: UInt8 = 0
            for b in 0..<n { touched |= postings.touch(buckets[b].lo) }
            sink |= touched
            for b in 0..<n {
                let (lo, hi, ci) = buckets[b]
                let q = Int((Double(l.anchorFrame) * options.candidates[ci].timeScale).rounded())
                postings.withPostings(lo..<hi) { entries in
                    for entry in entries {
                        let off = PostingIndex.frame(of: entry) - q + RecordingScanner.offsetBias
                        let ref = PostingIndex.reference(of: entry)
                        // (A posting of no reference can only come from a damaged index file.)
                        guard off >= 0, ref < referenceCount else { continue }
                        table.add(key(ref: ref, candidate: ci, offsetBin: off >> 2))
                    }
                }
            }
        }
    }

    private func closeBlock() {
        blockVotes.append(table.drain(minimum: 2))
        if blockVotes.count > blocksPerWindow { blockVotes.removeFirst() }
        let windowEnd = nextBlockEnd
        let windowStart = windowEnd - blocksPerWindow * hopFrames
        windowFirst += RecordingScanner.removeLandmarks(before: windowStart, from: &window, inOrder: &runCaches)
        if let first = history.first, Int(first.anchorFrame) < windowEnd - historyFrames - hopFrames {
            historyFirst += RecordingScanner.removeLandmarks(before: windowEnd - historyFrames, from: &history, inOrder: &runCaches)
        }
        // Caches of references no window looked up since the last one are dropped.
        if runCaches != nil { runCaches = runCaches!.filter { $0.value.lastUsed >= windowEnd - hopFrames } }
        detect(windowStart: windowStart, windowEnd: windowEnd)
        for i in open.indices {
            if !open[i].peakStartDecided {
                (open[i].peakStart, open[i].peakStartDecided) = peakStart(open[i]).settling(open[i].peakStart)
            }
            // A start that the spectrum left where the hits put it, and that the hits then moved
            // later (hits before it taken for chance once the line's later hits came), is
            // decided again from where it is now: the readings between were taken for the
            // stretch's own and never walked. Decided from a first hit that was later dropped,
            // the start of a spot under speech on the alternative benchmark stayed on the next
            // hits, 1.2 s late. (A start the spectrum moved stays moved: it lies before both.)
            if open[i].spectrumStartDecided, open[i].spectrumStart == nil,
               let e = open[i].spectrumStartEdge, startFrame(open[i]) > e {
                (open[i].spectrumStart, open[i].spectrumStartDecided) = (nil, false)
            }
            if !open[i].spectrumStartDecided {
                open[i].spectrumStartEdge = startFrame(open[i])
                (open[i].spectrumStart, open[i].spectrumStartDecided) = spectrumStart(open[i]).settling(open[i].spectrumStart)
            }
            if !open[i].onsetDecided {
                (open[i].onset, open[i].onsetDecided) = onsetStart(open[i]).settling(open[i].onset)
            }
            if !open[i].changeStartDecided {
                (open[i].changeStart, open[i].changeStartDecided) = changeStart(open[i]).settling(open[i].changeStart)
            }
        }
        for i in open.indices {
            checkSearchedSpeed(&open[i], at: windowEnd)
            checkEvidence(&open[i], at: windowEnd)
        }
        nextBlockEnd += hopFrames
        // Close segments not extended for a while.
        let limit = windowEnd - Int(options.closeAfterSeconds / hop)
        var keep: [OpenSegment] = []
        for s in open {
            if s.lastHitFrame < limit { close(s) } else { keep.append(s) }
        }
        open = keep
        if onEvent != nil { decideLive(now: Double(windowEnd) * hop, final: false) }
    }

    private func detect(windowStart: Int, windowEnd: Int) {
        // The window's votes per key, summed over its hops: sorted by key, so the neighbouring
        // offset bins of a key (key ± 1) are next to it.
        var votes: [(key: UInt64, count: Int32)] = []
        votes.reserveCapacity(blockVotes.reduce(0) { $0 + $1.count })
        for block in blockVotes { votes.append(contentsOf: block) }
        votes.sort { $0.key < $1.key }
        var sums: [(key: UInt64, count: Int32)] = []
        sums.reserveCapacity(votes.count)
        for v in votes {
            if let last = sums.last, last.key == v.key { sums[sums.count - 1].count += v.count } else { sums.append(v) }
        }
        // Every open line that still holds in this window is extended by its exact hits, whatever
        // the window's votes (a line's hits use every landmark and the frame differences ±1, its
        // votes one landmark in ``ScanOptions/voteSubsample`` at the coarse speeds: under noise a
        // play goes on gathering hits over windows whose votes miss it). A reference that repeats
        // itself matches a window at several offsets with similar counts: each of its open lines
        // gathers its own evidence; the weaker duplicate is dropped when segments are cleaned up
        // (``resolveOverlaps(_:threshold:)``).
        let windowMid = (windowStart + windowEnd) / 2
        var lines: [Int: [(referenceFrame: Double, hits: Int)]] = [:]
        // A young line (its first ``youngLineWindows`` windows) is counted at the neighbouring
        // speed candidates too and moves to one that gives a tenth more hits (at least 3): its
        // candidate was picked on the first window's few hits, and a play opened at 0.99 that
        // plays at 1.00 gathered a third of its hits for good (so that the other version of
        // shared material outscored it and came out as a play of its own).
        for k in open.indices {
            let s = open[k]
            let slope = s.line.slope
            let referenceFrame = s.referenceFrame(at: windowMid)
            let offset = Int((referenceFrame - slope * Double(windowMid)).rounded())
            var own = exactHits(ref: s.ref, candidate: s.candidate, around: offset, slope: slope)
            if s.recounts < RecordingScanner.youngLineWindows {
                open[k].recounts += 1
                for ci in [s.candidate - 1, s.candidate + 1] where options.candidates.indices.contains(ci) {
                    let hits = exactHits(ref: s.ref, candidate: ci, around: offset, slope: slope)
                    if hits.count >= own.count + max(3, own.count / 10) {
                        own = hits
                        // (A line of a pitch shift keeps its time scale of 1.)
                        if open[k].timeScale == options.candidates[open[k].candidate].timeScale {
                            open[k].timeScale = options.candidates[ci].timeScale
                        }
                        open[k].candidate = ci
                    }
                }
            }
            if own.count >= options.minWindowHits { attach(ref: s.ref, candidate: open[k].candidate, hits: own, slope: slope) }
            lines[s.ref, default: []].append((referenceFrame, own.count))
        }
        // Best (candidate, offset bin) per reference, counting neighbouring offset bins, among
        // the votes no open line explains already. An open line explains a vote when it lies at
        // the vote's alignment (its reference frame at the window's middle within
        // ``ScanTuning/lineToleranceSeconds``, 0.4 s, as
        // ``attach(ref:candidate:hits:slope:)`` joins hits to a line) and has at least as many
        // hits as the vote stands for. A passage the reference repeats matches both copies with
        // the same votes: the copy found first must not keep the other from opening where it
        // starts (the recording goes on as only one of them does).
        var best: [UInt64: (key: UInt64, count: Int32, far: Bool)] = [:], top: [UInt64: Int32] = [:]
        for i in sums.indices {
            let (k, n) = sums[i]
            let below = i > 0 && sums[i - 1].key == k &- 1 ? sums[i - 1].count : 0
            let above = i + 1 < sums.count && sums[i + 1].key == k &+ 1 ? sums[i + 1].count : 0
            let total = n + below + above
            guard total >= Int32(max(3, options.minWindowHits / max(1, options.voteSubsample))) else { continue }
            let (coarse, ref, offsetBin) = decodeKey(k)
            top[ref] = max(top[ref] ?? 0, total)
            if let b = best[ref], b.count > total || (b.count == total && b.key < k) { continue }
            var far = true
            if let explaining = lines[Int(ref)] {
                let voted = Double(RecordingScanner.binCentre(offsetBin)) + options.candidates[coarse].timeScale * Double(windowMid)
                if explaining.contains(where: {
                    abs($0.referenceFrame - voted) <= tuning.lineToleranceSeconds / hop && $0.hits >= Int(total) * max(1, options.voteSubsample)
                }) { continue }
                far = explaining.allSatisfy { abs($0.referenceFrame - voted) > tuning.copySeparationSeconds / hop }
            }
            best[ref] = (k, total, far)
        }
        // A vote below the reference's best is looked at only as another copy: at least half as
        // strong, and more than 2 s (``ScanTuning/copySeparationSeconds``) from every open line
        // of the reference (nearer, it is the
        // open line's own smear over the coarse speeds and offset bins, and opening it split a
        // play of a mix in two).
        best = best.filter { ref, b in b.count >= top[ref]! || (b.far && 2 * b.count >= top[ref]!) }
        for (ref, b) in best.sorted(by: { $0.value.count > $1.value.count }) {
            let (coarse, _, offsetBin) = decodeKey(b.key)
            // The coarse offset was measured at the window's middle with the coarse speed;
            // each neighbouring fine speed shifts it by (its speed − coarse speed) · middle.
            // A pitch shift without a tempo change (time scale 1 at a pitched candidate) is
            // looked for too: the reference time at the window's middle is the same.
            var bestHits: [Hit] = [], bestCandidate = coarse, bestSlope: Double? = nil
            for ci in max(0, coarse - 1)...min(options.candidates.count - 1, coarse + 1) {
                let scale = options.candidates[ci].timeScale
                let shift = (scale - options.candidates[coarse].timeScale) * Double(windowMid)
                let around = RecordingScanner.binCentre(offsetBin) - Int(shift.rounded())
                let hits = exactHits(ref: Int(ref), candidate: ci, around: around)
                if hits.count > bestHits.count { bestHits = hits; bestCandidate = ci; bestSlope = nil }
                if abs(scale - 1) > 0.005 {
                    let level = around + Int(((scale - 1) * Double(windowMid)).rounded())
                    let pitched = exactHits(ref: Int(ref), candidate: ci, around: level, slope: 1)
                    if pitched.count > bestHits.count { bestHits = pitched; bestCandidate = ci; bestSlope = 1 }
                }
            }
            guard bestHits.count >= options.minWindowHits else { continue }
            attach(ref: Int(ref), candidate: bestCandidate, hits: bestHits, slope: bestSlope)
        }
    }

    /// One landmark of the recording that agrees with a reference line.
    struct Hit {
        /// Anchor frame in the recording.
        var x: Int32
        /// Anchor frame in the reference.
        var y: Int32
        /// Target frame in the recording (anchor frame + frame difference): the landmark's
        /// audio reaches this frame, so the reference plays at least until it.
        var end: Int32
    }

    /// Hits of the window's landmarks (with `inHistory`, the history's) on reference `ref` near
    /// `offset` (reference frame − `slope` · recording frame, ±6 frames; `slope` defaults to the
    /// time scale of speed candidate `ci`), hashed at candidate `ci`.
    ///
    /// A landmark's frame difference is looked up as it is and, when that finds nothing, one
    /// frame shorter and longer (``ScanOptions/deltaTolerance``): peaks lie between frames, and
    /// a recording whose frame grid falls half a hop off the reference's rounds about half of
    /// its frame differences the other way. Without this the hits of the same audio vary
    /// 2.5-fold with where the recording was cut.
    ///
    /// The postings a landmark finds in `ref`'s runs depend on the candidate only, not on the
    /// offset or slope, and consecutive windows share three quarters of their landmarks; they
    /// are looked up once per landmark, reference and candidate (``RunCache``) and only the
    /// offset test runs per call: the hits are those of looking every landmark up each time.
    private func exactHits(ref: Int, candidate ci: Int, around offset: Int, slope: Double? = nil,
                           inHistory: Bool = false) -> [Hit] {
        let landmarks = inHistory ? history : window
        let first = inHistory ? historyFirst : windowFirst
        let c = options.candidates[ci]
        let variants = 2 * max(0, options.deltaTolerance) + 1
        let key = ref << 6 | ci
        var cache: RunCache
        if let cached = runCaches?[key], cached.firstSeq <= first, cached.firstSeq + cached.count(variants: variants) >= first {
            cache = cached
            runCaches![key] = nil   // (modified below without a copy)
        } else {
            cache = RunCache(firstSeq: first)
        }
        cache.trim(before: historyFirst, variants: variants)
        let covered = cache.firstSeq + cache.count(variants: variants) - first
        if covered < landmarks.count { lookUp(landmarks[covered...], ref: ref, candidate: ci, into: &cache) }
        var hits: [Hit] = []
        let base = (first - cache.firstSeq) * variants
        let scale = slope ?? c.timeScale, dropped = cache.dropped
        cache.frames.withUnsafeBufferPointer { frames in
            cache.ends.withUnsafeBufferPointer { ends in
                // (Most landmarks find no posting of the reference in any variant: those are
                // passed over on their slots' ends alone.)
                var slotEnd = base == 0 ? dropped : ends[base - 1]
                for (i, l) in landmarks.enumerated() {
                    let slots = base + i * variants
                    let landmarkStart = slotEnd
                    slotEnd = ends[slots + variants - 1]
                    guard slotEnd > landmarkStart else { continue }
                    let q = Int((Double(l.anchorFrame) * scale).rounded())
                    let end = l.anchorFrame + Int32(l.deltaFrames)
                    var lo = landmarkStart - dropped
                    for k in 0..<variants {
                        let hi = ends[slots + k] - dropped
                        var found = false
                        for e in lo..<hi {
                            let f = Int(frames[e])
                            if abs(f - q - offset) <= 6 {
                                hits.append(Hit(x: l.anchorFrame, y: Int32(truncatingIfNeeded: f), end: end))
                                found = true
                            }
                        }
                        if found { break }
                        lo = hi
                    }
                }
            }
        }
        cache.lastUsed = nextBlockEnd
        if runCaches != nil { runCaches![key] = cache }
        return hits
    }

    /// The anchor frames of reference `ref`'s postings that each of `landmarks` finds at speed
    /// candidate `ci` with each frame-difference variant (as it is, then one frame shorter and
    /// longer: see ``exactHits(ref:candidate:around:slope:inHistory:)``), appended to `cache`
    /// landmark by landmark. A variant with no hash, or whose bucket is empty or skipped
    /// (``ScanOptions/maxBucket``), finds none.
    ///
    /// The buckets of a run of landmarks are found (and their first postings read) before any
    /// is searched for the reference: the reads, mostly cache misses, then overlap.
    private func lookUp(_ landmarks: ArraySlice<LandmarkHasher.Prepared>, ref: Int, candidate ci: Int, into cache: inout RunCache) {
        let postings = index.postings
        let c = options.candidates[ci], shift = logShifts[ci]
        let variants = 2 * max(0, options.deltaTolerance) + 1
        let batch = 64
        withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: batch * variants) { buckets in
            var from = landmarks.startIndex
            while from < landmarks.endIndex {
                let to = min(from + batch, landmarks.endIndex)
                var n = 0
                var touched: UInt8 = 0
                postings.start.withUnsafeBufferPointer { start in
                    for l in landmarks[from..<to] {
                        for k in 0..<variants {
                            var v = l
                            v.deltaFrames += Int16(k == 0 ? 0 : (k % 2 == 1 ? -(k + 1) / 2 : k / 2))
                            var bucket = 0..<0
                            if let h = hasher.hash(v, timeScale: c.timeScale, logShift: shift) {
                                let lo = Int(start[Int(h)]), hi = Int(start[Int(h) + 1])
                                if hi - lo <= options.maxBucket && hi > lo { bucket = lo..<hi }
                            }
                            buckets[n] = bucket
                            n += 1
                        }
                    }
                }
                for b in 0..<n where !buckets[b].isEmpty { touched |= postings.touch(buckets[b].lowerBound) }
                sink |= touched
                for b in 0..<n {
                    if !buckets[b].isEmpty {
                        postings.withPostings(postings.run(of: ref, in: buckets[b])) { entries in
                            for e in entries { cache.frames.append(UInt32(truncatingIfNeeded: e)) }
                        }
                    }
                    cache.ends.append(cache.dropped + cache.frames.count)
                }
                from = to
            }
        }
    }

    /// What landmarks of the history find in one reference's postings at one speed candidate:
    /// for consecutive landmarks (from sequence number `firstSeq`) and each frame-difference
    /// variant, the anchor frames of the reference's postings of that hash.
    private struct RunCache {
        /// Sequence number of the first landmark covered.
        var firstSeq: Int
        /// Per landmark and variant, the end of its frames in ``frames`` plus ``dropped``.
        var ends: [Int] = []
        var frames: [UInt32] = []
        /// Frames dropped from the front of ``frames`` with the landmarks that left the history.
        var dropped = 0
        /// ``RecordingScanner/nextBlockEnd`` when last used.
        var lastUsed = 0

        init(firstSeq: Int) { self.firstSeq = firstSeq }

        /// Landmarks covered.
        func count(variants: Int) -> Int { ends.count / variants }

        /// Drops the landmarks before sequence number `seq` once they are half of those covered.
        mutating func trim(before seq: Int, variants: Int) {
            let cut = min(seq - firstSeq, count(variants: variants))
            guard cut > 0, 2 * cut >= count(variants: variants) else { return }
            let end = ends[cut * variants - 1]
            frames.removeFirst(end - dropped)
            dropped = end
            ends.removeFirst(cut * variants)
            firstSeq += cut
        }
    }

    /// Removes the landmarks anchored before `frame` from `landmarks` and returns how many of
    /// them lead it (the count to add to its first sequence number). When some lie after a
    /// later landmark (landmarks fed out of order) the sequence numbers no longer hold:
    /// `caches` becomes `nil` for the rest of the scan.
    private static func removeLandmarks(before frame: Int, from landmarks: inout [LandmarkHasher.Prepared],
                                        inOrder caches: inout [Int: RunCache]?) -> Int {
        let cut = landmarks.firstIndex { Int($0.anchorFrame) >= frame } ?? landmarks.count
        if landmarks[cut...].contains(where: { Int($0.anchorFrame) < frame }) {
            caches = nil
            landmarks.removeAll { Int($0.anchorFrame) < frame }
            return cut
        }
        landmarks.removeFirst(cut)
        return cut
    }

    // MARK: segments

    /// Windows over which a new line's speed candidate is compared with its neighbours.
    static let youngLineWindows = 4

    private struct OpenSegment {
        /// Windows that have counted this line's hits since it opened.
        var recounts = 0
        var ref: Int
        var candidate: Int
        var timeScale: Double
        var firstHitFrame: Int
        var lastHitFrame: Int
        /// The start (recording frame) from single peaks when they show that the first hits
        /// were chance (see ``PeakEdge/later(_:inside:chance:)``), set when the line opens.
        var peakStart: Double?
        /// Whether ``peakStart`` has been decided (once the history holds 3 s after the start).
        var peakStartDecided = false
        /// The start (recording frame) moved earlier by the reference's peaks in the spectrum
        /// (see ``SpectrumEdge``), and whether that has been decided.
        var spectrumStart: Double?
        var spectrumStartDecided = false
        /// The start from hits (``RecordingScanner/startFrame(_:)``) that ``spectrumStart`` was decided
        /// from: a start from hits that moves is decided again.
        var spectrumStartEdge: Int?
        /// The end (recording frame, fractional, where the audio ends) moved later by the
        /// spectrum, set at close.
        var spectrumEnd: Double?
        /// The start (recording frame, fractional) at the audio's onset after digital silence
        /// (see ``onsetStart(_:)``), and whether that has been decided.
        var onset: Double?
        var onsetDecided = false
        /// The start (recording frame, fractional) where the spectrum changes from other audio
        /// to the stretch (see ``changeStart(_:)``), and whether that has been decided.
        var changeStart: Double?
        var changeStartDecided = false
        /// The end (recording frame, fractional) where the spectrum changes to the next play at
        /// a butt splice (see ``changeEnd(_:)``), set at close.
        var changeEnd: Double?
        /// The end (recording frame, fractional) where digital silence begins after the last
        /// hits (see ``silenceEnd(_:)``), set at close.
        var endAtSilence: Double?
        /// The spectral score (``SpectralCheck``) of a line at a searched speed, when it is under
        /// ``RecordingScanner/searchedSpeedLineScore`` (see ``checkSearchedSpeed(_:at:)``), and the window end
        /// it was read at.
        var spectralVeto: Double?
        var spectralCheckedAt: Int?
        /// The strongest evidence against chance measured for the line (``PlayEvidence``), and
        /// the window end it was measured at; `nil` until its hits reach the threshold.
        var evidence: PlayEvidence?
        var evidenceCheckedAt: Int?
        /// Landmark hits added so far.
        var hits: Int { Int(n) }
        /// Recording frames of the hits kept (``head`` and ``tail``), ascending.
        var hitFrames: [Int32] {
            let headEnd = head.last?.x ?? .min
            return (head.map(\.x) + tail.lazy.map(\.x).filter { $0 > headEnd }).sorted()
        }
        /// The earliest hits (at most ``RecordingScanner/edgeHits``), in recording order: the start edge.
        var head: [Hit] = []
        /// The latest hits (at most twice ``RecordingScanner/edgeHits``), in recording order: the end edge.
        var tail: [Hit] = []
        // Least-squares sums of reference frame against recording frame.
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        var x0 = 0.0

        /// Drops the hits at recording frame `frame` and later (when `frame` is not `nil`),
        /// keeping at least one hit.
        mutating func trimEnd(before frame: Int32?) {
            guard let frame, let keep = tail.firstIndex(where: { $0.x >= frame }), keep > 0 || head.contains(where: { $0.x < frame }) else { return }
            for h in tail[keep...] {
                let dx = Double(h.x) - x0, y = Double(h.y)
                n -= 1; sx -= dx; sy -= y; sxx -= dx * dx; sxy -= dx * y
            }
            tail.removeSubrange(keep...)
            head.removeAll { $0.x >= frame }
            lastHitFrame = Int(max(tail.last?.x ?? .min, head.last?.x ?? .min))
        }

        mutating func add(_ h: Hit) {
            if head.count < RecordingScanner.edgeHits { head.append(h) }
            tail.append(h)
            if tail.count > 2 * RecordingScanner.edgeHits { tail.removeFirst(tail.count - RecordingScanner.edgeHits) }
            let dx = Double(h.x) - x0, y = Double(h.y)
            n += 1; sx += dx; sy += y; sxx += dx * dx; sxy += dx * y
        }

        /// The hits' least-squares slope (reference frames per recording frame), when it is well
        /// determined: 8 hits or more spread over more than 45 frames (standard deviation).
        var fittedSlope: Double? {
            let d = n * sxx - sx * sx
            guard n >= 8 && d > 1e-6 && sxx / n > 2000 else { return nil }
            return (n * sxy - sx * sy) / d
        }

        /// (slope, reference frame at recording frame x0): the fitted slope within
        /// ``RecordingScanner/offSpeedSlope`` of the speed candidate's time scale, else the time scale.
        var line: (slope: Double, intercept: Double) {
            if let slope = fittedSlope, abs(slope - timeScale) < RecordingScanner.offSpeedSlope { return (slope, (sy - slope * sx) / n) }
            return (timeScale, (sy - timeScale * sx) / max(n, 1))
        }

        /// Whether the hits run at a speed the line cannot follow: their ``fittedSlope`` lies
        /// ``RecordingScanner/offSpeedSlope`` or more from the speed candidate's time scale. The line then
        /// keeps the candidate's slope and its intercept walks with the hits, so every time it
        /// maps is off by up to the drift over half its length (speech re-timed 10 %, just past
        /// the speed search, gave plays at speed 1 mapped 0.5 s off at both ends).
        var offSpeed: Bool { fittedSlope.map { abs($0 - timeScale) >= RecordingScanner.offSpeedSlope } ?? false }

        /// Distance in frames of a hit from the line.
        func residual(_ h: Hit) -> Double {
            let l = line
            return abs(Double(h.y) - (l.intercept + l.slope * (Double(h.x) - x0)))
        }

        func referenceFrame(at x: Int) -> Double {
            let l = line
            return l.intercept + l.slope * (Double(x) - x0)
        }
    }

    /// Difference between a line's least-squares slope and its speed candidate's time scale at
    /// which the line no longer follows its hits (``OpenSegment/offSpeed``): 0.1, the bound
    /// within which ``OpenSegment/line`` takes the fitted slope. Such a line is no play: its
    /// times are wrong, and a wrong time is worse than no answer.
    static let offSpeedSlope = 0.1

    /// Hits kept at each end of a segment for its edges (about 30 s of dense music).
    static let edgeHits = 2048

    private func attach(ref: Int, candidate ci: Int, hits: [Hit], slope: Double? = nil) {
        let c = options.candidates[ci]
        let scale = slope ?? c.timeScale
        let offsets = hits.map { Double($0.y) - scale * Double($0.x) }.sorted()
        let median = offsets[offsets.count / 2]
        let good = hits.filter { abs(Double($0.y) - scale * Double($0.x) - median) <= 2.5 }
            .sorted { ($0.x, $0.end) < ($1.x, $1.end) }
        guard good.count >= options.minWindowHits else { return }
        let mid = good.map { Int($0.x) }.reduce(0, +) / good.count
        let refAtMid = median + scale * Double(mid)
        let tolerance = tuning.lineToleranceSeconds / hop
        // A line heard clearly on both sides is followed within ``clearLineTolerance`` only: a
        // seek or a pause of 0.25-0.4 s inside one play is a new line, not a bend of the old one
        // (fitted through both, a 0.3 s pause came out as one play at speed 0.986 starting 3.6 s late).
        let clear = Double(good.count) >= RecordingScanner.straddleHitsPerSecond * options.windowSeconds
        func follows(_ s: OpenSegment) -> Bool {
            let limit = clear && s.hits >= RecordingScanner.clearLineHits ? RecordingScanner.clearLineTolerance / hop : tolerance
            return abs(s.referenceFrame(at: mid) - refAtMid) <= limit
        }
        if let i = open.firstIndex(where: { s in
            s.ref == ref && abs(s.candidate - ci) <= 2 && follows(s)
        }) {
            var s = open[i]
            for h in good where Int(h.x) > s.lastHitFrame { s.add(h) }
            s.lastHitFrame = max(s.lastHitFrame, Int(good.last!.x))
            open[i] = s
        } else {
            // A new line: trace it back through the landmark history, so that it starts at its
            // first hit even when the window that found it began later.
            // Where the window hears the play clearly (``straddleHitsPerSecond`` or more), the
            // trace stops at a gap of ``ScanOptions/closeAfterSeconds`` without hits before the
            // window's first one, as a line going forward closes there: six chance hits of a
            // reference over 8 s of other music, 16 s before its play, otherwise started the play
            // there (and cut the music between short at a boundary). A spot under speech gathers
            // a few hits a second, with longer gaps where the speech masks it (the rule on, one
            // started 7.5 s late).
            var traced = exactHits(ref: ref, candidate: ci, around: Int(median.rounded()), slope: scale, inHistory: true)
                .filter { abs(Double($0.y) - scale * Double($0.x) - median) <= 2.5 }
                .sorted { ($0.x, $0.end) < ($1.x, $1.end) }
            let maxGap = Int32(options.closeAfterSeconds / hop), firstGood = good[0].x
            if Double(good.count) >= RecordingScanner.straddleHitsPerSecond * options.windowSeconds,
               let g = traced.indices.dropLast().last(where: { traced[$0 + 1].x <= firstGood && traced[$0 + 1].x - traced[$0].x > maxGap }) {
                traced.removeFirst(g + 1)
            }
            var all = traced.count >= good.count ? traced : good
            // The last seconds of a line just closed are still in the window: they are not a new
            // play. Only hits after the closed line's last one count.
            if let closed = recentlyClosed.first(where: { $0.ref == ref && abs($0.referenceFrame(at: mid) - refAtMid) <= tolerance }) {
                all = all.filter { Int($0.x) > closed.lastHitFrame }
                guard all.count >= options.minWindowHits else { return }
            }
            // Where another line of the same reference explains the audio (a seek or a pause
            // inside one play: the reference goes on a moment earlier or later), this line's hits
            // there are the music's likeness to itself a moment away, not its play: the line
            // starts after the last stretch the other line dominates.
            let rivals = (open + recentlyClosed).filter { $0.ref == ref && !follows($0) }
            if !rivals.isEmpty {
                let cut = rivals.map { RecordingScanner.afterDominated(all.map(\.x), by: $0.hitFrames) }.max() ?? 0
                if cut > 0 {
                    all.removeFirst(cut)
                    guard all.count >= options.minWindowHits else { return }
                }
            }
            var s = OpenSegment(ref: ref, candidate: ci, timeScale: scale,
                                firstHitFrame: Int(all.first!.x), lastHitFrame: Int(all.last!.x))
            s.x0 = Double(s.firstHitFrame)
            for h in all { s.add(h) }
            open.append(s)
        }
    }

    /// Seconds within which a window's line continues an open one when both are heard clearly
    /// (the window with ``straddleHitsPerSecond`` hits a second or more, the open line with
    /// ``clearLineHits`` hits): 0.2 (otherwise ``ScanTuning/lineToleranceSeconds``, 0.4, which a
    /// line under noise or one just opened needs). A clean play's line is known to a frame or two.
    static let clearLineTolerance = 0.2
    /// Hits of an open line for ``clearLineTolerance``: 200.
    static let clearLineHits = 200

    /// Index of the first of `hits` (a new line's recording frames, ascending) after the last
    /// stretch of ``Matcher/dominanceBlock`` frames (counted from the first hit) where `other` (another
    /// line's recording frames, ascending) has at least ``Matcher/dominance`` times as many hits and at
    /// least ``Matcher/dominanceMinimum``; 0 when there is none. A seek of 0.7 s inside one play of
    /// Wesnoth's *Knolls* gave the new line 10–30 % of the old one's hits over the 15 s before
    /// it (the music is like itself 0.7 s away), so traced back it started at the play's start
    /// and was dropped as a repeat of the old line.
    static func afterDominated(_ hits: [Int32], by other: [Int32]) -> Int {
        guard let first = hits.first, let last = hits.last, !other.isEmpty else { return 0 }
        let block = Int32(Matcher.dominanceBlock)
        var lo = first, cutAt: Int32? = nil
        while lo <= last {
            let hi = lo + block
            let theirs = Matcher.hits(other, lo, hi)
            if theirs >= Matcher.dominanceMinimum && theirs >= Matcher.dominance * Matcher.hits(hits, lo, hi) { cutAt = hi }
            lo = hi
        }
        guard let cutAt else { return 0 }
        return hits.firstIndex { $0 >= cutAt } ?? hits.count
    }

    /// The recording frame where the last stretch of `hits` (a line's recording frames,
    /// ascending) that `other` (a later line of the same reference) dominates, as in
    /// ``afterDominated(_:by:)``, begins: walking back from the last hit, stretches of
    /// ``Matcher/dominanceBlock`` frames that `other` dominates or that hold few hits of either (a
    /// pause) are passed, up to one where `hits` hold ``Matcher/dominanceMinimum`` or more undominated;
    /// `nil` when no stretch at the end is dominated.
    static func dominatedEnd(_ hits: [Int32], by other: [Int32]) -> Int32? {
        guard let first = hits.first, let last = hits.last, !other.isEmpty else { return nil }
        let block = Int32(Matcher.dominanceBlock)
        var hi = last + 1, cut: Int32? = nil
        while hi > first {
            let lo = hi - block
            let ours = Matcher.hits(hits, lo, hi), theirs = Matcher.hits(other, lo, hi)
            if theirs >= Matcher.dominanceMinimum && theirs >= Matcher.dominance * ours { cut = lo }
            else if ours >= Matcher.dominanceMinimum { break }
            hi = lo
        }
        return cut
    }

    /// Hits per second that a reference line gathers by chance from audio it does not play:
    /// 0.1. Chance is not rare next to a stretch: a hash needs only one peak to coincide when
    /// the other is a peak of the stretch, and two pieces of music in the same tuning share
    /// frequencies.
    static let chanceHitsPerSecond = 0.1

    /// Index of the first of `positions` (hit frames, ascending, each once) that belongs to the
    /// stretch rather than to chance. Hits `i ..< i + k` (k = 1…4: chance hits come in small
    /// clusters, since landmarks share peaks) are strays when a likelihood-ratio test prefers
    /// chance for them: with Poisson hits at the local rate `r` inside the stretch (measured
    /// over `horizon` frames after them) and `chanceRate` outside, the stretch needs
    /// `k · ln(r / chanceRate) ≥ r · gap`, where `gap` runs from hit `i` to hit `i + k`.
    /// Dense music keeps a lone hit up to about 0.15 s ahead of the rest, a spot under speech
    /// gathering 2 hits per second up to about 1.5 s.
    ///
    /// Hits right after silence are not strays: with no audio before them there is no
    /// neighbouring audio for a landmark to straddle, so hit `i` is the edge when
    /// `silentBefore(positions[i])` holds and the next hit follows within `horizon / 2` (a
    /// track whose first second is quieter than the rest gathers fewer hits there, which the
    /// rate test would take for chance).
    ///
    /// A cluster that passes but whose landmarks all reach across the gap (each hit's other end,
    /// `reach`, at or past the hit after the cluster, within 2 frames) is tested again at
    /// ``straddleChanceFactor`` times the chance rate and skipped whole when it fails, where the
    /// stretch gathers at least `straddleRate` hits per frame: a landmark anchored in the audio
    /// before a stretch with its targets on the stretch's first peaks needs only its anchor's
    /// peak to coincide, and its fan-out gives several hits at once. Two such anchors 0.26-0.37 s
    /// before a clean stretch started it 0.37 s early (0.59 s with the spectrum's change point
    /// searched from there). Such strays lie at most one landmark's `span` (frames, the target
    /// zone's reach) before the stretch, so clusters are skipped this way only up to `span` after
    /// the first one. Under noise (fewer than `straddleRate` hits) the sparse hits of the
    /// stretch itself reach the next hit as often, and the test skipped them: a play under pink
    /// noise at 0 dB started 0.78 s late (10 s without the `span` bound).
    /// - Parameters:
    ///   - chanceRate: chance hits per frame.
    ///   - horizon: frames over which the local rate is measured.
    ///   - reach: per position, the position (same axis) that every landmark hitting there
    ///     reaches to (a start's hits: their target frames); `nil`: no cluster straddles.
    ///   - span: frames after the first straddling cluster skipped within which later ones may
    ///     be skipped too (default 0: one).
    ///   - straddleRate: the least rate (hits per frame after the cluster) at which straddling
    ///     clusters are tested (default 0: always).
    ///   - silentBefore: whether the recording holds no landmark just outside position `p`
    ///     (default: never).
    static func edge(_ positions: [Int32], chanceRate: Double, horizon: Int, reach: [Int32]? = nil, span: Int = 0,
                     straddleRate: Double = 0, silentBefore: (Int32) -> Bool = { _ in false }) -> Int {
        func count(from j: Int, through limit: Int) -> Int {
            var lo = j, hi = positions.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if Int(positions[mid]) <= limit { lo = mid + 1 } else { hi = mid }
            }
            return lo - j
        }
        var i = 0, firstStraddle: Int32? = nil
        candidates: while i + 1 < positions.count {
            if Int(positions[i + 1] - positions[i]) <= horizon / 2 && silentBefore(positions[i]) { return i }
            for k in 1...4 where i + k < positions.count {
                let next = Int(positions[i + k])
                let rate = Double(count(from: i + k, through: next + horizon)) / Double(horizon)
                let gap = Double(next - Int(positions[i]))
                if rate * gap > Double(k) * log(max(rate / chanceRate, 1.0001)) { i += 1; continue candidates }
                if let reach, rate >= straddleRate, positions[i] <= (firstStraddle ?? positions[i]) + Int32(span),
                   (i..<(i + k)).allSatisfy({ Int(reach[$0]) >= next - 2 }),
                   rate * gap > Double(k) * log(max(rate / (chanceRate * straddleChanceFactor), 1.0001)) {
                    firstStraddle = firstStraddle ?? positions[i]
                    i += k
                    continue candidates
                }
            }
            return i
        }
        return i
    }

    /// How much likelier a chance hit is when only its anchor's peak has to coincide, its
    /// target lying on the stretch's own audio: 10 (one coincidence of a peak's frequency bin
    /// instead of two, with the frame difference given by the stretch). Starts only: at ends a
    /// masked spot's own sparse hits look the same.
    static let straddleChanceFactor = 10.0
    /// Hits per second a stretch gathers where it is heard clearly: 10 (clean audio gives 20-60;
    /// pink noise as loud as the music about 4). Its start's straddling strays are tested there,
    /// and a new line's trace back through the history stops at a gap without hits (see
    /// ``attach(ref:candidate:hits:slope:)``).
    static let straddleHitsPerSecond = 10.0

    /// ``edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)`` with the default chance
    /// rate and a ``ScanTuning/edgeHorizonSeconds`` horizon; `silentBefore(p)` when position `p` is
    /// preceded by silence (see ``silent(from:to:)``).
    private func edge(_ positions: [Int32], reach: [Int32]? = nil, silentBefore: (Int32) -> Bool) -> Int {
        RecordingScanner.edge(positions, chanceRate: RecordingScanner.chanceHitsPerSecond * hop, horizon: Int((tuning.edgeHorizonSeconds / hop).rounded()),
                     reach: reach, span: index.configuration.targetZoneMaxFrames,
                     straddleRate: RecordingScanner.straddleHitsPerSecond * hop, silentBefore: silentBefore)
    }

    /// The distinct values of `hits`' positions (ascending) and, per position, the least
    /// `reach` of the hits there: the positions and reaches ``edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)`` takes.
    static func positionsAndReach(_ hits: [(position: Int32, reach: Int32)]) -> (positions: [Int32], reach: [Int32]) {
        var positions: [Int32] = [], reach: [Int32] = []
        for h in hits.sorted(by: { $0.position < $1.position }) {
            if positions.last == h.position { reach[reach.count - 1] = min(reach[reach.count - 1], h.reach) } else {
                positions.append(h.position); reach.append(h.reach)
            }
        }
        return (positions, reach)
    }

    /// Whether the recording holds no landmark anchored in frames `from ..< to` (whole
    /// ``landmarkBinFrames`` bins inside that range), which must be known already: inside the
    /// recording, decoded (``advance(toFrame:)`` or later landmarks) and still in the ring.
    private func silent(from: Int, to: Int) -> Bool {
        let known = recordingEnd.map { Int(($0 / hop).rounded(.down)) } ?? clockFrame
        guard from >= 0, to <= known else { return false }
        let b = RecordingScanner.landmarkBinFrames
        let first = (from + b - 1) / b * b, last = to / b * b
        guard last > first, let n = landmarkCount(at: Int32(first), frames: last - first) else { return false }
        return n == 0
    }

    /// Whether silence (``silent(from:to:)``, ``ScanTuning/silenceFrames`` long) ends
    /// ``ScanTuning/silenceMargin`` frames before recording frame `frame`: a stretch starting
    /// there follows silence.
    private func silentBefore(_ frame: Int) -> Bool {
        silent(from: frame - tuning.silenceMargin - tuning.silenceFrames, to: frame - tuning.silenceMargin)
    }

    /// Start frame of a segment's audio from its earliest hits (see ``edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)``):
    /// those on the line within ±2 frames (chance hits spread over the ±6 of exact hits; all
    /// hits when fewer than 4 are), at distinct frames (the landmarks of one peak share its
    /// coincidences), moved past a fade-in (see ``audible(_:span:landmarks:)``) unless silence precedes
    /// them (see ``edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)``).
    private func startFrame(_ s: OpenSegment) -> Int {
        let onLine = s.head.filter { s.residual($0) <= 2 }
        let used = onLine.count >= 4 ? onLine : s.head
        let all = used.map(\.x).sorted()
        let (starts, reach) = RecordingScanner.positionsAndReach(used.map { ($0.x, $0.end) })
        let silentBefore = { (p: Int32) in self.silentBefore(Int(p)) }
        let first = starts[edge(starts, reach: reach, silentBefore: silentBefore)]
        // After silence there is no crossfade to trim.
        if silentBefore(first) { return Int(first) }
        return Int(RecordingScanner.audible(all.filter { $0 >= first }, span: audibleSpan) { self.landmarkCount(at: $0) })
    }

    /// End frame of a segment's audio from its latest hits' target frames, as ``startFrame(_:)``.
    private func endFrame(_ s: OpenSegment) -> Int {
        let onLine = s.tail.filter { s.residual($0) <= 2 }
        let all = (onLine.count >= 4 ? onLine : s.tail).map { -$0.end }.sorted()
        let ends = RecordingScanner.distinct(all)
        // Inward position p is the target frame -p: silence after it.
        let silentAfter = { (p: Int32) in
            self.silent(from: -Int(p) + self.tuning.silenceMargin,
                        to: -Int(p) + self.tuning.silenceMargin + self.tuning.silenceFrames)
        }
        let last = ends[edge(ends, silentBefore: silentAfter)]
        if silentAfter(last) { return -Int(last) }
        return -Int(RecordingScanner.audible(all.filter { $0 >= last }, span: audibleSpan) { f in
            // Inward frame f is recording frame -f, counting backwards: the bin ending there.
            let frame = -f - 15
            return frame < 0 ? 0 : self.landmarkCount(at: frame - frame % 16)
        })
    }

    /// The first of `positions` (hit frames, ascending, from an edge inwards, one per hit)
    /// where the share of the recording's landmarks that hit (over ±2 bins of 16 frames,
    /// ±0.16 s) reaches ``audibleFraction`` of its median over the first `span` frames
    /// (``audibleSpan``: ``ScanTuning/audibleMedianSeconds``, 30 s): a track fading
    /// out into other audio (a crossfade) is counted until about the crossfade's middle, where
    /// the other audio's landmarks outnumber its own, while a quiet passage of its own, with
    /// few landmarks that mostly hit, is kept. `landmarks(f)` gives the recording's landmark
    /// count in the 16 frames from inward frame `f`, `nil` where it is no longer known (then
    /// the hit rate alone is compared). Fewer than 24 bins: the first position.
    static func audible(_ positions: [Int32], span: Int32, landmarks: (Int32) -> Int32?) -> Int32 {
        guard let first = positions.first else { return 0 }
        let binFrames: Int32 = 16
        var bins: [Int32] = []
        for p in positions where p - first < span {
            let b = Int((p - first) / binFrames)
            while bins.count <= b { bins.append(0) }
            bins[b] += 1
        }
        guard bins.count >= 24 else { return first }
        var counts: [Int32]? = []
        for b in bins.indices {
            guard let n = landmarks(first + Int32(b) * binFrames) else { counts = nil; break }
            counts?.append(n)
        }
        var share = [Double](repeating: 0, count: bins.count)
        for i in bins.indices {
            var hits: Int32 = 0, all: Int32 = 0
            for j in max(0, i - 2)...min(bins.count - 1, i + 2) { hits += bins[j]; all += counts?[j] ?? 1 }
            share[i] = counts == nil ? Double(hits) : Double(hits) / Double(max(all, hits, 1))
        }
        let level = share.sorted()[share.count / 2] * RecordingScanner.audibleFraction
        guard let b = share.firstIndex(where: { $0 >= level && $0 > 0 }), b > 0 else { return first }
        return positions.first { $0 >= first + Int32(b) * binFrames } ?? first
    }

    /// Landmarks of the recording anchored in the `frames` frames from `frame` (multiples of
    /// ``landmarkBinFrames``; default 16), while they are in the ring of the last
    /// ``landmarkBinCount`` bins; `nil` before.
    private func landmarkCount(at frame: Int32, frames: Int = 16) -> Int32? {
        var total: Int32 = 0
        for f in stride(from: Int(frame), to: Int(frame) + frames, by: RecordingScanner.landmarkBinFrames) {
            let b = f / RecordingScanner.landmarkBinFrames
            guard b > latestLandmarkBin - RecordingScanner.landmarkBinCount, b >= 0 else { return nil }
            if b <= latestLandmarkBin { total += landmarkBins[b % RecordingScanner.landmarkBinCount] }
        }
        return total
    }

    /// Seconds from the last target frame of a segment's hits to the end of its audio: the
    /// last peaks of a stretch are lost to the peak neighbourhood (±144 ms) and to frames
    /// that reach past the end. 0.12 s, the median measured at ends next to silence, speech
    /// and other music.
    static let endLead = 0.12

    /// Frames of ``ScanTuning/audibleMedianSeconds`` at the catalog's hop (1875 at 16 ms): the
    /// span ``audible(_:span:landmarks:)`` takes its median over.
    private var audibleSpan: Int32 { Int32(tuning.audibleMedianSeconds / hop) }

    /// Frames per bin of the ring of landmark counts: 4.
    static let landmarkBinFrames = 4
    /// Bins of landmark counts kept: 2^14 (about 17 minutes).
    static let landmarkBinCount = 1 << 14

    /// Fraction of a segment's median share of hitting landmarks from which it counts as
    /// audible at an edge: 0.3.
    static let audibleFraction = 0.3

    /// How far from recording frame `edge` (in steps of `step` frames, ±4) the recording and
    /// reference `ref` (frames mapped by `map`) are both silent: no landmark of the recording
    /// anchored there (other than at the edge itself) and no posting of the reference within
    /// 2 frames. Stops at the recording's start and end,
    /// where the recording's landmarks are no longer known (``landmarkCount(at:)``), at the
    /// reference's bounds and after ``ScanTuning/silentStretchSeconds``. Returns the frame reached (`edge` when none).
    private func silentStretch(from edge: Int, step: Int, ref: Int, map: (Int) -> Double) -> Int {
        let frames = referenceFrames(ref)
        let limit = Int(tuning.silentStretchSeconds / hop)
        let known = recordingEnd.map { Int(($0 / hop).rounded(.up)) } ?? clockFrame
        var reached = edge
        while abs(reached - edge) < limit {
            let next = step > 0 ? min(reached + step, known) : max(reached + step, 0)
            guard next != reached else { break }
            let lo = min(reached, next), hi = max(reached, next)
            // The recording: the 4-frame bin of the step, not counting the edge's own.
            let bin = lo - lo % RecordingScanner.landmarkBinFrames
            guard let n = landmarkCount(at: Int32(bin), frames: RecordingScanner.landmarkBinFrames) else { break }
            if n > 0 && bin != edge - edge % RecordingScanner.landmarkBinFrames { break }
            // The reference: 2 frames around the step, but never the edge's own frame.
            let r0 = step < 0 ? map(lo) - 2 : map(lo) + 0.5, r1 = step < 0 ? map(hi) - 0.5 : map(hi) + 2
            guard map(lo) >= -2, map(lo) <= index.references[ref].duration / hop else { break }
            if RecordingScanner.count(frames, from: r0, to: r1) > 0 { break }
            reached = next
        }
        // Clamp the last step to the recording's bounds.
        return max(0, min(known, reached))
    }

    /// The start of segment `s` moved later by its single peaks (``PeakEdge/later(_:inside:chance:)``):
    /// the reference's peaks over the first second from the start found from hits are checked
    /// against the recording's, and those of the next 2 s give the stretch's rate. The start
    /// stays when it follows silence or the single peaks do not show chance; it is undecided
    /// while the landmark history does not yet cover 3 s after it.
    private func peakStart(_ s: OpenSegment) -> PeakStart {
        guard let first = history.first?.anchorFrame, let latest = history.last?.anchorFrame else { return .undecided }
        let edge = startFrame(s)
        let line = s.line
        guard line.slope > tuning.edgeLineSlope else { return .stays }
        guard !silentBefore(edge) else { return .stays }
        let toReference = { (x: Double) in line.intercept + line.slope * (x - s.x0) }
        let toRecording = { (y: Double) in s.x0 + (y - line.intercept) / line.slope }
        let margin = Int(PeakEdge.chanceShifts.map(abs).max() ?? 0) + 2
        let lo = Int(first) + margin, hi = Int(latest) - margin
        let second = Int(1 / hop)
        guard edge >= lo else { return .stays }
        guard edge + tuning.edgeInsideSeconds * second <= hi else { return .undecided }
        let reference = referencePeaks(s.ref)
        let recording = PeakEdge.recordingPeaks(history, logShift: logShifts[s.candidate])
        func checks(_ from: Int, _ to: Int, shift: Double = 0) -> [PeakEdge.Check] {
            PeakEdge.checks(reference: reference, recording: recording, toRecording: toRecording,
                            toReference: toReference, from: from, to: to, shift: shift)
        }
        var chance = (matched: 0, total: 0)
        for shift in PeakEdge.chanceShifts {
            let c = checks(edge, edge + tuning.edgeInsideSeconds * second, shift: shift)
            chance.matched += c.filter(\.matched).count
            chance.total += c.count
        }
        guard let later = PeakEdge.later(checks(edge, edge + second), inside: checks(edge + second / 2, edge + 5 * second / 2),
                                         chance: chance) else { return .stays }
        // Only a lone cluster of hits is chance (as in ``edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)``):
        // more hits before the moved start are the stretch, masked peaks or not.
        // A hit whose frame's window (frameLength samples) reaches the stretch holds its sound:
        // a move shorter than a window is no move.
        let window = Double(index.configuration.frameLength / max(1, index.configuration.hopLength))
        let skipped = RecordingScanner.distinct(s.head.filter { Double($0.x) < later.rounded(.down) }.map(\.x))
        return skipped.count <= RecordingScanner.strayClusterHits && later - Double(edge) >= window ? .moves(later) : .stays
    }

    /// The start of segment `s` moved earlier by the reference's peaks in the spectrum
    /// (``SpectrumEdge/outward(_:inside:)``): up to ``SpectrumEdge/maximumMove`` before
    /// the start found from hits, the stretch's rate measured over the 2 s from 0.5 s after it.
    /// Stays after silence (nothing to find there) or without the spectrum; undecided while
    /// the spectrum does not yet hold 3 s after the start.
    private func spectrumStart(_ s: OpenSegment) -> PeakStart {
        guard spectrum.latest >= 0 else { return .stays }
        let edge = startFrame(s)
        let second = Int(1 / hop)
        guard spectrum.latest >= edge + tuning.edgeInsideSeconds * second else { return .undecided }
        guard !silentBefore(edge) else { return .stays }
        guard let move = spectrumMove(s, edge: edge, direction: -1) else { return .stays }
        return .moves(move)
    }

    /// The end of segment `s` (recording frame, fractional, where its audio ends) moved later
    /// by the spectrum, as ``spectrumStart(_:)``; `nil` when it stays.
    private func spectrumEnd(_ s: OpenSegment) -> Double? {
        guard spectrum.latest >= 0 else { return nil }
        let edge = endFrame(s)
        if silent(from: edge + tuning.silenceMargin, to: edge + tuning.silenceMargin + tuning.silenceFrames) { return nil }
        return spectrumMove(s, edge: edge, direction: 1)
    }

    /// The edge at recording frame `edge` of segment `s` moved outwards (`direction` −1: a start,
    /// earlier, to the frame of the first peak of the stretch; +1: an end, later, to the frame
    /// where the stretch's audio ends) by ``SpectrumEdge/outward(_:inside:outside:)`` (and, for
    /// a masked end, ``SpectrumEdge/outwardByMargin(_:inside:outside:)``).
    private func spectrumMove(_ s: OpenSegment, edge: Int, direction: Int) -> Double? {
        let line = s.line
        guard line.slope > tuning.edgeLineSlope else { return nil }
        let second = Int(1 / hop), reach = Int(SpectrumEdge.maximumMove / hop)
        // Not next to another play (a crossfade or a splice): there the hits of both put the
        // boundary, and the fading track's peaks stand out well past the crossfade's middle.
        let others = (open + recentlyClosed).filter { o in
            o.ref != s.ref && o.lastHitFrame >= edge - reach && o.firstHitFrame <= edge + reach
        }
        if others.contains(where: { segment($0).confidence >= options.threshold }) { return nil }
        // Only a masked stretch: where hits are dense, a second without one is no play.
        let near = direction < 0 ? (edge, edge + 5 * second / 2) : (edge - 5 * second / 2, edge)
        let hits = RecordingScanner.distinct((direction < 0 ? s.head : s.tail).map(\.x).filter { Int($0) >= near.0 && Int($0) < near.1 })
        func readings(_ from: Int, _ to: Int) -> [SpectrumEdge.Reading] { spectrumReadings(s, from: from, to: to) }
        let inner = direction < 0 ? (edge + second / 2, edge + 5 * second / 2) : (edge - 5 * second / 2, edge - second / 2)
        guard Double(hits.count) < SpectrumEdge.maskedHitsPerSecond * 2.5 else {
            return clearMove(s, edge: edge, direction: direction, inner: inner)
                .map { direction > 0 ? $0.rounded(.down) + SpectrumEdge.endLead / hop : $0 }
        }
        let outer = direction < 0 ? (edge - reach, edge) : (edge + 1, edge + reach)
        var outward = readings(outer.0, outer.1)
        if direction < 0 { outward.reverse() }
        // Beyond 3 s out, the audio a masked edge is measured against.
        let beyond = direction > 0 ? readings(edge + tuning.edgeBeyondSeconds * second, edge + reach)
                                     : readings(edge - reach, edge - tuning.edgeBeyondSeconds * second)
        return maskedMove(outward, inside: readings(inner.0, inner.1), beyond: beyond, direction: direction)
    }

    /// The edge of a masked stretch moved outwards over `outward` (readings from the edge
    /// outwards): a start to the earliest peak that the share of readings standing out supports
    /// (``SpectrumEdge/outwardStart(_:inside:outside:)``, `beyond` the audio 3-5 s before it);
    /// an end to the farther
    /// of that run's last peak (its frame) plus ``SpectrumEdge/endLead`` and the last peak that the
    /// readings' margins put in the stretch against those of `beyond`
    /// (``SpectrumEdge/outwardByMargin(_:inside:outside:)``), taken as the end itself: the margins' change point runs on over the readings just past
    /// the end that beat half the margin by chance (about one in three), as far as a frame's
    /// window reaches past its last peak. `nil` when the edge stays. The share alone stopped
    /// spots 6 dB under speech whose last second stands out less than their middle 0.6-1.4 s
    /// early. At starts the margins moved a spot's start 0.27 s early over speech (generated
    /// audio) and no start of the benchmark's nearer the truth, so starts keep the share alone.
    private func maskedMove(_ outward: [SpectrumEdge.Reading], inside: [SpectrumEdge.Reading], beyond: [SpectrumEdge.Reading],
                            direction: Int) -> Double? {
        guard direction > 0 else { return SpectrumEdge.outwardStart(outward, inside: inside, outside: beyond) }
        let byRate = SpectrumEdge.outward(outward, inside: inside)
        let ends = [byRate.map { $0.rounded(.down) + SpectrumEdge.endLead / hop },
                    SpectrumEdge.outwardByMargin(outward, inside: inside, outside: beyond)]
        return ends.compactMap { $0 }.max()
    }

    /// The edge at recording frame `edge` of segment `s`, a stretch heard clearly (not masked),
    /// moved outwards by at most ``SpectrumEdge/clearMove``: an edge passage that gives no hit
    /// although the stretch plays (a held chord whose landmarks are common to the whole piece
    /// and fall in skipped buckets). Two tests must agree over the span moved:
    /// - the spectrum (``SpectrumEdge/outward(_:inside:outside:)``), against the rate at which
    ///   the audio beyond the reach (0.25–3 s out) stands out, not the decoys' chance rate:
    ///   other music in the reference's key, or speech, stands out more often;
    /// - the recording's own peaks (``PeakEdge/checks(reference:recording:toRecording:toReference:from:to:shift:)``):
    ///   where the stretch is heard clearly, the peak picker finds its peaks, so at least 6 of
    ///   the reference's peaks fall there and they coincide with the recording's at least half
    ///   as often as inside (`inner`) and twice as often as at shifted alignments
    ///   (``ScanTuning/clearMovePeaks`` and the settings after it). Chance
    ///   standing-out over speech or other music has no such peaks.
    private func clearMove(_ s: OpenSegment, edge: Int, direction: Int, inner: (Int, Int)) -> Double? {
        let second = Int(1 / hop), short = Int(SpectrumEdge.clearMove / hop)
        let outer = direction < 0 ? (edge - short, edge) : (edge + 1, edge + 1 + short)
        let beyond = direction < 0 ? (edge - tuning.edgeBeyondSeconds * second, edge - short - second / 4)
                                   : (edge + 1 + short + second / 4, edge + tuning.edgeBeyondSeconds * second)
        var outward = spectrumReadings(s, from: outer.0, to: outer.1)
        if direction < 0 { outward.reverse() }
        guard let moved = SpectrumEdge.outward(outward, inside: spectrumReadings(s, from: inner.0, to: inner.1),
                                               outside: spectrumReadings(s, from: beyond.0, to: beyond.1)) else { return nil }
        let line = s.line
        let toReference = { (x: Double) in line.intercept + line.slope * (x - s.x0) }
        let toRecording = { (y: Double) in s.x0 + (y - line.intercept) / line.slope }
        let reference = referencePeaks(s.ref)
        let recording = PeakEdge.recordingPeaks(history, logShift: logShifts[s.candidate])
        func share(_ from: Int, _ to: Int, shift: Double = 0) -> (matched: Int, total: Int) {
            let c = PeakEdge.checks(reference: reference, recording: recording, toRecording: toRecording,
                                    toReference: toReference, from: from, to: to, shift: shift)
            return (c.filter(\.matched).count, c.count)
        }
        let span = direction < 0 ? (Int(moved.rounded(.down)), edge) : (edge + 1, Int(moved.rounded(.up)) + 1)
        let moving = share(span.0, span.1), inside = share(inner.0, inner.1)
        var chance = (matched: 0, total: 0)
        for shift in PeakEdge.chanceShifts {
            let c = share(span.0, span.1, shift: shift)
            chance.matched += c.matched
            chance.total += c.total
        }
        guard moving.total >= tuning.clearMovePeaks, inside.total >= tuning.clearMoveInsidePeaks, chance.total > 0 else {
            return nil
        }
        let rate = Double(moving.matched) / Double(moving.total)
        let insideRate = Double(inside.matched) / Double(inside.total)
        let chanceRate = max(Double(chance.matched) / Double(chance.total), tuning.clearMoveChanceFloor)
        return rate >= tuning.clearMoveInsideShare * insideRate && rate >= tuning.clearMoveChanceFactor * chanceRate ? moved : nil
    }

    /// ``SpectrumEdge/readings(reference:ring:toRecording:toReference:from:to:bins:)`` of
    /// segment `s`'s reference peaks that its line places in recording frames `from ..< to`.
    private func spectrumReadings(_ s: OpenSegment, from: Int, to: Int) -> [SpectrumEdge.Reading] {
        let line = s.line
        guard line.slope > tuning.edgeLineSlope else { return [] }
        let toReference = { (x: Double) in line.intercept + line.slope * (x - s.x0) }
        let toRecording = { (y: Double) in s.x0 + (y - line.intercept) / line.slope }
        let bins = SpectrumEdge.bins(configuration: index.configuration, logShift: logShifts[s.candidate], width: spectrum.width)
        return SpectrumEdge.readings(reference: referencePeaks(s.ref), ring: spectrum, toRecording: toRecording,
                                     toReference: toReference, from: from, to: to, bins: bins)
    }

    /// Reads the spectrum for a sparse line (under ``searchedSpeedCheckRate`` hits a second) at
    /// a searched speed (``Matcher/isSearched(_:)``) once its hits reach the threshold, as
    /// `identify` does for its matches (``SpectralCheck/searchedSpeedScore``; here the level is
    /// ``searchedSpeedLineScore``): other music that quotes a reference's theme lines up with it
    /// at a speed change (5 % faster Wesnoth *Revelation* with *Loyalists*: 42 hits in 20 s,
    /// confidence 0.99) while the reference's peaks do not stand out in the recording. Such a
    /// line's confidence is held under its spectral confidence; it is read again every
    /// ``searchedSpeedRecheckSeconds`` while it lasts and let go once it is no longer sparse, so
    /// a play whose first seconds were masked is still found. A line the spectrum cannot judge
    /// yet (under ``SpectralCheck/minimumReadings`` peaks) is read again at the next window.
    private func checkSearchedSpeed(_ s: inout OpenSegment, at windowEnd: Int) {
        guard spectrum.latest >= 0 else { return }
        let line = s.line
        let speed = SpeedCandidate(timeScale: line.slope, frequencyScale: options.candidates[s.candidate].frequencyScale)
        guard line.slope > tuning.edgeLineSlope, Matcher.isSearched(speed) else { return }
        let duration = Double(s.lastHitFrame - s.firstHitFrame) * hop
        // (A line that has become dense is left to its hits.)
        guard Double(s.hits) < RecordingScanner.searchedSpeedCheckRate * duration else { s.spectralVeto = nil; return }
        if let at = s.spectralCheckedAt,
           s.spectralVeto == nil || Double(windowEnd - at) * hop < RecordingScanner.searchedSpeedRecheckSeconds { return }
        // (Read before the line could be announced: its segment's confidence from hits alone.)
        var unchecked = s
        unchecked.spectralVeto = nil
        guard segment(unchecked).confidence >= options.threshold else { return }
        var first = max(s.firstHitFrame, spectrum.latest - SpectrumRing.capacity + 1), last = min(s.lastHitFrame, spectrum.latest)
        while first < last && !spectrum.holds(first) { first += 1 }
        while last > first && !spectrum.holds(last) { last -= 1 }
        guard last > first else { return }
        let offset = line.intercept - line.slope * s.x0
        guard let e = searchedSpeedMatcher.spectralEvidence(reference: s.ref, offsetFrames: offset, speed: speed,
                                                            tables: SpectrumTables(spectrum, first: first, last: last)) else { return }
        s.spectralCheckedAt = windowEnd
        s.spectralVeto = e.score < RecordingScanner.searchedSpeedLineScore ? e.score : nil
    }

    /// Tests per hour of the play rule (``PlayEvidence/tests(catalogFrames:speeds:hopSeconds:)``).
    private lazy var evidenceTests = PlayEvidence.tests(
        catalogFrames: index.references.reduce(0) { $0 + $1.duration } / hop,
        speeds: options.candidates.count, hopSeconds: options.hopSeconds)

    /// Measures a line's evidence against chance (``PlayEvidence``) once its hits would reach
    /// the threshold, and again each window (at most once a window) until it is
    /// ``PlayEvidence/settledRatio`` of the false-alarm rate or less; the strongest evidence is
    /// kept, so a play once shown stays one, and its confidence grows with its evidence. The chance
    /// lines are counted over the part of the line the landmark history still holds (its last
    /// ``historyFrames``). `windowEnd` `nil`: the line is closing (measured unless beyond
    /// chance already).
    private func checkEvidence(_ s: inout OpenSegment, at windowEnd: Int?) {
        if let e = s.evidence, e.log10FalseAlarmsPerHour <= log10(options.falseAlarmsPerHour) + log10(PlayEvidence.settledRatio) { return }
        if let windowEnd, s.evidenceCheckedAt == windowEnd { return }
        // Only lines whose hits alone would make a play are worth the chance lines' lookups.
        guard segment(s, capped: false).confidence >= options.threshold else { return }
        let line = s.line
        let offset = line.intercept - line.slope * s.x0
        let lo = Int32(s.firstHitFrame), hi = Int32(s.lastHitFrame)
        let from = max(lo, history.first?.anchorFrame ?? lo)
        guard hi >= from else { return }
        let shifted = PlayEvidence.shifts.map { shift -> Int in
            let hits = exactHits(ref: s.ref, candidate: s.candidate, around: Int((offset + shift / hop).rounded()),
                                 slope: line.slope, inHistory: true)
            return Set(hits.lazy.filter { $0.x >= from && $0.x <= hi }.map { Int($0.x) / PlayEvidence.slotFrames }).count
        }
        let measured = Int(hi) / PlayEvidence.slotFrames - Int(from) / PlayEvidence.slotFrames + 1
        let e = PlayEvidence(hitFrames: s.hitFrames, shiftedSlots: shifted, measuredSlots: measured, tests: evidenceTests)
        if s.evidence.map({ e.log10FalseAlarmsPerHour < $0.log10FalseAlarmsPerHour }) ?? true { s.evidence = e }
        s.evidenceCheckedAt = windowEnd
    }

    /// Rows of digital silence (``SpectrumRing/isSilent(_:)``) that make a silence an edge is
    /// put against: 16 (their windows cover 0.37 s of silent samples).
    static let digitalSilenceFrames = 16
    /// Farthest from its hits that an edge is put against digital silence, seconds: 0.25. A
    /// start after silence comes out about 0.1 s late from hits (their peaks need frame
    /// windows of the stretch's own audio). Farther out, the sound after the silence is more
    /// likely other audio cut short by the stretch (the last syllable of a speech lead-in),
    /// which neither the hits nor the reference's peaks in the spectrum tell from the
    /// stretch's first notes over so short a span; within the reach such a syllable costs
    /// its own length.
    static let silenceReach = 0.25

    /// Whether rows `from ..< to` of the spectrum are all stored and all digital silence.
    private func digitallySilent(from: Int, to: Int) -> Bool {
        guard from < to else { return false }
        for f in from..<to where spectrum.isSilent(f) != true { return false }
        return true
    }

    /// The start of segment `s` at the audio's onset, when digital silence
    /// (``digitalSilenceFrames`` rows) ends within ``silenceReach`` before the start found from
    /// hits. The last silent row `f` holds no sound in samples `f · hop ..< f · hop + frameLength`
    /// and the next row does, so the onset lies within one hop after the end of `f`'s window:
    /// frame `f + (frameLength + hop / 2) / hop`, the middle of that hop. Stays without the
    /// spectrum or without such silence; undecided while the spectrum does not yet hold 3 s
    /// after the start (the start from hits may still move).
    private func onsetStart(_ s: OpenSegment) -> PeakStart {
        guard spectrum.latest >= 0 else { return .stays }
        let edge = startFrame(s)
        guard spectrum.latest >= edge + tuning.edgeInsideSeconds * Int(1 / hop) else { return .undecided }
        let reach = Int(RecordingScanner.silenceReach / hop), n = RecordingScanner.digitalSilenceFrames
        let window = index.configuration.frameLength / index.configuration.hopLength
        // The onset lies a window after the last silent row: rows up to the reach plus a
        // window before the hits.
        for f in stride(from: edge - 1, through: max(0, edge - reach - window), by: -1) {
            guard let silent = spectrum.isSilent(f) else { return .stays }
            guard silent else { continue }
            guard digitallySilent(from: f - n + 1, to: f + 1) else { return .stays }
            return .moves(Double(f) + Double(window) + 0.5)
        }
        return .stays
    }

    /// The end of segment `s` (recording frame, fractional) where digital silence
    /// (``digitalSilenceFrames`` rows) begins within ``silenceReach`` of the last hits' target
    /// frame: the first silent row `f` holds no sound from sample `f · hop` on and the row
    /// before does, so the audio ends within the hop before `f`: frame `f − 1/2`. `nil`
    /// without the spectrum or such silence.
    private func silenceEnd(_ s: OpenSegment) -> Double? {
        guard spectrum.latest >= 0 else { return nil }
        let edge = endFrame(s)
        let reach = Int(RecordingScanner.silenceReach / hop), n = RecordingScanner.digitalSilenceFrames
        for f in max(0, edge - 8)...(edge + reach) {
            guard let silent = spectrum.isSilent(f) else { return nil }
            guard silent else { continue }
            return digitallySilent(from: f, to: f + n) ? Double(f) - 0.5 : nil
        }
        return nil
    }

    /// What ``peakStart(_:)`` or ``spectrumStart(_:)`` decided for a segment's start.
    private enum PeakStart {
        /// The history does not yet hold 3 s after the start: ask again later.
        case undecided
        /// The start found from hits stays.
        case stays
        /// The start moves to this recording frame.
        case moves(Double)

        /// The moved start (the frame it moves to, else `start` as it was) and whether the
        /// decision is made.
        func settling(_ start: Double?) -> (start: Double?, decided: Bool) {
            switch self {
            case .undecided: return (start, false)
            case .stays: return (start, true)
            case .moves(let frame): return (frame, true)
            }
        }
    }

    /// Most hits (distinct frames) that single peaks may show to be chance at a start: 2.
    static let strayClusterHits = 2

    /// ``PeakEdge/referencePeaks(_:reference:hasher:)`` of reference `ref`, for the last 16
    /// references asked for.
    private func referencePeaks(_ ref: Int) -> [PeakEdge.Peak] {
        if let p = referencePeakCache[ref] { return p }
        let peaks = PeakEdge.referencePeaks(index.postings, reference: ref, hasher: hasher)
        if referencePeakCache.count >= 16 { referencePeakCache.removeAll() }
        referencePeakCache[ref] = peaks
        return peaks
    }

    /// Number of `sorted` values in `lo ..< hi`.
    static func count(_ sorted: [UInt32], from lo: Double, to hi: Double) -> Int {
        func first(_ v: Double) -> Int {
            var a = 0, b = sorted.count
            while a < b { let m = (a + b) / 2; if Double(sorted[m]) < v { a = m + 1 } else { b = m } }
            return a
        }
        return max(0, first(hi) - first(lo))
    }

    /// Anchor frames of reference `ref`'s postings, ascending (computed once per reference).
    private func referenceFrames(_ ref: Int) -> [UInt32] {
        if let f = referenceFrameCache[ref] { return f }
        let frames = index.postings.frames(of: ref)
        referenceFrameCache[ref] = frames
        return frames
    }

    /// `values` sorted, each once.
    static func distinct(_ values: [Int32]) -> [Int32] {
        var out: [Int32] = []
        for v in values.sorted() where out.last != v { out.append(v) }
        return out
    }

    /// The segment an open segment stands for now (no threshold applied).
    /// - Parameter capped: whether its confidence is capped by the spectral check and by the
    ///   line's evidence against chance (``PlayEvidence``; 0 before it is measured). Without the
    ///   caps the confidence is the hits' alone.
    private func segment(_ s: OpenSegment, capped: Bool = true) -> Segment {
        let line = s.line
        let mapped = { (x: Int) in line.intercept + line.slope * (Double(x) - s.x0) }
        var firstFrame = startFrame(s)
        var lastFrame = endFrame(s)
        // After digital silence the onset is known to a hop; else single peaks or the spectrum
        // may move the start from hits.
        var onsetFrame = s.onset.map { max(0, $0) }
        if let o = onsetFrame {
            firstFrame = Int(o.rounded(.down))
        } else {
            if let p = s.peakStart, p > Double(firstFrame), p - Double(firstFrame) <= 1 / hop { firstFrame = Int(p.rounded(.down)) }
            if let p = s.spectrumStart, p < Double(firstFrame) { firstFrame = max(0, Int(p.rounded(.down))) }
        }
        if let c = s.changeStart.map({ max(0, $0) }) {
            firstFrame = Int(c.rounded(.down))
            onsetFrame = c
        }
        var endLead = RecordingScanner.endLead
        if let o = s.endAtSilence, o > Double(firstFrame) {
            lastFrame = Int(o.rounded(.down))
            endLead = (o - Double(lastFrame)) * hop
        } else if let p = s.spectrumEnd, p > Double(lastFrame) + endLead / hop {
            lastFrame = Int(p.rounded(.down))
            endLead = (p - Double(lastFrame)) * hop
        }
        let fromHits = onsetFrame == nil && s.spectrumStart.map { $0 >= Double(startFrame(s)) } ?? true
        lastFrame = max(lastFrame, firstFrame + 1)
        // Through silence that the reference shares, a play goes on: the edge is where either
        // the recording or the reference has sound again. Where the reference has sound again
        // while the recording stays silent for ``ScanTuning/silenceFrames`` more, the silence was the
        // recording's own (a lead-in or a gap of digital silence, next to a gap between the
        // reference's peaks): the start goes back no further than the recording's sound, the
        // first 4-frame bin with a landmark of its own (or the onset the spectrum shows).
        let before = silentStretch(from: firstFrame, step: -4, ref: s.ref, map: mapped)
        if before < firstFrame {
            if !silent(from: before - tuning.silenceFrames, to: before) {
                firstFrame = before
                onsetFrame = nil
            } else if onsetFrame == nil {
                let b = RecordingScanner.landmarkBinFrames
                var onset = before - before % b
                while onset < firstFrame, let n = landmarkCount(at: Int32(onset), frames: b), n == 0 { onset += b }
                firstFrame = min(firstFrame, max(before, onset))
            }
        }
        let after = silentStretch(from: lastFrame, step: 4, ref: s.ref, map: mapped)
        if after > lastFrame && !silent(from: after, to: after + tuning.silenceFrames) { lastFrame = after; endLead = 0 }
        let first = onsetFrame ?? Double(firstFrame)
        var start = first * hop, end = Double(lastFrame) * hop + endLead
        var refStart = (line.intercept + line.slope * (first - s.x0)) * hop
        // Inside the recording and inside the reference.
        if let e = recordingEnd { end = min(end, e) }
        let duration = index.references[s.ref].duration
        if refStart < 0 && line.slope > 0 { start -= refStart / line.slope; refStart = 0 }
        var refEnd = refStart + line.slope * (end - start)
        if duration > 0 && refEnd > duration && line.slope > 0 {
            end -= (refEnd - duration) / line.slope
            refEnd = duration
        }
        end = max(end, start)
        let cap = s.offSpeed ? 0 : !capped ? 1 : min(s.spectralVeto.map(SpectralCheck.confidence(score:)) ?? 1,
                                    s.evidence?.confidence(falseAlarmsPerHour: options.falseAlarmsPerHour) ?? 0)
        var segment = Segment(referenceIndex: s.ref, item: index.references[s.ref].item, start: start, end: end,
                       referenceStart: refStart, referenceEnd: refEnd,
                       frequencySkew: options.candidates[s.candidate].frequencySkew
                           + (abs(line.slope - s.timeScale) <= 0.012 ? line.slope - s.timeScale : 0),
                       timeScale: line.slope,
                       confidence: min(RecordingScanner.confidence(hits: s.hits, duration: end - start), cap),
                       hits: s.hits, startsAtChange: s.changeStart != nil && onsetFrame == s.changeStart.map { max(0, $0) },
                       changeEnd: s.changeEnd.map { $0 * hop }.flatMap { $0 > start ? $0 : nil },
                       startsFromHits: fromHits && onsetFrame == nil)
        segment.spectralCap = cap
        return segment
    }

    /// The boundary between consecutive segments `a` and `b` (`b` starts after `a` does and ends
    /// after `a` ends), `nil` to keep both edges as they are.
    /// - A butt splice: `b`'s start when it lies where the spectrum changes to `b`'s audio and
    ///   `a`'s end from hits runs less than ``ChangeEdge/spliceOverlap`` past it (`a`'s last
    ///   landmarks reach into `b` by chance coincidences of their targets), or where the
    ///   spectrum changes from `a`'s audio (`a.changeEnd`) when `b`'s start from hits lies
    ///   from ``ChangeEdge/spliceOverlap`` before to ``ChangeEdge/spliceGap`` after it (`b`'s
    ///   first passage too quiet to give hits at once); both at a change within
    ///   ``ChangeEdge/spliceGap`` of each other, `b`'s start (its template follows the cut);
    ///   `b`'s start at a change also when `a`'s end from hits lies up to ``ChangeEdge/endGap``
    ///   before it (`a`'s last peaks lost at the cut).
    /// - Else overlapping segments (a crossfade, where both are audible) meet in the middle of
    ///   the overlap, and a gap is kept.
    static func boundary(_ a: Segment, _ b: Segment) -> Double? {
        let overlap = a.end - b.start
        if let c = a.changeEnd {
            if b.startsAtChange && abs(c - b.start) <= ChangeEdge.spliceGap { return b.start }
            if b.startsFromHits && b.start - c <= ChangeEdge.spliceGap && c - b.start < ChangeEdge.spliceOverlap { return c }
        }
        if b.startsAtChange && overlap < ChangeEdge.spliceOverlap && -overlap <= ChangeEdge.endGap { return b.start }
        return overlap > 0 ? (a.end + b.start) / 2 : nil
    }

    /// The end of segment `s` (recording frame, fractional) at a butt splice, where the
    /// recording's spectrum changes from its audio to another's (``ChangeEdge/end(ring:edge:hop:window:)``):
    /// only when a confident play of another reference starts (from hits) within
    /// ``ChangeEdge/spliceOverlap`` of the end from hits, and hits are dense in the template
    /// rows (the play heard clearly there). `nil` otherwise or without the spectrum.
    private func changeEnd(_ s: OpenSegment) -> Double? {
        guard spectrum.latest >= 0, s.line.slope > tuning.edgeLineSlope else { return nil }
        let edge = endFrame(s)
        let reach = Int(ChangeEdge.spliceOverlap / hop)
        guard (open + recentlyClosed).contains(where: { o in
            o.ref != s.ref && abs(startFrame(o) - edge) <= reach && segment(o).confidence >= options.threshold
        }) else { return nil }
        let t0 = edge - Int(ChangeEdge.endTemplate.1 / hop), t1 = edge - Int(ChangeEdge.endTemplate.0 / hop)
        let inTemplate = RecordingScanner.distinct(s.tail.map(\.x).filter { Int($0) >= t0 && Int($0) < t1 }).count
        guard Double(inTemplate) >= SpectrumEdge.maskedHitsPerSecond * Double(t1 - t0) * hop else { return nil }
        let window = index.configuration.frameLength / index.configuration.hopLength
        return ChangeEdge.end(ring: spectrum, edge: edge, hop: hop, window: window)
    }

    /// The start of segment `s` where the recording's spectrum changes from other audio to the
    /// stretch (``ChangeEdge/start(ring:edge:hop:)``), from the start that hits and single peaks
    /// give. Stays without the spectrum; when the template rows do not hold hits at the rate of
    /// a stretch heard clearly (a spot masked under speech, whose edges ``spectrumStart(_:)``
    /// looks for, or a start put early by a chance hit); when the spectrum moved the start
    /// outwards already; next to another play whose hits go on for more than
    /// ``ChangeEdge/spliceOverlap`` after it (a crossfade); when the change lies more than half
    /// a frame window after the start from hits (the stretch's own first notes differ from
    /// the rest); and after digital silence (the onset is known to a hop) unless the change
    /// lies more than half a window after the onset (the sound after the silence is other
    /// audio cut short by the stretch: the last syllable of a speech lead-in, which the onset
    /// rule took for the stretch's first notes). Undecided until the other start decisions
    /// are made and windows 3 s past the start are decided.
    private func changeStart(_ s: OpenSegment) -> PeakStart {
        guard spectrum.latest >= 0 else { return .stays }
        guard s.peakStartDecided, s.spectrumStartDecided, s.onsetDecided else { return .undecided }
        let line = s.line
        guard line.slope > tuning.edgeLineSlope else { return .stays }
        var edge = startFrame(s)
        if let p = s.spectrumStart, p < Double(edge) { return .stays }
        if let p = s.peakStart, p > Double(edge), p - Double(edge) <= 1 / hop { edge = Int(p.rounded(.down)) }
        // The hits of the start's first seconds are attached once windows reaching 3 s past it
        // are decided (the start from hits and the template's hits may still change before).
        guard nextBlockEnd >= edge + tuning.edgeInsideSeconds * Int(1 / hop), spectrum.latest >= edge + Int(ChangeEdge.template.1 / hop) else {
            return .undecided
        }
        // The template rows must be the stretch heard clearly: hits there at the rate of a
        // stretch that is not masked (a start put early by a chance hit has the audio before
        // the stretch there).
        let t0 = edge + Int(ChangeEdge.template.0 / hop), t1 = edge + Int(ChangeEdge.template.1 / hop)
        let inTemplate = RecordingScanner.distinct(s.head.map(\.x).filter { Int($0) >= t0 && Int($0) < t1 }).count
        guard Double(inTemplate) >= SpectrumEdge.maskedHitsPerSecond * Double(t1 - t0) * hop else { return .stays }
        let overlap = Int(ChangeEdge.spliceOverlap / hop)
        let others = (open + recentlyClosed).filter { o in
            o.ref != s.ref && o.firstHitFrame < edge && o.lastHitFrame >= edge + overlap
        }
        if others.contains(where: { segment($0).confidence >= options.threshold }) { return .stays }
        guard let change = ChangeEdge.start(ring: spectrum, edge: edge, hop: hop) else { return .stays }
        // Not past the hits: where the reference's landmarks hit more than half a frame window
        // before the change, the stretch plays there (its first notes differ from the rest).
        let half = Double(index.configuration.frameLength / index.configuration.hopLength) / 2
        guard change <= Double(edge) + half else { return .stays }
        // After digital silence the onset stands unless the change lies more than half a window
        // after it: the sound between is then other audio cut short by the stretch.
        if let o = s.onset, change <= o + half { return .stays }
        return .moves(change)
    }

    /// A play announced to ``onEvent``: its activity id and the segment last reported.
    private struct Activity {
        var id: Int
        var segment: Segment
        /// Reference time and speed last reported, at recording time `reportedAt`.
        var reported: (referenceStart: Double, timeScale: Double)
        var reportedAt: Double
        var ended = false
    }
    /// Activities of the live events, in order of their start event (ended ones kept while
    /// plays of their audio may still be found, see ``liveHorizon``).
    private var activities: [Activity] = []
    /// Segments of closed lines kept for the live decision (``decideLive(now:final:)``).
    private var liveFinished: [Segment] = []
    /// Plays of the live decision not announced yet: reference, span and since when (recording
    /// seconds) the decision has held them.
    private var pending: [(ref: Int, start: Double, end: Double, since: Double)] = []

    /// How long (recording seconds) `scan`'s decision over the audio so far must hold a play
    /// before the monitor announces it: 3. Lines grow window by window and what `scan` keeps of
    /// two related references or two lines of one reference can change while both are young;
    /// a late activity is better than a false one.
    static let settleSeconds = 3.0
    /// How far apart (recording seconds) two parts of a play on one line may lie for
    /// ``resolveOverlaps(_:threshold:postings:)`` to join them: 20.
    static let joinGap = 20.0
    /// How long (recording seconds) closed segments are kept for the live decision once no
    /// activity that is still open overlaps them: 60 (more than ``joinGap`` plus a window).
    static let liveHorizon = 60.0
    /// Seconds between a closed segment's end and an open activity's start within which the
    /// segment is kept for the live decision however old it is: 1 (more than
    /// ``ChangeEdge/spliceOverlap`` and ``ChangeEdge/spliceGap``, the furthest
    /// ``boundary(_:_:)`` looks apart).
    static let liveNeighbourSeconds = 1.0

    /// `scan`'s decision over `segments`: the plays of ``resolve(_:)`` (its partial material
    /// left aside). `scan` (``finish(recordingDuration:)``) and the live events use it alike.
    private func plays(_ segments: [Segment]) -> [Segment] { resolve(segments).plays }

    /// ``RecordingScanner/resolve(_:threshold:postings:sameRecording:nearDuplicate:)`` of `segments` with this scan's
    /// catalog; plays and partial material shorter than ``ScanOptions/minimumDuration`` left out
    /// unless they are complete plays.
    private func resolve(_ segments: [Segment]) -> (plays: [Segment], partial: [PartialMaterial]) {
        let r = RecordingScanner.resolve(segments, threshold: options.threshold, postings: { [self] ref, from, to in
            RecordingScanner.count(referenceFrames(ref), from: from / hop, to: to / hop)
        }, sameRecording: { [self] a, b in
            RecordingScanner.sameRecordingShare(a, b, hop: hop) { ref, frames in index.postings.postings(of: ref, inFrames: frames) }
        }, nearDuplicate: { [self] a, b in
            RecordingScanner.nearDuplicate(a, b, hop: hop) { ref, frames in index.postings.postings(of: ref, inFrames: frames) }
        })
        let long = { (s: Segment) in s.end - s.start >= self.options.minimumDuration || self.isCompletePlay(s) }
        return (r.plays.filter(long), r.partial.filter { long($0.segment) })
    }

    /// How far from its reference's start and end, reference seconds, a segment may begin and end
    /// and still be a complete play: 0.25 (segment edges fall within a window's hop or two of the
    /// play's; a 1-3.4 s reference played whole was measured at 90-100 % of its length).
    static let completePlaySlack = 0.25

    /// Whether `segment` covers its whole reference, within ``completePlaySlack`` at either end,
    /// and at least half of it (a reference under 0.5 s is not a play by its slack alone).
    private func isCompletePlay(_ segment: Segment) -> Bool {
        let length = index.references[segment.referenceIndex].duration
        return segment.referenceStart <= RecordingScanner.completePlaySlack
            && segment.referenceEnd >= length - RecordingScanner.completePlaySlack
            && segment.referenceEnd - segment.referenceStart >= length / 2
    }

    /// Seconds two segments overlap (negative: the gap between them).
    private static func overlap(_ a: Segment, _ b: Segment) -> Double { min(a.end, b.end) - max(a.start, b.start) }

    /// The live events, from the decision `scan` makes (``plays(_:)``) over the segments of the
    /// lines closed lately and those of the open lines, taken as they stand at recording time
    /// `now` (seconds): so that the monitor's activities are `scan`'s segments.
    /// - A play of the decision continues the activity of its reference whose segment it
    ///   overlaps (the most); an activity whose play is gone from the decision moves to a play
    ///   of another reference over at least half of it (that reference explains the audio
    ///   better now: `refined` with its id, the other as alternative); else it keeps its last
    ///   segment.
    /// - A play no activity holds is announced (`started`) once the decision has held it for
    ///   ``settleSeconds`` (at once when `final`); a play over an ended activity's audio, of its
    ///   reference, is that activity's and is not announced again.
    /// - An activity ends once nothing can change its play any more: every part of it ended
    ///   more than ``joinGap`` plus a window and a hop ago (a later part on its line could join
    ///   it before), or the stream ended (`final`).
    private func decideLive(now: Double, final: Bool) {
        let decided = plays(liveFinished + open.map { segment($0) })
        var held = [Int?](repeating: nil, count: activities.count)
        var free: [Int] = []
        // Each activity holds the play of its reference that overlaps its segment most, each
        // play at most one activity.
        var pairs: [(a: Int, p: Int, overlap: Double)] = []
        for (p, r) in decided.enumerated() {
            for a in activities.indices where activities[a].segment.referenceIndex == r.referenceIndex {
                let o = RecordingScanner.overlap(activities[a].segment, r)
                if o > 0 { pairs.append((a, p, o)) }
            }
        }
        var taken = Set<Int>()
        for pair in pairs.sorted(by: { $0.overlap > $1.overlap }) where held[pair.a] == nil && !taken.contains(pair.p) {
            held[pair.a] = pair.p
            taken.insert(pair.p)
        }
        free = decided.indices.filter { !taken.contains($0) }
        // An activity whose play is gone: to a play of another reference over half of it.
        for a in activities.indices where !activities[a].ended && held[a] == nil {
            let seg = activities[a].segment
            let half = 0.5 * (seg.end - seg.start)
            if let k = free.indices.filter({ decided[free[$0]].referenceIndex != seg.referenceIndex
                                              && RecordingScanner.overlap(decided[free[$0]], seg) >= half })
                .max(by: { RecordingScanner.overlap(decided[free[$0]], seg) < RecordingScanner.overlap(decided[free[$1]], seg) }) {
                held[a] = free[k]
                free.remove(at: k)
            }
        }
        let closeDelay = options.activityEndDelay
        for a in activities.indices where !activities[a].ended {
            if let p = held[a] {
                let seg = decided[p]
                let moved = seg.referenceIndex != activities[a].segment.referenceIndex
                activities[a].segment = seg
                let nowRef = seg.referenceTime(at: seg.end)
                let old = activities[a].reported
                let predicted = old.referenceStart + old.timeScale * (seg.end - activities[a].reportedAt)
                if moved || abs(old.timeScale - seg.timeScale) > 0.002 || abs(predicted - nowRef) > 0.05 {
                    activities[a].reported = (nowRef, seg.timeScale)
                    activities[a].reportedAt = seg.end
                    if !final { onEvent?(.refined(id: activities[a].id, segment: seg)) }
                }
            }
            if final || activities[a].segment.end + closeDelay < now {
                activities[a].ended = true
                onEvent?(.ended(id: activities[a].id, segment: activities[a].segment))
            }
        }
        // New plays, once the decision has held them for a while.
        var seen: [(ref: Int, start: Double, end: Double, since: Double)] = []
        for p in free {
            let r = decided[p]
            // Over the audio of an ended activity of its reference: that play, found again.
            if activities.contains(where: { $0.ended && $0.segment.referenceIndex == r.referenceIndex
                                                && RecordingScanner.overlap($0.segment, r) > 0 }) { continue }
            let since = pending.first { $0.ref == r.referenceIndex && $0.start < r.end && r.start < $0.end }?.since ?? now
            // Next to another play of its reference (within a second): two lines of one play
            // that `scan` keeps apart until later parts join one of them, or the other copy of a
            // passage the reference repeats; the decision may still fold it into the other, so
            // it waits as long as a part can join (``joinGap``).
            let beside = activities.contains { $0.segment.referenceIndex == r.referenceIndex && RecordingScanner.overlap($0.segment, r) > -1 }
                || decided.indices.contains { $0 != p && decided[$0].referenceIndex == r.referenceIndex && RecordingScanner.overlap(decided[$0], r) > -1 }
            if final || now - since >= (beside ? RecordingScanner.joinGap : RecordingScanner.settleSeconds) {
                activities.append(Activity(id: nextID, segment: r, reported: (r.referenceTime(at: r.end), r.timeScale),
                                           reportedAt: r.end))
                nextID += 1
                onEvent?(.started(id: activities[activities.count - 1].id, segment: r))
                if final {
                    activities[activities.count - 1].ended = true
                    onEvent?(.ended(id: activities[activities.count - 1].id, segment: r))
                }
            } else {
                seen.append((r.referenceIndex, r.start, r.end, since))
            }
        }
        pending = seen
        // Forget what can no longer change an open activity's play. A segment that ends where an
        // open activity's play starts (within ``liveNeighbourSeconds``) still places that start
        // (``boundary(_:_:)``: a butt splice, a crossfade's middle): forgotten, the play's start
        // went back to its own first hits, up to 0.6 s later than scan's.
        let open = activities.filter { !$0.ended }.map(\.segment)
        liveFinished.removeAll { f in
            f.end < now - RecordingScanner.liveHorizon && !open.contains { RecordingScanner.overlap($0, f) > -RecordingScanner.liveNeighbourSeconds }
        }
        // An ended activity is remembered while segments of its reference over its audio are:
        // one that outlives the rest (kept for an activity it overlaps, or a line at another
        // alignment closed later) would otherwise come up as a play of its own once the
        // stronger lines were forgotten.
        activities.removeAll { a in
            a.ended && a.segment.end < now - RecordingScanner.liveHorizon && !liveFinished.contains {
                $0.referenceIndex == a.segment.referenceIndex && RecordingScanner.overlap($0, a.segment) > 0
            }
        }
    }

    private func close(_ s: OpenSegment) {
        var s = s
        // A line of the reference at another alignment that opened later and dominates the end of this one: a seek or a pause in the play, after which this line's
        // hits are the music's likeness to itself a moment away. This line ends before that stretch.
        // (Lines within ``ScanTuning/sameLineSeconds`` of this one at its last hit are this one.)
        let apart = tuning.sameLineSeconds / hop
        for rival in open + recentlyClosed where rival.ref == s.ref && rival.firstHitFrame > s.firstHitFrame
            && abs(rival.referenceFrame(at: s.lastHitFrame) - s.referenceFrame(at: s.lastHitFrame)) > apart {
            s.trimEnd(before: RecordingScanner.dominatedEnd(s.hitFrames, by: rival.hitFrames))
        }
        checkEvidence(&s, at: nil)
        s.spectrumEnd = spectrumEnd(s)
        s.endAtSilence = silenceEnd(s)
        s.changeEnd = changeEnd(s)
        let segment = segment(s)
        recentlyClosed.removeAll { $0.lastHitFrame < s.lastHitFrame - historyFrames }
        recentlyClosed.append(s)
        if onEvent != nil { liveFinished.append(segment) }
        // Segments under the threshold are kept until ``finish()``: one that continues another
        // on the same line after a quiet passage joins it (see ``resolveOverlaps(_:threshold:)``).
        guard options.keepsSegments else { return }
        finished.append(segment)
    }

    /// Hits a second both parts of a play on one line gather for the stretch between them to
    /// count as an interruption rather than a quiet or masked passage (see
    /// ``resolveOverlaps(_:threshold:postings:)``): 30. Clean plays of the bench's references
    /// gather 40–200 (Wesnoth's *Elvish Theme*, an orchestral piece, 80–95); the parts the
    /// bench's DJ mixes join across a crossfade or a masked passage gather 2–36, the weaker
    /// part at most 23. (At 100, as before, a clean play interrupted by 3–20 s of another
    /// reference, another part of itself, other music or silence was joined back across it, in
    /// 38 of a helper's 54 recordings: the stretch between was reported as the play's.)
    static let interruptionRate = 30.0
    /// Shortest stretch between two parts of a play on one line that can interrupt it: 2 s.
    static let interruptionGap = 2.0

    /// Seconds left out at each end of the stretch ``nearDuplicate(_:_:hop:postings:)``
    /// compares: 1, two of ``SameRecordingRule/windowSeconds``. A segment's edge is known to a
    /// few tenths of a second, so the segment of a version that shares only its first 20 s with
    /// the version played reaches a little past them, and its last window, holding the other
    /// version's continuation, differed: two versions sharing an intro were called different
    /// recordings there and the played one lost the other as its alternative.
    static let nearDuplicateEdgeMargin = 1.0

    /// Whether two references the recording matches over one stretch hold much of the same
    /// audio there but are different recordings: two spots on one music bed with different
    /// voice-overs, an edit with other words in the middle. The rule is `catalog add`'s
    /// (``RecordingComparison``, ``SameRecordingRule``): `a`'s reference postings over the
    /// stretch against `b`'s at the alignment the two segments give, in windows of
    /// ``SameRecordingRule/windowSeconds``; near-duplicates hold at least
    /// ``SameRecordingRule/overallFloor`` of them alike over the stretch and differ in a window.
    /// Such references are never each other's alternative (not "the same audio"), and the
    /// weaker of the two inside the stronger's play is not a play: a version of the play's
    /// reference, or partial material (``PartialMaterial/merged(_:)``). The overlap is compared
    /// without ``nearDuplicateEdgeMargin`` at either end: there one segment's edge may reach
    /// past the audio the two share.
    /// - Parameters:
    ///   - hop: seconds per frame.
    ///   - postings: a reference's postings whose anchor frame lies in a range
    ///     (``PostingIndex/postings(of:inFrames:)``).
    /// - Returns: `false` when the segments overlap by less than twice that margin or their time
    ///   scales differ by more than 0.5 % (the hashes then differ).
    static func nearDuplicate(_ a: Segment, _ b: Segment, hop: Double,
                              postings: (_ ref: Int, _ frames: ClosedRange<UInt32>) -> [Posting]) -> Bool {
        let from = max(a.start, b.start) + nearDuplicateEdgeMargin, to = min(a.end, b.end) - nearDuplicateEdgeMargin
        guard to > from, abs(a.timeScale - b.timeScale) <= 0.005, a.timeScale > 0, b.timeScale > 0 else { return false }
        guard let fa = referenceFrames(a, from: from, to: to, hop: hop),
              let fb = referenceFrames(b, from: from, to: to, hop: hop) else { return false }
        // Each side on its own stretch's frames (the windows' median is the stretch's).
        func rebased(_ ps: [Posting], _ first: UInt32) -> [Posting] { ps.map { Posting(hash: $0.hash, frame: $0.frame - first) } }
        let query = rebased(postings(a.referenceIndex, fa), fa.lowerBound)
        let reference = rebased(postings(b.referenceIndex, fb), fb.lowerBound)
        guard !query.isEmpty, !reference.isEmpty else { return false }
        let offset = Int((b.referenceTime(at: from) / hop - Double(fb.lowerBound))
                         - (a.referenceTime(at: from) / hop - Double(fa.lowerBound)))
        let comparison = RecordingComparison(query: query, reference: reference, offset: offset, hop: hop)
        return comparison.share >= SameRecordingRule.overallFloor && !comparison.differing.isEmpty
    }

    /// The reference frames segment `s` plays over recording seconds `from…to`, widened by
    /// `pad` frames each side and clipped to the frames a posting can have; `nil` when they all
    /// lie before the reference's start.
    private static func referenceFrames(_ s: Segment, from: Double, to: Double, hop: Double,
                                        pad: Double = 0) -> ClosedRange<UInt32>? {
        let lo = (min(s.referenceTime(at: from), s.referenceTime(at: to)) / hop).rounded(.down) - pad
        let hi = (max(s.referenceTime(at: from), s.referenceTime(at: to)) / hop).rounded(.up) + pad
        guard hi >= 0 else { return nil }
        return UInt32(max(0, lo))...UInt32(min(Double(UInt32.max), hi))
    }

    /// Whether two references the recording matches over one stretch are the same recording
    /// there, as ``Catalog`` decides it at `catalog add` (``Matcher/sameRecording(as:)``,
    /// which `--allow-duplicates` overrides: a marked and a plain copy of a spot, a re-encoding):
    /// in at least ``Matcher/duplicateCoverage`` of the slots (``Matcher/slotFrames`` frames)
    /// of `a`'s reference over the stretch that hold any of its postings, `b`'s reference holds
    /// one of them (same hash) at the frame `b`'s alignment puts the same recording time at,
    /// ±1 frame. A loop or sample that is one layer of two tracks leaves the slots where the
    /// other layers make the landmarks unmatched; unrelated references share a 32-bit hash at
    /// a given frame about once in 10^8 postings.
    /// - Parameters:
    ///   - hop: seconds per frame.
    ///   - postings: a reference's postings whose anchor frame lies in a range
    ///     (``PostingIndex/postings(of:inFrames:)``).
    /// - Returns: the share of slots, 0…1; 0 when the segments do not overlap, their time scales
    ///   differ by more than 0.5 % (the hashes then differ) or `a`'s reference has no postings there.
    static func sameRecordingShare(_ a: Segment, _ b: Segment, hop: Double,
                                   postings: (_ ref: Int, _ frames: ClosedRange<UInt32>) -> [Posting]) -> Double {
        let from = max(a.start, b.start), to = min(a.end, b.end)
        guard to > from, abs(a.timeScale - b.timeScale) <= 0.005, a.timeScale > 0 else { return 0 }
        guard let fa = referenceFrames(a, from: from, to: to, hop: hop, pad: 2),
              let fb = referenceFrames(b, from: from, to: to, hop: hop, pad: 2) else { return 0 }
        let own = postings(a.referenceIndex, fa)
        guard !own.isEmpty else { return 0 }
        let other = Set(postings(b.referenceIndex, fb).map { UInt64($0.hash) << 32 | UInt64($0.frame) })
        var slots = Set<UInt32>(), matched = Set<UInt32>()
        for p in own {
            let slot = p.frame / UInt32(Matcher.slotFrames)
            slots.insert(slot)
            guard !matched.contains(slot) else { continue }
            let t = a.start + (Double(p.frame) * hop - a.referenceStart) / a.timeScale
            let bf = Int((b.referenceTime(at: t) / hop).rounded())
            if (bf - 1 ... bf + 1).contains(where: { $0 >= 0 && other.contains(UInt64(p.hash) << 32 | UInt64($0)) }) { matched.insert(slot) }
        }
        return Double(matched.count) / Double(slots.count)
    }

    /// Cleans up decided segments:
    /// - joins segments of one reference on the same line (the reference time predicted at the
    ///   second's start within 0.15 s plus 2 % of the gap, at most 0.5 s) less than 20 s apart, whatever segments of the reference
    ///   at other alignments lie between (another copy of a passage it repeats): a quiet passage,
    ///   not a new airing. A part under `threshold` joins too (its hits add to the play's), so
    ///   one play at one alignment is one segment whatever the music does inside it. Not when
    ///   both parts are clean (``interruptionRate`` hits a second or more) and leave a gap of
    ///   ``interruptionGap`` or more where the reference's own sound (`postings(ref, from, to)`:
    ///   its postings in reference seconds `from..<to`) should have given two seconds' worth of
    ///   the first part's hits: then the gap is other audio or a pause, not a quiet passage;
    /// - drops what is still under `threshold` (confidence) after joining;
    /// - drops segments shorter than 4 s with fewer than 100 hits that overlap or touch (within
    ///   1 s) a stronger segment of their own reference (a repeated passage of it caught at a
    ///   fade); a short spot on its own is kept;
    /// - drops a segment that overlaps a stronger kept one of the same reference by 30 % of its
    ///   length (another repeat of the passage matched at a fade, or a bit-exact copy over the
    ///   same stretch), or lies mostly (≥ 60 %) inside a kept one of another reference with four
    ///   times its hits;
    /// - makes two segments of different references over the same stretch (one ≥ 80 % inside
    ///   the other) one entry, the stronger keeping the other reference as its alternative, when
    ///   `sameRecording(a, b)` (``sameRecordingShare(_:_:hop:postings:)``) reaches
    ///   ``Matcher/duplicateCoverage``: the references are the same recording there (a marked and
    ///   a plain copy gather different hit rates from one airing, so the hit-rate rule below
    ///   missed them and the airing was reported twice); never when `nearDuplicate(a, b)`
    ///   (``nearDuplicate(_:_:hop:postings:)``): references that share much of the stretch but
    ///   differ in part of it (spots on one bed with different voice-overs) are two recordings,
    ///   and the one with fewer hits inside the other's play is covered by it;
    /// - puts the boundary between consecutive segments that overlap (a crossfade, where both
    ///   are audible) in the middle of the overlap, or at a butt splice where the second one
    ///   starts (``boundary(_:_:)``), the second one starting no earlier than its reference
    ///   does. A gap between segments is kept as it is: a pause, a station id or other audio
    ///   between two plays is not part of either.
    static func resolveOverlaps(_ segments: [Segment], threshold: Double,
                                postings: (_ ref: Int, _ from: Double, _ to: Double) -> Int = { _, _, _ in 0 },
                                sameRecording: (_ a: Segment, _ b: Segment) -> Double = { _, _ in 0 },
                                nearDuplicate: (_ a: Segment, _ b: Segment) -> Bool = { _, _ in false }) -> [Segment] {
        resolve(segments, threshold: threshold, postings: postings, sameRecording: sameRecording, nearDuplicate: nearDuplicate).plays
    }

    /// ``resolveOverlaps(_:threshold:postings:sameRecording:nearDuplicate:)``, and the partial material it
    /// leaves out of the plays: each segment of another reference beyond chance (at least
    /// `threshold`) that a play covers (``PartialMaterial``), where the two references are not
    /// the same recording (their ``sameRecordingShare(_:_:hop:postings:)``, `sameRecording`,
    /// under ``Matcher/duplicateCoverage``). Joined parts as the plays'; in recording order.
    static func resolve(_ segments: [Segment], threshold: Double,
                        postings: (_ ref: Int, _ from: Double, _ to: Double) -> Int = { _, _, _ in 0 },
                        sameRecording: (_ a: Segment, _ b: Segment) -> Double = { _, _ in 0 },
                        nearDuplicate: (_ a: Segment, _ b: Segment) -> Bool = { _, _ in false }) -> (plays: [Segment], partial: [PartialMaterial]) {
        /// Whether the stretch between two parts of a play on one line was other audio (another
        /// reference, another part of this one, other music, speech, silence) rather than a
        /// quiet passage of the reference: both parts are heard clearly (``interruptionRate``
        /// hits a second or more) and the reference's own sound over a gap of
        /// ``interruptionGap`` or more should have given the first part's hits of 2 s or more.
        /// (Masked passages of a DJ mix under crowd noise lose their hits too; there the parts
        /// gather fewer hits a second, at most 36 in the bench's mixes.)
        func interrupted(_ a: Segment, _ b: Segment) -> Bool {
            let gap = b.start - a.end
            guard gap >= RecordingScanner.interruptionGap else { return false }
            let rate = Double(a.hits) / max(a.end - a.start, 1e-3), rateB = Double(b.hits) / max(b.end - b.start, 1e-3)
            return min(rate, rateB) >= RecordingScanner.interruptionRate
                && expectedHits(a, from: a.referenceEnd, to: b.referenceStart) >= 2 * rate
        }
        /// Hits the first segment's play would have gathered over reference seconds `from…to`
        /// at its own hits per posting.
        func expectedHits(_ a: Segment, from: Double, to: Double) -> Double {
            let own = postings(a.referenceIndex, min(a.referenceStart, a.referenceEnd), max(a.referenceStart, a.referenceEnd))
            guard own > 0, to > from else { return 0 }
            return Double(a.hits) / Double(own) * Double(postings(a.referenceIndex, from, to))
        }
        /// How far (reference seconds) the second part's start may lie from the first part's
        /// line for the two to be one play: 0.15 s plus 2 % of the gap (a weak part's speed is
        /// known to a percent or two), at most 0.5 s. Two parts 0.5 s apart on lines 0.5 s
        /// apart are a pause in the play, not a quiet passage (``ScanTuning/joinToleranceSeconds``,
        /// ``ScanTuning/joinTolerancePerGapSecond``, ``ScanTuning/joinToleranceMaximumSeconds``).
        let tuning = ScanTuning.default
        func joinTolerance(gap: Double) -> Double {
            min(tuning.joinToleranceMaximumSeconds, tuning.joinToleranceSeconds + tuning.joinTolerancePerGapSecond * max(0, gap))
        }
        var joined: [Segment] = []
        for s in segments.sorted(by: { $0.start < $1.start }) {
            // (Any earlier part on the line, not only the reference's last segment: a line of
            // another copy of a repeated passage may lie between the two parts.)
            if let i = joined.lastIndex(where: {
                $0.referenceIndex == s.referenceIndex && s.start - $0.end < RecordingScanner.joinGap && s.start >= $0.start
                    && abs($0.referenceTime(at: s.start) - s.referenceStart) < joinTolerance(gap: s.start - $0.end) && !interrupted($0, s)
            }) {
                var a = joined[i]
                let total = Double(a.hits + s.hits)
                a.timeScale = (a.timeScale * Double(a.hits) + s.timeScale * Double(s.hits)) / total
                a.frequencySkew = (a.frequencySkew * Double(a.hits) + s.frequencySkew * Double(s.hits)) / total
                // A part that ends inside the play (a weaker line over part of it) leaves the
                // play's end and its reference end as they are.
                if s.end > a.end {
                    a.end = s.end
                    a.referenceEnd = s.referenceEnd
                    a.changeEnd = s.changeEnd
                }
                a.spectralCap = max(a.spectralCap, s.spectralCap)
                let together = min(RecordingScanner.confidence(hits: a.hits + s.hits, duration: (a.end - a.start) + (s.end - s.start)),
                                   a.spectralCap)
                a.hits += s.hits
                a.confidence = max(a.confidence, s.confidence, together)
                joined[i] = a
                continue
            }
            joined.append(s)
        }
        let strong = joined.filter { $0.confidence >= threshold }
        let candidates = strong.filter { s in
            s.end - s.start >= 4 || s.hits >= 100 || !strong.contains { o in
                o != s && o.referenceIndex == s.referenceIndex && o.hits > s.hits
                    && o.start - 1 < s.end && s.start < o.end + 1
            }
        }
        // A segment (2 s or more) of another reference that lies inside a longer one (≥ 80 % of
        // it) and gathers about as many hits per second (0.5–1.3 times) is shared material (two
        // versions of a song): the longer one, which also explains the rest, keeps it as an
        // alternative for that stretch. Two segments over the same stretch (each ≥ 80 % inside the
        // other, 0.77–1.3 times the hit rate) are one entry with the other as its alternative.
        var shared: [Int: [(item: MediaItem, start: Double, end: Double)]] = [:]
        var explainedBy: [Int: Int] = [:]
        for (i, s) in candidates.enumerated() {
            let length = max(s.end - s.start, 1e-3)
            let rate = Double(s.hits) / length
            if let j = candidates.indices.first(where: { j in
                let o = candidates[j]
                guard j != i, o.referenceIndex != s.referenceIndex, length >= 2 else { return false }
                let otherLength = max(o.end - o.start, 1e-3)
                let overlap = (min(o.end, s.end) - max(o.start, s.start)) / length
                let otherRate = Double(o.hits) / otherLength
                guard overlap >= tuning.sharedInsideFraction else { return false }
                // The references themselves hold the same audio over this stretch at these
                // alignments (a marked and a plain copy of a spot, a re-edit, a shared intro):
                // whatever the hit rates (a marked copy gathers fewer hits from a plain airing),
                // the recording aired one of them; the stronger keeps the other as its
                // alternative.
                // References that share much here but differ in part of it (spots on one bed
                // with different voice-overs) are two recordings: never the same audio.
                if nearDuplicate(s, o) { return false }
                if Matcher.duplicateCoverage <= sameRecording(s, o) {
                    return otherLength >= length + 2 || o.hits > s.hits || (o.hits == s.hits && o.item.id < s.item.id)
                }
                guard rate <= tuning.sharedRateHigh * otherRate && rate >= tuning.sharedRateLow * otherRate else { return false }
                if otherLength >= length + 2 { return true }
                // The same stretch in two references (the same recording catalogued twice, or two
                // versions identical here): one entry, the other reference its alternative — the
                // one with more hits keeps it (on a tie, the smaller id).
                let mutual = (min(o.end, s.end) - max(o.start, s.start)) / otherLength
                return otherLength > length - 2 && mutual >= tuning.sharedInsideFraction && rate >= tuning.sameStretchRate * otherRate
                    && (o.hits > s.hits || (o.hits == s.hits && o.item.id < s.item.id))
            }) {
                explainedBy[i] = j
            }
        }
        // Each explained segment is an alternative of the entry that explains it in the end:
        // with three copies of a spot, the weakest explained by the middle one, which the
        // strongest explains in turn, was lost with the middle one. One alternative per
        // reference, over the span its segments cover.
        for (i, _) in explainedBy.sorted(by: { $0.key < $1.key }) {
            var root = i, steps = 0
            while let next = explainedBy[root], steps < candidates.count { root = next; steps += 1 }
            let s = candidates[i]
            if let k = shared[root]?.firstIndex(where: { $0.item.id == s.item.id }) {
                shared[root]![k].start = min(shared[root]![k].start, s.start)
                shared[root]![k].end = max(shared[root]![k].end, s.end)
            } else if candidates[root].item.id != s.item.id {
                shared[root, default: []].append((s.item, s.start, s.end))
            }
        }
        let explained = Set(explainedBy.keys)
        // Strongest first (more hits; on a tie the earlier start, then the earlier reference
        // time: of bit-exact copies of a passage over the same stretch one is kept), each kept
        // unless a segment already kept covers it. Only a kept segment covers: a play of a
        // passage the reference repeats back to back (T T T M against a reference's J T T M)
        // has lines at every copy, and the first T, covered only by a line that a stronger
        // one covered in turn, went missing.
        let order = candidates.indices.filter { !explained.contains($0) }.sorted { i, j in
            let a = candidates[i], b = candidates[j]
            if a.hits != b.hits { return a.hits > b.hits }
            if a.start != b.start { return a.start < b.start }
            if a.referenceStart != b.referenceStart { return a.referenceStart < b.referenceStart }
            return i < j
        }
        var kept: [Segment] = []
        var partial: [PartialMaterial] = []
        for i in order {
            var s = candidates[i]
            s.alternatives = shared[i] ?? []
            let length = max(s.end - s.start, 1e-3)
            let covering = kept.firstIndex { o in
                let overlap = (min(o.end, s.end) - max(o.start, s.start)) / length
                if o.referenceIndex == s.referenceIndex { return overlap >= 0.3 }
                // (A near-duplicate with fewer hits inside a play: the play's shared audio.)
                return overlap >= 0.6 && (o.hits >= 4 * s.hits || (o.hits > s.hits && nearDuplicate(s, o)))
            }
            guard let c = covering else { kept.append(s); continue }
            // Another reference's material inside a play, beyond chance, and not the same recording
            // there: a layer the two share (a loop, a sample, a quote). A copy of the play's own
            // reference, or the same recording, is the play's.
            let o = kept[c]
            guard o.referenceIndex != s.referenceIndex, o.item.id != s.item.id,
                  let inside = PartialMaterial.clipped(s, from: o.start, to: o.end) else { continue }
            partial.append(PartialMaterial(segment: inside, within: o.item, sharedSlots: sameRecording(s, o)))
        }
        // (Never over a play of its own reference: there the reference plays in full.)
        partial.removeAll { p in kept.contains { $0.referenceIndex == p.segment.referenceIndex && RecordingScanner.overlap($0, p.segment) > 0 } }
        partial = PartialMaterial.merged(partial)
        var all = kept.sorted { $0.start < $1.start }
        guard all.count > 1 else { return (all, partial) }
        for i in 1..<all.count {
            var a = all[i - 1], b = all[i]
            if a.start < b.start && a.end < b.end, let middle = RecordingScanner.boundary(a, b) {
                a.referenceEnd = a.referenceTime(at: middle)
                a.end = middle
                // b's start no earlier than its reference's start (moved to the middle of a
                // crossfade, a play from the reference's first second went to −0.19 s).
                let start = b.timeScale > 0 ? max(middle, b.start - b.referenceStart / b.timeScale) : middle
                b.referenceStart = b.referenceTime(at: start)
                b.start = start
                all[i - 1] = a
                all[i] = b
            }
        }
        return (all, partial)
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

    private init() {
        keys = []
        counts = []
        mask = 0
    }

    /// A table that holds nothing and allocates nothing (a placeholder; never add to it).
    static let empty = VoteTable()

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

extension ScanOptions {
    /// Seconds of recording after a play's end at which `monitor` ends its activity (writes
    /// `segment.ended`): ``RecordingScanner/joinGap`` plus a window and a hop, as long as a later part
    /// on its line could still join it. 27.5 s with the defaults (20 + 6 + 1.5).
    public var activityEndDelay: Double { RecordingScanner.joinGap + windowSeconds + hopSeconds }
}
