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
