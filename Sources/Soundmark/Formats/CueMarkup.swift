import Foundation

/// The styling held in cue and annotation text, and its translation into each subtitle format.
///
/// Stored text (``Annotation/text``, ``Cue/text``) is SubRip-flavoured markup, the de-facto SRT
/// convention, with a few WebVTT extensions:
/// - HTML-like tags `<i> <b> <u> <s> <font color=… face=… size=…>` and their end tags;
/// - ASS override blocks `{\…}` (`{\an8}`, `{\pos(10,20)}`, `{\c&H00FFFF&}`, …);
/// - the WebVTT tags `<c.class>`, `<v Name>`, `<lang xx>`, `<ruby>`, `<rt>` and timestamp tags
///   `<00:01.000>`;
/// - WebVTT cue settings as a block `{vtt line:0 align:left}` at the start of the text (what a
///   WebVTT cue's timing line held after the end time).
///
/// Only these are markup: any other `<…>` or `{…}` is text (`Track <1>` keeps its `<1>`).
/// Tags do not span lines.
///
/// Each writer carries what its format can express and translates or drops the rest (see
/// ``CueWriter``); what it drops is counted in a ``StylingLoss`` per kind:
/// - `{\an1…9}` ↔ WebVTT `line` and `align` settings (top row `line:0`, middle row
///   `line:50%,center`, left column `align:left`, right column `align:right`; back: `line`
///   as a line number ≥ 0 or a percentage below ⅓ is the top row, ⅓…⅔ the middle, else the bottom);
/// - `<font color>`, `<c.yellow>` and `{\c&HBBGGRR&}` are one colour: WebVTT has classes for
///   its eight default colours only (white, lime, cyan, red, yellow, magenta, blue, black);
/// - `<v Bob>` is an ASS event's `Name` field;
/// - `<i> <b> <u> <s>` ↔ `{\i1}` `{\b1}` `{\u1}` `{\s1}` (and their ends).
public enum CueMarkup {
    /// One piece of a line of stored text.
    enum Piece: Equatable {
        /// Text to show (may hold `<`, `{`, `&` that are not markup).
        case text(String)
        /// A recognised `<…>` tag.
        case tag(Tag)
        /// An ASS override block `{\…}`: its tags and the block as written.
        case override([OverrideTag], raw: String)
        /// The WebVTT cue settings block `{vtt …}`: the settings.
        case settings(String)
    }

    /// A recognised `<…>` tag.
    struct Tag: Equatable {
        /// The tag as written.
        var raw: String
        /// Lower-cased name: `i`, `b`, `u`, `s`, `font`, `c`, `v`, `lang`, `ruby`, `rt`, or
        /// `timestamp` for `<00:01.000>`.
        var name: String
        var isEnd: Bool
        /// WebVTT classes (`<c.yellow.bg_black>`: `yellow`, `bg_black`).
        var classes: [String]
        /// What follows the name and classes after white space (`<v Bob>`: `Bob`; `<font color=red>`: `color=red`).
        var annotation: String
    }

    /// One tag of an override block: `\pos(10,20)` is name `pos`, argument `(10,20)`.
    struct OverrideTag: Equatable {
        var name: String
        var argument: String
    }

    /// The override tag names of ASS (libass), longest first where one is a prefix of another,
    /// so that `\fnArial` is `fn` + `Arial` and `\bord2` is `bord` + `2`.
    static let overrideNames: [String] = [
        "xbord", "ybord", "xshad", "yshad", "iclip", "alpha", "fscx", "fscy", "fade", "move", "blur", "bord", "clip",
        "shad", "fad", "fax", "fay", "frx", "fry", "frz", "fsp", "org", "pos", "pbo", "an", "be", "fe", "fn", "fr",
        "fs", "kf", "ko", "1c", "2c", "3c", "4c", "1a", "2a", "3a", "4a", "a", "b", "c", "i", "k", "K", "p", "q", "r",
        "s", "t", "u",
    ]

