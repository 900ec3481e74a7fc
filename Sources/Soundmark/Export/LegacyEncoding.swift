#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Legacy (pre-Unicode) text encodings of subtitle files, decoded with the C library's
/// `iconv` (glibc), and a detector that picks the most plausible one.
///
/// Detection decodes the bytes strictly with every candidate and scores each text: non-ASCII
/// letters of one script count for it, and for Latin text only the letters of one language's
/// alphabet (Czech, Polish, French, German…) count fully; C1 controls, symbols and letters
/// whose case flips inside a word (`ÏðÈâ`, the mark of a wrong code page) count against it.
public enum LegacyEncoding {
    /// The encodings tried by detection, with the names `--encoding` accepts (iconv names).
    public static let candidates: [String] = [
        "CP1252", "CP1250", "CP1251", "CP1253", "CP1254", "CP1255", "CP1256", "CP1257", "KOI8-R",
        "ISO-8859-2", "CP949", "SHIFT_JIS", "GB18030", "BIG5",
    ]

    /// Names accepted for each candidate (lowercased), besides the iconv name itself.
    static let aliases: [String: String] = [
        "windows-1250": "CP1250", "windows-1251": "CP1251", "windows-1252": "CP1252", "windows-1253": "CP1253",
        "windows-1254": "CP1254", "windows-1255": "CP1255", "windows-1256": "CP1256", "windows-1257": "CP1257",
        "latin1": "ISO-8859-1", "latin2": "ISO-8859-2", "euc-kr": "CP949", "uhc": "CP949", "ks_c_5601-1987": "CP949",
        "sjis": "SHIFT_JIS", "shift-jis": "SHIFT_JIS", "cp932": "CP932", "gbk": "GB18030", "gb2312": "GB18030",
        "big5": "BIG5", "koi8r": "KOI8-R",
    ]

    /// The iconv name for a user-given encoding name (`cp1250`, `windows-1256`, `euc-kr`…),
    /// or `nil` when iconv does not know it.
    public static func iconvName(_ name: String) -> String? {
        let upper = aliases[name.lowercased()] ?? name.uppercased()
        guard let cd = open(upper) else { return nil }
        iconv_close(cd)
        return upper
    }

    private static func open(_ name: String) -> iconv_t? {
        let cd = iconv_open("UTF-8", name)
        return cd == iconv_t(bitPattern: -1) ? nil : cd
    }

