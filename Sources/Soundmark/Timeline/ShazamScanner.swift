import Foundation

/// Scans a recording's Shazam-format peaks (a Shazam signature of the whole recording, or
/// ``ShazamPeakGenerator``'s peaks of its audio) against references that carry Shazam peaks,
/// and returns its set-list as ``Segment``s, as ``RecordingScanner`` does with soundmark's fingerprint.
///
/// A window of ``windowSeconds`` is moved over the recording every ``hopSeconds`` and matched
/// with ``ShazamMatcher``; a match says which reference and its *line* (reference time at
/// recording time 0). Windows that find the same reference on the same line (within
/// ``lineTolerance``), with no more than ``ScanOptions/closeAfterSeconds`` between them, make one
/// segment: from the first to the last recording peak that has a reference peak on that line
/// (isolated chance hits left out: a hit counts when three more follow, or precede, within
/// 2 s), with the best window's confidence and the votes of all its windows as hits. Segments shorter than
/// ``ScanOptions/minimumDuration`` or below ``ScanOptions/threshold`` are dropped; where two
/// segments overlap, the one with more votes keeps the overlap. Shazam peaks are matched as they
/// are: `frequencySkew` 0 and `timeScale` 1 (no speed change is searched).
public struct ShazamScanner: Sendable {
    /// Window length, seconds (default 8).
    public var windowSeconds = 8.0
    /// Window hop, seconds (default 2).
    public var hopSeconds = 2.0
    /// Two windows are on the same line when their lines differ by at most this, seconds
    /// (default 0.05: six passes).
    public var lineTolerance = 0.05
    /// The references' matcher (its ``ShazamMatcher/threshold`` is the options' threshold).
    public let matcher: ShazamMatcher
    /// Scanner options used: ``ScanOptions/threshold``, ``ScanOptions/minimumDuration`` and
    /// ``ScanOptions/closeAfterSeconds``.
    public let options: ScanOptions
    /// Each reference's index in the catalog index the segments refer to (``Segment/referenceIndex``), by id.
    private let indices: [String: Int]

