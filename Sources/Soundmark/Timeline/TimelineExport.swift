import Foundation

/// Renders timeline rows as JSON, CSV, SRT or WebVTT. All output is deterministic.
public enum TimelineExport {
    /// The duration given to the last cue when its row has no numeric `duration` field.
    public static let defaultCueDuration: Double = 5

    /// `{"rows":[{"activity_id":…,"material_id":…,"marker":…,"first_seen":{"time":…,
    /// "position":…},"end":…,"fields":{…},"closed":…},…]}`; `end` is ``TimelineRow/end``.
    ///
    /// Row keys appear in that fixed order; absent ids, times, positions and ends are `null`;
    /// `first_seen` additionally carries `"timestamp"` (the original ISO-8601 string) when
    /// the first payload's time was given that way; `fields` keys are sorted.
    /// Compact output is a single line; `pretty` indents by two spaces. No trailing newline.
    /// Non-empty `warnings` (what the merge said on stderr: malformed lines, ignored payloads,
    /// cues moved or left out) follow the rows as `"warnings":["…",…]`.
    public static func json(_ rows: [TimelineRow], pretty: Bool = false, warnings: [String] = []) -> String {
        func optional(_ text: String?) -> TimelineJSONNode { .value(text.map(TimelineValue.string) ?? .null) }
        func optional(_ number: Double?) -> TimelineJSONNode { .value(number.map(TimelineValue.number) ?? .null) }
        let nodes: [TimelineJSONNode] = rows.map { row in
            var firstSeen: [(String, TimelineJSONNode)] = [
                ("time", optional(row.firstSeen.time)),
                ("position", optional(row.firstSeen.position)),
            ]
            if let timestamp = row.firstSeen.timestamp { firstSeen.append(("timestamp", optional(timestamp))) }
            return .object([
                ("activity_id", optional(row.activityID)),
                ("material_id", optional(row.materialID)),
                ("marker", .value(.bool(row.marker))),
                ("first_seen", .object(firstSeen)),
                ("end", optional(row.end)),
                ("fields", .value(.object(row.fields))),
                ("closed", .value(.bool(row.closed))),
            ])
        }
        var out = ""
        var members: [(String, TimelineJSONNode)] = [("rows", .array(nodes))]
        if !warnings.isEmpty { members.append(("warnings", .array(warnings.map { .value(.string($0)) }))) }
        TimelineJSONWriter.write(.object(members), into: &out, pretty: pretty, level: 0)
        return out
    }

    /// RFC 4180 CSV: a header line, one record per row, every line ended by CRLF.
    ///
    /// Columns: `activity_id,material_id,marker,first_seen_time,first_seen_position,
    /// first_seen_timestamp,end,closed`, then one `fields.<key>` column per display-field key
    /// found in any row (sorted). Absent values are empty; string fields are written as
    /// is, other field values as compact JSON. Values containing a comma, quote, CR or LF
    /// are quoted, with quotes doubled.
    public static func csv(_ rows: [TimelineRow]) -> String {
        let fieldKeys = Set(rows.flatMap { $0.fields.keys }).sorted()
        let header = ["activity_id", "material_id", "marker", "first_seen_time", "first_seen_position",
                      "first_seen_timestamp", "end", "closed"] + fieldKeys.map { "fields." + $0 }
        func number(_ value: Double?) -> String { value.map(TimelineJSONWriter.formatNumber) ?? "" }
        let records = rows.map { row -> [String] in
            var cells = [
                row.activityID ?? "", row.materialID ?? "", row.marker ? "true" : "false",
                number(row.firstSeen.time), number(row.firstSeen.position), row.firstSeen.timestamp ?? "",
                number(row.end), row.closed ? "true" : "false",
            ]
            for key in fieldKeys {
                switch row.fields[key] {
                case nil, .null?: cells.append("")
                case .string(let text)?: cells.append(text)
                case let value?: cells.append(value.jsonText)
                }
            }
            return cells
        }
        return CueWriter.csv(header: header, rows: records)
    }

