import Foundation

/// Why a recogniser payload could not be read.
public enum TimelinePayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The line is not valid JSON.
    case invalidJSON
    /// The line is valid JSON but not an object.
    case notAnObject
    /// A known key has a value of the wrong type or form (key, explanation).
    case invalidField(String, String)
    /// A value that `JSONSerialization` never produces (its type name).
    case unsupportedValue(String)

    /// A one-line human-readable explanation.
    public var description: String {
        switch self {
        case .invalidJSON: return "not valid JSON"
        case .notAnObject: return "not a JSON object"
        case .invalidField(let key, let why): return "field \"\(key)\": \(why)"
        case .unsupportedValue(let type): return "unsupported value of type \(type)"
        }
    }
}

/// One event from a recogniser: our own live monitor, or a mobile SDK callback.
///
/// Every field is optional. JSON `null` is treated exactly like an absent key, and an empty
/// string `activity_id` or `material_id` counts as absent too. Known keys are
/// `activity_id`, `material_id`, `trait` (only its `marker` member is read; other members
/// are ignored), `time`, `position`, `kind` and `expires_at`; every other key is a display
/// field and lands in ``fields``.
///
/// Times (`time`, `expires_at`) are normalised to seconds: a JSON number is taken as plain
/// seconds (e.g. seconds into a monitoring session), a numeric string likewise, and an
/// ISO-8601 string (`2024-05-01T12:00:00Z`, `…T12:00:00.250+02:00`) becomes seconds since
/// the Unix epoch; the original ISO string of `time` is kept in ``timestamp``.
public struct TimelinePayload: Equatable, Sendable {
    /// What sort of recogniser event this is.
    public enum Kind: String, Equatable, Sendable {
        /// A plain recogniser callback (the default): it can only touch the current row.
        case campaign
        /// A result the recogniser confirmed as accepted: authoritative for its `activity_id`.
        case activityResult = "activity_result"
    }

    /// The recogniser's activity id (`activity_id`), nil when absent or empty.
    public var activityID: String?
    /// The matched material (`material_id`), nil when absent or empty.
    public var materialID: String?
    /// `trait.marker`, nil when not reported.
    public var marker: Bool?
    /// `time` in seconds (see the type documentation for ISO-8601 input).
    public var time: Double?
    /// The original `time` string when it was given as ISO-8601.
    public var timestamp: String?
    /// `position`: seconds into the material.
    public var position: Double?
    /// `kind`; `.campaign` when absent.
    public var kind: Kind
    /// `expires_at` in seconds (same normalisation as ``time``).
    public var expiresAt: Double?
    /// Display fields: every key that is not one of the known keys, verbatim.
    public var fields: [String: TimelineValue]
    /// The 1-based input line the payload came from, when read by ``parseLines(_:)``.
    public var line: Int?

    /// Whether the payload reports the end of its activity: its `event` display field is
    /// `"segment.ended"` (what `soundmark monitor` writes when a segment is over; its `time`
    /// is then the segment's end). See ``ActivityTimeline`` for how ends are applied.
    public var endsActivity: Bool { fields["event"]?.stringValue == "segment.ended" }

    /// The keys the engine interprets; everything else is a display field.
    public static let knownKeys: Set<String> = [
        "activity_id", "material_id", "trait", "time", "position", "kind", "expires_at",
    ]

    /// Creates a payload directly (mainly for tests and for the live monitor).
    public init(activityID: String? = nil, materialID: String? = nil, marker: Bool? = nil,
                time: Double? = nil, position: Double? = nil, kind: Kind = .campaign,
                expiresAt: Double? = nil, fields: [String: TimelineValue] = [:], line: Int? = nil) {
        self.activityID = activityID.flatMap { $0.isEmpty ? nil : $0 }
        self.materialID = materialID.flatMap { $0.isEmpty ? nil : $0 }
        self.marker = marker
        self.time = time
        self.timestamp = nil
        self.position = position
        self.kind = kind
        self.expiresAt = expiresAt
        self.fields = fields
        self.line = line
    }

