import Foundation

// SubRip (.srt): read by AnnotationReader.SubRipParser, written by CueWriter.srt, stored markup translated by CueMarkup.subRip.

// MARK: - Reading (SubRip)

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

// MARK: - Writing (SubRip)

extension CueWriter {
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
}

// MARK: - Stored markup as SubRip

extension CueMarkup {
    /// Cue text as SubRip text: SubRip markup and override blocks as they are; the WebVTT
    /// settings block becomes `{\anN}`, `<c.colour>` a `<font color>`; other WebVTT markup
    /// is dropped (its text kept). ASS drawings are dropped, their commands and `\p` tags too
    /// (SubRip players show the commands as text).
    static func subRip(_ text: String, loss: StylingLoss?) -> [String] {
        var fonts: [Bool] = []  // per open <c>: whether it became a <font>
        var drawing = false
        var out: [String] = []
        for line in CueWriter.payloadLines(text) {
            var s = ""
            for piece in pieces(line) {
                switch piece {
                case .text(let t): if !drawing { s += t }
                case .override(let tags, let raw):
                    drawing = isDrawing(after: tags, drawing)
                    guard tags.contains(where: { $0.name == "p" }) else { s += raw; continue }
                    if tags.contains(where: { $0.name == "p" && (Int($0.argument) ?? 0) > 0 }) { loss?.drop(drawingKind) }
                    let kept = tags.filter { $0.name != "p" }
                    if !kept.isEmpty { s += "{" + kept.map { "\\" + $0.name + $0.argument }.joined() + "}" }
                case .settings(let settings): s += alignmentBlock(webVTTSettings: settings, loss: loss)
                case .tag(let tag):
                    switch tag.name {
                    case "i", "b", "u", "s", "font": s += tag.raw
                    case "c":
                        if tag.isEnd {
                            if fonts.popLast() == true { s += "</font>" }
                        } else {
                            let colour = tag.classes.lazy.compactMap(webVTTColour).first
                            fonts.append(colour != nil)
                            if let colour { s += "<font color=\"\(htmlColourText(colour))\">" }
                            for c in tag.classes where webVTTColour(c) == nil { loss?.drop("WebVTT class .\(c)") }
                        }
                    default:
                        if !tag.isEnd { loss?.drop(webVTTTagKind(tag)) }
                    }
                }
            }
            if !AnnotationReader.isBlank(s) { out.append(s) }
        }
        loss?.endCue()
        return out
    }

    /// Plain text as SubRip lines, shown as written: where a SubRip player (or soundmark's own
    /// reader) would see markup — a `<` that starts a tag (`<b>`, `<font …>`), a `{` that starts
    /// an override block `{\…}` or the cue settings block — a word joiner (U+2060, invisible)
    /// follows the `<` or `{`. SubRip has no escaping of its own.
    static func subRipPlain(_ text: String) -> [String] {
        CueWriter.payloadLines(text).map { line in
            let s = Array(line.unicodeScalars)
            var out = String.UnicodeScalarView()
            for (i, c) in s.enumerated() {
                out.append(c)
                let opensBlock = c == "{" && s[i...].contains("}")
                    && (i + 1 < s.count && s[i + 1] == "\\" || i == 0 && pieces(line).first.map(isSettings) == true)
                if c == "<" && tagLength(s, i) != nil || opensBlock { out.append("\u{2060}") }
            }
            return String(out)
        }
    }

    private static func isSettings(_ piece: Piece) -> Bool {
        if case .settings = piece { return true }
        return false
    }
}
