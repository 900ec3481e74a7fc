import Foundation

/// The audio marker seen during a segment (``MarkerRefinement``).
public struct SegmentMarker: Equatable, Sendable {
    /// The payload decoded (the most frequent one among the segment's windows).
    public let payload: UInt32
    /// Recording time in seconds at which it was first decoded: the end of the first 10 s
    /// window of the segment that carried it (when it could first be known).
    public let firstSeen: Double
    /// Windows of the segment that decoded it.
    public let windows: Int
    /// Mean confidence of those windows (share of coded bits agreeing, 0.5–1).
    public let confidence: Double
    /// The reference the catalog records this payload for (`catalog add --marker`), if any.
    public let referenceID: String?
    /// Whether the marker changed the segment's reference (it named another reference of the
    /// same audio: one of the segment's alternatives).
    public let refined: Bool
}

/// Joins marker detections to fingerprint segments.
///
/// A window belongs to a segment when at least 60 % of it (6 s of a 10 s window) lies inside the
/// segment, so that most of the audio it decoded is the segment's; the payload decoded
/// by most of a segment's windows (the earliest on a tie) is the segment's marker. When the
/// catalog records that payload for another reference *of the same audio* (two versions of a
/// spot told apart only by their markers), the segment is refined to that reference: the same
/// audio is another segment over the same stretch (overlapping at least half of this one), which
/// is kept while this one is dropped and listed among its ``Segment/alternatives``, or one of
/// this segment's own alternatives, which takes its place (the former reference becomes the
/// alternative). Markers never create segments, windows outside every segment are ignored, a
/// marker naming a reference of other audio is not this segment's (a window straddling a
/// neighbouring marked spot) and changes nothing, and a segment without a decoded marker is
/// left as the fingerprint found it.
public enum MarkerRefinement {
    /// - Parameters:
    ///   - segments: the fingerprint's segments (``RecordingScanner``), in time order.
    ///   - windows: per-window detections (``MarkerDetector/consume(_:)``), recording seconds.
    ///   - markers: payload per reference id (``Catalog/markers()``).
    ///   - index: the index the segments refer to (for the reference indices).
    /// - Returns: every segment, possibly refined, with its marker (nil when none was decoded).
    public static func apply(to segments: [Segment], windows: [MarkerDetection], markers: [String: UInt32],
                             index: CatalogIndex) -> [(segment: Segment, marker: SegmentMarker?)] {
        var idsByPayload: [UInt32: [String]] = [:]
        for (id, payload) in markers.sorted(by: { $0.key < $1.key }) { idsByPayload[payload, default: []].append(id) }
        var indexByID: [String: Int] = [:]
        for (i, r) in index.references.enumerated() { indexByID[r.item.id] = i }
        // A payload the catalog records for references whose audio is not this segment's
        // (none of its reference, its alternatives, or a segment over the same stretch) was
        // decoded from a neighbouring spot's audio in a window that straddles both: it is not
        // this segment's marker.
        func admissible(_ payload: UInt32, for segment: Segment) -> Bool {
            guard let named = idsByPayload[payload] else { return true }
            var here: Set<String> = [segment.item.id]
            for a in segment.alternatives { here.insert(a.item.id) }
            for other in segments where overlap(other, segment) >= 0.5 * (segment.end - segment.start) { here.insert(other.item.id) }
            return named.contains(where: here.contains)
        }
        var result: [(segment: Segment, marker: SegmentMarker?)] = segments.map { segment in
            let inside = windows.filter { w in
                min(w.end, segment.end) - max(w.start, segment.start) >= 0.6 * (w.end - w.start)
                    && admissible(w.payload, for: segment)
            }
            guard !inside.isEmpty else { return (segment, nil) }
            var counts: [UInt32: Int] = [:]
            for w in inside { counts[w.payload, default: 0] += w.windows }
            // The most frequent payload; on a tie, the one decoded first.
            let top = counts.values.max()!
            let payload = inside.first { counts[$0.payload] == top }!.payload
            let mine = inside.filter { $0.payload == payload }
            let count = mine.reduce(0) { $0 + $1.windows }
            let confidence = mine.reduce(0) { $0 + $1.confidence * Double($1.windows) } / Double(count)
            let named = idsByPayload[payload] ?? []
            return (segment, SegmentMarker(payload: payload, firstSeen: mine[0].end, windows: count, confidence: confidence,
                                           referenceID: named.contains(segment.item.id) ? segment.item.id : named.first, refined: false))
        }
        var dropped = Set<Int>()
        for i in result.indices {
            guard let marker = result[i].marker else { continue }
            let named = idsByPayload[marker.payload] ?? []
            let segment = result[i].segment
            guard !named.isEmpty, !named.contains(segment.item.id) else { continue }
            // Another segment of a named reference over the same stretch: it stands, this one goes.
            if let j = result.indices.first(where: { j in
                j != i && !dropped.contains(j) && named.contains(result[j].segment.item.id)
                    && overlap(result[j].segment, segment) >= 0.5 * (segment.end - segment.start)
            }) {
                dropped.insert(i)
                let other = result[j].segment
                result[j].segment.alternatives.append((item: segment.item, start: max(segment.start, other.start),
                                                       end: min(segment.end, other.end)))
                if let m = result[j].marker, m.payload == marker.payload {
                    result[j].marker = SegmentMarker(payload: m.payload, firstSeen: m.firstSeen, windows: m.windows, confidence: m.confidence,
                                                     referenceID: m.referenceID, refined: true)
                } else if result[j].marker == nil {
                    result[j].marker = SegmentMarker(payload: marker.payload, firstSeen: marker.firstSeen, windows: marker.windows,
                                                     confidence: marker.confidence, referenceID: other.item.id, refined: true)
                }
                continue
            }
            // One of its own alternatives is a named reference: it becomes the segment's reference.
            if let a = segment.alternatives.firstIndex(where: { named.contains($0.item.id) }),
               let newIndex = indexByID[segment.alternatives[a].item.id] {
                let other = segment.alternatives[a]
                var refined = segment
                refined.alternatives[a] = (item: segment.item, start: other.start, end: other.end)
                refined.item = other.item
                refined.referenceIndex = newIndex
                result[i] = (refined, SegmentMarker(payload: marker.payload, firstSeen: marker.firstSeen, windows: marker.windows,
                                                    confidence: marker.confidence, referenceID: other.item.id, refined: true))
            }
        }
        return result.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
    }

    /// Seconds two segments overlap (0 when they do not).
    static func overlap(_ a: Segment, _ b: Segment) -> Double {
        max(0, min(a.end, b.end) - max(a.start, b.start))
    }
}
