import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Memory that backs a ``PostingBuffer``: either allocated by this process (an index built in
/// memory) or a read-only memory mapping of a persistent index file.
final class PostingStorage: @unchecked Sendable {
    /// First byte of the memory.
    let base: UnsafeRawPointer
    /// Length in bytes.
    let length: Int
    private let mapped: Bool
    /// The open file a mapping was made from (`-1` for allocated memory), read by
    /// ``read(_:into:)``; closed when released.
    private let descriptor: Int32

    /// Takes ownership of `bytes` bytes allocated with `UnsafeMutableRawPointer.allocate`.
    init(allocated: UnsafeMutableRawPointer, bytes: Int) {
        base = UnsafeRawPointer(allocated)
        length = bytes
        mapped = false
        descriptor = -1
    }

    /// Wraps a mapping made by `mmap` of the whole file open as `file` (unmapped, and the file
    /// closed, when released).
    init(mapping: UnsafeRawPointer, bytes: Int, file: Int32) {
        base = mapping
        length = bytes
        mapped = true
        descriptor = file
    }

    /// Copies the bytes at `address ..< address + out.count` (addresses within the memory)
    /// into `out`: from a mapping, with `pread` on its file, so no page of the mapping enters
    /// this process's resident set; from allocated memory, by copying.
    /// - Returns: `false` when the range is outside the memory or the file cannot be read.
    func read(_ address: UnsafeRawPointer, into out: UnsafeMutableRawBufferPointer) -> Bool {
        let offset = address - base
        guard offset >= 0, offset + out.count <= length else { return false }
        guard descriptor >= 0 else {
            if let target = out.baseAddress { target.copyMemory(from: address, byteCount: out.count) }
            return true
        }
        var done = 0
        while done < out.count {
            let n = pread(descriptor, out.baseAddress! + done, out.count - done, off_t(offset + done))
            if n > 0 { done += n } else if n == 0 || errno != EINTR { return false }
        }
        return true
    }

    /// Drops the mapping's pages from this process's resident set (`madvise(MADV_DONTNEED)`):
    /// they stay in the page cache and are mapped in again when next read. No effect on
    /// allocated memory.
    func releaseResidentPages() {
        guard mapped, length > 0 else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: base), length, Int32(MADV_DONTNEED))
    }

    /// Drops the mapping's pages that lie wholly inside `from ..< to` (addresses within the
    /// mapping) from this process's resident set, as ``releaseResidentPages()`` does for all of
    /// it. No effect on allocated memory.
    func releaseResidentPages(from: UnsafeRawPointer, to: UnsafeRawPointer) {
        guard mapped else { return }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let low = max(UInt(bitPattern: from), UInt(bitPattern: base))
        let high = min(UInt(bitPattern: to), UInt(bitPattern: base) + UInt(length))
        let first = (low + page - 1) / page * page, last = high / page * page
        guard last > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(start, Int(last - first), Int32(MADV_DONTNEED))
    }

    deinit {
        if mapped {
            if length > 0 { munmap(UnsafeMutableRawPointer(mutating: base), length) }
            if descriptor >= 0 { close(descriptor) }
        } else {
            UnsafeMutableRawPointer(mutating: base).deallocate()
        }
    }
}

/// A read-only array of fixed-width values (bucket boundaries, packed postings, frames) in memory
/// this process allocated or in a memory-mapped index file; random access, like `[Element]`.
public struct PostingBuffer<Element: FixedWidthInteger>: RandomAccessCollection, @unchecked Sendable {
    private let storage: PostingStorage?
    private let pointer: UnsafePointer<Element>?
    /// Number of values.
    public let count: Int

    init(storage: PostingStorage?, byteOffset: Int, count: Int) {
        self.storage = storage
        self.count = count
        pointer = storage.map { ($0.base + byteOffset).assumingMemoryBound(to: Element.self) }
    }

    /// Copies `values` into newly allocated memory.
    init(_ values: [Element]) {
        let bytes = Swift.max(1, values.count * MemoryLayout<Element>.stride)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 8)
        values.withUnsafeBytes { raw.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(raw), byteCount: $0.count) }
        self.init(storage: PostingStorage(allocated: raw, bytes: bytes), byteOffset: 0, count: values.count)
    }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// `count`.
    public var endIndex: Int { count }

    /// The value at `i` (`0 ..< count`, checked in debug builds).
    @inline(__always)
    public subscript(i: Int) -> Element {
        assert(i >= 0 && i < count)
        return pointer.unsafelyUnwrapped[i]
    }

    /// Lets the pages that hold only values of `range` leave this process's resident set when
    /// the values are in a mapped index file (see ``PostingStorage/releaseResidentPages(from:to:)``);
    /// no effect otherwise.
    func releaseResidentPages(_ range: Range<Int>) {
        guard let storage, let pointer, !range.isEmpty else { return }
        storage.releaseResidentPages(from: UnsafeRawPointer(pointer + range.lowerBound), to: UnsafeRawPointer(pointer + range.upperBound))
    }

    /// Copies values `range` into `out` (`range.count` values) without mapping their pages
    /// into this process's resident set (see ``PostingStorage/read(_:into:)``).
    /// - Returns: `false` when the range is out of bounds or the file cannot be read.
    func read(_ range: Range<Int>, into out: UnsafeMutableRawBufferPointer) -> Bool {
        guard let storage, let pointer, range.lowerBound >= 0, range.upperBound <= count,
              out.count == range.count * MemoryLayout<Element>.stride else { return false }
        return storage.read(UnsafeRawPointer(pointer + range.lowerBound), into: out)
    }

    /// Calls `body` with the values as a buffer pointer valid for the call.
    @inline(__always)
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: pointer, count: count)) }
    }
}