    /// Creates a scanner.
    /// - Parameters:
    ///   - references: the references with their Shazam peaks.
    ///   - index: the catalog index whose ``CatalogIndex/references`` the segments' `referenceIndex` points into.
    ///   - options: threshold, minimum duration and close-after time (default ``ScanOptions``).
    public init(references: [(item: MediaItem, signature: ShazamSignature)], index: CatalogIndex, options: ScanOptions = ScanOptions()) {
        var m = ShazamMatcher(references: references)
        m.threshold = options.threshold
        matcher = m
        self.options = options
        indices = Dictionary(index.references.enumerated().map { ($1.item.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The recording's segments, by start.
    /// - Parameter recording: the Shazam signature of the whole recording (pass 0 = recording time 0).
    public func segments(of recording: ShazamSignature) -> [Segment] {
        let passDuration = ShazamMatcher.passDuration
        let windowPasses = Int(windowSeconds / passDuration), hopPasses = max(1, Int(hopSeconds / passDuration))
        let peaks = recording.bands.map { $0.sorted { $0.pass < $1.pass } }
        let totalPasses = max(1, Int((recording.duration / passDuration).rounded(.up)))
        struct Open { var item: MediaItem; var line: Double; var start: Double; var end: Double; var confidence: Double; var votes: Int; var last: Double }
        var open: [Open] = []
        var closed: [Open] = []
        var first = 0
        repeat {
            let last = first + windowPasses
            let bands = peaks.map { band in
                band.filter { $0.pass >= first && $0.pass < last }.map { ShazamPeak(pass: $0.pass - first, magnitude: $0.magnitude, correctedBin: $0.correctedBin) }
            }
            let window = ShazamSignature(bands: bands, sampleRate: 16000, sampleCount: min(windowPasses, totalPasses - first) * 128)
            let t0 = Double(first) * passDuration
            for m in matcher.matches(for: window) {
                let line = m.matchOffset - t0
                let start = t0 + m.queryStart, end = t0 + m.queryEnd
                if let i = open.firstIndex(where: { $0.item.id == m.item.id && abs($0.line - line) <= lineTolerance }) {
                    open[i].start = min(open[i].start, start)
                    open[i].end = max(open[i].end, end)
                    open[i].confidence = max(open[i].confidence, m.confidence)
                    open[i].votes += m.alignedCount
                    open[i].last = t0
                } else {
                    open.append(Open(item: m.item, line: line, start: start, end: end, confidence: m.confidence, votes: m.alignedCount, last: t0))
                }
            }
            // Close what no window has extended for closeAfterSeconds.
            let stale = open.filter { t0 - $0.last > options.closeAfterSeconds + hopSeconds }
            closed += stale
            open.removeAll { t0 - $0.last > options.closeAfterSeconds + hopSeconds }
            first += hopPasses
        } while first + windowPasses / 2 < totalPasses
        closed += open
        // Each segment's extent: from the first to the last of its recording peaks that have a
        // reference peak on its line (±1 pass, ±1.5 bins), leaving out isolated chance hits (a
        // hit counts when 3 more follow, or precede, within 2 s).
        var refPasses: [String: [Int: [Int]]] = [:]
        let allPeaks = peaks.flatMap { $0 }.sorted { $0.pass < $1.pass }
        for i in closed.indices {
            let id = closed[i].item.id
            if refPasses[id] == nil, let ref = matcher.references.first(where: { $0.item.id == id }) {
                var byPass: [Int: [Int]] = [:]
                for band in ref.signature.bands { for p in band { byPass[p.pass, default: []].append(Int(p.correctedBin)) } }
                refPasses[id] = byPass
            }
            guard let byPass = refPasses[id] else { continue }
            let shift = Int((closed[i].line / passDuration).rounded())
            let lo = closed[i].start - windowSeconds, hi = closed[i].end + windowSeconds
            let hits = allPeaks.filter { p in
                let t = Double(p.pass) * passDuration
                guard t >= lo && t <= hi else { return false }
                return (p.pass + shift - 1...p.pass + shift + 1).contains { q in
                    byPass[q]?.contains { abs($0 - Int(p.correctedBin)) <= 96 } == true
                }
            }.map { Double($0.pass) * passDuration }
            let span = 2.0, dense = 3
            let firstDense = hits.indices.first { k in k + dense < hits.count && hits[k + dense] - hits[k] <= span }
            let lastDense = hits.indices.last { k in k - dense >= 0 && hits[k] - hits[k - dense] <= span }
            if let a = firstDense, let b = lastDense, hits[a] < hits[b] {
                closed[i].start = hits[a]
                closed[i].end = hits[b]
            }
        }
        // The stronger segment keeps an overlap; what is left of the weaker one must still be long enough.
        var kept: [Open] = []
        for s in closed.sorted(by: { $0.votes > $1.votes }) where s.confidence >= options.threshold {
            var pieces = [(s.start, s.end)]
            for k in kept {
                pieces = pieces.flatMap { p -> [(Double, Double)] in
                    guard p.0 < k.end && k.start < p.1 else { return [p] }
                    return [(p.0, k.start), (k.end, p.1)].filter { $0.1 > $0.0 }
                }
            }
            guard let longest = pieces.max(by: { $0.1 - $0.0 < $1.1 - $1.0 }),
                  longest.1 - longest.0 >= options.minimumDuration else { continue }
            var t = s
            t.start = longest.0
            t.end = longest.1
            kept.append(t)
        }
        return kept.sorted { $0.start < $1.start }.map { s in
            Segment(referenceIndex: indices[s.item.id] ?? -1, item: s.item, start: s.start, end: s.end,
                    referenceStart: s.start + s.line, referenceEnd: s.end + s.line, frequencySkew: 0, timeScale: 1,
                    confidence: s.confidence, hits: s.votes)
        }
    }
}
