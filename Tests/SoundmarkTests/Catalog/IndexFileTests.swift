import CSQLite
import Foundation
import XCTest
import Soundmark

/// The persistent index file (`CATALOG.index`): the same postings as an index built in memory,
/// never used when stale, and the format-version upgrade.
final class IndexFileTests: XCTestCase {
    private let ids = ["wesnoth-knolls", "supertux-forest", "supertux-chipdisko"]

    private func catalogWithReferences(_ ids: [String]) throws -> (path: String, signatures: [String: Signature]) {
        let path = try TestSupport.temporaryDirectory(self).appendingPathComponent("catalog.db").path
        let catalog = try Catalog(path: path, create: true)
        var signatures: [String: Signature] = [:]
        for id in ids {
            let sig = try TestSupport.referenceSignature(id)
            signatures[id] = sig
            XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: MediaItem(id: id, title: id)), .added)
        }
        return (path, signatures)
    }

    /// A 10 s query cut from reference `id` at `start` seconds.
    private func query(_ id: String, at start: Int) throws -> [Landmark] {
        let samples = try TestSupport.referenceSamples(id)
        return TestSupport.signature(of: Array(samples[(start * 8000) ..< ((start + 10) * 8000)]), role: .query).landmarks
    }

    /// A sweep over buckets (``PostingIndex/forEachRange(_:_:)``, as whole-catalog votes read a
    /// mapped index: with `pread`, ranges near each other in one read) gives every range's
    /// postings as the in-memory index holds them, whether the ranges repeat, overlap, lie far
    /// apart or span more than one read; and votes counted a range of references at a time from
    /// it find the same matches as the in-memory index counting them at once.
    func testSweepOverBucketsReadsTheSamePostingsAsTheInMemoryIndex() throws {
        let (path, signatures) = try catalogWithReferences(ids)
        let catalog = try Catalog(path: path, readOnly: true)
        _ = try catalog.loadIndex()   // writes the index file
        let mapped = try catalog.loadIndex()
        XCTAssertTrue(mapped.postings.isMapped)
        let memory = CatalogIndex(configuration: Configuration(),
                                  items: ids.sorted().map { (MediaItem(id: $0, title: $0), signatures[$0]!) })
        let start = Array(memory.postings.start)
        let total = memory.postings.count
        XCTAssertGreaterThan(total, 25_000)
        // A range of 25,000 postings (more than one read), then every bucket (every 7th twice,
        // some overlapping the next), then every 50th (far apart).
        var ranges: [Range<Int>] = [0..<25_000]
        for h in 0..<(start.count - 1) where start[h + 1] > start[h] {
            let r = Int(start[h])..<Int(start[h + 1])
            ranges.append(r)
            if h % 7 == 0 { ranges.append(r) }
            if h % 11 == 0 { ranges.append(r.lowerBound..<min(total, r.upperBound + 40)) }
        }
        let buckets = ranges.count
        for k in stride(from: 1, to: buckets, by: 50) { ranges.append(ranges[k]) }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        let expected = ranges.map { r in memory.postings.withPostings(r) { Array($0) } }
        for index in [mapped, memory] {
            var got = [[UInt64]](repeating: [], count: ranges.count)
            var order: [Int] = []
            index.postings.forEachRange(ranges) { i, postings in
                order.append(i)
                got[i] = Array(postings)
            }
            XCTAssertEqual(order, Array(ranges.indices))
            XCTAssertEqual(got, expected, "mapped: \(index.postings.isMapped)")
        }
        var parted = MatchOptions()
        parted.voteKeysPerPart = 64   // one part per reference
        for (id, at) in [("supertux-forest", 12), ("wesnoth-knolls", 30)] {
            let q = try query(id, at: at)
            let reference = Matcher(index: memory).match(q)
            XCTAssertEqual(reference.first.map { memory.references[$0.referenceIndex].item.id }, id)
            XCTAssertEqual(Matcher(index: mapped, options: parted).match(q), reference, id)
            XCTAssertEqual(Matcher(index: mapped).match(q), reference, id)
        }
    }

    func testMappedIndexHasTheInMemoryIndexPostingsAndMatchesTheSame() throws {
        let (path, signatures) = try catalogWithReferences(ids)
        let catalog = try Catalog(path: path, readOnly: true)
        // Written by the first load (add does not write it through the library), mapped by the next.
        let first = try catalog.loadIndex()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".index"))
        let mapped = try catalog.loadIndex()
        XCTAssertTrue(mapped.postings.isMapped)
        XCTAssertFalse(first.postings.isMapped)
        // The in-memory index over the same references in id order.
        let sortedIDs = ids.sorted()
        let memory = CatalogIndex(configuration: Configuration(),
                                  items: sortedIDs.map { (MediaItem(id: $0, title: $0), signatures[$0]!) })
        XCTAssertEqual(mapped.references.map(\.item.id), sortedIDs)
        XCTAssertEqual(mapped.postings.referenceCount, 3)
        XCTAssertEqual(Array(mapped.postings.start), Array(memory.postings.start))
        XCTAssertEqual(Array(mapped.postings.entries), Array(memory.postings.entries))
        for r in 0..<3 {
            XCTAssertEqual(mapped.postings.frames(of: r), memory.postings.frames(of: r))
            XCTAssertEqual(mapped.postings.frames(of: r).count, mapped.references[r].postingCount)
            // A reference's (hash, frame) postings: read from its own stretch of the file, the
            // same as walking every bucket of the in-memory index, and the same as its signature's.
            let own = mapped.postings.postings(of: r)
            XCTAssertEqual(own, memory.postings.postings(of: r))
            XCTAssertEqual(own.map(\.frame), mapped.postings.frames(of: r))
            let expected = Set(PostingCodec.postings(of: signatures[sortedIDs[r]]!).map { [$0.frame, $0.hash] })
            XCTAssertEqual(Set(own.map { [$0.frame, $0.hash] }), expected)
            // Restricted to some hashes (every third of its own, repeated, and hashes it does not
            // hold): exactly the whole table's postings of those hashes, in its order.
            let all = try XCTUnwrap(mapped.postings.postingsByHash(of: r))
            let hashes = Array(Set(own.map(\.hash))).sorted()
            let held = Set(hashes)
            let absent = Array((0..<UInt32(1 << 21)).lazy.filter { !held.contains($0) }.prefix(50))
            let wanted = stride(from: 0, to: hashes.count, by: 3).map { hashes[$0] }
            let kept = Set(wanted)
            let partial = try XCTUnwrap(mapped.postings.postingsByHash(of: r, onlyHashes: Array((wanted + Array(wanted.prefix(20)) + absent).reversed())))
            XCTAssertEqual(partial, all.filter { kept.contains(UInt32($0 >> 32)) })
            XCTAssertGreaterThan(partial.count, all.count / 4)
            XCTAssertEqual(mapped.postings.postingsByHash(of: r, onlyHashes: []), [])
            XCTAssertNil(memory.postings.postingsByHash(of: r, onlyHashes: wanted))
        }
        let q = try query("supertux-forest", at: 12)
        let fromFile = Matcher(index: mapped).match(q)
        XCTAssertEqual(fromFile, Matcher(index: memory).match(q))
        let best = try XCTUnwrap(fromFile.first)
        XCTAssertEqual(mapped.references[best.referenceIndex].item.id, "supertux-forest")
        XCTAssertEqual(best.offsetFrames * Configuration().hopDuration, 12, accuracy: 0.05)
    }

    /// Flips bytes of the index file at `path` from `offset` on, every `step` bytes, `count` times.
    private func damage(_ path: String, from offset: Int, step: Int, count: Int) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for i in stride(from: offset, to: min(bytes.count, offset + step * count), by: step) { bytes[i] ^= 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func testDamagedIndexFileIsRebuiltOrItsBadPostingsSkipped() throws {
        // A damaged bucket table (bytes flipped in the hash → postings boundaries) crashed scan
        // and identify with a range whose end came before its start.
        let (path, _) = try catalogWithReferences(ids)
        let catalog = try Catalog(path: path, readOnly: true)
        let clean = try catalog.loadIndex()
        let expected = Matcher(index: clean).match(try query("supertux-forest", at: 12))
        let hashCount = clean.postings.start.count - 1
        try damage(path + ".index", from: 64 + 4 * 1000, step: 4 * 997, count: hashCount / 997)
        let rebuilt = try catalog.loadIndex()
        XCTAssertFalse(rebuilt.postings.isMapped, "a bucket table out of order is not mapped")
        XCTAssertEqual(Array(rebuilt.postings.entries), Array(clean.postings.entries))
        XCTAssertEqual(try catalog.loadIndex().postings.isMapped, true, "the damaged file was rewritten")
        // Postings naming no reference (the top byte of packed postings flipped: reference bits
        // and high frame bits): skipped, no crash.
        let entries = 64 + (4 * (hashCount + 1) + 7) / 8 * 8
        let width = Int(try Data(contentsOf: URL(fileURLWithPath: path + ".index"))[48])
        let maxFrame = clean.postings.entries.map { $0 & 0xFFFF_FFFF }.max() ?? 0
        // 2 bits of reference index (3 references) plus the largest frame's bits, in whole bytes.
        XCTAssertEqual(width, (2 + (64 - maxFrame.leadingZeroBitCount) + 7) / 8)
        try damage(path + ".index", from: entries + width - 1, step: width * 101, count: clean.postings.count / 101)
        let damaged = try catalog.loadIndex()
        XCTAssertTrue(damaged.postings.isMapped)
        let found = Matcher(index: damaged).match(try query("supertux-forest", at: 12))
        XCTAssertEqual(found.first.map { damaged.references[$0.referenceIndex].item.id }, "supertux-forest")
        XCTAssertEqual(found.first?.offsetFrames ?? 0, expected.first?.offsetFrames ?? -1, accuracy: 1)
        let scanner = RecordingScanner(index: damaged)
        scanner.consume(try query("supertux-forest", at: 12))
        XCTAssertEqual(scanner.finish().map(\.item.id), ["supertux-forest"])
    }

    func testIndexWrittenBeforeAnAddOrRemoveIsNeverUsed() throws {
        let (path, _) = try catalogWithReferences(["supertux-forest", "wesnoth-knolls"])
        let reader = try Catalog(path: path, readOnly: true)
        XCTAssertTrue(try reader.loadIndex().postings.referenceCount == 2)
        let stale = try Data(contentsOf: URL(fileURLWithPath: path + ".index"))
        // Another connection (another process) adds a reference.
        let writer = try Catalog(path: path)
        try writer.addReferenceSignature(try TestSupport.referenceSignature("supertux-chipdisko"),
                                         representing: MediaItem(id: "chipdisko"))
        let after = try reader.loadIndex()
        XCTAssertEqual(after.references.map(\.item.id), ["chipdisko", "supertux-forest", "wesnoth-knolls"])
        XCTAssertEqual(after.postings.referenceCount, 3)
        let best = try XCTUnwrap(Matcher(index: after).match(try query("supertux-chipdisko", at: 5)).first)
        XCTAssertEqual(after.references[best.referenceIndex].item.id, "chipdisko")
        // Putting the old file back: refused (stale token), rebuilt, the new reference still found.
        try stale.write(to: URL(fileURLWithPath: path + ".index"))
        XCTAssertEqual(try reader.loadIndex().postings.referenceCount, 3)
        XCTAssertTrue(try reader.loadIndex().postings.isMapped)
        // A remove makes it stale again.
        XCTAssertTrue(try writer.remove(id: "chipdisko"))
        XCTAssertTrue(try writer.updateIndex())
        XCTAssertFalse(try writer.updateIndex())
        let removed = try reader.loadIndex()
        XCTAssertTrue(removed.postings.isMapped)
        XCTAssertEqual(removed.references.map(\.item.id), ["supertux-forest", "wesnoth-knolls"])
        XCTAssertEqual(removed.postings.referenceCount, 2)
        // A damaged (truncated) file is not used either.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path + ".index"))
        try handle.truncate(atOffset: 100)
        try handle.close()
        let rebuilt = try reader.loadIndex()
        XCTAssertFalse(rebuilt.postings.isMapped)
        XCTAssertEqual(rebuilt.postings.count, removed.postings.count)
    }

    func testVersion1CatalogIsRefusedWithHowToUpgradeThenUpgraded() throws {
        let (path, _) = try catalogWithReferences(["supertux-forest"])
        // Make it what soundmark wrote before the index: version 1, no index token.
        var db: OpaquePointer?
        XCTAssertEqual(sqlite3_open(path, &db), SQLITE_OK)
        XCTAssertEqual(sqlite3_exec(db, "UPDATE meta SET value = '1' WHERE key = 'format_version'; DELETE FROM meta WHERE key = 'index_token'", nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)
        try? FileManager.default.removeItem(atPath: path + ".index")
        XCTAssertThrowsError(try Catalog(path: path, readOnly: true)) { error in
            guard case SoundmarkError.catalogMismatch(_, let reason)? = error as? SoundmarkError else {
                return XCTFail("expected catalogMismatch, got \(error)")
            }
            XCTAssertTrue(reason.contains("format version 1"), reason)
            XCTAssertTrue(reason.contains("soundmark catalog upgrade --catalog \(path)"), reason)
        }
        XCTAssertEqual(try Catalog.upgrade(path: path), 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".index"))
        let index = try Catalog(path: path, readOnly: true).loadIndex()
        XCTAssertTrue(index.postings.isMapped)
        XCTAssertEqual(index.references.map(\.item.id), ["supertux-forest"])
        XCTAssertEqual(try Catalog.upgrade(path: path), Catalog.formatVersion) // 3 since the version features
    }

    func testPostingWidthIsTheFewestBytesThatHoldReferenceAndFrame() {
        // The 8-hour bench catalog: 129 references (8 bits), frames up to 52,961 (16 bits).
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 129, maxFrame: 52_961) == (3, 16))
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 1, maxFrame: 0) == (1, 1))
        // About 200 hours: 2,816 references (12 bits), a 20-minute reference (75,000 frames, 17 bits).
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 2_816, maxFrame: 75_000) == (4, 17))
        // 10,000 hours of 4-minute spots: 150,000 references (18 bits).
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 150_000, maxFrame: 15_000) == (4, 14))
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 150_000, maxFrame: 1 << 20) == (5, 21))
        XCTAssertTrue(PostingIndex.packedShape(referenceCount: 1 << 31, maxFrame: UInt64(UInt32.max)) == (8, 32))
    }
}
