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

/// An inverted index: hash → postings of every reference, in compressed-sparse-row form.
///
/// `entries[start[h] ..< start[h + 1]]` are the postings of hash `h`, each packed as
/// `referenceIndex << 32 | frame`, in ascending reference order (the counting sort is stable
/// and references are added in index order), so one reference's run is found by binary search. Building is O(postings + hashCount); a lookup is O(1) plus the
/// bucket's length.
///
/// An index built in memory holds the postings as 8-byte values; one mapped from an index file
/// (see ``IndexFile``) holds them in as few bytes as the catalog needs (`referenceIndex <<
/// frameBits | frame` in ``PackedPostings/entryBytes`` bytes: 3 for the 8-hour bench catalog)
/// and ``withPostings(_:_:)`` widens the requested range to the 8-byte form.
public struct PostingIndex: Sendable {
    /// Bucket boundaries, `hashCount + 1` values.
    public let start: PostingBuffer<UInt32>
    /// Postings of an index built in memory (`nil` when ``packed`` holds them).
    private let wide: PostingBuffer<UInt64>?
    /// Postings of a mapped index file, packed (`nil` for an index built in memory).
    private let packed: PackedPostings?
    /// Number of references indexed.
    public let referenceCount: Int
    /// For a mapped index file: `referenceCount + 1` boundaries into ``frames``, and each
    /// reference's anchor frames ascending; `nil` for an index built in memory.
    private let frameStart: PostingBuffer<UInt64>?
    private let frames: PostingBuffer<UInt32>?
    /// For a mapped index file: the hash of each posting of ``frames`` (same order).
    private let referenceHashes: PostingBuffer<UInt32>?
    private let storage: PostingStorage?

    /// The reference index of a posting packed as in ``entries`` (`referenceIndex << 32 | frame`):
    /// the one place that layout is read outside the index itself.
    @inline(__always)
    public static func reference(of entry: UInt64) -> UInt64 { entry >> 32 }

    /// The anchor frame (hops from the reference's start) of a posting packed as in ``entries``,
    /// or as a key of ``hashDirectory(of:)`` (`hash << 32 | frame`): both hold it in the low 32 bits.
    @inline(__always)
    public static func frame(of entry: UInt64) -> Int { Int(entry & 0xFFFF_FFFF) }

