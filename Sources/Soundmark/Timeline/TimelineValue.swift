import Foundation

/// An arbitrary JSON value, used for the display fields (`campaign`, `title`, …) that
/// recogniser payloads carry alongside their activity and material ids.
///
/// Values round-trip exactly through ``TimelinePayload/parseLines(_:)`` and
/// ``TimelineExport/json(_:pretty:)``: objects are written with their keys sorted, so the
/// output is deterministic. Numbers are stored as `Double`; integral values within ±2⁵³
/// are written without a fractional part (`3`, not `3.0`).
public enum TimelineValue: Codable, Equatable, Hashable, Sendable {
    /// A JSON string.
    case string(String)
    /// A JSON number.
    case number(Double)
    /// A JSON boolean.
    case bool(Bool)
    /// JSON `null`.
    case null
    /// A JSON array.
    case array([TimelineValue])
    /// A JSON object.
    case object([String: TimelineValue])

    /// Decodes any JSON value (booleans are never confused with the numbers 0 and 1).
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([TimelineValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: TimelineValue].self) {
            self = .object(value)
        } else {
            throw Swift.DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the corresponding JSON value.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Converts a `JSONSerialization`-style value (`String`, `NSNumber`, `Bool`, `NSNull`,
    /// `[Any]`, `[String: Any]`, or native Swift integers and floating-point numbers).
    ///
    /// - Throws: ``TimelinePayloadError/unsupportedValue(_:)`` for anything else.
    public init(any value: Any) throws {
        if type(of: value) == Bool.self, let flag = value as? Bool {
            self = .bool(flag)
        } else if let text = value as? String {
            self = .string(text)
        } else if value is NSNull {
            self = .null
        } else if let number = value as? NSNumber {
            // Foundation represents JSON booleans as a dedicated NSNumber subclass.
            if type(of: number) == type(of: NSNumber(value: true)) {
                self = .bool(number.boolValue)
            } else {
                self = .number(number.doubleValue)
            }
        } else if let integer = value as? any BinaryInteger {
            self = .number(Double(integer))
        } else if let float = value as? any BinaryFloatingPoint {
            self = .number(Double(float))
        } else if let array = value as? [Any] {
            self = .array(try array.map { try TimelineValue(any: $0) })
        } else if let object = value as? [String: Any] {
            self = .object(try object.mapValues { try TimelineValue(any: $0) })
        } else {
            throw TimelinePayloadError.unsupportedValue(String(describing: type(of: value)))
        }
    }

    /// The string payload, if this is a `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The numeric payload, if this is a `.number`.
    public var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// Whether the value carries no information: `null` or the empty string.
    public var isBlank: Bool {
        switch self {
        case .null: return true
        case .string(let value): return value.isEmpty
        default: return false
        }
    }

    /// Compact, deterministic JSON text for this value (object keys sorted).
    public var jsonText: String {
        var out = ""
        TimelineJSONWriter.write(.value(self), into: &out, pretty: false, level: 0)
        return out
    }
}

extension TimelineValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// Creates a `.string` value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates a `.number` value.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// Creates a `.number` value.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// Creates a `.bool` value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// Creates an `.array` value.
    public init(arrayLiteral elements: TimelineValue...) { self = .array(elements) }
    /// Creates an `.object` value (a later duplicate key wins).
    public init(dictionaryLiteral elements: (String, TimelineValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

/// A JSON tree whose objects keep a fixed key order (used for the export envelope).
indirect enum TimelineJSONNode {
    case value(TimelineValue)
    case object([(String, TimelineJSONNode)])
    case array([TimelineJSONNode])
}

/// Deterministic JSON serialisation shared by ``TimelineValue`` and ``TimelineExport``.
enum TimelineJSONWriter {
    static func write(_ node: TimelineJSONNode, into out: inout String, pretty: Bool, level: Int) {
        switch node {
        case .value(let value):
            switch value {
            case .string(let text): JSONOutput.quote(text, into: &out)
            case .number(let number): out += formatNumber(number)
            case .bool(let flag): out += flag ? "true" : "false"
            case .null: out += "null"
            case .array(let items):
                write(.array(items.map { .value($0) }), into: &out, pretty: pretty, level: level)
            case .object(let members):
                let sorted = members.keys.sorted().map { ($0, TimelineJSONNode.value(members[$0]!)) }
                write(.object(sorted), into: &out, pretty: pretty, level: level)
            }
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                if pretty { newline(into: &out, level: level + 1) }
                write(item, into: &out, pretty: pretty, level: level + 1)
            }
            if pretty { newline(into: &out, level: level) }
            out += "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            for (index, (key, item)) in members.enumerated() {
                if index > 0 { out += "," }
                if pretty { newline(into: &out, level: level + 1) }
                JSONOutput.quote(key, into: &out)
                out += pretty ? ": " : ":"
                write(item, into: &out, pretty: pretty, level: level + 1)
            }
            if pretty { newline(into: &out, level: level) }
            out += "}"
        }
    }

    static func newline(into out: inout String, level: Int) {
        out += "\n" + String(repeating: "  ", count: level)
    }

    /// Integral values within ±2⁵³ print without a fraction; others use Swift's shortest
    /// round-trip representation (always valid JSON for finite values). Non-finite → `null`.
    static func formatNumber(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) <= 9_007_199_254_740_992 {
            return String(Int64(number))
        }
        return "\(number)"
    }
}
