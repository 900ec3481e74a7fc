import Foundation

// Text encodings of annotation files: AnnotationReader.TextDecoder.

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
