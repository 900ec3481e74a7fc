import Foundation

/// A JSON value with ordered object keys, written compactly with controlled number formatting
/// (RFC 8259). Used for every JSON output so keys come out in a documented order.
public indirect enum JSONOutput: Equatable, Sendable {
    /// A string, escaped as RFC 8259 requires.
    case string(String)
    /// A number written with at most `decimals` digits after the point (trailing zeros dropped).
    case number(Double, decimals: Int)
    /// An integer.
    case integer(Int)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array, in order.
    case array([JSONOutput])
    /// An object whose members are written in the given order.
    case object([(String, JSONOutput)])

    /// Seconds, written with millisecond precision.
    public static func seconds(_ value: Double) -> JSONOutput { .number(value, decimals: 3) }

    /// An optional string, or `null`.
    public static func optional(_ value: String?) -> JSONOutput { value.map { .string($0) } ?? .null }

    /// Two values are equal when they write the same JSON text.
    public static func == (a: JSONOutput, b: JSONOutput) -> Bool { a.text == b.text }

    /// The compact JSON text.
    public var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .string(let s): JSONOutput.quote(s, into: &out)
        case .number(let v, let decimals):
            guard v.isFinite else { out += "null"; return }
            var s = String(format: "%.\(decimals)f", v)
            if s.contains(".") {
                while s.hasSuffix("0") { s.removeLast() }
                if s.hasSuffix(".") { s.removeLast() }
            }
            if s == "-0" { s = "0" }
            out += s
        case .integer(let v): out += String(v)
        case .bool(let v): out += v ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONOutput.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Appends `s` as a JSON string literal (RFC 8259 escapes; other control characters as `\u00XX`).
    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}

extension MediaItem {
    /// `{"id","title","subtitle","artist","properties"}` with keys in that order.
    public var json: JSONOutput {
        .object([("id", .string(id)), ("title", .optional(title)), ("subtitle", .optional(subtitle)),
                 ("artist", .optional(artist)),
                 ("properties", .object(properties.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))])
    }
}
