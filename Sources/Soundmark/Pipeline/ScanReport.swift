import Foundation

/// What `soundmark scan` writes for one recording as JSON (`--format json`, also a worker's job
/// report) and CSV (`--format csv`), so that a program that scans a recording
/// (``RecordingScan``) writes the same bytes as the command.
///
/// ```swift
/// let scanned = try RecordingScan(index: index).run("mix.mp3")
/// print(ScanReport.json(source: "mix.mp3", duration: scanned.duration, segments: scanned.segments,
///                       partial: scanned.partial, warnings: scanned.warnings).text)
/// print(ScanReport.csv(scanned.segments), terminator: "")
/// ```
public enum ScanReport {
    /// The CSV columns: start, end, id, title, artist, referenceStart, referenceEnd, confidence,
    /// frequencySkew, timeScale (reference seconds per recording second) and alternatives (the
    /// other references the stretch cannot be told from, "id start-end" in recording seconds,
    /// "; " between).
    public static let csvHeader = ["start", "end", "id", "title", "artist", "referenceStart", "referenceEnd", "confidence",
                                   "frequencySkew", "timeScale", "alternatives"]

    /// One segment as a CSV record of ``csvHeader``'s columns: times in seconds with 3 decimals,
    /// confidence and frequency skew with 4 (a skew that rounds to zero is "0.0000", never
    /// "-0.0000"), time scale with 5; a missing title or artist is empty.
    public static func csvRow(_ s: Segment) -> [String] {
        [String(format: "%.3f", s.start), String(format: "%.3f", s.end), s.item.id, s.item.title ?? "", s.item.artist ?? "",
         String(format: "%.3f", s.referenceStart), String(format: "%.3f", s.referenceEnd),
         String(format: "%.4f", s.confidence), String(format: "%.4f", (s.frequencySkew * 10000).rounded() / 10000 + 0),
         String(format: "%.5f", s.timeScale),
         s.alternatives.map { String(format: "%@ %.3f-%.3f", $0.item.id, $0.start, $0.end) }.joined(separator: "; ")]
    }

    /// `scan --format csv`: the header and one record per segment, RFC 4180 (``CueWriter/csv(header:rows:)``:
    /// CRLF line ends, fields quoted when they hold a comma, quote or line break).
    public static func csv(_ segments: [Segment]) -> String {
        CueWriter.csv(header: csvHeader, rows: segments.map(csvRow))
    }

    /// `scan --format json`: `version` (``OutputVersion/json``), `source`, the `recording` (its
    /// `source` again, kept for older readers, and its `duration` in seconds), its `segments`
    /// (``Segment/json``, or ``Segment/json(marker:)`` when `markers` is given: one per segment,
    /// markers were read), the `cues` of `cues` (reference id and cue in recording time, see
    /// ``mappedAnnotations(_:duration:annotations:index:dropped:)``), the `partial` material,
    /// then `warnings` (what was said about the recording) when there are any.
    public static func json(source: String, duration: Double, segments: [Segment], markers: [SegmentMarker?]? = nil,
                            cues: [(id: String, cue: Cue)] = [], partial: [PartialMaterial] = [],
                            warnings: [String] = []) -> JSONOutput {
        let recording = JSONOutput.object([("source", .string(source)), ("duration", .seconds(duration))])
        let cueJSON = cues.map { m in
            JSONOutput.object([("reference", .object([("id", .string(m.id))])), ("start", .seconds(m.cue.start)), ("end", .seconds(m.cue.end)),
                               ("text", .string(m.cue.text))])
        }
        let segmentJSON = markers.map { zip(segments, $0).map { $0.json(marker: $1) } } ?? segments.map(\.json)
        return JSONOutput.object([("version", OutputVersion.json), ("source", .string(source)), ("recording", recording),
                                  ("segments", .array(segmentJSON)), ("cues", .array(cueJSON)),
                                  ("partial", .array(partial.map(\.json)))], warnings: warnings)
    }

    /// The annotations of every reference found in `segments`, by reference index (references
    /// without annotations are left out).
    /// - Throws: ``SoundmarkError`` when the catalog cannot be read.
    public static func referenceAnnotations(_ segments: [Segment], catalog: Catalog, index: CatalogIndex) throws -> [Int: [Annotation]] {
        var annotations: [Int: [Annotation]] = [:]
        for ref in Set(segments.map(\.referenceIndex)) {
            let list = try catalog.annotations(id: index.references[ref].item.id)
            if !list.isEmpty { annotations[ref] = list }
        }
        return annotations
    }

    /// The annotations of every reference found in `segments` (read from `catalog`), mapped
    /// into recording time through the segments' ``AlignmentMap`` (`duration`: the recording's,
    /// seconds), ordered by start: the `cues` of ``json(source:duration:segments:markers:cues:partial:warnings:)``.
    /// `dropped(id, annotation)` receives each annotation of reference `id` that lies wholly in
    /// reference time that did not air.
    /// - Throws: ``SoundmarkError`` when the catalog cannot be read.
    public static func mappedAnnotations(_ segments: [Segment], duration: Double, catalog: Catalog, index: CatalogIndex,
                                         dropped: (String, Annotation) -> Void = { _, _ in }) throws -> [(id: String, cue: Cue)] {
        mappedAnnotations(segments, duration: duration, annotations: try referenceAnnotations(segments, catalog: catalog, index: index),
                          index: index, dropped: dropped)
    }

