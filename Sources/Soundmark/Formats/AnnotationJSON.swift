import Foundation

// Annotation JSON ([{"start", "end", "text"}]): read by AnnotationReader.JSONAnnotationParser.

// MARK: - Reading (annotation JSON)

extension AnnotationReader {
    enum JSONAnnotationParser {
        indirect enum Value {
            case null
            case bool(Bool)
            case number(Double)
            case string(String)
            case array([(offset: Int, value: Value)])
            case object([String: Value])

            var kind: String {
                switch self {
                case .null: return "null"
                case .bool: return "a boolean"
                case .number: return "a number"
                case .string: return "a string"
                case .array: return "an array"
                case .object: return "an object"
                }
            }
        }

        struct SyntaxError: Error { var offset: Int; var message: String }

        static func parse(_ text: String, name: String) throws -> AnnotationImport {
            let bytes = Array(text.utf8)
            let lineOf = lineLookup(bytes)
            var parser = Parser(bytes: bytes)
            let root: Value
            do {
                root = try parser.parseDocument()
            } catch let e as SyntaxError {
                throw AnnotationError.invalidJSON(file: name, line: lineOf(e.offset), reason: e.message)
            }
            let entries: [(offset: Int, value: Value)]
            switch root {
            case .array(let items):
                entries = items
            case .object(let dict):
                if case .array(let items)? = dict["annotations"] ?? dict["cues"] {
                    entries = items
                } else {
                    throw AnnotationError.invalidJSON(file: name, line: 1, reason: "expected an array of {\"start\", \"end\", \"text\"} objects")
                }
            default:
                throw AnnotationError.invalidJSON(file: name, line: 1, reason: "expected an array, found \(root.kind)")
            }

            var annotations: [Annotation] = []
            var warnings: [String] = []
            for (n, entry) in entries.enumerated() {
                let prefix = "\(name):\(lineOf(entry.offset)): skipped entry \(n + 1)"
                guard case .object(let dict) = entry.value else {
                    warnings.append("\(prefix): expected an object, found \(entry.value.kind)")
                    continue
                }
                var problem: String?
                let start = seconds(dict["start"], key: "start", problem: &problem)
                let end = seconds(dict["end"], key: "end", problem: &problem)
                var text = ""
                switch dict["text"] {
                case .string(let s)?: text = s
                case nil: problem = problem ?? "missing \"text\""
                case let other?: problem = problem ?? "\"text\" is \(other.kind), not a string"
                }
                if problem == nil, let s = start, let e = end, e < s {
                    problem = "end \(e) s is before start \(s) s"
                }
                if let problem { warnings.append("\(prefix): \(problem)"); continue }
                annotations.append(Annotation(start: start!, end: end!, text: text))
            }
            return AnnotationImport(annotations: annotations, warnings: warnings)
        }

        private static func seconds(_ v: Value?, key: String, problem: inout String?) -> Double? {
            var result: Double?
            switch v {
            case .number(let d)?: result = d
            case .string(let s)?:
                let t = s.trimmingCharacters(in: .whitespaces)
                result = TimingParser.timestamp(t) ?? Double(t)
                if result == nil { problem = problem ?? "\"\(key)\" is not a time: \"\(s)\"" ; return nil }
            case nil: problem = problem ?? "missing \"\(key)\""; return nil
            case let other?: problem = problem ?? "\"\(key)\" is \(other.kind), not a number of seconds"; return nil
            }
            guard let r = result, r.isFinite, r >= 0 else {
                problem = problem ?? "\"\(key)\" must be a finite number of seconds >= 0"
                return nil
            }
            guard r <= Annotation.maximumTime else {
                problem = problem ?? "\"\(key)\" \(r) s is out of range (more than \(Int(Annotation.maximumTime)) s)"
                return nil
            }
            return r
        }

        /// Maps a byte offset to a 1-based line number (CRLF, LF and CR end lines).
        private static func lineLookup(_ bytes: [UInt8]) -> (Int) -> Int {
            var starts = [0]
            var i = 0
            while i < bytes.count {
                if bytes[i] == 0x0A || (bytes[i] == 0x0D && (i + 1 >= bytes.count || bytes[i + 1] != 0x0A)) {
                    starts.append(i + 1)
                }
                i += 1
            }
            return { offset in
                var lo = 0, hi = starts.count - 1
                while lo < hi {
                    let mid = (lo + hi + 1) / 2
                    if starts[mid] <= offset { lo = mid } else { hi = mid - 1 }
                }
                return lo + 1
            }
        }

        struct Parser {
            let bytes: [UInt8]
            var pos = 0

            init(bytes: [UInt8]) { self.bytes = bytes }

            mutating func parseDocument() throws -> Value {
                skipWhitespace()
                let v = try parseValue(depth: 0)
                skipWhitespace()
                if pos < bytes.count { throw SyntaxError(offset: pos, message: "unexpected content after the JSON value") }
                return v
            }

            mutating func skipWhitespace() {
                while pos < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[pos]) { pos += 1 }
            }