    /// Where a WebVTT `line` percentage changes ASS row, percent of the video height from the
    /// top: below `top` is the top row, up to `bottom` the middle row, beyond it the bottom row
    /// (the screen in thirds, as the numpad layout of `\an` divides it).
    static let rowBoundaries = (top: 100.0 / 3, bottom: 200.0 / 3)

    /// The prefix of the WebVTT cue settings block.
    static let settingsPrefix = "{vtt "

    /// WebVTT's default text colour classes and their colours (`0xRRGGBB`, W3C WebVTT §7.2.2).
    static let webVTTColours: [(name: String, rgb: Int)] = [
        ("white", 0xFFFFFF), ("lime", 0x00FF00), ("cyan", 0x00FFFF), ("red", 0xFF0000),
        ("yellow", 0xFFFF00), ("magenta", 0xFF00FF), ("blue", 0x0000FF), ("black", 0x000000),
    ]

    /// HTML colour names a SubRip `<font color>` may use (HTML 4's sixteen and their CSS aliases).
    static let htmlColours: [String: Int] = [
        "white": 0xFFFFFF, "silver": 0xC0C0C0, "gray": 0x808080, "grey": 0x808080, "black": 0x000000,
        "red": 0xFF0000, "maroon": 0x800000, "yellow": 0xFFFF00, "olive": 0x808000, "lime": 0x00FF00,
        "green": 0x008000, "aqua": 0x00FFFF, "cyan": 0x00FFFF, "teal": 0x008080, "blue": 0x0000FF,
        "navy": 0x000080, "fuchsia": 0xFF00FF, "magenta": 0xFF00FF, "purple": 0x800080,
    ]

    /// The text without markup, on one line (line breaks become spaces): for plain-text outputs
    /// (Audacity labels, CUE sheet titles). Text that is not markup (`Track <1>`) stays; the
    /// commands of an ASS drawing (``isDrawing(after:_:)``) are markup and go.
    public static func plainText(_ text: String) -> String {
        var drawing = false
        return AnnotationReader.LineSplitter.split(text).map { line in
            pieces(line).map { piece -> String in
                switch piece {
                case .text(let t): return drawing ? "" : t
                case .override(let tags, _): drawing = isDrawing(after: tags, drawing); return ""
                default: return ""
                }
            }.joined()
        }.joined(separator: " ")
    }

    /// Whether the text after an override block with `tags` is the commands of an ASS drawing
    /// (`{\p1}m 0 0 l 100 0 100 100{\p0}`: from `\p` with a scale of 1 or more to `\p0` or
    /// the cue's end), given whether the text before it was.
    static func isDrawing(after tags: [OverrideTag], _ before: Bool) -> Bool {
        tags.reduce(before) { drawing, tag in tag.name == "p" ? (Int(tag.argument) ?? 0) > 0 : drawing }
    }

    /// The kind name of dropped ASS drawings (their `\p` tags and commands), as ``StylingLoss`` says it.
    static let drawingKind = "ASS drawing {\\p1}…{\\p0}"