    /// ``mappedAnnotations(_:duration:catalog:index:dropped:)`` with the annotations already
    /// read (by reference index, as ``referenceAnnotations(_:catalog:index:)`` gives them).
    public static func mappedAnnotations(_ segments: [Segment], duration: Double, annotations: [Int: [Annotation]], index: CatalogIndex,
                                         dropped: (String, Annotation) -> Void = { _, _ in }) -> [(id: String, cue: Cue)] {
        let map = AlignmentMap(segments: segments, recordingDuration: duration)
        var mapped: [(id: String, cue: Cue)] = []
        for ref in annotations.keys.sorted() {
            let id = index.references[ref].item.id
            let result = map.cues(for: annotations[ref]!, referenceIndex: ref)
            mapped += result.cues.map { (id, $0) }
            for a in result.dropped { dropped(id, a) }
        }
        mapped.sort { ($0.cue.start, $0.cue.end) < ($1.cue.start, $1.cue.end) }
        return mapped
    }
}

extension Segment {
    /// The segment as scan's JSON writes it: `start`, `end`, `reference` (``MediaItem/json``),
    /// `referenceStart`, `referenceEnd` (seconds, 3 decimals), `confidence`, `frequencySkew`
    /// (4 decimals), `hits`, `alternatives` (`reference`, `start`, `end`) and `pieces` (one:
    /// the segment's times with its `timeScale`, reference seconds per recording second, 5 decimals). The bench reads start,
    /// end, reference, referenceStart, referenceEnd, confidence and frequencySkew.
    public var json: JSONOutput {
        .object(alignmentMembers
                + [("alternatives", .array(alternatives.map { .object([("reference", $0.item.json), ("start", .seconds($0.start)),
                                                                       ("end", .seconds($0.end))]) })),
                   ("pieces", .array([.object([("start", .seconds(start)), ("end", .seconds(end)),
                                               ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd)),
                                               ("timeScale", .number(timeScale, decimals: 5))])]))])
    }

    /// The members a play and a stretch of partial material share: `start`, `end`, `reference`,
    /// `referenceStart`, `referenceEnd`, `confidence`, `frequencySkew`, `hits`.
    var alignmentMembers: [(String, JSONOutput)] {
        [("start", .seconds(start)), ("end", .seconds(end)), ("reference", item.json),
         ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd)),
         ("confidence", .number(confidence, decimals: 4)), ("frequencySkew", .number(frequencySkew, decimals: 4)),
         ("hits", .integer(hits))]
    }

    /// ``json`` with a `marker` member (``SegmentMarker/json``; `null` when markers were read
    /// but none was decoded in the segment).
    public func json(marker: SegmentMarker?) -> JSONOutput {
        guard case .object(var members) = json else { return json }
        members.append(("marker", marker?.json ?? .null))
        return .object(members)
    }

    /// The segment as a library airing (recording times; `referenceDuration`: the reference's
    /// duration in seconds from the catalog, nil when unknown).
    public func airing(referenceDuration: Double?) -> Airing {
        Airing(reference: item.id, title: item.title, artist: item.artist, referenceDuration: referenceDuration,
               start: start, end: end, referenceStart: referenceStart, referenceEnd: referenceEnd,
               confidence: confidence, frequencySkew: frequencySkew, timeScale: timeScale)
    }
}

extension PartialMaterial {
    /// The segment's members but `alternatives` and `pieces` (`start`, `end`, `reference`,
    /// `referenceStart`, `referenceEnd`, `confidence`, `frequencySkew`, `hits`), then `within`
    /// (the play's reference) and `sharedSlots` (0…1, 3 decimals).
    public var json: JSONOutput {
        .object(segment.alignmentMembers + [("within", within.json), ("sharedSlots", .number(sharedSlots, decimals: 3))])
    }
}

extension SegmentMarker {
    /// `{"payload":n,"firstSeen":s,"windows":n,"confidence":c,"reference":{"id"}|null,"refined":b}`
    /// (`confidence` with 3 decimals; `reference` as ``referenceJSON(_:)``).
    public var json: JSONOutput {
        .object([("payload", .integer(Int(payload))), ("firstSeen", .seconds(firstSeen)), ("windows", .integer(windows)),
                 ("confidence", .number(confidence, decimals: 3)), ("reference", SegmentMarker.referenceJSON(referenceID)),
                 ("refined", .bool(refined))])
    }

    /// The `reference` of a decoded audio marker: `{"id"}` of the reference whose payload it
    /// is, or `null` when the catalog records that payload for none.
    public static func referenceJSON(_ id: String?) -> JSONOutput {
        id.map { .object([("id", .string($0))]) } ?? .null
    }
}
