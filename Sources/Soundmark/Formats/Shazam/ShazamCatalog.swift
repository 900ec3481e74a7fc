import CZlib
import Foundation

/// A ShazamKit media item as a `.shazamcatalog` stores it: the `sh_`-prefixed built-in keys
/// decoded, every other key kept as a custom property.
public struct ShazamMediaItem: Equatable, Sendable {
    /// `sh_title`.
    public var title: String?
    /// `sh_subtitle`.
    public var subtitle: String?
    /// `sh_artist`.
    public var artist: String?
    /// `sh_timeRanges`: `[[lower, upper], …]` in seconds of the signature's audio.
    public var timeRanges: [ClosedRange<Double>]
    /// Other `sh_` keys (ShazamKit built-ins such as `sh_genres`, `sh_isrc`), values as JSON text
    /// for non-strings.
    public var otherShazamKeys: [String: String]
    /// Custom keys as written, values as text (numbers and booleans in their JSON form).
    public var properties: [String: String]

    /// Creates a media item.
    public init(title: String? = nil, subtitle: String? = nil, artist: String? = nil,
                timeRanges: [ClosedRange<Double>] = [], otherShazamKeys: [String: String] = [:], properties: [String: String] = [:]) {
        self.title = title
        self.subtitle = subtitle
        self.artist = artist
        self.timeRanges = timeRanges
        self.otherShazamKeys = otherShazamKeys
        self.properties = properties
    }

    /// Decodes the `data` object of a `media` line.
    init(json: [String: Any]) {
        self.init()
        for (key, value) in json {
            switch key {
            case "sh_title": title = ShazamMediaItem.text(value)
            case "sh_subtitle": subtitle = ShazamMediaItem.text(value)
            case "sh_artist": artist = ShazamMediaItem.text(value)
            case "sh_timeRanges":
                for pair in value as? [Any] ?? [] {
                    guard let p = pair as? [Any], p.count == 2,
                          let lo = (p[0] as? NSNumber)?.doubleValue, let hi = (p[1] as? NSNumber)?.doubleValue,
                          lo.isFinite, hi.isFinite, lo <= hi else { continue }
                    timeRanges.append(lo...hi)
                }
            default:
                if key.hasPrefix("sh_") { otherShazamKeys[key] = ShazamMediaItem.text(value) }
                else { properties[key] = ShazamMediaItem.text(value) }
            }
        }
    }

    /// The `data` object of a `media` line.
    var json: [String: Any] {
        var out: [String: Any] = [:]
        for (k, v) in properties { out[k] = v }
        for (k, v) in otherShazamKeys {
            out[k] = (try? JSONSerialization.jsonObject(with: Data(v.utf8), options: [.fragmentsAllowed])) ?? v
        }
        if let title { out["sh_title"] = title }
        if let subtitle { out["sh_subtitle"] = subtitle }
        if let artist { out["sh_artist"] = artist }
        if !timeRanges.isEmpty { out["sh_timeRanges"] = timeRanges.map { [$0.lowerBound, $0.upperBound] } }
        return out
    }

    private static func text(_ value: Any) -> String {
        if let s = value as? String { return s }
        if let b = value as? Bool, "\(type(of: value))".contains("Bool") { return b ? "true" : "false" }
        if let n = value as? NSNumber { return n.stringValue }
        if let d = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) {
            return String(decoding: d, as: UTF8.self)
        }
        return "\(value)"
    }
}

/// A ShazamKit custom catalog (`.shazamcatalog`): raw DEFLATE (no zlib header) of JSON Lines —
/// a header line `{"type":"header","name":"Shazam Catalog","version":1}`, then per reference a
/// `{"type":"signature","id":UUID,"data":base64 of a .shazamsignature}` line and zero or more
/// `{"type":"media","id":UUID,"data":{…}}` lines.
public struct ShazamCatalog: Equatable, Sendable {
    /// One reference of the catalog: its signature and its media items.
    public struct Entry: Equatable, Sendable {
        /// The id (a UUID in Apple's files) tying media items to the signature.
        public var id: String
        /// The reference signature.
        public var signature: ShazamSignature
        /// The media items of this signature, in file order.
        public var mediaItems: [ShazamMediaItem]
        /// Creates an entry.
        public init(id: String, signature: ShazamSignature, mediaItems: [ShazamMediaItem] = []) {
            self.id = id
            self.signature = signature
            self.mediaItems = mediaItems
        }
    }

    /// The header's catalog name (`Shazam Catalog` in Apple's files).
    public var name: String
    /// The header's version (1).
    public var version: Int
    /// The references in file order.
    public var entries: [Entry]

    /// Creates a catalog.
    public init(name: String = "Shazam Catalog", version: Int = 1, entries: [Entry]) {
        self.name = name
        self.version = version
        self.entries = entries
    }

    /// Whether `data` could be a `.shazamcatalog` (it inflates to a JSON header line).
    public static func looksLike(_ data: Data) -> Bool {
        guard let text = try? inflateRaw(Data(data.prefix(4096)), limit: 256, partialOK: true) else { return false }
        return String(decoding: text, as: UTF8.self).hasPrefix("{")
    }

