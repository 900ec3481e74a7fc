import Foundation

/// A subtitle cue for one timeline row (SRT/VTT export).
public struct TimelineCue: Equatable, Sendable {
    /// Start, in seconds relative to the export origin.
    public var start: Double
    /// End, in seconds relative to the export origin (always after `start`).
    public var end: Double
    /// The cue text, e.g. `"Summer Sale – mat-42 (marker)"`.
    public var text: String

    /// Creates a cue.
    public init(start: Double, end: Double, text: String) {
        self.start = start
        self.end = end
        self.text = text
    }
}

/// Renders timeline rows as JSON, CSV, SRT or WebVTT. All output is deterministic.
public enum TimelineExport {
    /// The duration given to the last cue when its row has no numeric `duration` field.
    public static let defaultCueDuration: Double = 5

    /// `{"rows":[{"activity_id":…,"material_id":…,"marker":…,"first_seen":{"time":…,
    /// "position":…},"fields":{…},"closed":…},…]}`.
    ///
    /// Row keys appear in that fixed order; absent ids, times and positions are `null`;
    /// `first_seen` additionally carries `"timestamp"` (the original ISO-8601 string) when
    /// the first payload's time was given that way; `fields` keys are sorted.
    /// Compact output is a single line; `pretty` indents by two spaces. No trailing newline.
    public static func json(_ rows: [TimelineRow], pretty: Bool = false) -> String {
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
                ("fields", .value(.object(row.fields))),
                ("closed", .value(.bool(row.closed))),
            ])
        }
        var out = ""
        TimelineJSONWriter.write(.object([("rows", .array(nodes))]), into: &out, pretty: pretty, level: 0)
        return out
    }

    /// RFC 4180 CSV: a header line, one record per row, every line ended by CRLF.
    ///
    /// Columns: `activity_id,material_id,marker,first_seen_time,first_seen_position,
    /// first_seen_timestamp,closed`, then one `fields.<key>` column per display-field key
    /// found in any row (sorted). Absent values are empty; string fields are written as
    /// is, other field values as compact JSON. Values containing a comma, quote, CR or LF
    /// are quoted, with quotes doubled.
    public static func csv(_ rows: [TimelineRow]) -> String {
        let fieldKeys = Set(rows.flatMap { $0.fields.keys }).sorted()
        let header = ["activity_id", "material_id", "marker", "first_seen_time", "first_seen_position",
                      "first_seen_timestamp", "closed"] + fieldKeys.map { "fields." + $0 }
        func number(_ value: Double?) -> String { value.map(TimelineJSONWriter.formatNumber) ?? "" }
        var out = header.map(csvEscape).joined(separator: ",") + "\r\n"
        for row in rows {
            var cells = [
                row.activityID ?? "", row.materialID ?? "", row.marker ? "true" : "false",
                number(row.firstSeen.time), number(row.firstSeen.position), row.firstSeen.timestamp ?? "",
                row.closed ? "true" : "false",
            ]
            for key in fieldKeys {
                switch row.fields[key] {
                case nil, .null?: cells.append("")
                case .string(let text)?: cells.append(text)
                case let value?: cells.append(value.jsonText)
                }
            }
            out += cells.map(csvEscape).joined(separator: ",") + "\r\n"
        }
        return out
    }

    /// Quotes one CSV cell per RFC 4180 when it contains `,`, `"`, CR or LF.
    public static func csvEscape(_ cell: String) -> String {
        guard cell.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) else {
            return cell
        }
        return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One cue per row that has a first-seen time, in row order.
    ///
    /// A cue spans from its row's first-seen time to the next timed row's first-seen time.
    /// The last cue — or any cue whose successor does not start later (out-of-order input) —
    /// lasts for the row's numeric `duration` field if positive, else
    /// ``defaultCueDuration``. Rows without a time are skipped.
    ///
    /// - Parameter origin: subtracted from every time. When nil: if the first timed row's
    ///   time came from an ISO-8601 timestamp (epoch seconds), the earliest first-seen time
    ///   is used, so the subtitles start near 00:00:00; otherwise 0 (numeric times are taken
    ///   to be seconds into the recording already).
    public static func cues(_ rows: [TimelineRow], origin: Double? = nil) -> [TimelineCue] {
        let timed = rows.filter { $0.firstSeen.time != nil }
        guard let first = timed.first else { return [] }
        let base = origin ?? (first.firstSeen.timestamp != nil
            ? timed.map { $0.firstSeen.time! }.min()! : 0)
        var cues: [TimelineCue] = []
        for (index, row) in timed.enumerated() {
            let start = row.firstSeen.time! - base
            var end: Double
            if index + 1 < timed.count, timed[index + 1].firstSeen.time! - base > start {
                end = timed[index + 1].firstSeen.time! - base
            } else if let duration = row.fields["duration"]?.numberValue, duration > 0, duration.isFinite {
                end = start + duration
            } else {
                end = start + defaultCueDuration
            }
            if !(end > start) { end = start + defaultCueDuration }
            cues.append(TimelineCue(start: start, end: end, text: cueText(row)))
        }
        return cues
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

    /// SubRip text: numbered cues, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, blank line after each.
    public static func srt(_ rows: [TimelineRow], origin: Double? = nil) -> String {
        var out = ""
        for (index, cue) in cues(rows, origin: origin).enumerated() {
            out += "\(index + 1)\n\(clock(cue.start, separator: ",")) --> \(clock(cue.end, separator: ","))\n"
            out += cue.text + "\n\n"
        }
        return out
    }

    /// WebVTT text: a `WEBVTT` header, then cues `HH:MM:SS.mmm --> HH:MM:SS.mmm` with
    /// `&`, `<` and `>` escaped in the text.
    public static func vtt(_ rows: [TimelineRow], origin: Double? = nil) -> String {
        var out = "WEBVTT\n\n"
        for cue in cues(rows, origin: origin) {
            let text = cue.text.replacingOccurrences(of: "&", with: "&amp;")
                .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            out += "\(clock(cue.start, separator: ".")) --> \(clock(cue.end, separator: "."))\n\(text)\n\n"
        }
        return out
    }

    /// `HH:MM:SS<sep>mmm`, rounded to the millisecond; negative times clamp to zero.
    static func clock(_ seconds: Double, separator: String) -> String {
        let clamped = seconds.isFinite ? max(0, seconds) : 0
        let millis = Int64(min((clamped * 1000).rounded(), 9.2e18))
        let ms = millis % 1000, total = millis / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(total / 3600, 2)):\(pad(total / 60 % 60, 2)):\(pad(total % 60, 2))\(separator)\(pad(ms, 3))"
    }
}
