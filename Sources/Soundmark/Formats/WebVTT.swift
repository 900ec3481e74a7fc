import Foundation

// W3C WebVTT (.vtt): read by AnnotationReader.WebVTTParser, written by CueWriter.webVTT, stored markup translated by CueMarkup.webVTT.

// MARK: - Reading (WebVTT)

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

// MARK: - Writing (WebVTT)

extension CueWriter {
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

// MARK: - Stored markup as WebVTT

extension CueMarkup {
    /// The kind name of a dropped override tag: `ASS override \pos`.
    static func overrideKind(_ name: String) -> String { "ASS override \\\(name)" }

    /// Cue text as WebVTT: the cue settings (from the settings block, else from the first
    /// `\an`) and the payload lines, escaped (W3C WebVTT §4.2.2): `&` stays when it starts a
    /// character reference, else `&amp;`; `<` and `>` of text become `&lt;` `&gt;`.
    static func webVTT(_ text: String, loss: StylingLoss?) -> (settings: String, lines: [String]) {
        var settings: String?
        var alignment: Int?
        var fonts: [Bool] = []  // per open <font>: whether it became a <c>
        var open: Set<String> = []  // i, b, u opened by override tags
        var colourOpen = false  // a <c> opened by \c
        var drawing = false  // in an ASS drawing's commands
        var out: [String] = []
        for line in CueWriter.payloadLines(text) {
            var s = ""
            for piece in pieces(line) {
                switch piece {
                case .text(let t): if !drawing { s += CueWriter.escapeWebVTTText(t) }
                case .settings(let v): settings = settings ?? v
                case .tag(let tag):
                    switch tag.name {
                    case "s": if !tag.isEnd { loss?.drop("strike-through <s>") }
                    case "i", "b", "u": s += tag.isEnd ? "</\(tag.name)>" : "<\(tag.name)>"
                    case "font":
                        if tag.isEnd {
                            if fonts.popLast() == true { s += "</c>" }
                            continue
                        }
                        let colour = fontAttribute("color", in: tag.annotation).flatMap(htmlColour)
                        let name = colour.flatMap(webVTTClass)
                        fonts.append(name != nil)
                        if let name { s += "<c.\(name)>" } else if colour != nil { loss?.drop("colour other than the WebVTT default colours") }
                        for attribute in ["face", "size"] where fontAttribute(attribute, in: tag.annotation) != nil {
                            loss?.drop("SubRip <font \(attribute)>")
                        }
                    default: s += tag.raw
                    }
                case .override(let tags, _):
                    for t in tags {
                        switch t.name {
                        case "an": if alignment == nil, let n = Int(t.argument), (1...9).contains(n) { alignment = n }
                        case "i", "b", "u":
                            let on = (Int(t.argument) ?? 0) != 0
                            if on && !open.contains(t.name) { s += "<\(t.name)>"; open.insert(t.name) }
                            if !on && open.contains(t.name) { s += "</\(t.name)>"; open.remove(t.name) }
                        case "c", "1c":
                            if colourOpen { s += "</c>"; colourOpen = false }
                            guard !t.argument.isEmpty else { continue }
                            if let name = assColour(t.argument).flatMap(webVTTClass) {
                                s += "<c.\(name)>"; colourOpen = true
                            } else {
                                loss?.drop("colour other than the WebVTT default colours")
                            }
                        case "p":
                            drawing = isDrawing(after: [t], drawing)
                            if drawing { loss?.drop(drawingKind) }
                        default: loss?.drop(overrideKind(t.name))
                        }
                    }
                }
            }
            if !AnnotationReader.isBlank(s) { out.append(s) }
        }
        loss?.endCue()
        return (settings ?? alignment.map { webVTTSettings(alignment: $0) } ?? "", out)
    }

    /// Plain text as WebVTT payload lines: every `&`, `<` and `>` as `&amp;`, `&lt;`, `&gt;`
    /// (a title `<b>Live</b>` is `&lt;b&gt;Live&lt;/b&gt;`, `R&amp;B` is `R&amp;amp;B`).
    static func webVTTPlain(_ text: String) -> [String] {
        CueWriter.payloadLines(text).map { CueWriter.escapeWebVTTText($0, keepingReferences: false) }
    }
}
