import CZlib
import Foundation

/// An error reading or writing a ShazamKit file: one line with the cause (the caller adds the file name).
public struct ShazamFormatError: Error, LocalizedError, Equatable, Sendable {
    /// The cause, one line.
    public let reason: String
    /// Creates an error with its cause.
    public init(_ reason: String) { self.reason = reason }
    /// The cause.
    public var errorDescription: String? { reason }
}

/// One spectral peak of a Shazam-format signature.
///
/// Shazam's peaks are computed at 16 kHz with a 2048-point FFT every 128 samples (one *pass*,
/// 8 ms); the frequency is the interpolated FFT bin stored ×64.
public struct ShazamPeak: Equatable, Hashable, Sendable {
    /// FFT pass number (8 ms each at 16 kHz) from the start of the audio.
    public var pass: Int
    /// Magnitude on Shazam's 16-bit log scale.
    public var magnitude: UInt16
    /// Interpolated FFT bin ×64 (2048-point FFT at 16 kHz: Hz = `correctedBin` / 64 × 16000 / 2048).
    public var correctedBin: UInt16

    /// Creates a peak from its stored fields.
    public init(pass: Int, magnitude: UInt16, correctedBin: UInt16) {
        self.pass = pass
        self.magnitude = magnitude
        self.correctedBin = correctedBin
    }

    /// Frequency in Hz.
    public var frequency: Double { Double(correctedBin) / 64 * 16000 / 2048 }
    /// Time of the pass in seconds (128 samples at 16 kHz per pass).
    public var time: Double { Double(pass) * 128 / 16000 }
}

/// A ShazamKit signature ("vnd.shazam.sig"): the peaks of four frequency bands plus the header
/// words Apple's and Shazam's writers store.
///
/// Layout (all little-endian): an optional 12-byte `.shazamsignature` prefix (u32 `0x25802580`,
/// u32 prefix version 1 or 2, u32 offset 12); a 48-byte header (u32 magic `0xCAFE2580`, u32
/// CRC-32 of every byte from offset 8 to the end, u32 length − 48, u32 SDK version word, 12
/// zero bytes, u32 sample-rate id << 27 at offset 28, 8 zero bytes, u32 sample count at offset
/// 40, u32 `0x007C0000`); a record `0x40000000` with the same length; then one record per band
/// (tag `0x60030040 + band`, u32 byte length, peak data padded with zeros to 4 bytes). Peak
/// data: u8 pass delta (255: a u32 absolute pass follows and stands alone), u16 magnitude,
/// u16 corrected bin.
public struct ShazamSignature: Equatable, Sendable {
    /// The band edges in Hz: 250–520, 520–1450, 1450–3500, 3500–5500.
    public static let bandEdges: [(low: Double, high: Double)] = [(250, 520), (520, 1450), (1450, 3500), (3500, 5500)]
    /// Sample rates by the header's id (index = id; 0 is unused).
    public static let sampleRates = [0, 8000, 11025, 16000, 32000, 44100, 48000]
    /// SDK version word written by ``dataRepresentation(prefixed:)`` by default (ShazamKit iOS 2021, Android 10.2.1).
    public static let defaultVersionWord: UInt32 = 0x9420_9C00

    /// Peaks per band (4 bands, see ``bandEdges``), each in pass order (as read: a file whose
    /// absolute pass numbers jump back is read in pass order, so that writing it back and reading
    /// it again gives the same peaks).
    public var bands: [[ShazamPeak]]
    /// The input's sample rate as the header records it (Hz; 16000 for Android files, often 44100 in Apple's).
    public var sampleRate: Int
    /// Length of the input in samples at ``sampleRate``.
    public var sampleCount: Int
    /// The header's SDK version word (offset 12).
    public var versionWord: UInt32
    /// The `.shazamsignature` prefix version (1 or 2), or `nil` for bare signature data.
    public var prefixVersion: UInt32?
    /// Whether the stored CRC-32 matched the data when read (always true for a signature built in memory).
    public var crcValid: Bool = true

