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
/// Postings are sorted by hash, then frame, and duplicates dropped. The blob holds three
/// LEB128 varints — the posting count, the Golomb–Rice parameter `k` and the frame width `w` in
/// bits — then a bit stream (most significant bit first) with, per posting, the difference to
/// the previous posting's hash as a Golomb–Rice code with parameter `k` (Golomb, *Run-length
/// encodings*, IEEE Trans. Inf. Theory 1966; Rice 1979) and the anchor frame in `w` bits.
/// `k` is ⌊log2⌋ of the mean hash difference, so a difference costs about `k + 2` bits; with the
/// defaults a posting takes about 2.7 bytes.
public enum PostingCodec {
    /// Postings of a reference signature: each landmark hashed without rescaling (landmarks
    /// with no hash or a negative anchor frame give none).
    public static func postings(of signature: Signature) -> [Posting] {
        let hasher = LandmarkHasher(configuration: signature.configuration)
        var result: [Posting] = []
        result.reserveCapacity(signature.landmarks.count)
        for l in signature.landmarks {
            if l.anchorFrame >= 0, let h = hasher.hash(l) { result.append(Posting(hash: h, frame: UInt32(l.anchorFrame))) }
        }
        return result
    }

    /// Encodes postings (in any order; duplicates are kept once).
    public static func encode(_ postings: [Posting]) -> [UInt8] {
        var sorted = postings.sorted { ($0.hash, $0.frame) < ($1.hash, $1.frame) }
        var unique: [Posting] = []
        unique.reserveCapacity(sorted.count)
        for p in sorted where unique.last != p { unique.append(p) }
        sorted = unique
        let maxHash = UInt64(sorted.last?.hash ?? 0)
        let mean = sorted.isEmpty ? 1 : max(1, maxHash / UInt64(sorted.count))
        let k = 63 - mean.leadingZeroBitCount
        let maxFrame = UInt64(sorted.map(\.frame).max() ?? 0)
        let width = max(1, 64 - maxFrame.leadingZeroBitCount)
        var header = ByteWriter()
        header.varint(UInt64(sorted.count))
        header.varint(UInt64(k))
        header.varint(UInt64(width))
        var bits = BitWriter()
        var last: UInt64 = 0
        for p in sorted {
            bits.rice(UInt64(p.hash) - last, k: k)
            bits.write(UInt64(p.frame), bits: width)
            last = UInt64(p.hash)
        }
        return header.bytes + bits.finish()
    }

    /// Decodes what ``encode(_:)`` wrote, appending hashes and packed postings
    /// (`reference << 32 | frame`) to parallel arrays; `false` for corrupt data.
    static func decode(_ bytes: [UInt8], reference: UInt64, hashes: inout [UInt32], entries: inout [UInt64]) -> Bool {
        var header = ByteReader(bytes)
        guard let count = header.varint(), let k = header.varint(), let width = header.varint(),
              k < 40, width >= 1, width <= 32, count <= UInt64(bytes.count) * 8 else { return false }
        return bytes.withUnsafeBufferPointer { b in
            var reader = BitReader(b, byteOffset: header.position)
            var hash: UInt64 = 0
            for _ in 0..<count {
                guard let delta = reader.rice(k: Int(k)), let frame = reader.read(bits: Int(width)) else { return false }
                // A corrupt delta may be near 2^64: compare before adding, so it cannot overflow.
                guard delta <= UInt64(UInt32.max) - hash else { return false }
                hash += delta
                hashes.append(UInt32(hash))
                entries.append(reference << 32 | frame)
            }
            return true
        }
    }

    /// Decodes what ``encode(_:)`` wrote, calling `body` for each posting in (hash, frame) order.
    /// - Returns: `false` for corrupt data.
    public static func decode(_ bytes: [UInt8], into body: (Posting) -> Void) -> Bool {
        var hashes: [UInt32] = [], entries: [UInt64] = []
        guard decode(bytes, reference: 0, hashes: &hashes, entries: &entries) else { return false }
        for (h, e) in zip(hashes, entries) { body(Posting(hash: h, frame: UInt32(truncatingIfNeeded: e))) }
        return true
    }
}

