/// Little-endian byte writer with LEB128 varints, for signatures and posting lists.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    mutating func u64(_ v: UInt64) { for s in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8((v >> UInt64(s)) & 0xFF)) } }
    /// Unsigned LEB128.
    mutating func varint(_ v: UInt64) {
        var v = v
        while v >= 0x80 { bytes.append(UInt8(v & 0x7F) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }
}

/// Reader matching ``ByteWriter``; every read returns `nil` past the end.
struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }

    mutating func take(_ n: Int) -> ArraySlice<UInt8>? {
        guard n >= 0, position + n <= bytes.count else { return nil }
        defer { position += n }
        return bytes[position..<position + n]
    }
    mutating func u16() -> UInt16? {
        guard let b = take(2) else { return nil }
        return UInt16(b[b.startIndex]) | UInt16(b[b.startIndex + 1]) << 8
    }
    mutating func u32() -> UInt32? {
        guard let b = take(4) else { return nil }
        return b.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
    mutating func u64() -> UInt64? {
        guard let b = take(8) else { return nil }
        return b.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
    mutating func varint() -> UInt64? {
        var result: UInt64 = 0, shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let b = bytes[position]
            position += 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
        return nil
    }
}
