import CZlib
import Foundation

/// soundmark's own signature file (`.smsig`): the spectral peaks of some audio, enough to
/// identify or scan it against a catalog without the audio.
///
/// ShazamKit's flow: the signature is made where the audio is and only the signature travels.
/// The file holds peaks (frame, fractional bin to 1/64 bin, power to 0.01 dB), not audio: the phases and every
/// spectral value but a few local maxima per second are gone, so it cannot be turned back
/// into sound. Landmarks are rebuilt from the peaks when the file is read, as the generator
/// builds them from audio, so identify and scan give the result they give from the audio (the
/// rounding of bins and powers changes a landmark only where two values all but tie).
///
/// Layout (little-endian): magic `SMQF`; u16 file version (1); u16 fingerprint format version
/// (``Configuration/formatVersion``); u32 length and the ``Configuration`` as JSON; u8 number of
/// peak sets; then the peak sets, raw-DEFLATE compressed (u32 compressed length, u32 raw
/// length, data). Each set: u8 role (0 reference, 1 query), u32 samples skipped at the start
/// (its frame grid's shift), u64 samples analysed, u32 peak count, then per peak a varint frame
/// delta, the bin ×64 (u16: 1/64-bin steps) and the power in 1/100 dB (i16). Last, u32 CRC-32 (zlib) of every byte before it.
public struct SignatureFile: Equatable, Sendable {
    /// The 4-byte magic, `SMQF`.
    public static let magic: [UInt8] = Array("SMQF".utf8)
    /// The file layout version this build writes and reads.
    public static let fileVersion: UInt16 = 1

    /// The peaks of one analysis of the audio.
    public struct PeakSet: Equatable, Sendable {
        /// Reference analysis (for scan) or query analysis (for identify).
        public var role: SignatureGenerator.Role
        /// Samples dropped at the start before analysis (the frame grid's shift; see
        /// ``SignatureGenerator/framings(_:configuration:role:)``).
        public var skippedSamples: Int
        /// Samples analysed, at the configuration's sample rate.
        public var sampleCount: Int64
        /// The peaks in frame order.
        public var peaks: [Peak]
        /// Creates a peak set.
        public init(role: SignatureGenerator.Role, skippedSamples: Int, sampleCount: Int64, peaks: [Peak]) {
            self.role = role
            self.skippedSamples = skippedSamples
            self.sampleCount = sampleCount
            self.peaks = peaks
        }
    }

    /// The configuration the peaks were made with.
    public var configuration: Configuration
    /// The peak sets: one reference analysis, then the query framings in order.
    public var sets: [PeakSet]

    /// Creates a file from its parts.
    public init(configuration: Configuration, sets: [PeakSet]) {
        self.configuration = configuration
        self.sets = sets
    }

    /// Length of the audio in seconds (of the plain analysis).
    public var duration: Double {
        Double(sets.first { $0.skippedSamples == 0 }?.sampleCount ?? 0) / Double(configuration.sampleRate)
    }

    /// Decodes media once and keeps the peaks of one reference analysis and `framings` query
    /// analyses (frame grids `1 / framings` hop apart), as identify and scan would make them.
    /// - Parameters:
    ///   - decoder: an opened decoder whose output rate is `configuration.sampleRate`.
    ///   - configuration: the analysis parameters (use the catalog's).
    ///   - framings: query frame grids (default ``Matcher/framings``).
    /// - Throws: ``MediaDecodingError`` when the input cannot be read.
    public static func make(decoding decoder: MediaDecoder, configuration: Configuration = Configuration(),
                            framings: Int = Matcher.framings) throws -> SignatureFile {
        let count = max(1, framings)
        var analyses: [PeakAnalysis] = [PeakAnalysis(configuration: configuration, role: .reference, skipping: 0)]
        analyses += (0..<count).map {
            PeakAnalysis(configuration: configuration, role: .query, skipping: $0 * configuration.hopLength / count)
        }
        while let chunk = try decoder.nextChunk() {
            chunk.samples.withUnsafeBufferPointer { p in for a in analyses { a.append(p) } }
        }
        return SignatureFile(configuration: configuration, sets: analyses.map { $0.finish() })
    }

