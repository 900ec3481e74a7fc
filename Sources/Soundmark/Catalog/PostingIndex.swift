/// A posting: one occurrence of a hash in a reference.
public struct Posting: Equatable, Sendable {
    /// The landmark hash (see ``LandmarkHasher``).
    public var hash: UInt32
    /// The anchor frame in the reference (hops from its start).
    public var frame: UInt32

    /// Creates a posting.
    public init(hash: UInt32, frame: UInt32) {
        self.hash = hash
        self.frame = frame
    }
}

/// The compact stored form of a reference's postings.
///
/// Postings are sorted by hash, then frame, and written as LEB128 varints: the hash difference
/// to the previous posting, then the frame itself when the hash changed, or the frame difference
/// when it did not. About 3–4 bytes per posting.
public enum PostingCodec {
    /// Postings of a reference signature: each landmark hashed without rescaling.
    public static func postings(of signature: Signature) -> [Posting] {
        let hasher = LandmarkHasher(configuration: signature.configuration)
        var result: [Posting] = []
        result.reserveCapacity(signature.landmarks.count)
        for l in signature.landmarks {
            if let h = hasher.hash(l) { result.append(Posting(hash: h, frame: UInt32(l.anchorFrame))) }
        }
        return result
    }

    /// Encodes postings (in any order; duplicates are kept once).
    public static func encode(_ postings: [Posting]) -> [UInt8] {
        let sorted = postings.sorted { ($0.hash, $0.frame) < ($1.hash, $1.frame) }
        var w = ByteWriter()
        w.varint(UInt64(sorted.count))
        var lastHash: UInt32 = 0, lastFrame: UInt32 = 0, first = true
        for p in sorted {
            if !first && p.hash == lastHash && p.frame == lastFrame { continue }
            if first || p.hash != lastHash {
                w.varint(UInt64(p.hash - (first ? 0 : lastHash)))
                w.varint(UInt64(p.frame))
            } else {
                w.varint(0)
                w.varint(UInt64(p.frame - lastFrame))
            }
            first = false
            lastHash = p.hash
            lastFrame = p.frame
        }
        return w.bytes
    }

    /// Decodes what ``encode(_:)`` wrote, appending hashes and packed postings
    /// (`reference << 32 | frame`) to parallel arrays; `false` for corrupt data.
    static func decode(_ bytes: [UInt8], reference: UInt64, hashes: inout [UInt32], entries: inout [UInt64]) -> Bool {
        bytes.withUnsafeBufferPointer { b in
            var i = 0
            @inline(__always) func varint() -> UInt64? {
                var result: UInt64 = 0, shift: UInt64 = 0
                while i < b.count && shift < 64 {
                    let byte = b[i]
                    i += 1
                    result |= UInt64(byte & 0x7F) << shift
                    if byte < 0x80 { return result }
                    shift += 7
                }
                return nil
            }
            guard let count = varint() else { return false }
            _ = count
            var hash: UInt32 = 0, frame: UInt32 = 0, first = true
            while i < b.count {
                guard let dh = varint(), let f = varint() else { return false }
                if first || dh != 0 {
                    hash &+= UInt32(truncatingIfNeeded: dh)
                    frame = UInt32(truncatingIfNeeded: f)
                } else {
                    frame &+= UInt32(truncatingIfNeeded: f)
                }
                first = false
                hashes.append(hash)
                entries.append(reference << 32 | UInt64(frame))
            }
            return true
        }
    }

    /// Decodes what ``encode(_:)`` wrote; `false` for corrupt data.
    public static func decode(_ bytes: [UInt8], into body: (Posting) -> Void) -> Bool {
        var r = ByteReader(bytes)
        guard let count = r.varint() else { return false }
        var hash: UInt32 = 0, frame: UInt32 = 0
        var first = true
        while !r.atEnd {
            guard let dh = r.varint(), let f = r.varint() else { return false }
            if first || dh != 0 {
                hash &+= UInt32(truncatingIfNeeded: dh)
                frame = UInt32(truncatingIfNeeded: f)
            } else {
                frame &+= UInt32(truncatingIfNeeded: f)
            }
            first = false
            body(Posting(hash: hash, frame: frame))
        }
        return count > 0 || first
    }
}

/// An in-memory inverted index: hash → postings of every reference, in compressed-sparse-row form.
///
/// `entries[start[h] ..< start[h + 1]]` are the postings of hash `h`, each packed as
/// `referenceIndex << 32 | frame`. Building is O(postings + hashCount); a lookup is O(1) plus the
/// bucket's length.
public struct PostingIndex: Sendable {
    /// Bucket boundaries, `hashCount + 1` values.
    public let start: [UInt32]
    /// Packed postings (`referenceIndex << 32 | frame`).
    public let entries: [UInt64]
    /// Number of references indexed.
    public let referenceCount: Int

    /// Builds the index from each reference's postings; reference `i` of `references` gets index `i`.
    /// - Parameter hashCount: the size of the hash space (``LandmarkHasher/hashCount``).
    public init(hashCount: Int, references: [[Posting]]) {
        var hashes: [UInt32] = []
        var packed: [UInt64] = []
        for (r, list) in references.enumerated() {
            for p in list {
                hashes.append(p.hash)
                packed.append(UInt64(r) << 32 | UInt64(p.frame))
            }
        }
        self.init(hashCount: hashCount, hashes: hashes, entries: packed, referenceCount: references.count)
    }

    /// Builds the index from parallel arrays of hashes and packed postings
    /// (`referenceIndex << 32 | frame`) by a counting sort on the hash. Hashes outside
    /// `0 ..< hashCount` are dropped.
    init(hashCount: Int, hashes: [UInt32], entries packed: [UInt64], referenceCount: Int) {
        var counts = [UInt32](repeating: 0, count: hashCount + 1)
        var kept = 0
        counts.withUnsafeMutableBufferPointer { c in
            for h in hashes where Int(h) < hashCount { c[Int(h) + 1] &+= 1; kept += 1 }
            for i in 0..<hashCount { c[i + 1] &+= c[i] }
        }
        var cursor = counts
        var entries = [UInt64](repeating: 0, count: kept)
        entries.withUnsafeMutableBufferPointer { out in
            cursor.withUnsafeMutableBufferPointer { cur in
                hashes.withUnsafeBufferPointer { hs in
                    packed.withUnsafeBufferPointer { ps in
                        for i in 0..<hs.count {
                            let h = Int(hs[i])
                            guard h < hashCount else { continue }
                            out[Int(cur[h])] = ps[i]
                            cur[h] &+= 1
                        }
                    }
                }
            }
        }
        start = counts
        self.entries = entries
        self.referenceCount = referenceCount
    }

    /// Total number of postings.
    public var count: Int { entries.count }
}