    /// Reads a payload from a decoded JSON object.
    ///
    /// - Throws: ``TimelinePayloadError/invalidField(_:_:)`` when a known key has the wrong
    ///   type (ids must be strings, `trait` an object with a boolean `marker`, `position` a
    ///   number, `time`/`expires_at` a number or ISO-8601 string, `kind` one of the two kinds),
    ///   or when `time`, `expires_at`, `position` or a numeric `duration` field lies beyond
    ///   ±``Annotation/maximumTime`` seconds (it could not be written as a cue time).
    public init(object: [String: TimelineValue]) throws {
        func string(_ key: String) throws -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case .string(let value)?: return value.isEmpty ? nil : value
            default: throw TimelinePayloadError.invalidField(key, "expected a string")
            }
        }
        func inRange(_ key: String, _ value: Double) throws -> Double {
            guard value.isFinite, abs(value) <= Annotation.maximumTime else {
                throw TimelinePayloadError.invalidField(key, "\(value) s is out of range (more than \(Int(Annotation.maximumTime)) s)")
            }
            return value
        }
        func seconds(_ key: String) throws -> (Double, String?)? {
            guard let parsed = try rawSeconds(key) else { return nil }
            return (try inRange(key, parsed.0), parsed.1)
        }
        func rawSeconds(_ key: String) throws -> (Double, String?)? {
            switch object[key] {
            case nil, .null?: return nil
            case .number(let value)?: return (value, nil)
            case .string(let text)?:
                if let value = Self.parseISO8601(text) { return (value, text) }
                if let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite {
                    return (value, nil)
                }
                throw TimelinePayloadError.invalidField(
                    key, "expected seconds or an ISO-8601 date-time with Z or an offset, got \"\(text)\"")
            default: throw TimelinePayloadError.invalidField(key, "expected seconds or an ISO-8601 string")
            }
        }

        activityID = try string("activity_id")
        materialID = try string("material_id")
        switch object["trait"] {
        case nil, .null?: marker = nil
        case .object(let trait)?:
            switch trait["marker"] {
            case nil, .null?: marker = nil
            case .bool(let flag)?: marker = flag
            default: throw TimelinePayloadError.invalidField("trait", "\"marker\" must be true or false")
            }
        default: throw TimelinePayloadError.invalidField("trait", "expected an object")
        }
        let parsedTime = try seconds("time")
        time = parsedTime?.0
        timestamp = parsedTime?.1
        switch object["position"] {
        case nil, .null?: position = nil
        case .number(let value)?: position = try inRange("position", value)
        default: throw TimelinePayloadError.invalidField("position", "expected a number of seconds")
        }
        switch object["kind"] {
        case nil, .null?: kind = .campaign
        case .string(let text)?:
            guard let parsed = Kind(rawValue: text) else {
                throw TimelinePayloadError.invalidField("kind", "expected \"campaign\" or \"activity_result\", got \"\(text)\"")
            }
            kind = parsed
        default: throw TimelinePayloadError.invalidField("kind", "expected a string")
        }
        expiresAt = try seconds("expires_at")?.0
        fields = object.filter { !Self.knownKeys.contains($0.key) }
        if case .number(let duration)? = fields["duration"] { _ = try inRange("duration", duration) }
        line = nil
    }

    /// Reads a payload from a `JSONSerialization` object (see ``init(object:)``).
    public init(json: [String: Any]) throws {
        try self.init(object: json.mapValues { try TimelineValue(any: $0) })
    }

    /// Parses JSON Lines text: one JSON object per line.
    ///
    /// Blank lines are skipped silently; CRLF line endings and a leading byte-order mark are
    /// accepted. A line that is not a JSON object, or whose known keys are ill-typed, is
    /// skipped and reported as `"line N: <reason>"`. Never traps.
    public static func parseLines(_ text: String) -> (payloads: [TimelinePayload], warnings: [String]) {
        var payloads: [TimelinePayload] = []
        var warnings: [String] = []
        let decoder = JSONDecoder()
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        for (index, rawLine) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            var line = rawLine[...]
            while let last = line.last, last == 0x0D || last == 0x20 || last == 0x09 { line = line.dropLast() }
            while let first = line.first, first == 0x20 || first == 0x09 { line = line.dropFirst() }
            if line.isEmpty { continue }
            do {
                let value: TimelineValue
                do {
                    value = try decoder.decode(TimelineValue.self, from: Data(line))
                } catch {
                    throw TimelinePayloadError.invalidJSON
                }
                guard case .object(let object) = value else { throw TimelinePayloadError.notAnObject }
                var payload = try TimelinePayload(object: object)
                payload.line = lineNumber
                payloads.append(payload)
            } catch let error as TimelinePayloadError {
                warnings.append("line \(lineNumber): \(error.description)")
            } catch {
                warnings.append("line \(lineNumber): \(error)")
            }
        }
        return (payloads, warnings)
    }

    /// Parses an ISO-8601 / RFC 3339 date-time into seconds since the Unix epoch.
    ///
    /// Accepts `YYYY-MM-DDThh:mm[:ss[.fff…]]` followed by `Z` or an offset `±hh:mm`, `±hhmm`
    /// or `±hh` (`T` may also be `t` or a space; `Z` may be `z`). A zone is required, since a
    /// local time has no fixed meaning. Returns nil for anything else or out-of-range parts.
    public static func parseISO8601(_ text: String) -> Double? {
        let s = Array(text.utf8)
        var i = 0
        func digits(_ count: Int) -> Int? {
            guard i + count <= s.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = s[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += count
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard i < s.count, s[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard i < s.count, s[i] == 0x54 || s[i] == 0x74 || s[i] == 0x20 else { return nil }
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2) else { return nil }
        var second = 0
        var fraction = 0.0
        if expect(0x3A) {
            guard let sec = digits(2) else { return nil }
            second = sec
            if i < s.count, s[i] == 0x2E || s[i] == 0x2C {
                i += 1
                let start = i
                while i < s.count, s[i] >= 0x30, s[i] <= 0x39 { i += 1 }
                guard i > start, let value = Double("0." + String(decoding: s[start..<i], as: UTF8.self)) else { return nil }
                fraction = value
            }
        }
        var offset = 0
        guard i < s.count else { return nil }
        if s[i] == 0x5A || s[i] == 0x7A {
            i += 1
        } else if s[i] == 0x2B || s[i] == 0x2D {
            let sign = s[i] == 0x2D ? -1 : 1
            i += 1
            guard let offHours = digits(2) else { return nil }
            var offMinutes = 0
            if i < s.count {
                _ = expect(0x3A)
                guard let m = digits(2) else { return nil }
                offMinutes = m
            }
            guard offHours <= 23, offMinutes <= 59 else { return nil }
            offset = sign * (offHours * 3600 + offMinutes * 60)
        } else {
            return nil
        }
        guard i == s.count else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), day >= 1, day <= monthDays[month - 1],
              hour <= 23, minute <= 59, second <= 60 else { return nil }
        // Days from the civil calendar (proleptic Gregorian) to 1970-01-01.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let whole = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Double(whole) + fraction
    }
}
