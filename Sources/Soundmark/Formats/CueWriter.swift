import Foundation

/// One track of a CDRWIN cue sheet written by ``CueWriter/cueSheet(file:tracks:)``.
public struct CueSheetTrack: Sendable, Equatable {
    /// Where the track starts in the audio file, seconds (written as `INDEX 01 mm:ss:ff`).
    public var start: Double
    /// Track title (`TITLE "…"`).
    public var title: String
    /// Track performer (`PERFORMER "…"`), omitted when `nil`.
    public var performer: String?
    /// Where the track's audio ends, seconds; `nil`: it lasts until the next track starts.
    /// A cue sheet has no track ends, so ``CueWriter/cueSheet(file:tracks:gapTitle:minimumGap:)``
    /// writes an uncovered stretch after the track as the next track's pregap (`INDEX 00`).
    public var end: Double?

    /// Creates a track starting `start` seconds into the file (and ending at `end`, when known).
    public init(start: Double, title: String, performer: String? = nil, end: Double? = nil) {
        self.start = start
        self.title = title
        self.performer = performer
        self.end = end
    }
}

/// Serialises cues (recording time, seconds) and tables to text formats.
///
/// All writers are pure functions returning the whole file as a `String` (write it as
/// UTF-8). Times are rounded to the format's precision, never truncated, so 1.9996 s is
/// written as `00:00:02,000`; negative or not-a-number times are written as 0, times beyond
/// ``Annotation/maximumTime`` (and +infinity) as that maximum, and an end before its start is
/// written equal to the start.
public enum CueWriter {
    /// Title of the track ``cueSheet(file:tracks:gapTitle:minimumGap:)`` writes for a stretch
    /// before the first track: `(unidentified)`.
    public static let unidentifiedTitle = "(unidentified)"

    /// SubRip (`.srt`): for each cue a 1-based index line, a
    /// `hh:mm:ss,mmm --> hh:mm:ss,mmm` timing line (hours widen past 99 as needed), the text
    /// lines and a blank line; LF line ends.
    ///
    /// SubRip has no escaping, so text is written verbatim except that CR/CRLF become LF and
    /// empty (or whitespace-only) inner lines are dropped, because a blank line ends a cue
    /// for most readers. Styling (``CueMarkup``): `<i> <b> <u> <s> <font>` and ASS override
    /// blocks `{\…}` are SubRip's own and written as they are; WebVTT cue settings become
    /// `{\anN}` (`line`, `align`), `<c.yellow>` a `<font color="#ffff00">`; other WebVTT markup
    /// (`<v>`, `<lang>`, `<ruby>`, timestamp tags, `position` …) is dropped, its text kept, and
    /// counted in `loss`. ASS drawings (`{\p1}m 0 0 l 100 0{\p0}`) are dropped with their
    /// commands, which SubRip players would show as text, and counted in `loss`. Plain text
    /// (``CueTextKind/plain``) is shown as written (``CueMarkup/subRipPlain(_:)``).
    public static func srt(_ cues: [Cue], loss: StylingLoss? = nil) -> String {
        var out = ""
        for (n, cue) in cues.enumerated() {
            let (start, end) = times(cue)
            out += "\(n + 1)\n\(clock(start, separator: ",")) --> \(clock(end, separator: ","))\n"
            let lines = cue.kind == .plain ? CueMarkup.subRipPlain(cue.text) : CueMarkup.subRip(cue.text, loss: loss)
            if !lines.isEmpty { out += lines.joined(separator: "\n") + "\n" }
            out += "\n"
        }
        return out
    }

