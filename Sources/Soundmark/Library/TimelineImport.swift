/// Turns consolidated activity rows (``ActivityTimeline``: `soundmark monitor` events or another
/// recogniser's callbacks) into library ``Airing``s.
public enum TimelineImport {
    /// The airings of `rows`, one per row with a `material_id` (the reference id); rows
    /// without one are skipped.
    ///
    /// - Recording times: a row's display field `start` (the monitor's segment start) when it
    ///   is a number, else its first-seen `time`; its end is ``TimelineRow/end``, else its
    ///   numeric `end` field, else the start. When the payload times were ISO-8601 (wall-clock)
    ///   times, recording times count from the earliest row's first-seen time.
    /// - Wall-clock times: from `startTime` (Unix seconds of recording time 0) when given; else
    ///   ISO-8601 payload times; else the monitor's `wall_time` field (the wall clock of the
    ///   payload's `time`); else none.
    /// - Reference times: the numeric `referenceStart` field, else the first-seen `position`;
    ///   the end follows at time scale 1. `confidence` and `frequencySkew` fields when numeric
    ///   (else 0); `title` and `artist` fields; the marker payload when a payload reported a
    ///   marker with its `marker` field (monitor's `{"payload": N}` or a number).
    /// Why an imported airing cannot be stored, or `nil`: its times (seconds) must be finite and
    /// in 0…10^9 with the end not before the start, its reference start finite within ±10^9,
    /// its confidence in 0…1 and its frequency skew finite within ±1 (events from another
    /// recogniser are not trusted: a start of −5 or an end of 1e308 would break every report).
    public static func problem(_ a: Airing) -> String? {
        let limit = 1e9
        func bad(_ v: Double?, _ range: ClosedRange<Double>) -> Bool { v.map { !$0.isFinite || !range.contains($0) } ?? false }
        if bad(a.start, 0...limit) || bad(a.end, 0...limit) { return "start \(a.start) s or end \(a.end) s outside 0…1e9" }
        if a.end < a.start { return "end \(a.end) s before start \(a.start) s" }
        if bad(a.wallStart, -limit * 10...limit * 10) || bad(a.wallEnd, -limit * 10...limit * 10) { return "wall-clock time out of range" }
        if bad(a.referenceStart, -limit...limit) || bad(a.referenceEnd, -limit...limit) { return "reference time \(a.referenceStart) s out of range" }
        if bad(a.confidence, 0...1) { return "confidence \(a.confidence) outside 0…1" }
        if bad(a.frequencySkew, -0.999...0.999) { return "frequency skew \(a.frequencySkew) out of range" }
        return nil
    }

    public static func airings(from rows: [TimelineRow], startTime: Double? = nil) -> [Airing] {
        let isoTimes = rows.contains { $0.firstSeen.timestamp != nil }
        let origin = isoTimes ? rows.compactMap(\.firstSeen.time).min() ?? 0 : 0
        var out: [Airing] = []
        for row in rows {
            guard let reference = row.materialID else { continue }
            guard let seen = row.firstSeen.time ?? row.fields["start"]?.numberValue else { continue }
            var start = seen - origin, end = (row.end ?? seen) - origin
            if !isoTimes {
                start = row.fields["start"]?.numberValue ?? seen
                end = row.end ?? row.fields["end"]?.numberValue ?? start
            }
            if end < start { end = start }
            var wallStart: Double?
            if let startTime {
                wallStart = startTime + start
            } else if isoTimes {
                wallStart = origin + start
            } else if let wall = row.fields["wall_time"]?.stringValue.flatMap(TimelinePayload.parseISO8601) {
                wallStart = wall - seen + start
            }
            let referenceStart = row.fields["referenceStart"]?.numberValue ?? row.firstSeen.position ?? 0
            out.append(Airing(reference: reference, title: row.fields["title"]?.stringValue,
                              artist: row.fields["artist"]?.stringValue, start: start, end: end,
                              wallStart: wallStart, wallEnd: wallStart.map { $0 + end - start },
                              referenceStart: referenceStart, referenceEnd: referenceStart + (end - start),
                              confidence: row.fields["confidence"]?.numberValue ?? 0,
                              frequencySkew: row.fields["frequencySkew"]?.numberValue ?? 0,
                              marker: row.marker ? markerPayload(row.fields["marker"]) : nil))
        }
        return out
    }

    /// The payload of a `marker` field: monitor's object (`{"payload": N, …}`) or a bare number;
    /// nil when it holds none (a recogniser that reports only the marker trait).
    static func markerPayload(_ value: TimelineValue?) -> UInt32? {
        var number: Double?
        switch value {
        case .number(let n)?: number = n
        case .object(let members)?: if case .number(let n)? = members["payload"] { number = n }
        default: break
        }
        guard let number, number >= 0, number <= Double(UInt32.max), number == number.rounded() else { return nil }
        return UInt32(number)
    }
}
