import CZlib
import Foundation

/// What a catalog keeps of the file a reference was made from, to skip re-adding it unchanged
/// without decoding: size, modification time and a content digest.
public struct FileStamp: Equatable, Sendable {
    /// Size in bytes.
    public var size: Int64
    /// Modification time, seconds since 1970 (with the file system's sub-second precision).
    public var modified: Double
    /// Content digest: 16 hex digits, zlib's CRC-32 then Adler-32 of the whole file.
    public var digest: String

    /// Creates a stamp from its parts.
    public init(size: Int64, modified: Double, digest: String) {
        self.size = size
        self.modified = modified
        self.digest = digest
    }

    /// Size and modification time of a regular file, without reading it; `nil` for anything
    /// else (stdin, a URL, a folder, a missing file).
    public static func attributes(of path: String) -> (size: Int64, modified: Double)? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (Int64(st.st_size), Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9)
    }

    /// Stats and reads the regular file at `path` (1 MiB at a time) to make its stamp; `nil`
    /// when it is not a regular file or cannot be read.
    public static func of(path: String) -> FileStamp? {
        guard let attributes = attributes(of: path), let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var crc = crc32(0, nil, 0), adler = adler32(0, nil, 0)
        while true {
            guard let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty else { break }
            chunk.withUnsafeBytes { p in
                let bytes = p.bindMemory(to: Bytef.self)
                crc = crc32(crc, bytes.baseAddress, uInt(bytes.count))
                adler = adler32(adler, bytes.baseAddress, uInt(bytes.count))
            }
        }
        return FileStamp(size: attributes.size, modified: attributes.modified,
                         digest: String(format: "%08lx%08lx", UInt(crc), UInt(adler)))
    }
}

/// zlib's CRC-32 (ISO 3309, the one in gzip and PNG) of `bytes`: the checksum stored with
/// each reference's postings.
func postingsChecksum(_ bytes: [UInt8]) -> Int64 {
    bytes.withUnsafeBufferPointer { p in Int64(crc32(0, p.baseAddress, uInt(p.count))) }
}