    /// W3C WebVTT (<https://www.w3.org/TR/webvtt1/>): `WEBVTT`, a blank line, then for each
    /// cue a `hh:mm:ss.mmm --> hh:mm:ss.mmm` timing line (always with hours) with the cue's
    /// settings after it, the payload and a blank line; LF line ends.
    ///
    /// The payload is made valid WebVTT cue text (W3C WebVTT §4.2.2 "WebVTT cue text"):
    /// - `&` stays when it already starts a character reference (`&amp;`, `&#233;`,
    ///   `&#x1F600;`, `&nbsp;` …) and becomes `&amp;` otherwise;
    /// - WebVTT tags (`<i>`, `<b>`, `<u>`, `<c.class>`, `<v Name>`, `<lang en>`, `<ruby>`,
    ///   `<rt>`, their end tags, `<00:01.000>` timestamps) stay; any other `<` and `>` become
    ///   `&lt;` and `&gt;`, so the payload never contains `-->`;
    /// - CR/CRLF become LF and empty inner lines are dropped (a blank line would end the cue).
    ///
    /// Styling (``CueMarkup``): stored WebVTT cue settings are written back as they were, else
    /// the first `{\anN}` becomes `line`/`align` settings; `<font color>` and `{\c&HBBGGRR&}`
    /// become `<c.yellow>` etc. for WebVTT's eight default colours; `{\i1}`/`{\i0}` (b, u)
    /// become `<i>`/`</i>`. Other colours, font faces and sizes, `<s>` and other override tags
    /// are dropped (text kept) and counted in `loss`; so are ASS drawings
    /// (`{\p1}m 0 0 l 100 0{\p0}`), their commands with them. Plain text
    /// (``CueTextKind/plain``) has every `&`, `<`, `>` escaped: `&lt;b&gt;Live&lt;/b&gt;`.
    public static func webVTT(_ cues: [Cue], loss: StylingLoss? = nil) -> String {
        var out = "WEBVTT\n\n"
        for cue in cues {
            let (start, end) = times(cue)
            let (settings, lines) = cue.kind == .plain ? ("", CueMarkup.webVTTPlain(cue.text)) : CueMarkup.webVTT(cue.text, loss: loss)
            let shown = settings.isEmpty || settings.contains("-->") ? "" : " " + settings
            out += "\(clock(start, separator: ".")) --> \(clock(end, separator: "."))\(shown)\n"
            if !lines.isEmpty { out += lines.joined(separator: "\n") + "\n" }
            out += "\n"
        }
        return out
    }

    /// Advanced SubStation Alpha (`.ass`, v4.00+), as libass, FFmpeg and Aegisub read it: a
    /// `[Script Info]` header (PlayResX/Y 384×288), one `Default` style, and an `[Events]`
    /// section with one `Dialogue:` line per cue, times `h:mm:ss.cc` (rounded to centiseconds).
    ///
    /// Text: line breaks become `\N`; override blocks `{\…}` are written as they are;
    /// `<i>`, `<b>`, `<u>`, `<s>` (and their end tags) become `{\i1}`/`{\i0}` etc.;
    /// `<font color>` and `<c.yellow>` become `{\c&HBBGGRR&}` (their end tags `{\c}`, back to
    /// the style's colour), `<font face>` `{\fnFace}`; WebVTT `line`/`align` settings become
    /// `{\anN}`; the first `<v Name>` voice is the event's `Name` field. `{` and `}` of text,
    /// which would open an override block, are written as the full-width `｛` `｝`; a backslash
    /// before `N`, `n` or `h` gets a word joiner (U+2060) after it so it is not read as an
    /// escape; `<…>` that is not markup (`Track <1>`) is text. What ASS cannot express
    /// (`<font size>`, `<lang>`, `<ruby>`, timestamp tags, `position` …) is dropped and
    /// counted in `loss`. Plain text (``CueTextKind/plain``) is text only: `<b>` stays `<b>`,
    /// braces and backslashes escaped as above. LF line ends.
    public static func ass(_ cues: [Cue], loss: StylingLoss? = nil) -> String {
        var out = """
            [Script Info]
            ScriptType: v4.00+
            PlayResX: 384
            PlayResY: 288
            WrapStyle: 0

            [V4+ Styles]
            Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
            Style: Default,Arial,16,&H00FFFFFF,&H000000FF,&H00000000,&H80000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,1

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text

            """
        for cue in cues {
            let (start, end) = times(cue)
            let (name, text) = cue.kind == .plain ? ("", CueMarkup.assPlain(cue.text)) : CueMarkup.ass(cue.text, loss: loss)
            out += "Dialogue: 0,\(assClock(start)),\(assClock(end)),Default,\(name),0,0,0,,\(text)\n"
        }
        return out
    }