    /// Creates a signature from its peaks.
    /// - Parameters:
    ///   - bands: four lists of peaks in pass order (missing bands are empty).
    ///   - sampleRate: the input rate recorded in the header (one of ``sampleRates``; default 16000).
    ///   - sampleCount: the input's length in samples at `sampleRate`.
    ///   - versionWord: the header's SDK version word (default ``defaultVersionWord``).
    ///   - prefixVersion: 1 or 2 for a `.shazamsignature` file, `nil` for bare data (default 1).
    public init(bands: [[ShazamPeak]], sampleRate: Int = 16000, sampleCount: Int,
                versionWord: UInt32 = ShazamSignature.defaultVersionWord, prefixVersion: UInt32? = 1) {
        var b = Array(bands.prefix(4))
        while b.count < 4 { b.append([]) }
        self.bands = b
        self.sampleRate = sampleRate
        self.sampleCount = sampleCount
        self.versionWord = versionWord
        self.prefixVersion = prefixVersion
    }

    /// The header's "no sample count" value (`0xFFFFFFFF`: the writer did not record the input's length).
    public static let unknownSampleCount = Int(UInt32.max)
    /// Whether the header records the input's length (``sampleCount`` is not ``unknownSampleCount``).
    public var sampleCountIsKnown: Bool { sampleCount != ShazamSignature.unknownSampleCount }
    /// Length of the input in seconds: ``sampleCount`` / ``sampleRate``, or, when the sample
    /// count is unknown, the end of the last peak's pass (passes of 8 ms; 0 without peaks).
    public var duration: Double {
        if sampleCountIsKnown { return Double(sampleCount) / Double(sampleRate) }
        let last = bands.compactMap { $0.map(\.pass).max() }.max()
        return last.map { Double($0 + 1) * 128 / 16000 } ?? 0
    }
    /// Every peak of every band with its band number, in pass order.
    public var allPeaks: [(band: Int, peak: ShazamPeak)] {
        bands.enumerated().flatMap { b, peaks in peaks.map { (b, $0) } }.sorted { $0.peak.pass < $1.peak.pass }
    }

    /// Whether `data` looks like Shazam signature data of any kind (prefixed, bare, data URI or
    /// a legacy layout), judged by its first bytes.
    public static func looksLike(_ data: Data) -> Bool {
        let b = Array(data.prefix(40))
        if b.count >= 8 {
            let w0 = le32(b, 0), w1 = le32(b, 4)
            if w0 == 0x2580_2580 || w0 == 0xCAFE_2580 || w1 == legacyMagic { return true }
        }
        return String(decoding: b, as: UTF8.self).lowercased().hasPrefix("data:audio/vnd.shazam.sig")
    }

    static let legacyMagic: UInt32 = 0x789A_BC05