    /// Reads a `.shazamcatalog` file's bytes.
    /// - Throws: ``ShazamFormatError`` when the data does not inflate, inflates to more than
    ///   ``InflationBound/limit(compressedBytes:)`` of its size, a line is not JSON, the
    ///   header is missing, a signature is not base64 or not a readable signature (its CRC is
    ///   checked), or a media item names no signature.
    public init(data: Data) throws {
        let text: [UInt8]
        do { text = try ShazamCatalog.inflateRaw(data, limit: InflationBound.limit(compressedBytes: data.count)) } catch InflateError.limitExceeded {
            throw ShazamFormatError("shazamcatalog inflates to more than \(InflationBound.describe(compressedBytes: data.count)): refused as a decompression bomb")
        }
        var name = "", version = 0
        var entries: [Entry] = []
        var index: [String: Int] = [:]
        var pendingMedia: [(String, ShazamMediaItem)] = []
        var sawHeader = false
        for (n, line) in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).enumerated() {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
                throw ShazamFormatError("shazamcatalog line \(n + 1) is not a JSON object")
            }
            let type = object["type"] as? String
            switch type {
            case "header":
                sawHeader = true
                name = object["name"] as? String ?? ""
                version = (object["version"] as? NSNumber)?.intValue ?? 0
            case "signature":
                guard let id = object["id"] as? String, let b64 = object["data"] as? String,
                      let raw = Data(base64Encoded: b64, options: .ignoreUnknownCharacters) else {
                    throw ShazamFormatError("shazamcatalog line \(n + 1): signature without an id or base64 data")
                }
                let signature: ShazamSignature
                do { signature = try ShazamSignature(data: raw) } catch let e as ShazamFormatError {
                    throw ShazamFormatError("shazamcatalog line \(n + 1) (signature \(id)): \(e.reason)")
                }
                index[id] = entries.count
                entries.append(Entry(id: id, signature: signature))
            case "media":
                guard let id = object["id"] as? String, let data = object["data"] as? [String: Any] else {
                    throw ShazamFormatError("shazamcatalog line \(n + 1): media item without an id or data object")
                }
                pendingMedia.append((id, ShazamMediaItem(json: data)))
            default:
                throw ShazamFormatError("shazamcatalog line \(n + 1): unknown line type '\(type ?? "none")'")
            }
        }
        guard sawHeader else { throw ShazamFormatError("shazamcatalog has no header line") }
        for (id, item) in pendingMedia {
            guard let i = index[id] else { throw ShazamFormatError("shazamcatalog media item for unknown signature \(id)") }
            entries[i].mediaItems.append(item)
        }
        self.init(name: name, version: version, entries: entries)
    }

    /// The catalog as a `.shazamcatalog` file: JSON Lines (signatures with their
    /// `.shazamsignature` prefix, as Apple writes them), raw DEFLATE-compressed with zlib.
    public var dataRepresentation: Data {
        var lines: [String] = [ShazamCatalog.jsonLine(["type": "header", "name": name, "version": version])]
        for e in entries {
            lines.append(ShazamCatalog.jsonLine(["type": "signature", "id": e.id,
                                                 "data": e.signature.dataRepresentation(prefixed: true).base64EncodedString()]))
            for m in e.mediaItems { lines.append(ShazamCatalog.jsonLine(["type": "media", "id": e.id, "data": m.json])) }
        }
        return ShazamCatalog.deflateRaw(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    private static func jsonLine(_ object: [String: Any]) -> String {
        let d = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: d, as: UTF8.self)
    }

    /// Inflates raw DEFLATE data (no zlib or gzip header) with zlib.
    /// - Parameters:
    ///   - limit: the most bytes to produce; more is an error (unless `partialOK`).
    ///   - partialOK: return what inflated so far when the data ends early or the limit is reached.
    /// - Throws: ``ShazamFormatError`` for data zlib refuses or truncated data,
    ///   `InflateError.limitExceeded` for output above `limit`.
    static func inflateRaw(_ data: Data, limit: Int, partialOK: Bool = false) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw ShazamFormatError("zlib inflateInit2 failed")
        }
        defer { inflateEnd(&stream) }
        var input = Array(data)
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var status: Int32 = Z_OK
        input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = uInt(inp.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { c in
                    stream.next_out = c.baseAddress
                    stream.avail_out = uInt(c.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    out.append(contentsOf: c[0..<(c.count - Int(stream.avail_out))])
                }
            } while status == Z_OK && out.count <= limit && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        if partialOK { return Array(out.prefix(limit)) }
        guard out.count <= limit else { throw InflateError.limitExceeded }
        guard status == Z_STREAM_END else {
            if status == Z_OK || status == Z_BUF_ERROR { throw ShazamFormatError("shazamcatalog data ends early (truncated DEFLATE stream)") }
            let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
            throw ShazamFormatError("not a .shazamcatalog (raw DEFLATE data expected): zlib: \(message)")
        }
        return out
    }

    /// Raw DEFLATE data that would inflate past the limit given.
    enum InflateError: Error { case limitExceeded }

    /// Compresses `data` as raw DEFLATE (no header) with zlib's default level.
    static func deflateRaw(_ data: Data) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                            Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return Data() }
        defer { deflateEnd(&stream) }
        var input = Array(data)
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 64)
        let produced: Int = input.withUnsafeMutableBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                stream.next_out = o.baseAddress
                stream.avail_out = uInt(o.count)
                _ = deflate(&stream, Z_FINISH)
                return o.count - Int(stream.avail_out)
            }
        }
        return Data(out.prefix(produced))
    }
}