    /// The hash of a key of ``hashDirectory(of:)`` (`hash << 32 | frame`).
    @inline(__always)
    public static func hash(ofDirectoryKey key: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: key >> 32) }

    /// Every posting packed as `referenceIndex << 32 | frame`, by hash, then reference, then
    /// frame. For a mapped index this widens every posting into newly allocated memory
    /// (8 bytes each): for tests and tools; matching reads through ``withPostings(_:_:)``.
    public var entries: PostingBuffer<UInt64> {
        if let wide { return wide }
        guard let packed else { return PostingBuffer([]) }
        var values = [UInt64](repeating: 0, count: packed.count)
        values.withUnsafeMutableBufferPointer { packed.widen(0..<packed.count, into: $0) }
        return PostingBuffer(values)
    }

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
        wide = PostingBuffer(entries)
        self.packed = nil
        self.referenceCount = referenceCount
        frameStart = nil
        frames = nil
        referenceHashes = nil
        storage = nil
    }

    /// An index over memory-mapped sections of an index file (see ``IndexFile``).
    init(start: PostingBuffer<UInt32>, packed: PackedPostings, frameStart: PostingBuffer<UInt64>,
         frames: PostingBuffer<UInt32>, hashes: PostingBuffer<UInt32>, referenceCount: Int, storage: PostingStorage) {
        referenceHashes = hashes
        self.start = start
        wide = nil
        self.packed = packed
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
    /// 10 s clip, and one system call each took 12 s instead of 0.4 s. A whole-catalog sweep
    /// reads its buckets with few system calls: ``forEachRange(_:_:)``.)
    /// From a mapped index the range is widened into a temporary buffer first (a bucket at a
    /// time: a few dozen postings; read 3 bytes a posting instead of 8, the pages a query
    /// touches, and so identify's resident memory, shrink by more than half).
    @inline(__always)
    public func withPostings<R>(_ range: Range<Int>, _ body: (UnsafeBufferPointer<UInt64>) throws -> R) rethrows -> R {
        if let wide {
            return try wide.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[range])) }
        }
        guard let packed, !range.isEmpty else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: range.count) { out in
            packed.widen(range, into: out)
            return try body(UnsafeBufferPointer(out))
        }
    }

    /// The low byte of posting `i` (`0 ..< count`), read for its side effect: reading the first
    /// posting of several buckets before widening any of them lets their memory reads (mostly
    /// cache misses over a large index) overlap instead of waiting one after another.
    @inline(__always)
    func touch(_ i: Int) -> UInt8 {
        if let wide { return UInt8(truncatingIfNeeded: wide[i]) }
        guard let packed else { return 0 }
        return packed.bytes[i * packed.entryBytes]
    }

    /// Calls `body(i, entries[ranges[i]])` for each of `ranges` in order (as ``withPostings(_:_:)``
    /// gives them; each buffer is valid only during its call). The ranges must be ordered by
    /// their lower bounds (they may repeat or overlap), as a sweep over many buckets in bucket
    /// order gives them.
    ///
    /// From a mapped index file the postings are read with `pread` into one reusable buffer,
    /// ranges less than ``readGapBytes`` apart in one read of at most ``readSpanBytes``, so none
    /// of the file's pages enters this process's resident set: a whole-catalog vote reads
    /// buckets scattered over the whole postings section (hundreds of megabytes for a catalog of
    /// hundreds of hours), and every page a read fault maps stays resident until released, with
    /// the kernel's fault-around (64 KB of already cached pages around each fault, whatever
    /// `MADV_RANDOM` says) many more than the bucket. Read through the mapping instead (sweeping
    /// in bucket order and releasing the pages passed every 2^18 postings), identify of one 10 s
    /// clip against a 211-hour catalog (2,817 references, 1.5 GB index) faulted 46,000 pages and
    /// held up to 190 MB of them. A range the file cannot give (an I/O error) is read through the mapping.
    public func forEachRange(_ ranges: [Range<Int>], _ body: (Int, UnsafeBufferPointer<UInt64>) -> Void) {
        guard let packed, storage != nil else {
            for (i, r) in ranges.enumerated() { withPostings(r) { body(i, $0) } }
            return
        }
        let width = packed.entryBytes
        let spanPostings = PostingIndex.readSpanBytes / width, gapPostings = PostingIndex.readGapBytes / width
        // The read bytes, with the 8 bytes after the last value that its 8-byte load reads.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: spanPostings * width + 8, alignment: 8)
        defer { buffer.deallocate() }
        var wide = [UInt64](repeating: 0, count: 256)
        var i = 0
        while i < ranges.count {
            let first = ranges[i].lowerBound
            var last = ranges[i].upperBound, j = i + 1
            while j < ranges.count && ranges[j].lowerBound - last <= gapPostings
                    && max(last, ranges[j].upperBound) - first <= spanPostings {
                last = max(last, ranges[j].upperBound)
                j += 1
            }
            let bytes = (last - first) * width + 8
            guard last - first <= spanPostings, first >= 0, last <= packed.count,
                  packed.bytes.read(first * width ..< first * width + bytes,
                                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes])) else {
                for k in i..<j { withPostings(ranges[k]) { body(k, $0) } }
                i = j
                continue
            }
            for k in i..<j {
                let r = ranges[k]
                if wide.count < r.count { wide = [UInt64](repeating: 0, count: r.count) }
                wide.withUnsafeMutableBufferPointer { out in
                    let values = UnsafeMutableBufferPointer(rebasing: out[0..<r.count])
                    PackedPostings.widen(UnsafeRawPointer(buffer.baseAddress! + (r.lowerBound - first) * width), count: r.count,
                                         entryBytes: width, frameBits: packed.frameBits, into: values)
                    body(k, UnsafeBufferPointer(values))
                }
            }
            i = j
        }
    }

    /// Most bytes ``forEachRange(_:_:)`` reads at once: 64 KB.
    static let readSpanBytes = 1 << 16
    /// Ranges ``forEachRange(_:_:)`` reads together when the bytes between them are fewer
    /// than this: 2 KB (copying them costs less than another system call).
    static let readGapBytes = 1 << 11

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

    /// Reference `reference`'s postings (hash and anchor frame), by frame, then hash. From a
    /// mapped index this reads only that reference's stretch of the file (O(its postings));
    /// in memory it walks every bucket.
    public func postings(of reference: Int) -> [Posting] {
        guard reference >= 0 && reference < referenceCount else { return [] }
        if let frameStart, let frames, let referenceHashes {
            let range = Int(frameStart[reference]) ..< Int(frameStart[reference + 1])
            return range.map { Posting(hash: referenceHashes[$0], frame: frames[$0]) }
        }
        var keys: [UInt64] = []
        for h in 0 ..< start.count - 1 {
            let lo = Int(start[h]), hi = Int(start[h + 1])
            guard hi > lo else { continue }
            withPostings(run(of: reference, in: lo..<hi)) { run in
                for e in run { keys.append((e & 0xFFFF_FFFF) << 32 | UInt64(h)) }
            }
        }
        keys.sort()
        return keys.map { Posting(hash: UInt32(truncatingIfNeeded: $0), frame: UInt32($0 >> 32)) }
    }

    /// Reference `reference`'s postings whose anchor frame lies in `frames` (by frame, then
    /// hash). From a mapped index this finds the stretch by binary search in the reference's
    /// frames and reads only it (O(log postings + the stretch's)); in memory it filters
    /// ``postings(of:)``.
    public func postings(of reference: Int, inFrames wanted: ClosedRange<UInt32>) -> [Posting] {
        guard reference >= 0 && reference < referenceCount else { return [] }
        guard let frameStart, let frames, let referenceHashes else {
            return postings(of: reference).filter { wanted.contains($0.frame) }
        }
        func first(_ frame: UInt32, _ lo: Int, _ hi: Int) -> Int {
            var a = lo, b = hi
            while a < b { let m = (a + b) / 2; if frames[m] < frame { a = m + 1 } else { b = m } }
            return a
        }
        let lo = Int(frameStart[reference]), hi = Int(frameStart[reference + 1])
        let a = first(wanted.lowerBound, lo, hi)
        let b = wanted.upperBound == .max ? hi : first(wanted.upperBound + 1, a, hi)
        return (a..<b).map { Posting(hash: referenceHashes[$0], frame: frames[$0]) }
    }

    /// Reference `reference`'s postings as `hash << 32 | frame`, ordered by hash, then frame, read from a mapped index's per-reference sections (O(the
    /// reference's postings), whatever the catalog's size; the pages read leave the process's
    /// resident set again); `nil` for an index built in memory or a reference out of range.
    /// Matching looks one reference's postings up here instead of in the buckets: the buckets of
    /// a large catalog span hundreds of megabytes, and every page a lookup touches (with the
    /// kernel's fault-around, 64 KB of them) stays resident.
    public func postingsByHash(of reference: Int) -> [UInt64]? {
        hashDirectory(of: reference)?.keys
    }

    /// ``postingsByHash(of:)`` of `reference` restricted to the postings whose hash is one of
    /// `wanted` (any order, repeats allowed), in the same order; `nil` as for ``postingsByHash(of:)``.
    public func postingsByHash(of reference: Int, onlyHashes wanted: [UInt32]) -> [UInt64]? {
        hashDirectory(of: reference, onlyHashes: wanted)?.keys
    }

    /// ``postingsByHash(of:)`` of `reference` (then ordered by hash, then frame) with a
    /// directory over it: the hashes are cut into `cellStart.count - 1` cells (a power of two, at
    /// least half the reference's posting count) by their bits above `shift`, and the keys of cell `c`
    /// are `keys[cellStart[c] ..< cellStart[c + 1]]`. One counting sort by cell (the keys arrive
    /// by frame, so each cell's keys are ordered by frame already and are sorted by hash in
    /// place, about 2 keys a cell), instead of a radix sort of every key and a hash table over
    /// the result: a lookup reads one directory entry and the few keys of its cell.
    /// `nil` as for ``postingsByHash(of:)``.
    func hashDirectory(of reference: Int) -> (keys: [UInt64], cellStart: [UInt32], shift: Int)? {
        guard let frameStart, let frames, let referenceHashes, reference >= 0, reference < referenceCount else { return nil }
        let range = Int(frameStart[reference]) ..< Int(frameStart[reference + 1])
        let n = range.count
        let (shift, cells) = directoryCells(postings: n)
        var cellStart = [UInt32](repeating: 0, count: cells + 1)
        var keys = [UInt64](unsafeUninitializedCapacity: n) { _, written in written = n }
        frames.withUnsafeBufferPointer { f in
            referenceHashes.withUnsafeBufferPointer { h in
                cellStart.withUnsafeMutableBufferPointer { c in
                    for p in range { c[Int(h[p]) >> shift + 1] &+= 1 }
                    for i in 0..<cells { c[i + 1] &+= c[i] }
                    var cursor = [UInt32](c[0..<cells])
                    keys.withUnsafeMutableBufferPointer { out in
                        cursor.withUnsafeMutableBufferPointer { cur in
                            for p in range {
                                let cell = Int(h[p]) >> shift
                                out[Int(cur[cell])] = UInt64(h[p]) << 32 | UInt64(f[p])
                                cur[cell] &+= 1
                            }
                        }
                        // Within a cell, by hash (then frame: the keys came in frame order).
                        for cell in 0..<cells {
                            let lo = Int(c[cell]), hi = Int(c[cell + 1])
                            guard hi - lo > 1 else { continue }
                            if hi - lo > 32 {
                                var part = UnsafeMutableBufferPointer(rebasing: out[lo..<hi])
                                part.sort()
                                continue
                            }
                            for i in (lo + 1)..<hi {
                                let v = out[i]
                                var j = i
                                while j > lo && out[j - 1] > v { out[j] = out[j - 1]; j -= 1 }
                                out[j] = v
                            }
                        }
                    }
                }
            }
        }
        frames.releaseResidentPages(range)
        referenceHashes.releaseResidentPages(range)
        return (keys, cellStart, shift)
    }

    /// The cells of a hash directory over `n` postings (see ``hashDirectory(of:)``): the hash bits
    /// above `shift` pick one of `cells` (a power of two, at least 16). About 2 keys a cell: most
    /// cells then hold one hash, already in frame order, so ordering a cell costs a comparison or
    /// two and a lookup reads one or two keys (with about 8 keys a cell, as before, building the
    /// directories of the references one 10 s clip shortlists was a ninth of identify's CPU time
    /// on the 8-hour bench catalog); the directory takes 2 bytes a posting.
    private func directoryCells(postings n: Int) -> (shift: Int, cells: Int) {
        let hashBits = max(1, Int.bitWidth - max(0, start.count - 2).leadingZeroBitCount)
        let cellBits = min(hashBits, max(4, Int.bitWidth - max(0, n / 2 - 1).leadingZeroBitCount))
        return (hashBits - cellBits, 1 << cellBits)
    }

    /// ``hashDirectory(of:)`` of `reference`'s postings whose hash is one of `wanted` only (in
    /// any order, repeats allowed): a lookup of one of those hashes finds the same postings, in
    /// the same order, as in the whole directory; a lookup of any other hash finds none. For a
    /// few thousand hashes (one query's landmarks at a speed or two) this reads the reference's
    /// hashes once against a small hash set and orders only the postings kept, instead of
    /// ordering all of them (about 1.4 ms for a reference of 48,000 postings). `nil` as for
    /// ``postingsByHash(of:)``.
    func hashDirectory(of reference: Int, onlyHashes wanted: [UInt32]) -> (keys: [UInt64], cellStart: [UInt32], shift: Int)? {
        guard let frameStart, let frames, let referenceHashes, reference >= 0, reference < referenceCount else { return nil }
        let range = Int(frameStart[reference]) ..< Int(frameStart[reference + 1])
        // An open-addressing set of the wanted hashes (`UInt32.max`: empty), at most half full.
        let setBits = max(4, Int.bitWidth - (2 * wanted.count).leadingZeroBitCount)
        let mask = (1 << setBits) - 1
        var set = [UInt32](repeating: .max, count: 1 << setBits)
        @inline(__always) func slot(_ h: UInt32) -> Int { Int((UInt64(h) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask }
        for h in wanted where h != .max {
            var i = slot(h)
            while set[i] != .max && set[i] != h { i = (i + 1) & mask }
            set[i] = h
        }
        var keys: [UInt64] = []
        frames.withUnsafeBufferPointer { f in
            referenceHashes.withUnsafeBufferPointer { hs in
                set.withUnsafeBufferPointer { t in
                    for p in range {
                        let h = hs[p]
                        var i = slot(h)
                        while t[i] != .max {
                            if t[i] == h { keys.append(UInt64(h) << 32 | UInt64(f[p])); break }
                            i = (i + 1) & mask
                        }
                    }
                }
            }
        }
        frames.releaseResidentPages(range)
        referenceHashes.releaseResidentPages(range)
        keys.sort()
        let n = keys.count
        let (shift, cells) = directoryCells(postings: n)
        var cellStart = [UInt32](repeating: 0, count: cells + 1)
        for k in keys { cellStart[Int(k >> 32) >> shift + 1] += 1 }
        for i in 0..<cells { cellStart[i + 1] += cellStart[i] }
        return (keys, cellStart, shift)
    }

    /// Every reference's postings (see ``postings(of:)``) as boundaries (`referenceCount + 1`),
    /// frames and hashes, reference after reference: the last three sections of an index file.
    func referencePostingTable() -> (start: [UInt64], frames: [UInt32], hashes: [UInt32]) {
        let entries = self.entries
        var counts = [UInt64](repeating: 0, count: referenceCount + 1)
        for e in entries { counts[Int(e >> 32) + 1] += 1 }
        for r in 0..<referenceCount { counts[r + 1] += counts[r] }
        var cursor = counts
        var keys = [UInt64](repeating: 0, count: entries.count)
        for h in 0 ..< start.count - 1 {
            for i in Int(start[h]) ..< Int(start[h + 1]) {
                let r = Int(entries[i] >> 32)
                keys[Int(cursor[r])] = (entries[i] & 0xFFFF_FFFF) << 32 | UInt64(h)
                cursor[r] += 1
            }
        }
        for r in 0..<referenceCount { keys[Int(counts[r]) ..< Int(counts[r + 1])].sort() }
        return (counts, keys.map { UInt32($0 >> 32) }, keys.map { UInt32(truncatingIfNeeded: $0) })
    }

    /// Lets the pages of a mapped index that this process has read leave its resident set
    /// (they stay in the page cache): a long scan calls it now and then so its memory stays
    /// bounded whatever the catalog's size. No effect on an index built in memory.
    public func releaseResidentPages() {
        storage?.releaseResidentPages()
    }

    /// Total number of postings.
    public var count: Int { wide?.count ?? packed?.count ?? 0 }

    /// Bytes per posting and frame bits an index file packs postings in (see ``IndexFile``):
    /// the fewest whole bytes that hold the frame bits of `maxFrame` (at least 1) and the bits
    /// of the largest reference index `referenceCount - 1` (at least 1), at most 8.
    public static func packedShape(referenceCount: Int, maxFrame: UInt64) -> (entryBytes: Int, frameBits: Int) {
        PackedPostings.shape(referenceCount: referenceCount, maxFrame: maxFrame)
    }

    /// Index range of reference `reference`'s postings within `range` (a bucket or part of
    /// one: a bucket is sorted by reference), found by binary search on the stored postings (a
    /// mapped index's packed values are compared as they are, not widened first).
    public func run(of reference: Int, in range: Range<Int>) -> Range<Int> {
        guard !range.isEmpty, reference >= 0 else { return range.lowerBound..<range.lowerBound }
        if let wide {
            return wide.withUnsafeBufferPointer { PostingIndex.run(of: reference, in: $0, range.lowerBound, range.upperBound) }
        }
        guard let packed else { return range.lowerBound..<range.lowerBound }
        return packed.run(of: reference, in: range)
    }

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

/// Postings of a mapped index file, `count` values of `entryBytes` little-endian bytes each
/// (`referenceIndex << frameBits | frame`), followed by at least 8 bytes of padding so every
/// value can be read with one unaligned 8-byte load.
struct PackedPostings: @unchecked Sendable {
    /// The packed bytes (`count · entryBytes` plus the padding).
    let bytes: PostingBuffer<UInt8>
    /// Number of postings.
    let count: Int
    /// Bytes per posting, 1…8.
    let entryBytes: Int
    /// Low bits of a value that hold the frame, 1…32.
    let frameBits: Int

    /// Bytes per posting and frame bits that hold every posting of `referenceCount`
    /// references whose largest anchor frame is `maxFrame`.
    static func shape(referenceCount: Int, maxFrame: UInt64) -> (entryBytes: Int, frameBits: Int) {
        let frameBits = max(1, 64 - maxFrame.leadingZeroBitCount)
        let referenceBits = max(1, 64 - UInt64(max(0, referenceCount - 1)).leadingZeroBitCount)
        return (min(8, (frameBits + referenceBits + 7) / 8), frameBits)
    }

    /// Index range of reference `reference`'s postings within `range` (sorted by reference):
    /// a linear walk over short ranges (most buckets hold a few postings), a binary search
    /// over longer ones.
    func run(of reference: Int, in range: Range<Int>) -> Range<Int> {
        let width = entryBytes, shift = UInt64(frameBits)
        let valueMask: UInt64 = width == 8 ? .max : (1 << UInt64(8 * width)) - 1
        let low = UInt64(reference) << shift, high = UInt64(reference + 1) << shift
        return bytes.withUnsafeBufferPointer { b in
            let base = UnsafeRawPointer(b.baseAddress!)
            @inline(__always) func value(_ i: Int) -> UInt64 {
                base.loadUnaligned(fromByteOffset: i * width, as: UInt64.self).littleEndian & valueMask
            }
            func firstIndex(_ from: Int, atLeast bound: UInt64) -> Int {
                var lo = from, hi = range.upperBound
                while hi - lo > 8 {
                    let mid = (lo + hi) / 2
                    if value(mid) < bound { lo = mid + 1 } else { hi = mid }
                }
                while lo < hi && value(lo) < bound { lo += 1 }
                return lo
            }
            let first = firstIndex(range.lowerBound, atLeast: low)
            return first..<firstIndex(first, atLeast: high)
        }
    }

    /// Writes postings `range` as `referenceIndex << 32 | frame` into `out` (`range.count` values).
    @inline(__always)
    func widen(_ range: Range<Int>, into out: UnsafeMutableBufferPointer<UInt64>) {
        bytes.withUnsafeBufferPointer { b in
            PackedPostings.widen(UnsafeRawPointer(b.baseAddress!) + range.lowerBound * entryBytes, count: range.count,
                                 entryBytes: entryBytes, frameBits: frameBits, into: out)
        }
    }

    /// Writes the `count` packed values at `base` (`entryBytes` each, followed by at least 8
    /// readable bytes) as `referenceIndex << 32 | frame` into `out`.
    @inline(__always)
    static func widen(_ base: UnsafeRawPointer, count: Int, entryBytes width: Int, frameBits: Int, into out: UnsafeMutableBufferPointer<UInt64>) {
        let shift = UInt64(frameBits)
        let valueMask: UInt64 = width == 8 ? .max : (1 << UInt64(8 * width)) - 1
        let frameMask: UInt64 = (1 << shift) - 1
        for i in 0..<count {
            let v = base.loadUnaligned(fromByteOffset: i * width, as: UInt64.self).littleEndian & valueMask
            out[i] = (v >> shift) << 32 | (v & frameMask)
        }
    }
}