    /// Decodes `bytes` strictly: `nil` when `encoding` (an iconv name) is unknown or a byte
    /// sequence is invalid or undefined in it.
    public static func decode(_ bytes: [UInt8], as encoding: String) -> String? {
        guard let cd = open(encoding) else { return nil }
        defer { iconv_close(cd) }
        if bytes.isEmpty { return "" }
        var input = bytes
        var output = [UInt8](repeating: 0, count: bytes.count * 4 + 16)
        let capacity = output.count
        let written: Int? = input.withUnsafeMutableBufferPointer { inBuf -> Int? in
            output.withUnsafeMutableBufferPointer { outBuf -> Int? in
                var inPtr: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(inBuf.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var outPtr: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(outBuf.baseAddress)?.assumingMemoryBound(to: CChar.self)
                var inLeft = inBuf.count, outLeft = capacity
                let r = iconv(cd, &inPtr, &inLeft, &outPtr, &outLeft)
                guard r != -1 && inLeft == 0 else { return nil }
                // Flush: CP1255 (and CP1258) hold the last letter back for a combining mark that may
                // follow; without this a text ending in a Hebrew letter lost it ("שלום" read "שלו").
                guard iconv(cd, nil, nil, &outPtr, &outLeft) != -1 else { return nil }
                return capacity - outLeft
            }
        }
        guard let written else { return nil }
        return String(decoding: output.prefix(written), as: UTF8.self)
    }

    /// Alphabets (non-ASCII lowercase letters) of languages written in Latin-script code pages.
    static let latinAlphabets: [Set<Character>] = [
        "áčďéěíňóřšťúůýž", "áäčďéíĺľňóôŕšťúýž", "ąćęłńóśźż", "áéíóöőúüű", "čćđšž", "ăâîșşțţ",
        "àâæçéèêëîïôœùûüÿ", "äöüß", "áéíñóúü", "áâãàçéêíóôõú", "àèéìíîòóùú", "åäöæøé", "áðéíóúýþæö",
        "çğıöşüâî", "āčēģīķļņšūž", "ąčęėįšųūž", "äöõšž",
    ].map { Set($0) }

    /// Greek or Cyrillic letters all in one case from which the text is taken for another
    /// script's bytes (count): 4, a short word (Hebrew "שלום" is 4); shorter text has too few letters to say.
    static let caselessLetters = 4
    /// The share of their count that Greek or Cyrillic letters all in one case (``caselessLetters``
    /// or more) lose in ``score(_:)`` (fraction, 0.2): enough to rank that reading under a
    /// caseless script's reading of the same bytes, little enough that it stays plausible alone.
    static let oneCaseLetterPenalty = 0.2

    /// Plausibility of decoded text, about −2…1 (1: every non-ASCII character is a letter of
    /// one script, Latin letters from one language's alphabet, no case flips inside words).
    static func score(_ text: String) -> Double {
        var nonASCII = 0, bad = 0, flips = 0, capitals = 0
        var scripts: [String: Int] = [:]
        var latin: [Character] = []
        var previousLower = false
        var previousScript: String?          // script of the previous letter in this word
        var lastIdeograph = false, spaceSince = false
        for ch in text {
            guard let u = ch.unicodeScalars.first else { continue }
            let v = u.value
            let isLetter = u.properties.isAlphabetic
            if isLetter && previousLower && u.properties.isUppercase && v >= 0x80 { flips += 1 }
            if isLetter && u.properties.isUppercase && v >= 0x80 { capitals += 1 }
            previousLower = isLetter && u.properties.isLowercase
            let ideograph = (0x4E00...0x9FFF).contains(v)
            if ideograph && lastIdeograph && spaceSince { bad += 1 }  // Chinese and Japanese do not space ideographs
            if ch == " " { spaceSince = true } else if !ch.isWhitespace { lastIdeograph = ideograph; spaceSince = false }
            var script = "other"
            if isLetter {
                switch v {
                case 0x41...0x5A, 0x61...0x7A, 0x00C0...0x024F, 0x1E00...0x1EFF: script = "latin"
                case 0x0370...0x03FF: script = "greek"
                case 0x0400...0x04FF: script = "cyrillic"
                case 0x0590...0x05FF: script = "hebrew"
                case 0x0600...0x06FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: script = "arabic"
                case 0x0E00...0x0E7F: script = "thai"
                case 0xAC00...0xD7A3, 0x1100...0x11FF, 0x3130...0x318F: script = "hangul"
                case 0x3040...0x30FF, 0x4E00...0x9FFF, 0x3400...0x4DBF: script = "cjk"
                default: script = "other"
                }
                // A word mixing scripts (`Pшнliљ`) is a wrong code page's mark.
                if let p = previousScript, p != script { flips += 1 }
                previousScript = script
            } else if u.properties.generalCategory != .nonspacingMark {
                previousScript = nil
            }
            guard v >= 0x80 else { continue }
            nonASCII += 1
            if isLetter {
                if script == "latin" { latin.append(Character(String(ch).lowercased())) }
                scripts[script, default: 0] += 1
            } else if "\u{00A0}“”‘’„–—…«»€°·•¡¿‹›§©®™±×÷½¼¾\u{200C}\u{200D}\u{200E}\u{200F}、。「」『』・！？（），：；《》〈〉【】".contains(ch)
                        || u.properties.generalCategory == .nonspacingMark {
                continue
            } else {
                bad += 1
            }
        }
        guard nonASCII > 0 else { return 1 }
        let dominant = scripts.max { $0.value < $1.value }
        // Greek and Cyrillic letters are all outside ASCII, and their text mixes cases (a capital
        // starts a sentence or a name): a run of them in one case only is more likely a caseless
        // script's bytes (Hebrew CP1255 puts its letters where CP1251 has lower case and KOI8-R
        // upper case). The score drops by a fifth: under a caseless reading of the same bytes,
        // still plausible alone.
        var good = Double(dominant?.value ?? 0)
        if let dominant, dominant.key == "cyrillic" || dominant.key == "greek",
           dominant.value >= caselessLetters, capitals == 0 || capitals == dominant.value { good -= oneCaseLetterPenalty * Double(dominant.value) }
        if dominant?.key == "latin", !latin.isEmpty {
            let coverage = latinAlphabets.map { alphabet in Double(latin.filter { alphabet.contains($0) }.count) }.max() ?? 0
            good = coverage
        }
        return (good - 2 * Double(bad) - 2 * Double(flips)) / Double(nonASCII)
    }

    /// The share of double-byte characters with a lead or trail byte below 0xA1: outside
    /// EUC-KR for CP949 (Microsoft's rarely used extra Hangul syllables) and outside GB2312 for
    /// GB18030 (rare ideographs) — high when the bytes are really Shift_JIS or Big5.
    static func extensionShare(_ bytes: [UInt8]) -> Double {
        var pairs = 0, extended = 0, i = 0
        while i < bytes.count {
            if bytes[i] >= 0x81, i + 1 < bytes.count {
                pairs += 1
                if bytes[i] < 0xA1 || bytes[i + 1] < 0xA1 { extended += 1 }
                i += 2
            } else {
                i += 1
            }
        }
        return pairs == 0 ? 0 : Double(extended) / Double(pairs)
    }

    /// The most plausible candidate for bytes that are not UTF-8: its name, the text, and
    /// whether the guess is doubtful (a low score, or a close runner-up giving other text).
    public static func detect(_ bytes: [UInt8]) -> (encoding: String, text: String, doubtful: Bool)? {
        var scored: [(name: String, text: String, score: Double)] = []
        for name in candidates {
            guard let text = decode(bytes, as: name) else { continue }
            var value = score(text)
            if name == "CP949" || name == "GB18030" { value -= 2 * extensionShare(bytes) }
            scored.append((name, text, value))
        }
        scored.sort { $0.score > $1.score }
        guard let best = scored.first else { return nil }
        let runnerUp = scored.dropFirst().first { $0.text != best.text }
        let doubtful = best.score < 0.6 || (runnerUp.map { best.score - $0.score < 0.1 } ?? false)
        return (best.name, best.text, doubtful)
    }
}
