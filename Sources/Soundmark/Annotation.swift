import Foundation

/// Text tied to a time range in *reference* time (the timeline of the reference
/// recording the annotations were authored against).
///
/// Times are in seconds (fractional, `Double`). `end >= start` for every value the
/// ``AnnotationReader`` produces. `text` is kept as it appeared in the source file, in the
/// SubRip-flavoured markup of ``CueMarkup``: markup such as `<i>` and `{\an8}`, character
/// references such as `&amp;`, non-ASCII text and emoji are untouched; WebVTT cue settings
/// and ASS styles are carried as ``CueMarkup`` describes; multi-line text is joined with
/// `"\n"` (only the line-ending characters CR, LF and CRLF of the source are normalised).
///
/// The `Codable` form is `{"start": seconds, "end": seconds, "text": "…"}`, the same
/// shape the JSON annotation format (``AnnotationFormat/json``) reads.
public struct Annotation: Codable, Equatable, Sendable {
    /// The largest time in seconds (10¹², about 31 700 years) that the readers accept and the
    /// writers write: every time below it converts to integer milliseconds, microseconds and CD
    /// frames without overflow. ``AnnotationReader`` skips cues beyond it with a warning naming
    /// the file and line, ``Catalog`` refuses to store them, and ``CueWriter`` clamps to it.
    public static let maximumTime: Double = 1e12

    /// Whether `start` and `end` are finite, `0 <= start <= end` and `end <= ``maximumTime```.
    public var isInRange: Bool {
        start.isFinite && end.isFinite && start >= 0 && end >= start && end <= Annotation.maximumTime
    }

    /// Start of the range in reference time, seconds.
    public var start: Double
    /// End of the range in reference time, seconds (`>= start`).
    public var end: Double
    /// The annotation text, verbatim; inner line breaks are `"\n"`.
    public var text: String

    /// Creates an annotation covering `start...end` seconds of reference time.
    public init(start: Double, end: Double, text: String) {
        self.start = start
        self.end = end
        self.text = text
    }
}

/// One exported timed entry in *recording* time (an annotation mapped onto the
/// timeline of the recording being exported).
///
/// Times are in seconds (fractional, `Double`). ``CueWriter`` rounds them to the
/// precision of each output format (milliseconds for SRT/WebVTT, microseconds for
/// Audacity labels) and clamps negative or non-finite values to 0.
public struct Cue: Codable, Equatable, Sendable {
    /// Start of the cue in recording time, seconds.
    public var start: Double
    /// End of the cue in recording time, seconds. Writers treat `end < start` as `end == start`.
    public var end: Double
    /// Cue text; inner line breaks are `"\n"`. Read as ``kind`` says; writers escape it as
    /// each format requires.
    public var text: String
    /// How ``text`` is read: stored markup (an annotation's text, the default) or plain text
    /// (a reference's title and artist).
    public var kind: CueTextKind

    /// Creates a cue covering `start...end` seconds of recording time, its text of `kind`.
    public init(start: Double, end: Double, text: String, kind: CueTextKind = .markup) {
        self.start = start
        self.end = end
        self.text = text
        self.kind = kind
    }

    private enum CodingKeys: String, CodingKey { case start, end, text, kind }

    /// Decodes `{"start","end","text"}` and an optional `"kind"` (`markup` when missing).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(start: try c.decode(Double.self, forKey: .start), end: try c.decode(Double.self, forKey: .end),
                  text: try c.decode(String.self, forKey: .text),
                  kind: try c.decodeIfPresent(CueTextKind.self, forKey: .kind) ?? .markup)
    }
}

/// How a ``Cue``'s text is read by ``CueWriter``.
public enum CueTextKind: String, Codable, Sendable {
    /// Stored markup (``CueMarkup``): an annotation's text, its styling carried, translated or
    /// dropped per format.
    case markup
    /// Plain text shown as written: a reference's title and artist. Nothing in it is markup
    /// (a title `<b>Live</b>` keeps its tags as text); each writer escapes what its format would
    /// read as markup.
    case plain
}

/// A timed-text file format understood by ``AnnotationReader``.
///
/// The raw value is the usual file extension (`srt`, `vtt`, `json`).
public enum AnnotationFormat: String, Sendable {
    /// SubRip (`.srt`): optional numeric index line, `hh:mm:ss,mmm --> hh:mm:ss,mmm`
    /// timing line, text lines, blank line.
    case srt
    /// W3C WebVTT (`.vtt`, <https://www.w3.org/TR/webvtt1/>): `WEBVTT` header, optional
    /// NOTE/STYLE/REGION blocks, cues with optional identifier and cue settings.
    case webVTT = "vtt"
    /// JSON array of objects `[{"start": seconds, "end": seconds, "text": "…"}]`.
    case json
    /// Advanced SubStation Alpha / SubStation Alpha (`.ass`, `.ssa`): the `Dialogue:` events of
    /// the `[Events]` section, read through its `Format:` line; times `h:mm:ss.cc`.
    case ass
}

/// The result of reading an annotation file: everything that could be used, plus
/// one human-readable warning per thing that was skipped.
public struct AnnotationImport: Sendable {
    /// Annotations in file order (not sorted, not merged), times in seconds of reference time.
    public var annotations: [Annotation]
    /// Diagnostics in the form `"FILE:LINE: what was skipped and why"` (1-based line
    /// numbers; whole-file remarks use `"FILE: …"`).
    public var warnings: [String]

    /// Creates an import result.
    public init(annotations: [Annotation], warnings: [String]) {
        self.annotations = annotations
        self.warnings = warnings
    }
}

/// Why an annotation file could not be read at all. Recoverable problems (a bad cue,
/// garbage lines) are not errors; they become ``AnnotationImport/warnings``.
public enum AnnotationError: Error, LocalizedError, Equatable, Sendable {
    /// The file could not be opened or read (`reason` is the system's message).
    case unreadable(file: String, reason: String)
    /// The bytes are not valid in the explicitly requested text encoding.
    case undecodable(file: String, encoding: String)
    /// The file looks like JSON (starts with `[` or `{`) but is not valid JSON or not
    /// an array of annotation objects. `line` is 1-based.
    case invalidJSON(file: String, line: Int, reason: String)
    /// The file is in a timed-text (or other) format the reader does not support; `format`
    /// names it (e.g. "TTML/XML", "MicroDVD", "LRC lyrics", "binary data").
    case unsupportedFormat(file: String, format: String)
    /// The file has content but not a single usable annotation; `skipped` problems were
    /// found, the first of which is `firstProblem` (a warning string).
    case noAnnotations(file: String, skipped: Int, firstProblem: String)

    /// One line naming the file and the cause.
    public var errorDescription: String? {
        switch self {
        case let .unreadable(file, reason):
            return "\(file): cannot read annotation file: \(reason)"
        case let .undecodable(file, encoding):
            return "\(file): not valid \(encoding) text"
        case let .invalidJSON(file, line, reason):
            return "\(file):\(line): invalid JSON annotations: \(reason)"
        case let .unsupportedFormat(file, format):
            return "\(file): \(format) is not a supported annotation format (use SRT, WebVTT, ASS/SSA or JSON)"
        case let .noAnnotations(file, skipped, firstProblem):
            return "\(file): no usable annotations (\(skipped) problem\(skipped == 1 ? "" : "s"); first: \(firstProblem))"
        }
    }
}