    /// The signature of one peak set: its landmarks rebuilt as ``SignatureGenerator`` builds them.
    public func signature(of set: PeakSet) -> Signature {
        let builder = LandmarkBuilder(configuration: set.role == .query ? configuration.forQuery : configuration)
        var landmarks: [Landmark] = []
        for p in set.peaks { builder.consume(p) { landmarks.append($0) } }
        builder.flush { landmarks.append($0) }
        return Signature(configuration: configuration, landmarks: landmarks, sampleCount: set.sampleCount)
    }

    /// The query signatures, in framing order (the first is the plain one): what
    /// ``Matcher/matchedItems(for:reframed:)`` takes.
    public var querySignatures: [Signature] { sets.filter { $0.role == .query }.map { signature(of: $0) } }

    /// The reference-analysis signature (what scan consumes), if the file has one.
    public var referenceSignature: Signature? { sets.first { $0.role == .reference }.map { signature(of: $0) } }

    /// Whether `data` starts with the magic of this format.
    public static func looksLike(_ data: Data) -> Bool { Array(data.prefix(4)) == magic }

    /// The file's bytes.
    public var dataRepresentation: Data {
        var body = ByteWriter()
        for set in sets {
            body.bytes.append(set.role == .query ? 1 : 0)
            body.u32(UInt32(clamping: set.skippedSamples))
            body.u64(UInt64(max(0, set.sampleCount)))
            body.u32(UInt32(set.peaks.count))
            var frame = 0
            for p in set.peaks {
                body.varint(UInt64(max(0, p.frame - frame)))
                frame = p.frame
                body.u16(UInt16((p.bin * 64).rounded().clamped(0, 65535)))
                body.u16(UInt16(bitPattern: Int16((p.power * 100).rounded().clamped(-32768, 32767))))
            }
        }
        let packed = Array(ShazamCatalog.deflateRaw(Data(body.bytes)))
        var w = ByteWriter()
        w.bytes += SignatureFile.magic
        w.u16(SignatureFile.fileVersion)
        w.u16(UInt16(Configuration.formatVersion))
        let json = (try? JSONEncoder().encode(configuration)) ?? Data()
        w.u32(UInt32(json.count))
        w.bytes += json
        w.bytes.append(UInt8(clamping: sets.count))
        w.u32(UInt32(packed.count))
        w.u32(UInt32(body.bytes.count))
        w.bytes += packed
        let crc = w.bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count))) }
        w.u32(crc)
        return Data(w.bytes)
    }

    /// Reads a file written by ``dataRepresentation``.
    /// - Throws: ``SoundmarkError/invalidSignature(_:)`` for foreign data (no magic), another
    ///   file or fingerprint format version, a CRC-32 mismatch (damage), truncation, a
    ///   configuration out of range or peaks out of order or not finite.
    public init(data: Data) throws {
        let bytes = Array(data)
        guard SignatureFile.looksLike(data) else { throw SoundmarkError.invalidSignature("not a soundmark signature file (no SMQF magic)") }
        guard bytes.count >= 12 else { throw SoundmarkError.invalidSignature("truncated soundmark signature file") }
        let stored = ShazamSignature.le32(bytes, bytes.count - 4)
        let crc = bytes.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, uInt($0.count - 4))) }
        var r = ByteReader(Array(bytes.dropLast(4)))
        _ = r.take(4)
        let version = r.u16() ?? 0, format = r.u16() ?? 0
        guard version == SignatureFile.fileVersion else {
            throw SoundmarkError.invalidSignature("soundmark signature file version \(version), this build reads \(SignatureFile.fileVersion)")
        }
        guard Int(format) == Configuration.formatVersion else {
            throw SoundmarkError.invalidSignature("fingerprint format version \(format), this build reads \(Configuration.formatVersion)")
        }
        guard crc == stored else {
            throw SoundmarkError.invalidSignature(String(format: "CRC-32 mismatch (stored 0x%08X, computed 0x%08X): the file is damaged or truncated", stored, crc))
        }
        guard let n = r.u32(), let json = r.take(Int(n)),
              let config = try? JSONDecoder().decode(Configuration.self, from: Data(json)),
              let setCount = r.take(1)?.first, let packedLength = r.u32(), let rawLength = r.u32(),
              let packed = r.take(Int(packedLength)) else {
            throw SoundmarkError.invalidSignature("truncated soundmark signature file header")
        }
        if let problem = config.problem { throw SoundmarkError.invalidSignature("configuration out of range: \(problem)") }
        guard Int(rawLength) <= InflationBound.limit(compressedBytes: packed.count) else {
            throw SoundmarkError.invalidSignature("peak data of \(packed.count) bytes declares \(rawLength) bytes inflated, more than \(InflationBound.describe(compressedBytes: packed.count)): refused as a decompression bomb")
        }
        guard let raw = try? ShazamCatalog.inflateRaw(Data(packed), limit: Int(rawLength)), raw.count == Int(rawLength) else {
            throw SoundmarkError.invalidSignature("peak data does not inflate")
        }
        var b = ByteReader(raw)
        var sets: [PeakSet] = []
        for s in 0..<Int(setCount) {
            guard let role = b.take(1)?.first, role <= 1, let skipped = b.u32(), let samples = b.u64(), let count = b.u32(),
                  let sampleCount = Int64(exactly: samples), Int(count) <= raw.count / 5 else {
                throw SoundmarkError.invalidSignature("peak set \(s + 1): truncated or corrupt")
            }
            var peaks: [Peak] = []
            peaks.reserveCapacity(Int(count))
            var frame = 0
            for i in 0..<Int(count) {
                guard let delta = b.varint(), delta < 1 << 31, let bin = b.u16(), let power = b.u16() else {
                    throw SoundmarkError.invalidSignature("peak set \(s + 1): truncated at peak \(i + 1)")
                }
                frame += Int(delta)
                let p = Peak(frame: frame, bin: Float(bin) / 64, power: Float(Int16(bitPattern: power)) / 100)
                guard p.bin.isFinite, p.bin > 0, p.power.isFinite, frame < Int(Int32.max) else {
                    throw SoundmarkError.invalidSignature("peak set \(s + 1): peak \(i + 1) out of range")
                }
                peaks.append(p)
            }
            sets.append(PeakSet(role: role == 1 ? .query : .reference, skippedSamples: Int(skipped), sampleCount: sampleCount, peaks: peaks))
        }
        self.init(configuration: config, sets: sets)
    }
}

