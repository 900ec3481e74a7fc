import Foundation
import Soundmark

/// Audio markers in `monitor`: reads them from the decoded audio (8 kHz, the fingerprint's rate)
/// and refines the open activities with them.
///
/// A payload decoded by a 10 s window (one every 5 s) is matched, once the recording has gone
/// ``settleSeconds`` past the window's midpoint (``ScanOptions/activityEndDelay`` + 5 s: so that
/// activities that ended before it have written their `segment.ended`), to every activity
/// still open that covers at least 6 s of the window (it started no later than 4 s into it):
/// marker events come about 35 s after the audio that carried the payload (with the default
/// window and hop). The first time an activity sees a
/// payload, a `segment.refined` event is written for it with `"trait":{"marker":true}` and
/// `"marker":{"payload","firstSeen","reference","refined"}`; when the catalog records the payload
/// for another reference of the same audio (another open activity over the same stretch, or
/// one of the segment's alternatives) the activity is refined to that reference: its
/// `material_id` and every later event of it name that reference. Later events of an activity
/// that saw its marker carry the trait too. Markers never start an activity and a missed
/// marker changes nothing; after a gap the detector starts afresh on the new audio.
final class MonitorMarkers {
    private let writer: MonitorWriter
    private let catalog: Catalog
    private var markers: [String: UInt32]
    private var index: CatalogIndex
    private let sampleRate: Int
    private var detector: MarkerDetector
    /// Recording seconds of the detector's first sample, and of the next sample it expects.
    private var base = 0.0
    private var expected = 0.0
    /// Open activities: their latest segment (as written).
    private var open: [Int: Segment] = [:]
    /// Per activity: the payloads already reported and the reference it was refined to.
    private var seen: [Int: Set<UInt32>] = [:]
    private var refinedTo: [Int: MediaItem] = [:]
    /// Per activity: the first payload it saw (what the library records for it).
    private var firstPayload: [Int: UInt32] = [:]
    /// Windows decoded, in recording seconds, waiting until the recording passes their midpoint + ``settleSeconds``.
    private var pending: [MarkerDetection] = []
    /// Seconds past a window's midpoint before it is matched to the activities: the scan
    /// options' ``ScanOptions/activityEndDelay`` plus 5 s (10 s before activities were ended that late:
    /// a marker in the spot after a play was then given to the play that had just ended too).
    private let settleSeconds: Double

    /// nil when markers are not to be read (no marker in the catalog and no `--marker`).
    init?(_ args: ParsedArguments, catalog: Catalog, index: CatalogIndex, writer: MonitorWriter, scanOptions: ScanOptions) throws {
        let markers = try catalog.markers()
        let rate = index.configuration.sampleRate
        guard args.has("marker") || !markers.isEmpty else { return nil }
        guard rate == 8_000 || rate == 16_000 else {
            warn("audio markers are read at 8 or 16 kHz, not at the catalog's \(rate) Hz: markers ignored")
            return nil
        }
        self.writer = writer
        // (A window that starts inside a play's last 6 s decodes the next spot's payload at
        // most 6 s after that play's end, 5 s past the window's midpoint: 5 s more.)
        settleSeconds = scanOptions.activityEndDelay + 5
        self.catalog = catalog
        self.markers = markers
        self.index = index
        sampleRate = rate
        detector = MarkerDetector(sampleRate: rate)
    }

    /// The catalog changed: its markers are read again.
    func reload(_ newIndex: CatalogIndex) {
        index = newIndex
        if let m = try? catalog.markers() { markers = m }
    }

    /// Writes a scanner event, keeping track of open activities (and the reference a marker refined them to).
    /// - Returns: for an `ended` event, the activity's segment as written (refined to the
    ///   marker's reference) and the first payload it saw, for the library; else nil.
    @discardableResult
    func write(_ event: ScanEvent) -> (segment: Segment, marker: UInt32?)? {
        var event = event
        let id: Int
        switch event {
        case .started(let i, var s):
            id = i
            open[i] = s
            if let item = refinedTo[i] { s.item = item; event = .started(id: i, segment: s) }
        case .refined(let i, var s):
            id = i
            open[i] = s
            if let item = refinedTo[i] { s.item = item; event = .refined(id: i, segment: s) }
        case .ended(let i, var s):
            id = i
            open[i] = nil
            if let item = refinedTo[i] { s.item = item; event = .ended(id: i, segment: s) }
        }
        let trait: [(String, JSONOutput)] = seen[id] == nil ? [] : [("trait", .object([("marker", .bool(true))]))]
        writer.write(event, extra: trait)
        guard case .ended(_, let s) = event else { return nil }
        defer { seen[id] = nil; refinedTo[id] = nil; firstPayload[id] = nil }
        return (s, firstPayload[id])
    }

    /// Feeds decoded audio starting at recording time `start` (seconds).
    func consume(_ samples: [Float], at start: Double) {
        if abs(start - expected) > 0.5 / Double(sampleRate) {
            handle(detector.finish())
            detector = MarkerDetector(sampleRate: sampleRate)
            base = start
        }
        expected = start + Double(samples.count) / Double(sampleRate)
        handle(detector.consume(samples))
        let ready = pending.prefix { ($0.start + $0.end) / 2 + settleSeconds <= expected }
        pending.removeFirst(ready.count)
        match(Array(ready))
    }

    /// The stream ended: the last window, and every window still waiting.
    func finish() {
        handle(detector.finish())
        match(pending)
        pending = []
    }

    /// Queues windows of the current detector (moved to recording time).
    private func handle(_ windows: [MarkerDetection]) {
        for var w in windows {
            w.start += base
            w.end += base
            pending.append(w)
        }
    }

    private func match(_ windows: [MarkerDetection]) {
        for w in windows {
            let named = markers.filter { $0.value == w.payload }.map(\.key).sorted()
            let latestStart = w.start + 0.4 * (w.end - w.start)
            for (id, segment) in open.sorted(by: { $0.key < $1.key }) where segment.start <= latestStart {
                guard seen[id]?.contains(w.payload) != true else { continue }
                seen[id, default: []].insert(w.payload)
                if firstPayload[id] == nil { firstPayload[id] = w.payload }
                var s = segment
                if s.end < w.end {
                    s.end = min(w.end, expected)
                    s.referenceEnd = s.referenceTime(at: s.end)
                }
                var refined = false
                var reference: String? = named.contains(segment.item.id) ? segment.item.id : named.first
                if let current = refinedTo[id] { s.item = current }
                if !named.isEmpty, !named.contains(s.item.id) {
                    // Another reference of the same audio: an open activity over the same stretch (both
                    // still playing: they overlap from the later start to now, for at least half of
                    // this one), or an alternative.
                    let sameAudio = open.first { other in
                        other.key != id && named.contains(other.value.item.id)
                            && expected - max(other.value.start, s.start) >= 0.5 * (expected - s.start)
                    }?.value.item ?? s.alternatives.first { named.contains($0.item.id) }?.item
                    if let item = sameAudio {
                        refinedTo[id] = item
                        s.item = item
                        reference = item.id
                        refined = true
                    }
                }
                let marker = JSONOutput.object([("payload", .integer(Int(w.payload))), ("firstSeen", .seconds(w.end)),
                                                ("reference", SegmentMarker.referenceJSON(reference)), ("refined", .bool(refined))])
                writer.write(.refined(id: id, segment: s), extra: [("trait", .object([("marker", .bool(true))])), ("marker", marker)],
                             note: "  [marker \(w.payload)\(reference.map { " = \($0)" } ?? "")\(refined ? ", refined" : "")]")
            }
        }
    }
}