    /// `text` with each WebVTT timestamp tag (`<00:00:03.000>`, reference time) moved by
    /// `map` (into recording time) and written `<hh:mm:ss.mmm>`; everything else unchanged.
    public static func retimingTimestamps(_ text: String, _ map: (Double) -> Double) -> String {
        guard text.contains("<") else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let parts = pieces(String(line))
            guard parts.contains(where: { if case .tag(let t) = $0 { return t.name == "timestamp" } else { return false } }) else {
                return String(line)
            }
            return parts.map { piece -> String in
                switch piece {
                case .text(let t): return t
                case .override(_, let raw): return raw
                case .settings(let v): return settingsPrefix + v + "}"
                case .tag(let tag):
                    guard tag.name == "timestamp", let t = AnnotationReader.TimingParser.timestamp(tag.raw.dropFirst().dropLast()) else {
                        return tag.raw
                    }
                    return "<" + CueWriter.clock(map(t), separator: ".") + ">"
                }
            }.joined()
        }.joined(separator: "\n")
    }

    /// Whether `text` holds any markup.
    static func hasMarkup(_ text: String) -> Bool {
        AnnotationReader.LineSplitter.split(text).contains { line in
            pieces(line).contains { if case .text = $0 { return false } else { return true } }
        }
    }

    /// WebVTT's cue setting names (W3C WebVTT §4.4): a `{vtt …}` block is cue settings only when
    /// every word in it is one of them with a value (`line:0`); `{vtt is cool}` in a subtitle's
    /// text is text.
    static let cueSettingNames: Set<Substring> = ["vertical", "line", "position", "size", "align", "region"]

    /// Whether `raw` (`{…}`, at the start of a cue's first line) is the stored cue settings block.
    static func isSettingsBlock(_ raw: String) -> Bool {
        guard raw.hasPrefix(settingsPrefix), raw.hasSuffix("}") else { return false }
        let words = raw.dropFirst(settingsPrefix.count).dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
        return !words.isEmpty && words.allSatisfy { word in
            guard let colon = word.firstIndex(of: ":"), colon != word.startIndex, word.index(after: colon) != word.endIndex else { return false }
            return cueSettingNames.contains(word[..<colon])
        }
    }

    /// Splits one line of stored text into text and markup.
    static func pieces(_ line: String) -> [Piece] {
        let s = Array(line.unicodeScalars)
        var out: [Piece] = []
        var text = String.UnicodeScalarView()
        func flush() {
            if !text.isEmpty { out.append(.text(String(text))); text = .init() }
        }
        var i = 0
        while i < s.count {
            if s[i] == "<", let n = tagLength(s, i) {
                flush()
                out.append(.tag(tag(String(String.UnicodeScalarView(s[i..<i + n])))))
                i += n
            } else if s[i] == "{", let close = s[i...].firstIndex(of: "}") {
                let raw = String(String.UnicodeScalarView(s[i...close]))
                if i + 1 < close, s[i + 1] == "\\" {
                    flush()
                    out.append(.override(overrideTags(String(String.UnicodeScalarView(s[(i + 1)..<close]))), raw: raw))
                    i = close + 1
                } else if i == 0, isSettingsBlock(raw) {
                    flush()
                    out.append(.settings(String(raw.dropFirst(settingsPrefix.count).dropLast())
                        .trimmingCharacters(in: .whitespaces)))
                    i = close + 1
                } else {
                    text.append(s[i]); i += 1
                }
            } else {
                text.append(s[i]); i += 1
            }
        }
        flush()
        return out
    }

    /// SubRip's simple tags, recognised in either case (`<I>` too, as SubRip players do).
    static let subRipTags: Set<String> = ["<i>", "</i>", "<b>", "</b>", "<u>", "</u>", "<s>", "</s>"]

    /// Length of a recognised tag starting at `i` (a WebVTT tag, a SubRip `<font>`, or `<i>`
    /// `<b>` `<u>` `<s>` in either case), else nil.
    static func tagLength(_ s: [Unicode.Scalar], _ i: Int) -> Int? {
        if let n = CueWriter.tagLength(s, i) { return n }
        for n in 3...4 where i + n <= s.count {
            if subRipTags.contains(String(String.UnicodeScalarView(s[i..<i + n])).lowercased()) { return n }
        }
        return nil
    }

    static func tag(_ raw: String) -> Tag {
        var body = raw.dropFirst().dropLast()
        if body.first?.isNumber == true {
            return Tag(raw: raw, name: "timestamp", isEnd: false, classes: [], annotation: "")
        }
        let isEnd = body.first == "/"
        if isEnd { body = body.dropFirst() }
        let space = body.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? body.endIndex
        let head = body[..<space].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let annotation = body[space...].trimmingCharacters(in: .whitespaces)
        return Tag(raw: raw, name: head[0].lowercased(), isEnd: isEnd, classes: Array(head.dropFirst()), annotation: annotation)
    }

    /// The tags of an override block's inside (`\an8\pos(1,2)`); `\t(…\fs20)` stays one tag.
    static func overrideTags(_ inside: String) -> [OverrideTag] {
        var tags: [OverrideTag] = []
        var current: String?
        var depth = 0
        for c in inside {
            if c == "\\" && depth == 0 {
                if let t = current { tags.append(overrideTag(t)) }
                current = ""
                continue
            }
            if c == "(" { depth += 1 } else if c == ")" { depth = max(0, depth - 1) }
            current?.append(c)
        }
        if let t = current { tags.append(overrideTag(t)) }
        return tags
    }

    static func overrideTag(_ body: String) -> OverrideTag {
        let name = overrideNames.first { body.hasPrefix($0) } ?? String(body.prefix { $0.isLetter })
        return OverrideTag(name: name, argument: String(body.dropFirst(name.count)).trimmingCharacters(in: .whitespaces))
    }

    // MARK: Colours

    /// The colour `0xRRGGBB` of a `<font color=…>` annotation (`color="#ff0", color=red`), nil without one.
    static func fontAttribute(_ name: String, in annotation: String) -> String? {
        let pattern = name + #"\s*=\s*("([^"]*)"|'([^']*)'|([^\s"']+))"#
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]),
              let m = regex.firstMatch(in: annotation, range: NSRange(annotation.startIndex..., in: annotation)) else { return nil }
        for group in 2...4 {
            if let r = Range(m.range(at: group), in: annotation) { return String(annotation[r]) }
        }
        return nil
    }

    /// `#RRGGBB`, `#RGB` or an HTML colour name as `0xRRGGBB`.
    static func htmlColour(_ value: String) -> Int? {
        let v = value.trimmingCharacters(in: .whitespaces).lowercased()
        if let named = htmlColours[v] { return named }
        let hex = v.hasPrefix("#") ? String(v.dropFirst()) : v
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        if hex.count == 6 { return Int(hex, radix: 16) }
        if hex.count == 3, let n = Int(hex, radix: 16) {
            let r = n >> 8 & 0xF, g = n >> 4 & 0xF, b = n & 0xF
            return (r * 17) << 16 | (g * 17) << 8 | b * 17
        }
        return nil
    }

    /// The colour `0xRRGGBB` of an ASS colour argument `&HBBGGRR&` (or `&HAABBGGRR&`).
    static func assColour(_ argument: String) -> Int? {
        var v = argument.uppercased()
        guard v.hasPrefix("&H") else { return nil }
        v = String(v.dropFirst(2).prefix { $0 != "&" })
        guard !v.isEmpty, v.count <= 8, let n = Int(v, radix: 16) else { return nil }
        return (n & 0xFF) << 16 | (n & 0xFF00) | (n >> 16 & 0xFF)
    }

    /// `&HBBGGRR&` for `0xRRGGBB`.
    static func assColourText(_ rgb: Int) -> String {
        let bgr = (rgb & 0xFF) << 16 | (rgb & 0xFF00) | (rgb >> 16 & 0xFF)
        return "&H" + String(format: "%06X", bgr) + "&"
    }

    /// `#rrggbb` for `0xRRGGBB`.
    static func htmlColourText(_ rgb: Int) -> String { "#" + String(format: "%06x", rgb) }

    /// The WebVTT default colour class of `0xRRGGBB`, if it is one.
    static func webVTTClass(_ rgb: Int) -> String? { webVTTColours.first { $0.rgb == rgb }?.name }

    /// The colour of a WebVTT default colour class.
    static func webVTTColour(_ name: String) -> Int? { webVTTColours.first { $0.name == name.lowercased() }?.rgb }

    // MARK: Alignment

    /// WebVTT cue settings for ASS alignment `\an1…9` (numpad layout; 2, bottom centre, is none).
    static func webVTTSettings(alignment n: Int) -> String {
        var parts: [String] = []
        switch (n - 1) / 3 {
        case 2: parts.append("line:0")
        case 1: parts.append("line:50%,center")
        default: break
        }
        switch (n - 1) % 3 {
        case 0: parts.append("align:left")
        case 2: parts.append("align:right")
        default: break
        }
        return parts.joined(separator: " ")
    }

    /// The ASS alignment (`\an1…9`) of WebVTT cue settings, and the settings it cannot express
    /// (`position`, `size`, `vertical`, `region`; by name).
    static func alignment(webVTTSettings settings: String) -> (alignment: Int, lost: [String]) {
        var row = 0, column = 1  // bottom, centre
        var lost: [String] = []
        for setting in settings.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            guard let colon = setting.firstIndex(of: ":") else { continue }
            let name = setting[..<colon], value = setting[setting.index(after: colon)...]
            switch name {
            case "line":
                let position = value.split(separator: ",").first.map(String.init) ?? ""
                if position.hasSuffix("%"), let p = Double(position.dropLast()) {
                    row = p < rowBoundaries.top ? 2 : p <= rowBoundaries.bottom ? 1 : 0
                } else if let line = Int(position) {
                    row = line >= 0 ? 2 : 0
                }
            case "align":
                switch value {
                case "left", "start": column = 0
                case "right", "end": column = 2
                default: column = 1
                }
            default:
                lost.append(String(name))
            }
        }
        return (row * 3 + column + 1, lost)
    }
}

