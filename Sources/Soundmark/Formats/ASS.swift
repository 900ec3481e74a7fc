import Foundation

// ASS/SSA (.ass, .ssa): read by AnnotationReader.ASSParser, written by CueWriter.ass, stored markup translated by CueMarkup.ass.

// MARK: - Reading (ASS/SSA)

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

// MARK: - Writing (ASS)

extension CueWriter {
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
}

// MARK: - Stored markup as ASS

extension CueMarkup {
    /// Cue text as ASS event text and the event's `Name` (the first `<v>` voice): override
    /// blocks as they are; SubRip and WebVTT tags as override tags; `{` and `}` of text as the
    /// full-width `｛` `｝`; a backslash before `N`, `n` or `h` in text gets a word joiner (U+2060).
    static func ass(_ text: String, loss: StylingLoss?) -> (name: String, text: String) {
        var name: String?
        var colours: [Int?] = []  // per open <font>/<c>: the colour it set, if any
        var faces: [String?] = []  // per open <font>: the face it set, if any
        var out: [String] = []
        for line in CueWriter.payloadLines(text) {
            var s = ""
            for piece in pieces(line) {
                switch piece {
                case .text(let t): s += assEscape(t)
                case .override(_, let raw): s += raw
                case .settings(let settings): s += alignmentBlock(webVTTSettings: settings, loss: loss)
                case .tag(let tag):
                    switch tag.name {
                    case "i", "b", "u", "s": s += "{\\\(tag.name)\(tag.isEnd ? 0 : 1)}"
                    case "font", "c":
                        if tag.isEnd {
                            // Back to the colour (face) of the tag still open, else the style's.
                            if let set = colours.popLast(), set != nil {
                                let restored = colours.last { $0 != nil } ?? nil
                                s += "{\\c\(restored.map(assColourText) ?? "")}"
                            }
                            if tag.name == "font", let set = faces.popLast(), set != nil {
                                let restored = faces.last { $0 != nil } ?? nil
                                s += "{\\fn\(restored ?? "")}"
                            }
                            continue
                        }
                        var colour: Int?
                        if tag.name == "c" {
                            colour = tag.classes.lazy.compactMap(webVTTColour).first
                            for c in tag.classes where webVTTColour(c) == nil { loss?.drop("WebVTT class .\(c)") }
                        } else {
                            colour = fontAttribute("color", in: tag.annotation).flatMap(htmlColour)
                            let face = fontAttribute("face", in: tag.annotation)
                            faces.append(face)
                            if let face { s += "{\\fn\(face)}" }
                            if fontAttribute("size", in: tag.annotation) != nil { loss?.drop("SubRip <font size>") }
                        }
                        colours.append(colour)
                        if let colour { s += "{\\c\(assColourText(colour))}" }
                    case "v":
                        guard !tag.isEnd else { continue }
                        if name == nil { name = tag.annotation } else if name != tag.annotation { loss?.drop("a second WebVTT voice <v>") }
                    default:
                        if !tag.isEnd { loss?.drop(webVTTTagKind(tag)) }
                    }
                }
            }
            out.append(s)
        }
        loss?.endCue()
        let field = (name ?? "").replacingOccurrences(of: ",", with: " ")
        return (field, out.joined(separator: "\\N"))
    }

    /// Plain text as ASS event text: ``assEscape(_:)`` for each line, lines joined by `\N`.
    static func assPlain(_ text: String) -> String {
        CueWriter.payloadLines(text).map(assEscape).joined(separator: "\\N")
    }

    /// Text for ASS: braces full-width, a backslash before N, n or h followed by a word joiner.
    static func assEscape(_ text: String) -> String {
        var out = ""
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            let next = text.index(after: i)
            switch c {
            case "{": out += "｛"
            case "}": out += "｝"
            case "\\":
                out += "\\"
                if next < text.endIndex, "Nnh".contains(text[next]) { out += "\u{2060}" }
            default: out.append(c)
            }
            i = next
        }
        return out
    }
}
