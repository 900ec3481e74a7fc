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

/// Writes bits most-significant first into bytes (for Golomb–Rice coded posting lists).
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private var current: UInt64 = 0
    private var used = 0

    /// Appends the low `count` bits of `value` (count ≤ 57).
    mutating func write(_ value: UInt64, bits count: Int) {
        guard count > 0 else { return }
        current = current << UInt64(count) | (value & ((1 << UInt64(count)) - 1))
        used += count
        while used >= 8 {
            used -= 8
            bytes.append(UInt8(truncatingIfNeeded: current >> UInt64(used)))
        }
        current &= (1 << UInt64(used)) - 1
    }

    /// Golomb–Rice code of `value` with parameter `k`: `value >> k` in unary (ones, then a zero),
    /// then the low `k` bits.
    mutating func rice(_ value: UInt64, k: Int) {
        var q = value >> UInt64(k)
        while q >= 32 { write((1 << 32) - 1, bits: 32); q -= 32 }
        write(((1 << q) - 1) << 1, bits: Int(q) + 1)
        write(value, bits: k)
    }

    /// Pads the last byte with zeros and returns the bytes.
    mutating func finish() -> [UInt8] {
        if used > 0 { bytes.append(UInt8(truncatingIfNeeded: current << UInt64(8 - used))) }
        used = 0
        current = 0
        return bytes
    }
}

/// Reads what ``BitWriter`` wrote; reads past the end return `nil`.
struct BitReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0   // in bits

    init(_ bytes: UnsafeBufferPointer<UInt8>, byteOffset: Int) {
        self.bytes = bytes
        position = byteOffset * 8
    }

    /// The 64 bits from the byte holding `position` on, most significant first, when 8 bytes
    /// are left; the first `position & 7` of them are already consumed.
    @inline(__always)
    private func window() -> UInt64? {
        let index = position >> 3
        guard index + 8 <= bytes.count else { return nil }
        return UInt64(bigEndian: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    mutating func read(bits count: Int) -> UInt64? {
        // Fast path: the bits lie in one 64-bit window (at least 57 unread bits in it).
        if count > 0 && count <= 57, let w = window() {
            let value = (w << UInt64(position & 7)) >> UInt64(64 - count)
            position += count
            return value
        }
        guard position + count <= bytes.count * 8 else { return nil }
        var value: UInt64 = 0
        var remaining = count
        while remaining > 0 {
            let byte = UInt64(bytes[position >> 3])
            let offset = position & 7
            let take = min(8 - offset, remaining)
            let bits = (byte >> UInt64(8 - offset - take)) & ((1 << UInt64(take)) - 1)
            value = value << UInt64(take) | bits
            remaining -= take
            position += take
        }
        return value
    }

    @inline(__always)
    mutating func rice(k: Int) -> UInt64? {
        // Fast path: unary quotient and terminating zero within one window, then `k` bits.
        if let w = window() {
            let bits = w << UInt64(position & 7), available = 64 - (position & 7)
            let q = (~bits).leadingZeroBitCount
            if q < available {
                position += q + 1
                guard let low = k == 0 ? 0 : read(bits: k) else { return nil }
                return UInt64(q) << UInt64(k) | low
            }
        }
        var q: UInt64 = 0
        while true {
            guard position < bytes.count * 8 else { return nil }
            let bit = (bytes[position >> 3] >> UInt8(7 - (position & 7))) & 1
            position += 1
            if bit == 0 { break }
            q += 1
        }
        guard let low = read(bits: k) else { return nil }
        return q << UInt64(k) | low
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
