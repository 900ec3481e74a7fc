import Foundation

/// The content of a ShazamKit file, recognised by its bytes (not its extension).
public enum ShazamFile: Equatable, Sendable {
    /// A `.shazamsignature`, bare "vnd.shazam.sig" data or a `data:audio/vnd.shazam.sig;base64,…` URI.
    case signature(ShazamSignature)
    /// A `.shazamcatalog`.
    case catalog(ShazamCatalog)

    /// Recognises and reads ShazamKit data.
    /// - Parameter requireValidCRC: refuse a signature whose CRC-32 does not match (default true).
    /// - Throws: ``ShazamFormatError`` naming the cause (see ``ShazamSignature/init(data:requireValidCRC:)``
    ///   and ``ShazamCatalog/init(data:)``).
    public init(data: Data, requireValidCRC: Bool = true) throws {
        if ShazamSignature.looksLike(data) {
            self = .signature(try ShazamSignature(data: data, requireValidCRC: requireValidCRC))
        } else if ShazamCatalog.looksLike(data) {
            self = .catalog(try ShazamCatalog(data: data))
        } else {
            throw ShazamFormatError("neither a Shazam signature (.shazamsignature, vnd.shazam.sig, data URI) nor a .shazamcatalog")
        }
    }

    /// Reads a ShazamKit file.
    /// - Throws: ``ShazamFormatError`` whose reason starts with the path: the file cannot be
    ///   read, or its content is not ShazamKit data (see ``init(data:requireValidCRC:)``).
    public init(path: String, requireValidCRC: Bool = true) throws {
        let data: Data
        do { data = try InputFile.contents(atPath: path) } catch let error as InputFileError {
            throw ShazamFormatError("\(path): \(error.reason)")
        }
        do { try self.init(data: data, requireValidCRC: requireValidCRC) } catch let e as ShazamFormatError {
            throw ShazamFormatError("\(path): \(e.reason)")
        }
    }

    /// Whether `data` is ShazamKit data of a kind this reader recognises (legacy layouts included,
    /// so that they get their own error).
    public static func looksLike(_ data: Data) -> Bool { ShazamSignature.looksLike(data) || ShazamCatalog.looksLike(data) }
}

extension ShazamSignature {
    /// Peaks per band, in band order.
    public var peakCounts: [Int] { bands.map(\.count) }

    /// Format name: `shazamsignature v1`/`v2` or `vnd.shazam.sig`.
    public var formatName: String { prefixVersion.map { "shazamsignature v\($0)" } ?? "vnd.shazam.sig" }

    /// `{"format","sampleRate","sampleCount","duration","versionWord","crc":"ok"|"mismatch","bands":[{"low","high","peaks"}…],"peaks"}`;
    /// `sampleCount` and `duration` are null when the header does not record the length (`0xFFFFFFFF`).
    public var summaryJSON: JSONOutput {
        .object([("format", .string(formatName)), ("sampleRate", .integer(sampleRate)),
                 ("sampleCount", sampleCountIsKnown ? .integer(sampleCount) : .null),
                 ("duration", sampleCountIsKnown ? .seconds(duration) : .null), ("versionWord", .string(String(format: "0x%08X", versionWord))),
                 ("crc", .string(crcValid ? "ok" : "mismatch")),
                 ("bands", .array(bands.enumerated().map { b, peaks in
                     .object([("low", .integer(Int(ShazamSignature.bandEdges[b].low))), ("high", .integer(Int(ShazamSignature.bandEdges[b].high))),
                              ("peaks", .integer(peaks.count))])
                 })),
                 ("peaks", .integer(peakCounts.reduce(0, +)))])
    }

    /// Lines describing the signature for text output (an unknown sample count is said so,
    /// with the time the peaks reach).
    public var summaryLines: [String] {
        [String(format: "format: %@ (header version word 0x%08X)", formatName, versionWord),
         sampleCountIsKnown ? String(format: "sample rate: %ld Hz, %ld samples, duration %.3f s", sampleRate, sampleCount, duration)
             : String(format: "sample rate: %ld Hz, sample count unknown (0xFFFFFFFF), peaks up to %.3f s", sampleRate, duration),
         "CRC-32: " + (crcValid ? "ok" : "MISMATCH (damaged data)"),
         "peaks: \(peakCounts.reduce(0, +)) (" + bands.enumerated().map { b, p in
             "\(Int(ShazamSignature.bandEdges[b].low))–\(Int(ShazamSignature.bandEdges[b].high)) Hz: \(p.count)"
         }.joined(separator: ", ") + ")"]
    }
}

extension ShazamMediaItem {
    /// `{"title","subtitle","artist","timeRanges":[[lo,hi]…],"shazamKeys":{…},"properties":{…}}` (absent keys omitted).
    public var summaryJSON: JSONOutput {
        var f: [(String, JSONOutput)] = []
        if let title { f.append(("title", .string(title))) }
        if let subtitle { f.append(("subtitle", .string(subtitle))) }
        if let artist { f.append(("artist", .string(artist))) }
        if !timeRanges.isEmpty {
            f.append(("timeRanges", .array(timeRanges.map { .array([.seconds($0.lowerBound), .seconds($0.upperBound)]) })))
        }
        if !otherShazamKeys.isEmpty { f.append(("shazamKeys", .object(otherShazamKeys.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))) }
        f.append(("properties", .object(properties.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
        return .object(f)
    }
}