    /// Reads a `.shazamsignature` file, bare "vnd.shazam.sig" data or a
    /// `data:audio/vnd.shazam.sig;base64,…` URI (surrounding white space allowed).
    /// - Parameters:
    ///   - data: the bytes.
    ///   - requireValidCRC: throw when the stored CRC-32 does not match (default true); with
    ///     false the signature is returned with ``crcValid`` false.
    /// - Throws: ``ShazamFormatError`` naming the cause: truncated or foreign data, a bad CRC, an
    ///   unknown sample-rate id, or a legacy layout (SDK 5–7 `0x789ABC05` files and SDK 5 "fat"
    ///   signatures, which are refused by name), a pass number beyond 32 bits.
    public init(data: Data, requireValidCRC: Bool = true) throws {
        var bytes = Array(data)
        let text = String(decoding: bytes.prefix(64), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.lowercased().hasPrefix("data:") {
            let uri = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let comma = uri.firstIndex(of: ","),
                  uri[..<comma].lowercased().replacingOccurrences(of: " ", with: "") == "data:audio/vnd.shazam.sig;base64" else {
                throw ShazamFormatError("data URI is not 'data:audio/vnd.shazam.sig;base64,…'")
            }
            guard let decoded = Data(base64Encoded: String(uri[uri.index(after: comma)...]), options: .ignoreUnknownCharacters) else {
                throw ShazamFormatError("data URI holds invalid base64")
            }
            bytes = Array(decoded)
        }
        try self.init(bytes: bytes, requireValidCRC: requireValidCRC)
    }

    private init(bytes: [UInt8], requireValidCRC: Bool) throws {
        guard bytes.count >= 8 else { throw ShazamFormatError("too short for a Shazam signature (\(bytes.count) bytes)") }
        var prefixVersion: UInt32? = nil
        var s = bytes[...]
        if ShazamSignature.le32(bytes, 0) == 0x2580_2580 {
            guard bytes.count >= 12 else { throw ShazamFormatError("truncated .shazamsignature prefix") }
            let version = ShazamSignature.le32(bytes, 4), offset = ShazamSignature.le32(bytes, 8)
            guard version == 1 || version == 2 else {
                throw ShazamFormatError(".shazamsignature prefix version \(version) (known: 1, 2)")
            }
            guard offset >= 12, Int(offset) <= bytes.count else {
                throw ShazamFormatError(".shazamsignature prefix offset \(offset) out of range")
            }
            prefixVersion = version
            s = bytes[Int(offset)...]
        }
        let b = Array(s)
        if b.count >= 8 && ShazamSignature.le32(b, 4) == ShazamSignature.legacyMagic {
            throw ShazamFormatError("legacy Shazam signature (SDK 5–7 layout, magic 0x789ABC05) is not supported; only the 'vnd.shazam.sig' format (magic 0xCAFE2580) is read")
        }
        guard ShazamSignature.le32(b, 0) == 0xCAFE_2580 else {
            throw ShazamFormatError(String(format: "not a Shazam signature (magic 0x%08X, expected 0xCAFE2580)", ShazamSignature.le32(b, 0)))
        }
        guard b.count >= 56 else { throw ShazamFormatError("truncated Shazam signature header (\(b.count) bytes)") }
        let storedCRC = ShazamSignature.le32(b, 4)
        let length = Int(ShazamSignature.le32(b, 8))
        guard length == b.count - 48 else {
            throw ShazamFormatError("Shazam signature length \(length + 48) bytes in its header, \(b.count) in the data (truncated or padded)")
        }
        let crc = b.withUnsafeBufferPointer { p in UInt32(crc32(0, p.baseAddress! + 8, uInt(p.count - 8))) }
        if crc != storedCRC && requireValidCRC {
            throw ShazamFormatError(String(format: "Shazam signature CRC-32 mismatch (stored 0x%08X, computed 0x%08X): the data is damaged", storedCRC, crc))
        }
        let rateID = Int(ShazamSignature.le32(b, 28) >> 27)
        var records: [(tag: UInt32, body: ArraySlice<UInt8>)] = []
        var p = 48
        guard ShazamSignature.le32(b, p) == 0x4000_0000 else {
            throw ShazamFormatError(String(format: "Shazam signature: record 0x%08X where 0x40000000 was expected", ShazamSignature.le32(b, p)))
        }
        p += 8
        while p < b.count {
            guard p + 8 <= b.count else { throw ShazamFormatError("truncated Shazam signature record at byte \(p)") }
            let tag = ShazamSignature.le32(b, p), n = Int(ShazamSignature.le32(b, p + 4))
            guard n <= b.count - p - 8 else { throw ShazamFormatError(String(format: "Shazam signature record 0x%08X longer than the data", tag)) }
            records.append((tag, b[(p + 8)..<(p + 8 + n)]))
            p += 8 + (n + 3) / 4 * 4
        }
        if records.contains(where: { $0.tag & 0xFFFF_0000 == 0x6002_0000 }) && !records.contains(where: { $0.tag & 0xFFFF_FFFC == 0x6003_0040 }) {
            throw ShazamFormatError(String(format: "legacy Shazam 'fat' signature (SDK 5 layout, record 0x%08X instead of four peak bands) is not supported",
                                          records.first { $0.tag & 0xFFFF_0000 == 0x6002_0000 }!.tag))
        }
        guard rateID >= 1 && rateID < ShazamSignature.sampleRates.count else {
            throw ShazamFormatError("Shazam signature sample-rate id \(rateID) is unknown (known: 1–6)")
        }
        var bands: [[ShazamPeak]] = [[], [], [], []]
        for record in records {
            let band = Int(record.tag) - 0x6003_0040
            guard (0..<4).contains(band) else { continue } // unknown records are skipped
            bands[band] = try ShazamSignature.peaks(Array(record.body), band: band)
        }
        self.init(bands: bands, sampleRate: ShazamSignature.sampleRates[rateID], sampleCount: Int(ShazamSignature.le32(b, 40)),
                  versionWord: ShazamSignature.le32(b, 12), prefixVersion: prefixVersion)
        crcValid = crc == storedCRC
    }

    private static func peaks(_ d: [UInt8], band: Int) throws -> [ShazamPeak] {
        var out: [ShazamPeak] = []
        var pass = 0, i = 0
        while i < d.count {
            let delta = d[i]
            if delta == 0xFF {
                guard i + 5 <= d.count else { throw ShazamFormatError("band \(band): truncated absolute pass at byte \(i)") }
                pass = Int(le32(d, i + 1))
                i += 5
                continue
            }
            // A pass number is a u32 wherever it is written: one that outgrows it cannot be written back.
            guard pass + Int(delta) <= Int(UInt32.max) else {
                throw ShazamFormatError("band \(band): pass number beyond 32 bits at byte \(i)")
            }
            // Zero padding at the end of a record is not a peak.
            guard i + 5 <= d.count else {
                if d[i...].allSatisfy({ $0 == 0 }) { break }
                throw ShazamFormatError("band \(band): truncated peak at byte \(i)")
            }
            pass += Int(delta)
            out.append(ShazamPeak(pass: pass, magnitude: UInt16(d[i + 1]) | UInt16(d[i + 2]) << 8,
                                  correctedBin: UInt16(d[i + 3]) | UInt16(d[i + 4]) << 8))
            i += 5
        }
        // An absolute pass may jump back: the band is kept in pass order (peaks of one pass in
        // the order written), as the writer writes it.
        return inPassOrder(out)
    }

    /// `peaks` in pass order, peaks of the same pass in their given order (a stable sort).
    static func inPassOrder(_ peaks: [ShazamPeak]) -> [ShazamPeak] {
        guard zip(peaks, peaks.dropFirst()).contains(where: { $0.pass > $1.pass }) else { return peaks }
        return peaks.enumerated().sorted { ($0.element.pass, $0.offset) < ($1.element.pass, $1.offset) }.map(\.element)
    }

    /// The signature as bytes: the 12-byte `.shazamsignature` prefix (version ``prefixVersion``,
    /// 1 when `nil`) when `prefixed`, then the "vnd.shazam.sig" data with its CRC-32. Pass
    /// deltas of 255 or more are written as a 255 escape and a u32 absolute pass, as Apple's
    /// and the Android SDK's writers do.
    /// - Parameter prefixed: write the `.shazamsignature` prefix (default true).
    public func dataRepresentation(prefixed: Bool = true) -> Data {
        var body = ByteWriter()
        for (band, peaks) in bands.enumerated() {
            var d = ByteWriter()
            var pass = 0
            for peak in ShazamSignature.inPassOrder(peaks) {
                if peak.pass - pass >= 255 || peak.pass < pass {
                    d.bytes.append(0xFF)
                    d.u32(UInt32(clamping: peak.pass))
                    pass = peak.pass
                }
                d.bytes.append(UInt8(peak.pass - pass))
                d.u16(peak.magnitude)
                d.u16(peak.correctedBin)
                pass = peak.pass
            }
            guard !d.bytes.isEmpty else { continue }
            body.u32(0x6003_0040 + UInt32(band))
            body.u32(UInt32(d.bytes.count))
            body.bytes += d.bytes
            while body.bytes.count % 4 != 0 { body.bytes.append(0) }
        }
        let length = UInt32(body.bytes.count + 8)
        var h = ByteWriter()
        h.u32(0xCAFE_2580)
        h.u32(0) // CRC, set below
        h.u32(length)
        h.u32(versionWord)
        h.u32(0); h.u32(0); h.u32(0)
        let rateID = ShazamSignature.sampleRates.firstIndex(of: sampleRate) ?? 3
        h.u32(UInt32(rateID) << 27)
        h.u32(0); h.u32(0)
        h.u32(UInt32(clamping: sampleCount))
        h.u32(0x007C_0000)
        h.u32(0x4000_0000)
        h.u32(length)
        var sig = h.bytes + body.bytes
        let crc = sig.withUnsafeBufferPointer { p in UInt32(crc32(0, p.baseAddress! + 8, uInt(p.count - 8))) }
        for k in 0..<4 { sig[4 + k] = UInt8((crc >> UInt32(8 * k)) & 0xFF) }
        guard prefixed else { return Data(sig) }
        var prefix = ByteWriter()
        prefix.u32(0x2580_2580)
        prefix.u32(prefixVersion ?? 1)
        prefix.u32(12)
        return Data(prefix.bytes + sig)
    }

    /// The `data:audio/vnd.shazam.sig;base64,…` URI of the bare signature data.
    public var dataURI: String { "data:audio/vnd.shazam.sig;base64," + dataRepresentation(prefixed: false).base64EncodedString() }

    static func le32<C: RandomAccessCollection>(_ b: C, _ i: Int) -> UInt32 where C.Element == UInt8, C.Index == Int {
        let s = b.startIndex + i
        guard s + 4 <= b.endIndex else { return 0 }
        return UInt32(b[s]) | UInt32(b[s + 1]) << 8 | UInt32(b[s + 2]) << 16 | UInt32(b[s + 3]) << 24
    }
}