    /// `h:mm:ss.cc`, rounded to the centisecond.
    static func assClock(_ seconds: Double) -> String {
        let cs = Int((clean(seconds) * 100).rounded())
        return "\(cs / 360_000):\(pad(cs / 6000 % 60, 2)):\(pad(cs / 100 % 60, 2)).\(pad(cs % 100, 2))"
    }

    /// Cue text as ASS event text (see ``ass(_:loss:)``).
    static func assText(_ text: String) -> String { CueMarkup.ass(text, loss: nil).text }

    /// Audacity label track (File ▸ Import ▸ Labels): one `start\tend\tlabel` line per cue,
    /// times in seconds with 6 decimals (`1.500000`), LF line ends. Labels are single-line, so
    /// line breaks and tabs in the text become spaces; labels are plain text, so markup
    /// (``CueMarkup/plainText(_:)``) is dropped and counted in `loss`, text that is not markup
    /// (`Track <1>`) kept; a ``CueTextKind/plain`` cue's text is written as it is.
    public static func audacityLabels(_ cues: [Cue], loss: StylingLoss? = nil) -> String {
        var out = ""
        for cue in cues {
            let (start, end) = times(cue)
            if cue.kind == .markup, CueMarkup.hasMarkup(cue.text) { loss?.drop("styling"); loss?.endCue() }
            let label = String((cue.kind == .plain ? cue.text : CueMarkup.plainText(cue.text)).unicodeScalars.map { s -> Character in
                (s == "\r" || s == "\n" || s == "\t") ? " " : Character(s)
            })
            out += "\(fixed6(start))\t\(fixed6(end))\t\(label)\n"
        }
        return out
    }

    /// CDRWIN cue sheet (the `.cue` format read by cuetools, EAC, foobar2000 …):
    ///
    /// ```
    /// FILE "name.wav" WAVE
    ///   TRACK 01 AUDIO
    ///     TITLE "…"
    ///     PERFORMER "…"
    ///     INDEX 01 mm:ss:ff
    /// ```
    ///
    /// - The file type is `MP3` for `.mp3`, `AIFF` for `.aif`/`.aiff`, else `WAVE`.
    /// - `INDEX 01` is `start` seconds rounded to CD frames (75 per second); `mm` is the total
    ///   number of minutes and may exceed 99.
    /// - Tracks are written in ascending `start` order (stable), numbered from 01. The format
    ///   allows at most 99 tracks; more are written with three-digit numbers, which strict
    ///   readers reject.
    /// - CDRWIN strings have no escape mechanism: `"` in titles becomes `'`, line breaks
    ///   become spaces. CRLF line ends, as CDRWIN wrote them.
    /// - Stretches of the file no track covers, when they last at least `minimumGap` seconds:
    ///   before the first track, a track of its own titled `gapTitle` at 00:00:00 (split tools
    ///   — `cuebreakpoints`, `shnsplit` — start their first piece at the file's start and
    ///   ignore a first track's `INDEX 00`, so only a track of its own keeps a lead-in out of
    ///   track 1); between a track with an ``CueSheetTrack/end`` and the next one, the next
    ///   track's pregap (`INDEX 00` at the stretch's start, as the format records gaps
    ///   between tracks: tools split at `INDEX 01` by default and can split the gaps out,
    ///   `cuebreakpoints --split-gaps`). So with default options every split point is a track
    ///   start. A stretch after the last track stays with it (a cue sheet has no end mark).
    public static func cueSheet(file: String, tracks: [CueSheetTrack], gapTitle: String = unidentifiedTitle,
                                minimumGap: Double = 1) -> String {
        let ext = (file as NSString).pathExtension.lowercased()
        let type = ext == "mp3" ? "MP3" : (ext == "aif" || ext == "aiff") ? "AIFF" : "WAVE"
        var out = "FILE \"\(cueString(file))\" \(type)\r\n"
        let sorted = tracks.enumerated().sorted {
            (clean($0.element.start), $0.offset) < (clean($1.element.start), $1.offset)
        }.map(\.element)
        // Uncovered stretches, in CD frames so that what is written decides.
        func frames(_ t: Double) -> Int { Int((clean(t) * 75).rounded()) }
        func index(_ number: Int, _ f: Int) -> String {
            "    INDEX \(pad(number, 2)) \(pad(f / 4500, 2)):\(pad(f / 75 % 60, 2)):\(pad(f % 75, 2))\r\n"
        }
        let minimumFrames = max(1, Int((minimumGap * 75).rounded()))
        var ordered: [(track: CueSheetTrack, pregap: Int?)] = []
        if let first = sorted.first, frames(first.start) >= minimumFrames {
            ordered.append((CueSheetTrack(start: 0, title: gapTitle), nil))
        }
        var coveredTo: Int?  // end of the audio covered by the previous track; nil: up to this one
        for track in sorted {
            var pregap: Int?
            if let covered = coveredTo, frames(track.start) - covered >= minimumFrames { pregap = covered }
            ordered.append((track, pregap))
            coveredTo = track.end.map { max(frames(track.start), frames($0)) }
        }
        for (n, (track, pregap)) in ordered.enumerated() {
            out += "  TRACK \(pad(n + 1, 2)) AUDIO\r\n"
            out += "    TITLE \"\(cueString(track.title))\"\r\n"
            if let performer = track.performer {
                out += "    PERFORMER \"\(cueString(performer))\"\r\n"
            }
            if let pregap { out += index(0, pregap) }
            out += index(1, frames(track.start))
        }
        return out
    }