            mutating func parseValue(depth: Int) throws -> Value {
                guard depth < 512 else { throw SyntaxError(offset: pos, message: "nesting too deep") }
                guard pos < bytes.count else { throw SyntaxError(offset: pos, message: "unexpected end of file") }
                switch bytes[pos] {
                case UInt8(ascii: "["):
                    pos += 1
                    var items: [(offset: Int, value: Value)] = []
                    skipWhitespace()
                    if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
                    while true {
                        skipWhitespace()
                        let at = pos
                        items.append((at, try parseValue(depth: depth + 1)))
                        skipWhitespace()
                        guard pos < bytes.count else { throw SyntaxError(offset: pos, message: "unterminated array") }
                        if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                        if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(items) }
                        throw SyntaxError(offset: pos, message: "expected ',' or ']'")
                    }
                case UInt8(ascii: "{"):
                    pos += 1
                    var dict: [String: Value] = [:]
                    skipWhitespace()
                    if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(dict) }
                    while true {
                        skipWhitespace()
                        guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else {
                            throw SyntaxError(offset: pos, message: "expected a quoted key")
                        }
                        let key = try parseString()
                        skipWhitespace()
                        guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else {
                            throw SyntaxError(offset: pos, message: "expected ':' after key \"\(key)\"")
                        }
                        pos += 1
                        skipWhitespace()
                        dict[key] = try parseValue(depth: depth + 1)
                        skipWhitespace()
                        guard pos < bytes.count else { throw SyntaxError(offset: pos, message: "unterminated object") }
                        if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                        if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(dict) }
                        throw SyntaxError(offset: pos, message: "expected ',' or '}'")
                    }
                case UInt8(ascii: "\""):
                    return .string(try parseString())
                case UInt8(ascii: "t"): try literal("true"); return .bool(true)
                case UInt8(ascii: "f"): try literal("false"); return .bool(false)
                case UInt8(ascii: "n"): try literal("null"); return .null
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let start = pos
                    pos += 1
                    while pos < bytes.count, "0123456789.eE+-".utf8.contains(bytes[pos]) { pos += 1 }
                    let raw = String(decoding: bytes[start..<pos], as: UTF8.self)
                    guard let d = Double(raw), d.isFinite else { throw SyntaxError(offset: start, message: "bad number \(raw)") }
                    return .number(d)
                default:
                    throw SyntaxError(offset: pos, message: "unexpected character")
                }
            }

            mutating func literal(_ word: String) throws {
                let w = Array(word.utf8)
                guard pos + w.count <= bytes.count, Array(bytes[pos..<pos + w.count]) == w else {
                    throw SyntaxError(offset: pos, message: "unexpected character")
                }
                pos += w.count
            }

            mutating func parseString() throws -> String {
                let open = pos
                pos += 1
                var out: [UInt8] = []
                while pos < bytes.count {
                    let c = bytes[pos]
                    if c == UInt8(ascii: "\"") { pos += 1; return String(decoding: out, as: UTF8.self) }
                    if c == UInt8(ascii: "\\") {
                        guard pos + 1 < bytes.count else { break }
                        let e = bytes[pos + 1]
                        pos += 2
                        switch e {
                        case UInt8(ascii: "\""): out.append(0x22)
                        case UInt8(ascii: "\\"): out.append(0x5C)
                        case UInt8(ascii: "/"): out.append(0x2F)
                        case UInt8(ascii: "b"): out.append(0x08)
                        case UInt8(ascii: "f"): out.append(0x0C)
                        case UInt8(ascii: "n"): out.append(0x0A)
                        case UInt8(ascii: "r"): out.append(0x0D)
                        case UInt8(ascii: "t"): out.append(0x09)
                        case UInt8(ascii: "u"):
                            var unit = try hex4()
                            var scalar: Unicode.Scalar?
                            if (0xD800...0xDBFF).contains(unit), pos + 1 < bytes.count,
                               bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") {
                                let save = pos
                                pos += 2
                                let low = try hex4()
                                if (0xDC00...0xDFFF).contains(low) {
                                    scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                                } else {
                                    pos = save
                                }
                            }
                            if scalar == nil { scalar = Unicode.Scalar(unit) }
                            if scalar == nil { unit = 0xFFFD; scalar = Unicode.Scalar(unit) }
                            out.append(contentsOf: Array(String(Character(scalar!)).utf8))
                        default:
                            throw SyntaxError(offset: pos - 2, message: "bad escape in string")
                        }
                        continue
                    }
                    out.append(c)
                    pos += 1
                }
                throw SyntaxError(offset: open, message: "unterminated string")
            }

            mutating func hex4() throws -> UInt32 {
                guard pos + 4 <= bytes.count,
                      let v = UInt32(String(decoding: bytes[pos..<pos + 4], as: UTF8.self), radix: 16) else {
                    throw SyntaxError(offset: pos, message: "bad \\u escape")
                }
                pos += 4
                return v
            }
        }
    }
}