/// The persistent, search-ready posting index of a catalog: `CATALOG.index` next to the
/// SQLite file, memory-mapped by readers so a lookup touches only the pages of the query's
/// buckets (cost follows the query, not the catalog).
///
/// Layout (little-endian, every section 8-byte aligned):
/// - header, 64 bytes: magic `SMKIDX` 0 3, the catalog's index token (a random 64-bit stamp the
///   catalog changes in every transaction that adds, replaces or removes postings), hash count
///   `H`, reference count `R`, posting count `P`, FNV-1a 64 of the reference ids (each followed
///   by a 0 byte) in index order, the posting width `W` in bytes (1 byte), the frame bits `F`
///   (1 byte), 14 reserved bytes;
/// - bucket boundaries: `H + 1` UInt32 (padded to 8 bytes);
/// - packed postings: `P` values of `W` bytes, `referenceIndex << F | frame`, by hash, then
///   reference, then frame (the order of ``PostingIndex``), then 8 bytes of padding (and up to
///   the next multiple of 8). `F` holds the largest anchor frame and `W` is the fewest bytes
///   that hold `F` plus the reference index's bits (3 for the 8-hour bench catalog: 129
///   references, frames under 2^16), so a query's lookups touch fewer pages (format 2 stored 8
///   bytes a posting: identify's peak RSS on that catalog was 131 MB, 52 MB of them index pages);
/// - per-reference boundaries: `R + 1` UInt64 into the frames section;
/// - frames: `P` UInt32, each reference's anchor frames ascending (ties by hash), padded to 8 bytes;
/// - hashes: `P` UInt32, the hash of each posting of the frames section (a reference's
///   postings without walking every bucket: scan's edge check reads them), padded to 8 bytes.
///
/// A reader maps the file only when its token, counts and id digest equal those of the
/// catalog snapshot it reads in the same transaction; otherwise the index is rebuilt (or, when
/// the file cannot be written, built in memory): a stale index is never matched.
enum IndexFile {
    static let magic: [UInt8] = Array("SMKIDX".utf8) + [0, 3]
    static let headerBytes = 64

    struct Header: Equatable {
        var token: UInt64
        var hashCount: Int
        var referenceCount: Int
        var postingCount: Int
        var idsDigest: UInt64
    }

    static func align8(_ n: Int) -> Int { (n + 7) & ~7 }

    /// Byte offsets of the sections and the total file size for a header and posting width.
    static func layout(_ h: Header, entryBytes: Int) -> (start: Int, entries: Int, frameStart: Int, frames: Int, hashes: Int, size: Int) {
        let start = headerBytes
        let entries = start + align8((h.hashCount + 1) * 4)
        let frameStart = entries + align8(h.postingCount * entryBytes + 8)
        let frames = frameStart + (h.referenceCount + 1) * 8
        let hashes = frames + align8(h.postingCount * 4)
        let size = hashes + align8(h.postingCount * 4)
        return (start, entries, frameStart, frames, hashes, size)
    }