    /// RFC 4180 CSV: the header row (omitted when empty) then the rows, every record ended
    /// by CRLF. A field containing `,`, `"`, CR or LF is enclosed in double quotes with inner
    /// quotes doubled; other fields are written as they are.
    public static func csv(header: [String], rows: [[String]]) -> String {
        var out = ""
        for record in (header.isEmpty ? [] : [header]) + rows {
            out += record.map(csvField).joined(separator: ",") + "\r\n"
        }
        return out
    }

    // MARK: - Helpers

    /// `t` clamped to `0...Annotation.maximumTime`; not-a-number becomes 0. Every integer
    /// conversion below relies on it.
    static func clean(_ t: Double) -> Double {
        t.isNaN || t <= 0 ? 0 : min(t, Annotation.maximumTime)
    }

    static func times(_ cue: Cue) -> (Double, Double) {
        let start = clean(cue.start)
        return (start, max(start, clean(cue.end)))
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// `hh:mm:ss<sep>mmm` from seconds, rounded to the millisecond.
    static func clock(_ seconds: Double, separator: String) -> String {
        let ms = Int((clean(seconds) * 1000).rounded())
        return "\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2)):\(pad(ms / 1000 % 60, 2))\(separator)\(pad(ms % 1000, 3))"
    }

    static func fixed6(_ seconds: Double) -> String {
        let micros = Int((clean(seconds) * 1_000_000).rounded())
        return "\(micros / 1_000_000).\(pad(micros % 1_000_000, 6))"
    }

    /// Text lines with CR/CRLF normalised and blank lines removed.
    static func payloadLines(_ text: String) -> [String] {
        AnnotationReader.LineSplitter.split(text).filter { !AnnotationReader.isBlank($0) }
    }

    static func cueString(_ s: String) -> String {
        String(s.unicodeScalars.map { c -> Character in
            switch c {
            case "\"": return "'"
            case "\r", "\n", "\t": return " "
            default: return Character(c)
            }
        })
    }

    static func csvField(_ field: String) -> String {
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: WebVTT escaping

    /// Text (no markup) as WebVTT cue text: `&` kept where it starts a character reference
    /// (unless `keepingReferences` is false: plain text, whose `&amp;` is text), else `&amp;`;
    /// `<` and `>` as `&lt;` and `&gt;`.
    static func escapeWebVTTText(_ text: String, keepingReferences: Bool = true) -> String {
        let s = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < s.count {
            switch s[i] {
            case "&":
                if keepingReferences, let n = characterReferenceLength(s, i) {
                    out.append(contentsOf: s[i..<i + n]); i += n
                } else {
                    out.append(contentsOf: "&amp;".unicodeScalars); i += 1
                }
            case "<": out.append(contentsOf: "&lt;".unicodeScalars); i += 1
            case ">": out.append(contentsOf: "&gt;".unicodeScalars); i += 1
            default: out.append(s[i]); i += 1
            }
        }
        return String(out)
    }

    private static func isASCIILetter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c)
    }
    private static func isASCIIDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }
    private static func isHexDigit(_ c: Unicode.Scalar) -> Bool {
        isASCIIDigit(c) || ("a"..."f").contains(c) || ("A"..."F").contains(c)
    }

    /// Length of `&name;`, `&#digits;` or `&#xhex;` starting at `i`, else nil.
    static func characterReferenceLength(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        var j = i + 1
        guard j < s.count else { return nil }
        if s[j] == "#" {
            j += 1
            var hex = false
            if j < s.count, s[j] == "x" || s[j] == "X" { hex = true; j += 1 }
            let digitsStart = j
            while j < s.count, hex ? isHexDigit(s[j]) : isASCIIDigit(s[j]) { j += 1 }
            guard j > digitsStart, j - digitsStart <= 8, j < s.count, s[j] == ";" else { return nil }
            return j + 1 - i
        }
        guard isASCIILetter(s[j]) else { return nil }
        while j < s.count, isASCIILetter(s[j]) || isASCIIDigit(s[j]) { j += 1 }
        guard j < s.count, s[j] == ";", j - i <= 40 else { return nil }
        return j + 1 - i
    }

    private static let webVTTTags: Set<String> = ["c", "i", "b", "u", "v", "lang", "ruby", "rt"]

    /// Length of a WebVTT tag (or SubRip font tag) starting at `i`, else nil.
    static func tagLength(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        guard let close = s[i...].firstIndex(of: ">") else { return nil }
        let inner = s[(i + 1)..<close]
        guard !inner.isEmpty, !inner.contains("<"), !inner.contains("&") else { return nil }
        let length = close + 1 - i
        // Timestamp tag: <[hh:]mm:ss.ttt>
        if isASCIIDigit(inner.first!) {
            let text = String(String.UnicodeScalarView(inner))
            guard text.contains("."), AnnotationReader.TimingParser.timestamp(text) != nil,
                  text.split(separator: ".").last?.count == 3 else { return nil }
            return length
        }
        var body = inner[...]
        let isEnd = body.first == "/"
        if isEnd { body = body.dropFirst() }
        let nameEnd = body.firstIndex(where: { $0 == "." || $0 == " " || $0 == "\t" }) ?? body.endIndex
        let name = String(String.UnicodeScalarView(body[body.startIndex..<nameEnd]))
        let rest = body[nameEnd...]
        if name.lowercased() == "font" {
            // SubRip-style <font color="…"> or </font>; attributes must not end in "--".
            if isEnd { return rest.isEmpty ? length : nil }
            return rest.first == "." || String(String.UnicodeScalarView(rest)).hasSuffix("--") ? nil : length
        }
        guard webVTTTags.contains(name) else { return nil }
        if isEnd { return rest.isEmpty ? length : nil }
        let restText = String(String.UnicodeScalarView(rest))
        if restText.hasSuffix("-") { return nil }  // would leave "-->" in the payload
        // Classes: ".a.b" with no white space inside; then optional annotation after white space.
        let classesEnd = rest.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? rest.endIndex
        let classes = String(String.UnicodeScalarView(rest[rest.startIndex..<classesEnd]))
        if !classes.isEmpty {
            let parts = classes.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.first == "", parts.dropFirst().allSatisfy({ !$0.isEmpty }) else { return nil }
        }
        let hasAnnotation = classesEnd < rest.endIndex
        if hasAnnotation && !(name == "v" || name == "lang") { return nil }
        return length
    }
}