/// An in-memory inverted index: hash → postings of every reference, in compressed-sparse-row form.
///
/// `entries[start[h] ..< start[h + 1]]` are the postings of hash `h`, each packed as
/// `referenceIndex << 32 | frame`, in ascending reference order (the counting sort is stable
/// and references are added in index order), so one reference's run is found by binary search. Building is O(postings + hashCount); a lookup is O(1) plus the
/// bucket's length.
public struct PostingIndex: Sendable {
    /// Bucket boundaries, `hashCount + 1` values.
    public let start: PostingBuffer<UInt32>
    /// Packed postings (`referenceIndex << 32 | frame`).
    public let entries: PostingBuffer<UInt64>
    /// Number of references indexed.
    public let referenceCount: Int
    /// For a mapped index file: `referenceCount + 1` boundaries into ``frames``, and each
    /// reference's anchor frames ascending; `nil` for an index built in memory.
    private let frameStart: PostingBuffer<UInt64>?
    private let frames: PostingBuffer<UInt32>?
    private let storage: PostingStorage?

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
        start = PostingBuffer(counts)
        self.entries = PostingBuffer(entries)
        self.referenceCount = referenceCount
        frameStart = nil
        frames = nil
        storage = nil
    }

    /// An index over memory-mapped sections of an index file (see ``IndexFile``).
    init(start: PostingBuffer<UInt32>, entries: PostingBuffer<UInt64>, frameStart: PostingBuffer<UInt64>,
         frames: PostingBuffer<UInt32>, referenceCount: Int, storage: PostingStorage) {
        self.start = start
        self.entries = entries
        self.frameStart = frameStart
        self.frames = frames
        self.referenceCount = referenceCount
        self.storage = storage
    }

    /// Calls `body` with the postings `entries[range]` (a bucket or part of one: see
    /// ``start``), index 0 being `range.lowerBound`; the buffer is valid only during the call.
    /// The one way matching reads postings, so where they come from (memory, a mapped file)
    /// is this type's business. Safe to call from several threads at once.
    ///
    /// (Reading a mapped file's bucket with `pread` instead, which keeps the pages out of the
    /// process's resident set, was measured: identify makes about 3 million lookups for one
    /// 10 s clip, and one system call each took 12 s instead of 0.4 s.)
    @inline(__always)
    public func withPostings<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt64>) throws -> R) rethrows -> R {
        try entries.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    /// Whether the postings are read from a memory-mapped index file.
    public var isMapped: Bool { storage != nil }

    /// Anchor frames of reference `reference`'s postings, ascending (one per posting, so a
    /// frame with several hashes repeats). From a mapped index this reads only that
    /// reference's stretch of the file; in memory it walks every posting.
    public func frames(of reference: Int) -> [UInt32] {
        if let frameStart, let frames {
            guard reference >= 0 && reference < referenceCount else { return [] }
            return Array(frames[Int(frameStart[reference]) ..< Int(frameStart[reference + 1])])
        }
        var result: [UInt32] = []
        for e in entries where Int(e >> 32) == reference { result.append(UInt32(truncatingIfNeeded: e)) }
        result.sort()
        return result
    }

    /// Every reference's frames (see ``frames(of:)``) as boundaries (`referenceCount + 1`) and
    /// the frames, reference after reference: the last two sections of an index file.
    func referenceFrameTable() -> (start: [UInt64], frames: [UInt32]) {
        var counts = [UInt64](repeating: 0, count: referenceCount + 1)
        for e in entries { counts[Int(e >> 32) + 1] += 1 }
        for r in 0..<referenceCount { counts[r + 1] += counts[r] }
        var cursor = counts
        var frames = [UInt32](repeating: 0, count: entries.count)
        for e in entries {
            let r = Int(e >> 32)
            frames[Int(cursor[r])] = UInt32(truncatingIfNeeded: e)
            cursor[r] += 1
        }
        for r in 0..<referenceCount { frames[Int(counts[r]) ..< Int(counts[r + 1])].sort() }
        return (counts, frames)
    }

    /// Lets the pages of a mapped index that this process has read leave its resident set
    /// (they stay in the page cache): a long scan calls it now and then so its memory stays
    /// bounded whatever the catalog's size. No effect on an index built in memory.
    public func releaseResidentPages() {
        storage?.releaseResidentPages()
    }

    /// Total number of postings.
    public var count: Int { entries.count }

    /// Index range in `entries` of reference `reference`'s postings within `lo ..< hi` (a bucket
    /// or part of one), found by binary search: a bucket is sorted by reference.
    @inline(__always)
    static func run(of reference: Int, in entries: UnsafeBufferPointer<UInt64>, _ lo: Int, _ hi: Int) -> Range<Int> {
        func firstIndex(_ from: Int, atLeast value: UInt64) -> Int {
            var lo = from, hi = hi
            while lo < hi {
                let mid = (lo + hi) / 2
                if entries[mid] < value { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
        let first = firstIndex(lo, atLeast: UInt64(reference) << 32)
        return first..<firstIndex(first, atLeast: UInt64(reference + 1) << 32)
    }
}