    /// FNV-1a 64 of the ids, each followed by a 0 byte.
    static func digest(ids: [String]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for id in ids {
            for b in id.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    /// Writes `index` with `header` to `path` atomically (a temporary file in the same folder,
    /// then `rename`).
    /// - Throws: ``SoundmarkError/catalogWriteFailed(path:reason:)``.
    static func write(_ index: PostingIndex, header: Header, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: String(cString: strerror(errno)))
        }
        var failed: Int32 = 0
        func put(_ raw: UnsafeRawBufferPointer) {
            var offset = 0
            while offset < raw.count && failed == 0 {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno != EINTR { failed = errno } } else { offset += n }
            }
        }
        func pad(_ written: Int) {
            let extra = align8(written) - written
            if extra > 0 { [UInt8](repeating: 0, count: extra).withUnsafeBytes { put($0) } }
        }
        var head = [UInt8](repeating: 0, count: headerBytes)
        head.replaceSubrange(0..<8, with: magic)
        func store(_ value: UInt64, at offset: Int) { for i in 0..<8 { head[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) } }
        store(header.token, at: 8)
        store(UInt64(header.hashCount), at: 16)
        store(UInt64(header.referenceCount), at: 24)
        store(UInt64(header.postingCount), at: 32)
        store(header.idsDigest, at: 40)
        let (frameStart, frames, hashes) = index.referencePostingTable()
        let (width, frameBits) = PackedPostings.shape(referenceCount: header.referenceCount, maxFrame: UInt64(frames.max() ?? 0))
        head[48] = UInt8(width)
        head[49] = UInt8(frameBits)
        head.withUnsafeBytes { put($0) }
        index.start.withUnsafeBufferPointer { put(UnsafeRawBufferPointer($0)) }
        pad(index.start.count * 4)
        index.withPostings(0..<index.count) { entries in
            // Packed a block at a time (plus one 8-byte value of padding at the end).
            var block = [UInt8](repeating: 0, count: 65_536 * width + 8)
            var first = 0
            repeat {
                let n = min(65_536, entries.count - first)
                block.withUnsafeMutableBytes { out in
                    for i in 0..<n {
                        let e = entries[first + i]
                        let v = (e >> 32) << UInt64(frameBits) | (e & 0xFFFF_FFFF)
                        out.storeBytes(of: v.littleEndian, toByteOffset: i * width, as: UInt64.self)
                    }
                }
                first += n
                let last = first == entries.count
                block.withUnsafeBytes { put(UnsafeRawBufferPointer(rebasing: $0[0 ..< (n * width + (last ? 8 : 0))])) }
            } while first < entries.count
        }
        pad(index.count * width + 8)
        frameStart.withUnsafeBytes { put($0) }
        frames.withUnsafeBytes { put($0) }
        pad(frames.count * 4)
        hashes.withUnsafeBytes { put($0) }
        pad(hashes.count * 4)
        if failed == 0 && fsync(fd) != 0 { failed = errno }
        close(fd)
        if failed == 0 && rename(temporary, path) != 0 { failed = errno }
        if failed != 0 {
            unlink(temporary)
            throw SoundmarkError.catalogWriteFailed(path: path, reason: String(cString: strerror(failed)))
        }
    }

    /// Whether `values` never decrease, start at `first` and end at `last`.
    static func ascending<T: FixedWidthInteger>(_ values: PostingBuffer<T>, from first: T, to last: T) -> Bool {
        values.withUnsafeBufferPointer { v in
            guard let a = v.first, let z = v.last, a == first, z == last else { return false }
            for i in 1..<v.count where v[i] < v[i - 1] { return false }
            return true
        }
    }

    /// Maps the index file at `path` when it exists and its header equals `expected`; `nil`
    /// when it is missing, stale, truncated or not an index file.
    static func map(path: String, expected: Header) -> PostingIndex? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, Int(info.st_size) >= headerBytes else { close(fd); return nil }
        let size = Int(info.st_size)
        guard let raw = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0),
              raw != UnsafeMutableRawPointer(bitPattern: -1) else { close(fd); return nil }
        // Lookups jump between buckets: no read-ahead around each page read.
        _ = madvise(raw, size, Int32(MADV_RANDOM))
        // (The file stays open: whole-catalog votes read their buckets with pread, see
        // PostingIndex.forEachRange(_:_:).)
        let storage = PostingStorage(mapping: UnsafeRawPointer(raw), bytes: size, file: fd)
        let bytes = UnsafeRawBufferPointer(start: storage.base, count: size)
        guard Array(bytes[0..<8]) == magic else { return nil }
        func load(_ offset: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian }
        let found = Header(token: load(8), hashCount: Int(load(16)), referenceCount: Int(load(24)),
                           postingCount: Int(load(32)), idsDigest: load(40))
        guard found == expected else { return nil }
        let width = Int(bytes[48]), frameBits = Int(bytes[49])
        // The reference bits must hold every reference index.
        let referenceBits = 64 - UInt64(max(0, expected.referenceCount - 1)).leadingZeroBitCount
        guard (1...8).contains(width), (1...32).contains(frameBits), 8 * width - frameBits >= referenceBits else { return nil }
        let shape = layout(expected, entryBytes: width)
        guard size == shape.size else { return nil }
        let start = PostingBuffer<UInt32>(storage: storage, byteOffset: shape.start, count: expected.hashCount + 1)
        guard start[expected.hashCount] == UInt32(truncatingIfNeeded: expected.postingCount) else { return nil }
        // Damage that would send a lookup outside the postings (a bucket or a reference's
        // frames that end before they start) makes the file unusable: it is rebuilt. (A
        // damaged posting inside the bounds is not detected; matching skips one that names no
        // reference.)
        let frameStart = PostingBuffer<UInt64>(storage: storage, byteOffset: shape.frameStart, count: expected.referenceCount + 1)
        guard ascending(start, from: 0, to: UInt32(truncatingIfNeeded: expected.postingCount)),
              ascending(frameStart, from: 0, to: UInt64(expected.postingCount)) else { return nil }
        let packed = PackedPostings(bytes: PostingBuffer(storage: storage, byteOffset: shape.entries, count: shape.frameStart - shape.entries),
                                    count: expected.postingCount, entryBytes: width, frameBits: frameBits)
        return PostingIndex(start: start, packed: packed,
                            frameStart: frameStart,
                            frames: PostingBuffer(storage: storage, byteOffset: shape.frames, count: expected.postingCount),
                            hashes: PostingBuffer(storage: storage, byteOffset: shape.hashes, count: expected.postingCount),
                            referenceCount: expected.referenceCount, storage: storage)
    }
}