/// What a ``CueWriter`` could not express in its format: each kind of styling it dropped and in
/// how many cues. One instance collects across all cues of one output.
public final class StylingLoss {
    /// The output format's name, as messages say it (`WebVTT`, `SubRip`, `ASS`, `Audacity labels`).
    public let format: String
    /// Kinds in the order first met (`\pos`, `<v> voice`, `cue setting position` …).
    public private(set) var kinds: [String] = []
    /// For each kind, the number of cues it was dropped from.
    public private(set) var cueCounts: [String: Int] = [:]
    private var current: [String] = []  // kinds dropped from the cue being written, in order

    /// Creates an empty record for output in `format`.
    public init(format: String) { self.format = format }

    /// One line per kind: `ASS override \pos has no WebVTT form: dropped from 2 cue(s)`.
    public var messages: [String] {
        kinds.map { "\($0) has no \(format) form: dropped from \(cueCounts[$0] ?? 0) cue(s)" }
    }

    func drop(_ kind: String) { if !current.contains(kind) { current.append(kind) } }

    /// Ends one cue: each kind it dropped counts once.
    func endCue() {
        for kind in current {
            if cueCounts[kind] == nil { kinds.append(kind) }
            cueCounts[kind, default: 0] += 1
        }
        current = []
    }
}

// MARK: - Translation shared by the formats

// Each format's translation is an extension of this type in that format's file.

extension CueMarkup {
    /// `{\anN}` for WebVTT cue settings (nothing for bottom centre); the settings it cannot
    /// express are counted in `loss`.
    static func alignmentBlock(webVTTSettings settings: String, loss: StylingLoss?) -> String {
        let (an, lost) = alignment(webVTTSettings: settings)
        for setting in lost { loss?.drop("WebVTT cue setting \(setting)") }
        return an == 2 ? "" : "{\\an\(an)}"
    }

    /// The kind name of a WebVTT tag no other format has.
    static func webVTTTagKind(_ tag: Tag) -> String {
        switch tag.name {
        case "v": return "WebVTT voice <v>"
        case "timestamp": return "WebVTT timestamp tag"
        default: return "WebVTT <\(tag.name)>"
        }
    }
}