    /// One cue per row that has a first-seen time, in row order; its text (``cueText(_:)``) is
    /// plain text (``CueTextKind/plain``), so a title `<b>Live</b>` is not markup.
    ///
    /// A cue spans from its row's first-seen time to the row's ``TimelineRow/end`` (when the
    /// activity ended, even if that is after the next row started: a crossfade). A row
    /// without a later end lasts until the next timed row's first-seen time; the last cue —
    /// or any cue whose successor does not start later (out-of-order input) — lasts for the
    /// row's numeric `duration` field if positive, else ``defaultCueDuration``. Rows without
    /// a time are skipped.
    ///
    /// - Parameter origin: subtracted from every time. When nil: if the first timed row's
    ///   time came from an ISO-8601 timestamp (epoch seconds), the earliest first-seen time
    ///   is used, so the subtitles start near 00:00:00; otherwise 0 (numeric times are taken
    ///   to be seconds into the recording already).
    public static func cues(_ rows: [TimelineRow], origin: Double? = nil) -> [Cue] {
        let timed = rows.filter { $0.firstSeen.time != nil }
        guard let first = timed.first else { return [] }
        let base = origin ?? (first.firstSeen.timestamp != nil
            ? timed.map { $0.firstSeen.time! }.min()! : 0)
        var cues: [Cue] = []
        for (index, row) in timed.enumerated() {
            let start = row.firstSeen.time! - base
            var end: Double
            if let rowEnd = row.end, rowEnd - base > start {
                end = rowEnd - base
            } else if index + 1 < timed.count, timed[index + 1].firstSeen.time! - base > start {
                end = timed[index + 1].firstSeen.time! - base
            } else if let duration = row.fields["duration"]?.numberValue, duration > 0, duration <= Annotation.maximumTime {
                end = start + duration
            } else {
                end = start + defaultCueDuration
            }
            if !(end > start) { end = start + defaultCueDuration }
            cues.append(Cue(start: start, end: end, text: cueText(row), kind: .plain))
        }
        return cues
    }

    /// ``cues(_:origin:)`` made writable as subtitles, whose times cannot be negative: a cue
    /// that ends at or before 0 s is left out, one that starts before 0 s starts at 0 s instead
    /// (a subtitle writer would otherwise clamp both ends to 0 and write a cue of no length).
    /// - Returns: the cues, and one line for each cue left out or moved (its text and times).
    public static func subtitleCues(_ rows: [TimelineRow], origin: Double? = nil) -> (cues: [Cue], warnings: [String]) {
        var kept: [Cue] = [], warnings: [String] = []
        for cue in cues(rows, origin: origin) {
            let span = String(format: "%.3f–%.3f s", cue.start, cue.end)
            if cue.end <= 0 {
                warnings.append("cue \"\(cue.text)\" at \(span) is before the time line's 0 s; left out")
            } else if cue.start < 0 {
                warnings.append("cue \"\(cue.text)\" at \(span) starts before 0 s; it starts at 0 s")
                kept.append(Cue(start: 0, end: cue.end, text: cue.text, kind: cue.kind))
            } else {
                kept.append(cue)
            }
        }
        return (kept, warnings)
    }

    /// The cue text for a row: `"<title> – <material_id> (marker)"`.
    ///
    /// The label is the `title` field, else the `campaign` field (strings only); the id is
    /// the material id, else the activity id; ` (marker)` is appended when the marker was
    /// seen. Missing parts are left out; a row with no label and no id reads
    /// `"(unidentified)"`. Line breaks are replaced by spaces.
    public static func cueText(_ row: TimelineRow) -> String {
        let label = [row.fields["title"], row.fields["campaign"]]
            .compactMap { $0?.stringValue }.first { !$0.isEmpty }
        let id = row.materialID ?? row.activityID
        var text = [label, id].compactMap { $0 }.joined(separator: " – ")
        if text.isEmpty { text = "(unidentified)" }
        if row.marker { text += " (marker)" }
        return String(text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : Character($0) })
    }

    /// SubRip text of ``subtitleCues(_:origin:)`` (``CueWriter/srt(_:)``): no cue before 0 s.
    public static func srt(_ rows: [TimelineRow], origin: Double? = nil) -> String {
        CueWriter.srt(subtitleCues(rows, origin: origin).cues)
    }

    /// WebVTT text of ``subtitleCues(_:origin:)`` (``CueWriter/webVTT(_:)``): no cue before 0 s.
    public static func vtt(_ rows: [TimelineRow], origin: Double? = nil) -> String {
        CueWriter.webVTT(subtitleCues(rows, origin: origin).cues)
    }
}