/// One analysis stream (spectrogram and peak picker) that keeps its peaks.
private final class PeakAnalysis {
    let role: SignatureGenerator.Role
    let skipping: Int
    private var stillToSkip: Int
    private let spectrogram: Spectrogram
    private let picker: PeakPicker
    private var peaks: [Peak] = []
    private var sampleCount: Int64 = 0

    init(configuration: Configuration, role: SignatureGenerator.Role, skipping: Int) {
        self.role = role
        self.skipping = skipping
        stillToSkip = skipping
        let analysis = role == .query ? configuration.forQuery : configuration
        spectrogram = Spectrogram(configuration: analysis)
        picker = PeakPicker(configuration: analysis)
    }

    func append(_ samples: UnsafeBufferPointer<Float>) {
        var samples = samples
        if stillToSkip > 0 {
            let dropped = min(stillToSkip, samples.count)
            stillToSkip -= dropped
            samples = UnsafeBufferPointer(rebasing: samples[dropped...])
        }
        sampleCount += Int64(samples.count)
        spectrogram.consume(samples) { frame, row in picker.consume(frame: frame, row: row) { peaks.append($0) } }
    }

    func finish() -> SignatureFile.PeakSet {
        picker.flush { peaks.append($0) }
        return SignatureFile.PeakSet(role: role, skippedSamples: skipping, sampleCount: sampleCount, peaks: peaks)
    }
}

private extension Float {
    func clamped(_ lo: Float, _ hi: Float) -> Float { Swift.min(Swift.max(self, lo), hi) }
}
