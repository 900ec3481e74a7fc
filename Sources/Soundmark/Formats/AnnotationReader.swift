import Foundation

/// Reads timed annotations (SRT, W3C WebVTT or JSON) in reference time, tolerating the
/// way real files come.
///
/// Tolerated input:
/// - Text encodings: UTF-8 with or without BOM; UTF-16 LE/BE with BOM or detected by
///   the pattern of NUL bytes; UTF-32 with BOM; anything that is not valid UTF-8 is read in
///   the most plausible legacy encoding (Windows code pages 1250–1257, KOI8-R, ISO-8859-2,
///   CP949 Korean, Shift_JIS, GB18030, Big5; see ``LegacyEncoding``), with a warning when the
///   guess is doubtful, unless an explicit encoding is given.
/// - Line ends CRLF, LF or CR (mixed is fine); a missing final newline.
/// - SubRip: a new cue starts only at a timing line (`start --> end`), optionally preceded
///   by a numeric index line, so blank lines inside cue text and cues whose text is just a
///   number are kept; `.` or `,` before the milliseconds; hours of any width (`123:00:00,000`);
///   anything after the end time (positioning) is ignored.
/// - WebVTT (<https://www.w3.org/TR/webvtt1/>): header text after `WEBVTT`, header
///   metadata lines, NOTE/STYLE/REGION blocks, cue identifiers, cue settings after the
///   timing (`align:start position:10%`), timestamps with or without hours (`mm:ss.ttt`).
///   As in the W3C parsing algorithm a blank (or whitespace-only) line ends a cue and a line
///   containing `-->` starts the next one.
/// - JSON: `[{"start": s, "end": s, "text": "…"}]` (or `{"annotations": […]}`); times are
///   numbers of seconds or strings holding seconds or a `hh:mm:ss.mmm` timestamp; other keys
///   are ignored.
///
/// Text is returned verbatim (markup, character references, non-ASCII, emoji); only the
/// line-ending characters are removed and inner line breaks become `"\n"`. Leading and
/// trailing blank lines of a cue's text are dropped (they separate cues). Styling is kept in
/// the stored form of ``CueMarkup``: WebVTT cue settings as a `{vtt …}` block before the text
/// (STYLE and REGION blocks are not stored: a warning says so); ASS event text as the ASS
/// parser describes (override blocks kept, the event's style and speaker as override tags and
/// a `<v Name>` voice, coordinates rescaled to 384×288; named styles themselves are not stored:
/// a warning says so).
///
/// Anything skipped — unparseable timing, end before start, lines outside any cue, blocks
/// without timing, malformed JSON entries — is reported in ``AnnotationImport/warnings`` as
/// `"FILE:LINE: …"`. An empty file gives no annotations and one warning. A file with content
/// but no usable annotation throws ``AnnotationError/noAnnotations(file:skipped:firstProblem:)``
/// when something was skipped, and otherwise (e.g. a WebVTT file with only a header) returns
/// an empty list with a warning.
public enum AnnotationReader {
    /// Reads the annotation file at `url`.
    ///
    /// - Parameters:
    ///   - url: A file URL. Warnings and errors name the file by `url.path`.
    ///   - format: The format, or `nil` to detect it from the content: `WEBVTT` at the start
    ///     means WebVTT, `[` or `{` means JSON, anything else SubRip.
    ///   - encoding: The text encoding, or `nil` to detect it (BOM, NUL pattern, UTF-8,
    ///     else Windows-1252).
    /// - Returns: Annotations (times in seconds, reference time) and warnings.
    /// - Throws: ``AnnotationError``.
    ///   - legacyEncoding: An iconv encoding name (`CP1250`, `CP1256`, `CP949`…, see
    ///     ``LegacyEncoding/iconvName(_:)``) used instead of `encoding`; bytes it does not
    ///     define throw ``AnnotationError/undecodable(file:encoding:)``.
    public static func read(contentsOf url: URL, format: AnnotationFormat? = nil,
                            encoding: String.Encoding? = nil, legacyEncoding: String? = nil) throws -> AnnotationImport {
        let data: Data
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw AnnotationError.unreadable(file: url.path, reason: "no such file")
        }
        if isDirectory.boolValue { throw AnnotationError.unreadable(file: url.path, reason: "is a directory") }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw AnnotationError.unreadable(file: url.path, reason: "permission denied")
        }
        do {
            data = try InputFile.contents(atPath: url.path)
        } catch let error as InputFileError {
            throw AnnotationError.unreadable(file: url.path, reason: error.reason)
        }
        return try parse(data, name: url.path, format: format, encoding: encoding, legacyEncoding: legacyEncoding)
    }

    /// Parses annotation file content held in memory.
    ///
    /// - Parameters:
    ///   - data: The raw bytes of the file.
    ///   - name: The file name used in warnings and errors (`"NAME:LINE: …"`).
    ///   - format: The format, or `nil` to detect it from the content (see ``read(contentsOf:format:encoding:)``).
    ///   - encoding: The text encoding, or `nil` to detect it.
    /// - Returns: Annotations (times in seconds, reference time) and warnings.
    /// - Throws: ``AnnotationError``.
    ///   - legacyEncoding: An iconv encoding name used instead of `encoding` (see ``read(contentsOf:format:encoding:legacyEncoding:)``).
    public static func parse(_ data: Data, name: String, format: AnnotationFormat? = nil,
                             encoding: String.Encoding? = nil, legacyEncoding: String? = nil) throws -> AnnotationImport {
        var encodingWarning: String?
        let text: String
        if let legacyEncoding {
            guard let decoded = LegacyEncoding.decode([UInt8](data), as: legacyEncoding) else {
                throw AnnotationError.undecodable(file: name, encoding: legacyEncoding)
            }
            text = decoded.hasPrefix("\u{FEFF}") ? String(decoded.unicodeScalars.dropFirst()) : decoded
        } else {
            (text, encodingWarning) = try TextDecoder.decode([UInt8](data), name: name, encoding: encoding)
        }
        var result = try parseText(text, name: name, format: format)
        if let encodingWarning { result.warnings.insert(encodingWarning, at: 0) }
        return result
    }

    static func parseText(_ text: String, name: String, format: AnnotationFormat?) throws -> AnnotationImport {
        let lines = LineSplitter.split(text)
        guard lines.contains(where: { !isBlank($0) }) else {
            return AnnotationImport(annotations: [], warnings: ["\(name): file is empty; no annotations"])
        }
        if format == nil, let other = unsupportedFormat(lines, text: text) {
            throw AnnotationError.unsupportedFormat(file: name, format: other)
        }
        let chosen = format ?? detectFormat(lines)
        var result: AnnotationImport
        switch chosen {
        case .srt: result = SubRipParser.parse(lines, name: name)
        case .webVTT: result = WebVTTParser.parse(lines, name: name)
        case .json: result = try JSONAnnotationParser.parse(text, name: name)
        case .ass: result = ASSParser.parse(lines, name: name)
        }
        if result.annotations.isEmpty {
            if let first = result.warnings.first {
                throw AnnotationError.noAnnotations(file: name, skipped: result.warnings.count, firstProblem: first)
            }
            result.warnings.append("\(name): no annotations in file")
        }
        return result
    }

    static func detectFormat(_ lines: [String]) -> AnnotationFormat {
        guard let first = lines.first(where: { !isBlank($0) }) else { return .srt }
        let trimmed = first.drop(while: { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" })
        if trimmed.hasPrefix("WEBVTT") { return .webVTT }
        let lower = trimmed.lowercased()
        if lower.hasPrefix("[script info]") || lower.hasPrefix("[v4+ styles]") || lower.hasPrefix("[v4 styles]")
            || lower.hasPrefix("[events]") { return .ass }
        if trimmed.hasPrefix("[") || trimmed.hasPrefix("{") { return .json }
        return .srt
    }

    /// The name of a recognisable format this reader does not support, from the first
    /// non-blank line (or NUL characters anywhere), else `nil`.
    static func unsupportedFormat(_ lines: [String], text: String) -> String? {
        if text.unicodeScalars.contains("\u{0}") { return "binary data (not a text subtitle format)" }
        guard let first = lines.first(where: { !isBlank($0) }) else { return nil }
        let t = first.drop(while: { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" })
        let lower = t.lowercased()
        func matches(_ pattern: String) -> Bool { t.range(of: pattern, options: .regularExpression) != nil }
        if lower.hasPrefix("<?xml") || lower.hasPrefix("<tt") { return "TTML/XML" }
        if lower.hasPrefix("<sami") { return "SAMI" }
        if lower.hasPrefix("<") { return "XML/HTML" }
        if matches(#"^\{\d+\}\{\d*\}"#) || matches(#"^\[\d+\]\[\d*\]"#) { return "MicroDVD/MPL2" }
        if matches(#"^\[\d+:\d+([.:]\d+)?\]"#) || matches(#"^\[(ar|ti|al|by|offset|length|re|ve):"#) { return "LRC lyrics" }
        if lower.hasPrefix("scenarist_scc") { return "Scenarist SCC" }
        if lower.hasPrefix("# vobsub index") { return "VobSub" }
        if lower.hasPrefix("[information]") { return "SubViewer" }
        if matches(#"^\d+:\d+:\d+\.\d+,\d+:\d+:\d+\.\d+$"#) { return "SubViewer/SBV" }
        return nil
    }

    /// Empty or only spaces/tabs (a stray BOM counts as white space).
    static func isBlank<S: StringProtocol>(_ line: S) -> Bool {
        line.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
    }
}

// MARK: - Text decoding

extension AnnotationReader {
    enum TextDecoder {
        /// The text, and a warning when the encoding was guessed doubtfully.
        static func decode(_ bytes: [UInt8], name: String, encoding: String.Encoding?) throws -> (String, String?) {
            let text: String
            var warning: String?
            if let encoding {
                guard let decoded = decode(bytes, as: encoding) else {
                    throw AnnotationError.undecodable(file: name, encoding: encodingName(encoding))
                }
                text = decoded
            } else {
                (text, warning) = detectAndDecode(bytes, name: name)
            }
            return (text.hasPrefix("\u{FEFF}") ? String(text.unicodeScalars.dropFirst()) : text, warning)
        }

        /// Unicode encodings by BOM or NUL pattern, then UTF-8, then the most plausible
        /// legacy encoding (``LegacyEncoding/detect(_:)``), with a warning when that guess is
        /// doubtful or no legacy encoding defines every byte (then Windows-1252 is used).
        static func detectAndDecode(_ b: [UInt8], name: String) -> (String, String?) {
            if let unicode = detectUnicode(b) { return (unicode, nil) }
            if let guess = LegacyEncoding.detect(b) {
                let warning = guess.doubtful
                    ? "\(name): not UTF-8; text encoding guessed as \(guess.encoding), which is doubtful: check the text and pass --encoding if it looks wrong"
                    : nil
                return (guess.text, warning)
            }
            let undefined = Set(b.filter { [0x81, 0x8D, 0x8F, 0x90, 0x9D].contains($0) }).sorted()
            let list = undefined.map { String(format: "0x%02X", $0) }.joined(separator: ", ")
            return (windows1252(b), "\(name): not UTF-8 and no known legacy encoding defines every byte; read as Windows-1252\(list.isEmpty ? "" : ", which does not define \(list)"): pass --encoding")
        }

        static func detectAndDecode(_ b: [UInt8]) -> String {
            detectAndDecode(b, name: "").0
        }

        static func detectUnicode(_ b: [UInt8]) -> String? {
            if b.starts(with: [0xEF, 0xBB, 0xBF]) {
                return String(decoding: b[3...], as: UTF8.self)
            }
            if b.starts(with: [0xFF, 0xFE, 0x00, 0x00]) { return utf32(b[4...], littleEndian: true) }
            if b.starts(with: [0x00, 0x00, 0xFE, 0xFF]) { return utf32(b[4...], littleEndian: false) }
            if b.starts(with: [0xFF, 0xFE]) { return utf16(b[2...], littleEndian: true) }
            if b.starts(with: [0xFE, 0xFF]) { return utf16(b[2...], littleEndian: false) }
            if let littleEndian = utf16ByNULPattern(b) { return utf16(b[...], littleEndian: littleEndian) }
            if let s = validUTF8(b) { return s }
            return nil
        }

        /// UTF-16 without BOM: text that is mostly ASCII has a NUL in every other byte.
        static func utf16ByNULPattern(_ b: [UInt8]) -> Bool? {
            let n = min(b.count, 4096) & ~1
            guard n >= 2 else { return nil }
            var evenNUL = 0, oddNUL = 0
            var i = 0
            while i < n {
                if b[i] == 0 { evenNUL += 1 }
                if b[i + 1] == 0 { oddNUL += 1 }
                i += 2
            }
            let pairs = n / 2
            if oddNUL * 10 >= pairs * 3, evenNUL * 20 <= pairs { return true }
            if evenNUL * 10 >= pairs * 3, oddNUL * 20 <= pairs { return false }
            return nil
        }

        static func decode(_ b: [UInt8], as encoding: String.Encoding) -> String? {
            switch encoding {
            case .utf8:
                return validUTF8(b.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(b[3...]) : b)
            case .utf16LittleEndian:
                return utf16(b.starts(with: [0xFF, 0xFE]) ? b[2...] : b[...], littleEndian: true)
            case .utf16BigEndian:
                return utf16(b.starts(with: [0xFE, 0xFF]) ? b[2...] : b[...], littleEndian: false)
            case .utf16:
                if b.starts(with: [0xFF, 0xFE]) { return utf16(b[2...], littleEndian: true) }
                if b.starts(with: [0xFE, 0xFF]) { return utf16(b[2...], littleEndian: false) }
                return utf16(b[...], littleEndian: utf16ByNULPattern(b) ?? true)
            case .windowsCP1252:
                return windows1252(b)
            case .isoLatin1:
                var s = String.UnicodeScalarView()
                for byte in b { s.append(Unicode.Scalar(byte)) }
                return String(s)
            default:
                return String(data: Data(b), encoding: encoding)
            }
        }

        static func validUTF8(_ b: [UInt8]) -> String? {
            var iterator = b.makeIterator()
            var utf8 = UTF8()
            var scalars = String.UnicodeScalarView()
            while true {
                switch utf8.decode(&iterator) {
                case .scalarValue(let scalar): scalars.append(scalar)
                case .emptyInput: return String(scalars)
                case .error: return nil
                }
            }
        }

        static func utf16(_ b: ArraySlice<UInt8>, littleEndian: Bool) -> String {
            var units: [UInt16] = []
            units.reserveCapacity(b.count / 2)
            var i = b.startIndex
            while i + 1 < b.endIndex {
                let lo = UInt16(b[i]), hi = UInt16(b[i + 1])
                units.append(littleEndian ? (hi << 8 | lo) : (lo << 8 | hi))
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        }

        static func utf32(_ b: ArraySlice<UInt8>, littleEndian: Bool) -> String {
            var units: [UInt32] = []
            var i = b.startIndex
            while i + 3 < b.endIndex {
                let v = (0..<4).reduce(UInt32(0)) { acc, k in
                    acc | UInt32(b[i + (littleEndian ? k : 3 - k)]) << (8 * UInt32(k))
                }
                units.append(v)
                i += 4
            }
            return String(decoding: units, as: UTF32.self)
        }

        /// Windows-1252 (WHATWG mapping: the five undefined bytes map to the C1 controls).
        static func windows1252(_ b: [UInt8]) -> String {
            let high: [UInt32] = [
                0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
                0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
            ]
            var s = String.UnicodeScalarView()
            for byte in b {
                let v = (0x80...0x9F).contains(byte) ? high[Int(byte) - 0x80] : UInt32(byte)
                s.append(Unicode.Scalar(v)!)
            }
            return String(s)
        }

        static func encodingName(_ e: String.Encoding) -> String {
            switch e {
            case .utf8: return "UTF-8"
            case .utf16: return "UTF-16"
            case .utf16LittleEndian: return "UTF-16LE"
            case .utf16BigEndian: return "UTF-16BE"
            case .utf32: return "UTF-32"
            case .ascii: return "ASCII"
            case .isoLatin1: return "ISO-8859-1"
            case .windowsCP1252: return "Windows-1252"
            default: return "encoding \(e.rawValue)"
            }
        }
    }
}

// MARK: - Lines

extension AnnotationReader {
    enum LineSplitter {
        /// Splits at CRLF, LF or CR. A final line terminator does not produce an extra empty line.
        static func split(_ text: String) -> [String] {
            var lines: [String] = []
            var current = String.UnicodeScalarView()
            var previousWasCR = false
            for scalar in text.unicodeScalars {
                if scalar == "\n" {
                    if !previousWasCR { lines.append(String(current)); current = .init() }
                    previousWasCR = false
                } else if scalar == "\r" {
                    lines.append(String(current)); current = .init()
                    previousWasCR = true
                } else {
                    current.append(scalar)
                    previousWasCR = false
                }
            }
            if !current.isEmpty { lines.append(String(current)) }
            return lines
        }
    }
}

// MARK: - Timestamps and timing lines

extension AnnotationReader {
    enum TimingParser {
        enum Result: Equatable {
            case notTiming
            case bad(String)
            case ok(start: Double, end: Double)
        }

        /// Parses `[h…:]mm:ss[.,]fff` into seconds. Hours may have any number of digits; the
        /// fraction 0–9 digits. With hours, minutes must be below 60; seconds always are.
        static func timestamp<S: StringProtocol>(_ input: S) -> Double? {
            let s = String(input)
            let parts = s.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3 else { return nil }
            let last = parts[parts.count - 1]
            let secondsPart: Substring
            var fraction: Substring = ""
            if let sep = last.firstIndex(where: { $0 == "." || $0 == "," }) {
                secondsPart = last[..<sep]
                fraction = last[last.index(after: sep)...]
                guard !fraction.isEmpty, fraction.count <= 9, isDigits(fraction) else { return nil }
            } else {
                secondsPart = last
            }
            guard isDigits(secondsPart), secondsPart.count <= 2, let sec = Int(secondsPart), sec < 60 else { return nil }
            let minutesPart = parts[parts.count - 2]
            guard isDigits(minutesPart), minutesPart.count <= 9, let min = Int(minutesPart) else { return nil }
            var hours = 0
            if parts.count == 3 {
                guard isDigits(parts[0]), parts[0].count <= 9, let h = Int(parts[0]), min < 60 else { return nil }
                hours = h
            }
            let whole = hours * 3600 + min * 60 + sec
            return Double(fraction.isEmpty ? "\(whole)" : "\(whole).\(fraction)")
        }

        private static func isDigits<S: StringProtocol>(_ s: S) -> Bool {
            !s.isEmpty && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        }

        /// `true` when a string could only be meant as a timestamp (digits and `: . ,`).
        private static func looksLikeTime<S: StringProtocol>(_ s: S) -> Bool {
            !s.isEmpty && s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x3A || $0 == 0x2E || $0 == 0x2C }
        }

        /// Parses `start --> end [settings]`.
        ///
        /// - Parameter strict: WebVTT rule: every line containing `-->` is a timing line. When
        ///   `false` (SubRip), a line with `-->` whose sides do not look like times is text.
        static func timingLine(_ line: String, strict: Bool) -> Result {
            guard let arrow = line.range(of: "-->") else { return .notTiming }
            let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" }
            let left = line[..<arrow.lowerBound].drop(while: isSpace).reversed().drop(while: isSpace)
            let leftText = String(left.reversed())
            let right = line[arrow.upperBound...].drop(while: isSpace)
            let endToken = right.prefix(while: { !isSpace($0) })
            if !strict && !looksLikeTime(leftText) && !looksLikeTime(endToken) { return .notTiming }
            guard let start = timestamp(leftText) else {
                return .bad("unparseable start time \"\(leftText)\"")
            }
            guard let end = timestamp(endToken) else {
                return .bad("unparseable end time \"\(endToken)\"")
            }
            guard end >= start else {
                return .bad("end time \(endToken) is before start time \(leftText)")
            }
            guard end <= Annotation.maximumTime else {
                return .bad("end time \(endToken) is out of range (more than \(Int(Annotation.maximumTime)) s)")
            }
            return .ok(start: start, end: end)
        }
    }
}

// MARK: - SubRip

extension AnnotationReader {
    enum SubRipParser {
        static func parse(_ lines: [String], name: String) -> AnnotationImport {
            var annotations: [Annotation] = []
            var warnings: [String] = []
            var current: (start: Double, end: Double, text: [String])?
            var skippingBadCue = false
            var strayFirstLine: Int?
            var strayCount = 0

            func finishCue() {
                guard let cue = current else { return }
                var text = cue.text[...]
                while let f = text.first, AnnotationReader.isBlank(f) { text = text.dropFirst() }
                while let l = text.last, AnnotationReader.isBlank(l) { text = text.dropLast() }
                annotations.append(Annotation(start: cue.start, end: cue.end, text: text.joined(separator: "\n")))
                current = nil
            }
            func flushStray() {
                if let first = strayFirstLine {
                    warnings.append("\(name):\(first): skipped \(strayCount) line\(strayCount == 1 ? "" : "s") of text outside any cue (no timing line before \(strayCount == 1 ? "it" : "them"))")
                }
                strayFirstLine = nil
                strayCount = 0
            }

            var i = 0
            while i < lines.count {
                var timingIndex = i
                var timing = TimingParser.timingLine(lines[i], strict: false)
                if timing == .notTiming, isIndex(lines[i]), i + 1 < lines.count {
                    let next = TimingParser.timingLine(lines[i + 1], strict: false)
                    if next != .notTiming { timing = next; timingIndex = i + 1 }
                }
                switch timing {
                case .notTiming:
                    if current != nil {
                        current!.text.append(lines[i])
                    } else if !skippingBadCue, !AnnotationReader.isBlank(lines[i]) {
                        if strayFirstLine == nil { strayFirstLine = i + 1 }
                        strayCount += 1
                    }
                    i += 1
                case let .ok(start, end):
                    finishCue(); flushStray()
                    skippingBadCue = false
                    current = (start, end, [])
                    i = timingIndex + 1
                case let .bad(reason):
                    finishCue(); flushStray()
                    warnings.append("\(name):\(timingIndex + 1): skipped cue: \(reason)")
                    skippingBadCue = true
                    i = timingIndex + 1
                }
            }
            finishCue(); flushStray()
            return AnnotationImport(annotations: annotations, warnings: warnings)
        }

        static func isIndex(_ line: String) -> Bool {
            let t = line.trimmingCharacters(in: CharacterSet(charactersIn: " \t\u{FEFF}"))
            return !t.isEmpty && t.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        }
    }
}

// MARK: - WebVTT

extension AnnotationReader {
    enum WebVTTParser {
        static func parse(_ lines: [String], name: String) -> AnnotationImport {
            var annotations: [Annotation] = []
            var warnings: [String] = []
            var unstored: [(keyword: String, line: Int)] = []  // STYLE and REGION blocks
            var i = 0

            // Header: "WEBVTT" followed by end of line, space or tab, then header lines up to a blank line.
            if let first = lines.first, isKeywordLine(first.drop(while: { $0 == "\u{FEFF}" }), "WEBVTT") {
                i = 1
                while i < lines.count, !AnnotationReader.isBlank(lines[i]) {
                    if case .ok = TimingParser.timingLine(lines[i], strict: true) {
                        warnings.append("\(name):\(i + 1): no blank line between the WEBVTT header and the first cue; reading the cue anyway")
                        break
                    }
                    i += 1
                }
            } else {
                warnings.append("\(name):1: missing WEBVTT header; reading as WebVTT anyway")
            }

            while i < lines.count {
                if AnnotationReader.isBlank(lines[i]) { i += 1; continue }
                // Collect one block: up to a blank line, or up to a second line with "-->".
                let blockStart = i
                var block: [String] = []
                var timingOffset: Int?
                while i < lines.count, !AnnotationReader.isBlank(lines[i]) {
                    let hasArrow = lines[i].contains("-->")
                    if hasArrow {
                        // A timing line after the first two lines of a block starts the next cue.
                        if timingOffset != nil || block.count >= 2 { break }
                        timingOffset = block.count
                    }
                    block.append(lines[i])
                    i += 1
                }
                let first = Substring(block[0])
                if isKeywordLine(first, "NOTE") || isKeywordLine(first, "STYLE") || isKeywordLine(first, "REGION") {
                    if timingOffset == nil {
                        if !isKeywordLine(first, "NOTE") { unstored.append((first.hasPrefix("STYLE") ? "STYLE" : "REGION", blockStart + 1)) }
                        continue
                    }
                }
                guard let t = timingOffset else {
                    warnings.append("\(name):\(blockStart + 1): skipped \(block.count) line\(block.count == 1 ? "" : "s") without a cue timing line")
                    continue
                }
                switch TimingParser.timingLine(block[t], strict: true) {
                case let .ok(start, end):
                    // Cue settings are kept as the stored settings block (CueMarkup).
                    let text = block[(t + 1)...].joined(separator: "\n")
                    let settings = cueSettings(block[t])
                    annotations.append(Annotation(start: start, end: end,
                                                  text: settings.isEmpty ? text : CueMarkup.settingsPrefix + settings + "}" + text))
                case let .bad(reason):
                    warnings.append("\(name):\(blockStart + t + 1): skipped cue: \(reason)")
                case .notTiming:
                    break
                }
            }
            for (keyword, line) in unstored {
                warnings.append("\(name):\(line): \(keyword) block not stored (only cue text and cue settings are): cues keep their own markup only")
            }
            return AnnotationImport(annotations: annotations, warnings: warnings)
        }

        /// The cue settings after a timing line's end time (`line:0 align:left`), white space
        /// collapsed to single spaces; `}` (which would end the stored block) left out.
        static func cueSettings(_ timingLine: String) -> String {
            guard let arrow = timingLine.range(of: "-->") else { return "" }
            let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
            let afterEnd = timingLine[arrow.upperBound...].drop(while: isSpace).drop(while: { !isSpace($0) })
            return afterEnd.split(whereSeparator: isSpace).map { $0.filter { $0 != "}" } }
                .filter { !$0.isEmpty }.joined(separator: " ")
        }

        /// `keyword` alone or followed by a space or tab.
        static func isKeywordLine(_ line: Substring, _ keyword: String) -> Bool {
            guard line.hasPrefix(keyword) else { return false }
            let rest = line.dropFirst(keyword.count)
            return rest.isEmpty || rest.first == " " || rest.first == "\t"
        }
    }
}

// MARK: - JSON

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

// MARK: - ASS/SSA

extension AnnotationReader {
    enum ASSParser {
        /// Reads the `Dialogue:` lines of the `[Events]` section. Field order comes from the
        /// section's `Format:` line (default: the ASS v4+ order); `Text` is the last field and
        /// keeps its commas. Override blocks `{\…}` are kept as they are (``CueMarkup``); `\N`
        /// and `\n` become line breaks, `\h` a no-break space; comment blocks `{…}` (no
        /// backslash, never shown) are left out with one warning. An event's style (from
        /// `[V4+ Styles]` or `[V4 Styles]`) is carried as override tags at the start of its text:
        /// alignment (unless the text sets its own `\an`), bold, italic, underline, strike-out
        /// and a primary colour other than white; its `Name` (the speaker) as a WebVTT voice
        /// `<v Name>` before them. Coordinates and font sizes in override blocks are rescaled from the
        /// script's PlayResX/Y to the 384×288 that soundmark's ASS output (and SubRip players)
        /// use (``rescaled(_:_:)``). What is not stored — the named styles' fonts, sizes,
        /// outlines and margins, and drawings in another PlayRes — is said in one warning each. An
        /// event whose style no `Style:` line defines (other than `Default`) keeps its text with
        /// no style tags; one warning per such style name gives the line of its first event.
        /// `Comment:` events and other sections are skipped silently; a bad
        /// timing is reported with its line number.
        static func parse(_ lines: [String], name: String) -> AnnotationImport {
            var annotations: [Annotation] = []
            var warnings: [String] = []
            var section = ""
            var fields = ["layer", "start", "end", "style", "name", "marginl", "marginr", "marginv", "effect", "text"]
            var styleFields = ["name", "fontname", "fontsize", "primarycolour", "secondarycolour", "outlinecolour", "backcolour",
                               "bold", "italic", "underline", "strikeout", "scalex", "scaley", "spacing", "angle", "borderstyle",
                               "outline", "shadow", "alignment", "marginl", "marginr", "marginv", "encoding"]
            var styles: [String: String] = [:]  // name: override block carrying it
            var playRes = (x: "", y: "")
            var comments = 0, drawn = false
            var named: [String] = []  // styles other than Default that events use
            var undefined: Set<String> = []  // style names events use that no Style line defines
            for (i, raw) in lines.enumerated() {
                let line = raw.drop(while: { $0 == " " || $0 == "\t" || $0 == "\u{FEFF}" })
                if line.hasPrefix("[") {
                    section = line.lowercased()
                    continue
                }
                guard let colon = line.firstIndex(of: ":") else { continue }
                let key = line[..<colon].lowercased()
                let rest = line[line.index(after: colon)...].drop(while: { $0 == " " })
                if section.hasPrefix("[script info]") {
                    if key == "playresx" { playRes.x = rest.trimmingCharacters(in: .whitespaces) }
                    if key == "playresy" { playRes.y = rest.trimmingCharacters(in: .whitespaces) }
                    continue
                }
                if section.hasPrefix("[v4+ styles]") || section.hasPrefix("[v4 styles]") {
                    let values = rest.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    if key == "format" { styleFields = values.map { $0.lowercased() } }
                    if key == "style", values.count == styleFields.count {
                        let style = Dictionary(zip(styleFields, values), uniquingKeysWith: { a, _ in a })
                        styles[style["name"] ?? ""] = styleOverrides(style, legacy: section.hasPrefix("[v4 styles]"))
                    }
                    continue
                }
                guard section.hasPrefix("[events]") else { continue }
                if key == "format" {
                    fields = rest.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    continue
                }
                guard key == "dialogue" else { continue }
                guard let s = fields.firstIndex(of: "start"), let e = fields.firstIndex(of: "end"),
                      let t = fields.firstIndex(of: "text") else {
                    warnings.append("\(name):\(i + 1): skipped event: the Format line lacks Start, End or Text")
                    continue
                }
                let values = rest.split(separator: ",", maxSplits: fields.count - 1, omittingEmptySubsequences: false)
                guard values.count == fields.count else {
                    warnings.append("\(name):\(i + 1): skipped event: \(values.count) fields, the Format line has \(fields.count)")
                    continue
                }
                let startText = values[s].trimmingCharacters(in: .whitespaces), endText = values[e].trimmingCharacters(in: .whitespaces)
                guard let start = TimingParser.timestamp(startText) else {
                    warnings.append("\(name):\(i + 1): skipped event: unparseable start time \"\(startText)\""); continue
                }
                guard let end = TimingParser.timestamp(endText) else {
                    warnings.append("\(name):\(i + 1): skipped event: unparseable end time \"\(endText)\""); continue
                }
                guard end >= start else {
                    warnings.append("\(name):\(i + 1): skipped event: end time \(endText) is before start time \(startText)"); continue
                }
                guard end <= Annotation.maximumTime else {
                    warnings.append("\(name):\(i + 1): skipped event: end time \(endText) is out of range"); continue
                }
                let text = String(values[t])
                if unclosedBrace(text) {
                    warnings.append("\(name):\(i + 1): a '{' without its '}' is kept as text (not an override block)")
                }
                let (body, commentCount, drawing) = stored(text, scale: scale(playRes))
                comments += commentCount
                drawn = drawn || drawing
                let styleName = fields.firstIndex(of: "style").map { values[$0].trimmingCharacters(in: .whitespaces) } ?? ""
                if styleName.lowercased() != "default", styles[styleName] != nil, !named.contains(styleName) { named.append(styleName) }
                // Renderers show such an event in the script's default style (libass warns "no style named …").
                if !styleName.isEmpty, styleName.lowercased() != "default", styles[styleName] == nil,
                   undefined.insert(styleName).inserted {
                    warnings.append("\(name):\(i + 1): style \"\(styleName)\" is not defined in the script's styles: "
                                    + "its events keep their text, with no style of their own")
                }
                var style = styles[styleName] ?? ""
                if body.contains("\\an") { style = style.replacingOccurrences(of: #"\\an\d"#, with: "", options: .regularExpression) }
                let speaker = fields.firstIndex(of: "name").map { values[$0].trimmingCharacters(in: .whitespaces) } ?? ""
                annotations.append(Annotation(start: start, end: end,
                                              text: (speaker.isEmpty ? "" : "<v \(speaker)>") + (style == "{}" ? "" : style) + body))
            }
            if comments > 0 {
                warnings.append("\(name): \(comments) comment block(s) {…} left out (ASS never shows them)")
            }
            if !named.isEmpty {
                warnings.append("\(name): named styles are not stored (\(named.joined(separator: ", "))): each event keeps its style's alignment, "
                                + "bold, italic, underline, strike-out and colour as override tags, not its font, size, outline or margins")
            }
            if drawn, let canvas = canvas(playRes) {
                let assumed = playRes.x.isEmpty ? " (PlayResX assumed from PlayResY, as libass does)"
                    : playRes.y.isEmpty ? " (PlayResY assumed from PlayResX, as libass does)" : ""
                warnings.append("\(name): drawings (\\p) and vector clips are kept in this script's PlayResX/Y "
                                + "\(number(canvas.x))×\(number(canvas.y))\(assumed), not rescaled to soundmark's 384×288")
            }
            return AnnotationImport(annotations: annotations, warnings: warnings)
        }

        /// The override block (`{\an8\i1}`, `{}` for none) carrying what of a style differs from
        /// soundmark's output style (bottom centre, regular, white). `legacy`: SSA v4 alignment
        /// numbers (1–3 bottom, 5–7 top, 9–11 middle).
        static func styleOverrides(_ style: [String: String], legacy: Bool) -> String {
            var tags = ""
            if var an = Int(style["alignment"] ?? "") {
                if legacy { an = [5: 7, 6: 8, 7: 9, 9: 4, 10: 5, 11: 6][an] ?? an }
                if an != 2, (1...9).contains(an) { tags += "\\an\(an)" }
            }
            for (field, tag) in [("bold", "b"), ("italic", "i"), ("underline", "u"), ("strikeout", "s")] {
                if let v = Int(style[field] ?? ""), v != 0 { tags += "\\\(tag)1" }
            }
            let colour = style["primarycolour"] ?? ""
            // ASS writes &HAABBGGRR; SSA a decimal BGR number.
            let rgb = CueMarkup.assColour(colour) ?? Int(colour).map { ($0 & 0xFF) << 16 | ($0 & 0xFF00) | ($0 >> 16 & 0xFF) }
            if let rgb, rgb != 0xFFFFFF { tags += "\\c" + CueMarkup.assColourText(rgb) }
            return "{" + tags + "}"
        }

        /// The PlayRes soundmark writes and SubRip players assume (FFmpeg's ASS default), pixels.
        static let outputPlayRes = (x: 384.0, y: 288.0)

        /// A script's canvas, pixels: its PlayResX/Y as written, one missing following from the
        /// other; nil when neither is given (renderers then use ``outputPlayRes``).
        ///
        /// The rule is libass's (ass.c, when it reads the script): a missing PlayResX is
        /// PlayResY × 4 / 3 in integer arithmetic (at least 1), and 1280 when PlayResY is 1024;
        /// a missing PlayResY is PlayResX × 3 / 4, and 1024 when PlayResX is 1280. So PlayResY 720
        /// alone is 960×720, and PlayResY 1000 alone 1333×1000.
        static func canvas(_ playRes: (x: String, y: String)) -> (x: Double, y: Double)? {
            let x = Double(playRes.x).flatMap { $0 > 0 ? $0 : nil }, y = Double(playRes.y).flatMap { $0 > 0 ? $0 : nil }
            switch (x, y) {
            case let (x?, y?): return (x, y)
            case let (nil, y?): return (y == 1024 ? 1280 : max(1, (y * 4 / 3).rounded(.down)), y)
            case let (x?, nil): return (x, x == 1280 ? 1024 : max(1, (x * 3 / 4).rounded(.down)))
            case (nil, nil): return nil
            }
        }

        /// The factors from a script's ``canvas(_:)`` to ``outputPlayRes``, or nil when they are 1.
        static func scale(_ playRes: (x: String, y: String)) -> (x: Double, y: Double)? {
            guard let (x, y) = canvas(playRes), x != outputPlayRes.x || y != outputPlayRes.y else { return nil }
            return (outputPlayRes.x / x, outputPlayRes.y / y)
        }

        /// `v` with at most 2 decimals and no trailing zeros (`26.67`, `192`).
        static func number(_ v: Double) -> String {
            var t = String(format: "%.2f", v)
            while t.hasSuffix("0") { t.removeLast() }
            if t.hasSuffix(".") { t.removeLast() }
            return t
        }

        /// An override block with its coordinates (`\pos`, `\move`, `\org`, rectangular
        /// `\clip`/`\iclip`) and font sizes (`\fs`) multiplied by `scale`, and whether it holds
        /// a drawing (`\p1`) or vector clip, which are kept as written.
        static func rescaled(_ block: String, _ scale: (x: Double, y: Double)) -> (block: String, drawing: Bool) {
            var changed = false, drawing = false
            let tags = CueMarkup.overrideTags(String(block.dropFirst().dropLast())).map { tag -> String in
                var argument = tag.argument
                switch tag.name {
                case "pos", "org", "move", "clip", "iclip":
                    let inside = argument.hasPrefix("(") && argument.hasSuffix(")") ? String(argument.dropFirst().dropLast()) : argument
                    let values = inside.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
                    let counts = ["pos": [2], "org": [2], "move": [4, 6], "clip": [4], "iclip": [4]][tag.name] ?? []
                    guard counts.contains(values.count), values.allSatisfy({ $0 != nil }) else {
                        if tag.name.hasSuffix("clip") { drawing = true }
                        break
                    }
                    let scaled = values.enumerated().map { i, v in i < 4 ? number(v! * (i % 2 == 0 ? scale.x : scale.y)) : number(v!) }
                    argument = "(" + scaled.joined(separator: ",") + ")"
                    changed = true
                case "fs":
                    if let v = Double(argument) { argument = number(v * scale.y); changed = true }
                case "p":
                    if argument != "0" { drawing = true }
                default: break
                }
                return "\\" + tag.name + argument
            }
            return (changed ? "{" + tags.joined() + "}" : block, drawing)
        }

        /// Whether `text` has a `{` that no `}` closes (read as text by ``stored(_:)``, as
        /// renderers do, rather than hiding the rest of the line).
        static func unclosedBrace(_ text: String) -> Bool {
            guard let open = text.lastIndex(of: "{") else { return false }
            return !text[open...].contains("}")
        }

        /// Event text as stored: override blocks `{\…}` as they are, comment blocks left out
        /// (and counted), `\N`/`\n` as line breaks and `\h` as U+00A0 outside blocks. A `{`
        /// with no `}` after it is text, not the start of a block.
        static func stored(_ text: String, scale: (x: Double, y: Double)? = nil) -> (text: String, comments: Int, drawing: Bool) {
            var out = ""
            var comments = 0, drawing = false
            var i = text.startIndex
            while i < text.endIndex {
                let c = text[i]
                let next = text.index(after: i)
                if c == "{", let close = text[next...].firstIndex(of: "}") {
                    if next < close, text[next] == "\\" {
                        let block = scale.map { rescaled(String(text[i...close]), $0) } ?? (block: String(text[i...close]), drawing: false)
                        out += block.block
                        drawing = drawing || block.drawing
                    } else {
                        comments += 1
                    }
                    i = text.index(after: close)
                    continue
                }
                if c == "\\", next < text.endIndex, "Nnh".contains(text[next]) {
                    out.append(text[next] == "h" ? "\u{00A0}" : "\n")
                    i = text.index(after: next)
                    continue
                }
                out.append(c)
                i = next
            }
            return (out, comments, drawing)
        }
    }
}
