import Foundation
import XCTest
import Soundmark
#if canImport(Glibc)
import Glibc
#endif

final class CatalogTests: XCTestCase {
    private func newCatalogPath() throws -> String {
        try TestSupport.temporaryDirectory(self).appendingPathComponent("catalog.db").path
    }

    private let forestItem = MediaItem(id: "forest", title: "Forest Dance", subtitle: "SuperTux Soundtrack",
                                       artist: "Wansti", properties: ["label": "demo", "year": "2006"])

    // MARK: - add, list, show, re-add, remove

    func testAddThenListAndShow() throws {
        let path = try newCatalogPath()
        let sig = try TestSupport.referenceSignature("supertux-forest")
        let postings = PostingCodec.postings(of: sig)
        do {
            let catalog = try Catalog(path: path, create: true)
            XCTAssertEqual(try catalog.references(), [])
            XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem, source: "/music/forest.ogg"), .added)
        }
        // Reopened from the file.
        let catalog = try Catalog(path: path)
        let refs = try catalog.references()
        XCTAssertEqual(refs.count, 1)
        let r = try XCTUnwrap(refs.first)
        XCTAssertEqual(r.item, forestItem)
        XCTAssertEqual(r.duration, Double(sig.sampleCount) / 8000, accuracy: 1e-9)
        XCTAssertEqual(r.duration, 40, accuracy: 0.05)
        XCTAssertEqual(r.postingCount, postings.count)
        XCTAssertGreaterThan(r.postingCount, 1000)
        XCTAssertEqual(r.postingBytes, PostingCodec.encode(postings).count)
        XCTAssertEqual(r.annotationCount, 0)
        XCTAssertEqual(r.source, "/music/forest.ogg")
        XCTAssertEqual(try catalog.reference(id: "forest"), r)
        XCTAssertNil(try catalog.reference(id: "nope"))
        let index = try catalog.loadIndex()
        XCTAssertEqual(index.references, [r])
        XCTAssertEqual(index.postings.count, r.postingCount)
    }

    func testReAddIsUnchangedUpdatedOrDuplicate() throws {
        let catalog = try Catalog(path: try newCatalogPath(), create: true)
        let forest = try TestSupport.referenceSignature("supertux-forest")
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: forestItem), .added)
        // Same signature, same id, same metadata.
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: forestItem), .unchanged)
        // Same audio and id, new title.
        var retitled = forestItem
        retitled.title = "Forest Dance (remaster)"
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: retitled), .updated)
        XCTAssertEqual(try catalog.references().map(\.item), [retitled])
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: retitled), .unchanged)
        // Same audio under another id: skipped.
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: MediaItem(id: "copy", title: "Copy")),
                       .duplicate(of: "forest"))
        XCTAssertEqual(try catalog.references().map(\.item.id), ["forest"])
        // Other audio under an existing id: replaced.
        let knolls = try TestSupport.referenceSignature("wesnoth-knolls")
        XCTAssertEqual(try catalog.addReferenceSignature(knolls, representing: retitled), .replaced)
        let refs = try catalog.references()
        XCTAssertEqual(refs.map(\.item.id), ["forest"])
        XCTAssertEqual(refs.first?.postingCount, PostingCodec.postings(of: knolls).count)
        // The forest audio is free again.
        XCTAssertEqual(try catalog.addReferenceSignature(forest, representing: MediaItem(id: "copy")), .added)
        XCTAssertEqual(try catalog.references().map(\.item.id), ["copy", "forest"])
    }

    func testRemoveDropsTheReferenceAndItsPostings() throws {
        let catalog = try Catalog(path: try newCatalogPath(), create: true)
        for id in ["supertux-forest", "wesnoth-battle", "wesnoth-knolls"] {
            XCTAssertEqual(try catalog.addReferenceSignature(try TestSupport.referenceSignature(id),
                                                             representing: MediaItem(id: id)), .added)
        }
        let before = try catalog.loadIndex()
        XCTAssertEqual(before.postings.count, before.references.reduce(0) { $0 + $1.postingCount })
        let battle = try XCTUnwrap(try catalog.reference(id: "wesnoth-battle"))
        XCTAssertTrue(try catalog.remove(id: "wesnoth-battle"))
        XCTAssertEqual(try catalog.references().map(\.item.id), ["supertux-forest", "wesnoth-knolls"])
        XCTAssertNil(try catalog.reference(id: "wesnoth-battle"))
        let after = try catalog.loadIndex()
        XCTAssertEqual(after.references.map(\.item.id), ["supertux-forest", "wesnoth-knolls"])
        XCTAssertEqual(after.postings.count, before.postings.count - battle.postingCount)
        XCTAssertEqual(after.postings.referenceCount, 2)
        // A clip of the removed reference no longer matches it.
        let clip = Array(try TestSupport.referenceSamples("wesnoth-battle")[80000..<160000])
        let matches = Matcher(index: after).matchedItems(for: TestSupport.signature(of: clip, role: .query))
        XCTAssertFalse(matches.contains { $0.item.id == "wesnoth-battle" })
        XCTAssertFalse(try catalog.remove(id: "wesnoth-battle"))
        XCTAssertFalse(try catalog.remove(id: "never-there"))
    }

    // MARK: - duplicate check

    /// Issue 40 item 5: the duplicate check decoded and voted for every stored reference of the
    /// new one's length, so ingest slowed quadratically when references shared a length (100
    /// files of 12 s into 1,639 references of 12 s took 70 s). It now looks candidates up by
    /// fingerprint (``DuplicateKeys``): a noisy copy among 48 references of its length is still
    /// found, in a catalog written without keys (they are computed on the first check), after a
    /// removal and after a replacement; other audio of the same length is added.
    func testTheDuplicateCheckLooksCandidatesUpByFingerprint() throws {
        let path = try newCatalogPath()
        let catalog = try Catalog(path: path, create: true)
        var slices: [(id: String, samples: [Float])] = []
        for id in TestSupport.referenceIDs.prefix(4) {
            for k in 0..<12 { slices.append(("\(id)-\(k)", try TestSupport.piece(id, from: Double(k) * 2.5, seconds: 12))) }
        }
        // Stored as an older soundmark stores them: no duplicate keys.
        for slice in slices {
            XCTAssertEqual(try catalog.addReferenceSignature(TestSupport.signature(of: slice.samples, role: .reference),
                                                             representing: MediaItem(id: slice.id), allowingDuplicateAudio: true), .added)
        }
        let original = try XCTUnwrap(slices.first { $0.id == "wesnoth-knolls-5" })
        let copy = TestSupport.signature(of: TestSupport.withPinkNoise(original.samples.map { $0 * 0.7 }, snr: 30), role: .reference)
        XCTAssertEqual(try catalog.addReferenceSignature(copy, representing: MediaItem(id: "copy"), checkingSameRecording: .aligned),
                       .duplicate(of: "wesnoth-knolls-5"))
        // Same length, other music: added (and its keys stored with it).
        let other = TestSupport.signature(of: try TestSupport.piece("wesnoth-battle", from: 1.25, seconds: 12), role: .reference)
        XCTAssertEqual(try catalog.addReferenceSignature(other, representing: MediaItem(id: "battle-1.25"), checkingSameRecording: .aligned), .added)
        XCTAssertEqual(try catalog.addReferenceSignature(copy, representing: MediaItem(id: "copy"), checkingSameRecording: .aligned),
                       .duplicate(of: "wesnoth-knolls-5"))
        // The original replaced by other audio under its id: the copy is no longer a duplicate of it.
        let replacement = TestSupport.signature(of: try TestSupport.piece("wesnoth-battle", from: 3.75, seconds: 12), role: .reference)
        XCTAssertEqual(try catalog.addReferenceSignature(replacement, representing: MediaItem(id: "wesnoth-knolls-5"), allowingDuplicateAudio: true), .replaced)
        XCTAssertEqual(try catalog.addReferenceSignature(copy, representing: MediaItem(id: "copy"), checkingSameRecording: .aligned), .added)
        XCTAssertTrue(try catalog.remove(id: "copy"))
        XCTAssertEqual(try catalog.addReferenceSignature(copy, representing: MediaItem(id: "copy-2"), checkingSameRecording: .aligned), .added)
        // A reopened catalog finds it by its stored keys.
        let reopened = try Catalog(path: path)
        XCTAssertEqual(try reopened.addReferenceSignature(copy, representing: MediaItem(id: "copy-3"), checkingSameRecording: .aligned),
                       .duplicate(of: "copy-2"))
        XCTAssertEqual(try reopened.references().count, 50)
    }

    // MARK: - annotations

    func testAnnotationsAreStoredReplacedAndRemovedWithTheReference() throws {
        let catalog = try Catalog(path: try newCatalogPath(), create: true)
        let sig = try TestSupport.referenceSignature("supertux-forest")
        let first = [Annotation(start: 0, end: 2.5, text: "intro"), Annotation(start: 2.5, end: 10, text: "verse\nline 2")]
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem, annotations: first), .added)
        XCTAssertEqual(try catalog.annotations(id: "forest"), first)
        XCTAssertEqual(try catalog.reference(id: "forest")?.annotationCount, 2)
        // Re-adding the same audio with other annotations is an update that replaces them.
        let second = [Annotation(start: 1, end: 3, text: "chorus")]
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem, annotations: second), .updated)
        XCTAssertEqual(try catalog.annotations(id: "forest"), second)
        // Same annotations again: unchanged; no annotations given: kept.
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem, annotations: second), .unchanged)
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem), .unchanged)
        XCTAssertEqual(try catalog.annotations(id: "forest"), second)
        // setAnnotations replaces the whole list.
        let third = (0..<5).map { Annotation(start: Double($0), end: Double($0) + 0.5, text: "cue \($0)") }
        try catalog.setAnnotations(third, forReference: "forest")
        XCTAssertEqual(try catalog.annotations(id: "forest"), third)
        try catalog.setAnnotations([], forReference: "forest")
        XCTAssertEqual(try catalog.annotations(id: "forest"), [])
        try catalog.setAnnotations(third, forReference: "forest")
        // Unknown reference: refused, nothing stored.
        XCTAssertThrowsError(try catalog.setAnnotations(second, forReference: "nope")) { error in
            XCTAssertEqual(error as? SoundmarkError, .unknownReference(path: catalog.path, id: "nope"))
        }
        XCTAssertEqual(try catalog.annotations(id: "nope"), [])
        // Removed with the reference; a new reference under the same id starts without any.
        XCTAssertTrue(try catalog.remove(id: "forest"))
        XCTAssertEqual(try catalog.annotations(id: "forest"), [])
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem), .added)
        XCTAssertEqual(try catalog.annotations(id: "forest"), [])
        XCTAssertEqual(try catalog.reference(id: "forest")?.annotationCount, 0)
    }

    func testFailedAnnotationReplacementLeavesTheOldOnes() throws {
        let catalog = try Catalog(path: try newCatalogPath(), create: true)
        let sig = try TestSupport.referenceSignature("supertux-forest")
        let old = [Annotation(start: 0, end: 1, text: "a"), Annotation(start: 1, end: 2, text: "b")]
        XCTAssertEqual(try catalog.addReferenceSignature(sig, representing: forestItem, annotations: old), .added)
        // The second annotation cannot be stored (SQLite stores NaN as NULL, and start is NOT NULL):
        // the first must not be left behind, the old list must survive.
        let bad = [Annotation(start: 5, end: 6, text: "new"), Annotation(start: .nan, end: 7, text: "broken")]
        XCTAssertThrowsError(try catalog.setAnnotations(bad, forReference: "forest"))
        XCTAssertEqual(try catalog.annotations(id: "forest"), old)
        XCTAssertEqual(try Catalog(path: catalog.path).annotations(id: "forest"), old)
    }

    // MARK: - opening

    func testCatalogOfAnotherConfigurationIsRefused() throws {
        let path = try newCatalogPath()
        var custom = Configuration()
        custom.fanOut = 3
        do {
            let catalog = try Catalog(path: path, create: true, configuration: custom)
            XCTAssertEqual(catalog.configuration, custom)
            // A signature of the default configuration does not go into it.
            XCTAssertThrowsError(try catalog.addReferenceSignature(try TestSupport.referenceSignature("supertux-forest"),
                                                                   representing: forestItem)) { error in
                guard case SoundmarkError.catalogMismatch? = error as? SoundmarkError else {
                    return XCTFail("expected catalogMismatch, got \(error)")
                }
            }
        }
        XCTAssertThrowsError(try Catalog(path: path)) { error in
            guard case SoundmarkError.catalogMismatch(let p, let reason)? = error as? SoundmarkError else {
                return XCTFail("expected catalogMismatch, got \(error)")
            }
            XCTAssertEqual(p, path)
            // The message names the parameter that differs, and only that one.
            XCTAssertTrue(reason.contains("(fanOut 3 (expected 5))"), reason)
        }
        XCTAssertThrowsError(try Catalog(path: path, create: true)) { error in
            guard case SoundmarkError.catalogMismatch? = error as? SoundmarkError else {
                return XCTFail("expected catalogMismatch, got \(error)")
            }
        }
        // With its own configuration it opens.
        XCTAssertEqual(try Catalog(path: path, configuration: custom).references(), [])
    }

    func testQueryOnlyParametersDoNotMakeACatalogUnreadable() throws {
        let path = try newCatalogPath()
        var tuned = Configuration()
        tuned.queryFanOut = 16
        tuned.queryPeakFrameRadius = 5
        tuned.queryPeakBinRadius = 8
        do {
            let catalog = try Catalog(path: path, create: true, configuration: tuned)
            try catalog.addReferenceSignature(try TestSupport.referenceSignature("supertux-forest"), representing: forestItem)
        }
        // Built with other query parameters, read with the defaults (and the other way round).
        XCTAssertEqual(try Catalog(path: path).references().map(\.item.id), ["forest"])
        XCTAssertEqual(try Catalog(path: path, configuration: tuned).references().map(\.item.id), ["forest"])
        XCTAssertEqual(try Catalog(path: path).loadIndex().configuration, Configuration())
    }

    func testTextFileIsNotACatalog() throws {
        let path = try newCatalogPath()
        try Data("id,title\nforest,Forest Dance\n".utf8).write(to: URL(fileURLWithPath: path))
        for create in [false, true] {
            XCTAssertThrowsError(try Catalog(path: path, create: create)) { error in
                guard case SoundmarkError.catalogUnreadable(let p, let reason)? = error as? SoundmarkError else {
                    return XCTFail("expected catalogUnreadable, got \(error)")
                }
                XCTAssertEqual(p, path)
                XCTAssertTrue(reason.contains("not a soundmark catalog"), reason)
            }
        }
        // The file is left alone.
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "id,title\nforest,Forest Dance\n")
    }

    func testOtherSQLiteDatabaseIsNotACatalog() throws {
        let sqlite = "/usr/bin/sqlite3"
        guard FileManager.default.isExecutableFile(atPath: sqlite) else { throw XCTSkip("no sqlite3 CLI") }
        let path = try newCatalogPath()
        XCTAssertEqual(try TestSupport.run(sqlite, [path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);"]).status, 0)
        XCTAssertThrowsError(try Catalog(path: path, create: true)) { error in
            guard case SoundmarkError.catalogUnreadable(_, let reason)? = error as? SoundmarkError else {
                return XCTFail("expected catalogUnreadable, got \(error)")
            }
            XCTAssertTrue(reason.contains("not a soundmark catalog"), reason)
        }
    }

    func testMissingFileWithoutCreateIsUnreadableAndNotCreated() throws {
        let path = try newCatalogPath()
        XCTAssertThrowsError(try Catalog(path: path)) { error in
            guard case SoundmarkError.catalogUnreadable(let p, _)? = error as? SoundmarkError else {
                return XCTFail("expected catalogUnreadable, got \(error)")
            }
            XCTAssertEqual(p, path)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
        // A directory is not a catalog either.
        let dir = (path as NSString).deletingLastPathComponent
        XCTAssertThrowsError(try Catalog(path: dir, create: true)) { error in
            guard case SoundmarkError.catalogUnreadable? = error as? SoundmarkError else {
                return XCTFail("expected catalogUnreadable, got \(error)")
            }
        }
    }

    // MARK: - crash safety

    /// A first `catalog add` whose every input fails (a file that is not media, a missing file)
    /// exits 2 with a one-line error naming the file and leaves no catalog or index file behind;
    /// into an existing catalog (or with one input added) the catalog stays.
    func testAFailedFirstAddLeavesNoEmptyCatalog() throws {
        let binary = try TestSupport.soundmarkBinary()
        let dir = try TestSupport.temporaryDirectory(self)
        let bad = dir.appendingPathComponent("bad.mp3").path
        try Data("junk".utf8).write(to: URL(fileURLWithPath: bad))
        let good = dir.appendingPathComponent("tone.wav").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:seed=3:amplitude=0.5:duration=20", "-ac", "1", "-ar", "8000"],
                               output: good)
        let catalogPath = dir.appendingPathComponent("new.db").path
        func leftover() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("new.db") }.sorted()
        }
        for inputs in [[bad], [dir.appendingPathComponent("missing.wav").path], [bad, dir.appendingPathComponent("missing.wav").path]] {
            let r = try TestSupport.run(binary, ["catalog", "add", "--catalog", catalogPath] + inputs)
            XCTAssertEqual(r.status, 2, r.stderr)
            XCTAssertTrue(r.stderr.contains(inputs[0]), r.stderr)
            XCTAssertEqual(try leftover(), [], "\(inputs)")
        }
        let some = try TestSupport.run(binary, ["catalog", "add", "--catalog", catalogPath, bad, good])
        XCTAssertEqual(some.status, 1, some.stderr)
        XCTAssertEqual(try leftover(), ["new.db", "new.db.index"])
        let again = try TestSupport.run(binary, ["catalog", "add", "--catalog", catalogPath, bad])
        XCTAssertEqual(again.status, 2, again.stderr)
        let list = try TestSupport.run(binary, ["catalog", "list", "--catalog", catalogPath])
        XCTAssertEqual(list.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }, ["tone"])
    }

    /// `catalog add` of a folder is SIGKILLed after its first reference is committed: the catalog
    /// must open, hold only complete references, and a second run adds the rest.
    func testKillDuringAddLeavesACompleteCatalog() throws {
        let binary = try TestSupport.soundmarkBinary()
        let dir = try TestSupport.temporaryDirectory(self)
        let media = dir.appendingPathComponent("media")
        try FileManager.default.createDirectory(at: media, withIntermediateDirectories: true)
        let count = 6
        for i in 1...count {
            // 90 s of distinct pink noise each (about 1 s of work per file for a debug build).
            try TestSupport.ffmpeg(["-f", "lavfi", "-i", "anoisesrc=color=pink:seed=\(100 + i):amplitude=0.5:duration=90",
                                    "-ac", "1", "-ar", "22050"], output: media.appendingPathComponent("noise-\(i).wav").path)
        }
        var killedWith: [String]? = nil
        var catalogPath = ""
        for attempt in 1...4 where killedWith == nil {
            catalogPath = dir.appendingPathComponent("catalog-\(attempt).db").path
            let add = try TestSupport.start(binary, ["catalog", "add", "--catalog", catalogPath, media.path])
            var listed: [String] = []
            let deadline = Date().addingTimeInterval(60)
            while add.process.isRunning && Date() < deadline {
                let attributes = try? FileManager.default.attributesOfItem(atPath: catalogPath)
                let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
                if size > 0 {
                    let list = try TestSupport.run(binary, ["catalog", "list", "--catalog", catalogPath])
                    listed = list.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
                    if list.status == 0 && !listed.isEmpty {
                        kill(add.process.processIdentifier, SIGKILL)
                        break
                    }
                }
                usleep(20_000)
            }
            add.process.waitUntilExit()
            let result = add.result()
            if result.signalled {
                XCTAssertEqual(add.process.terminationStatus, SIGKILL)
                killedWith = listed
            } else {
                XCTAssertEqual(result.status, 0, "add finished before it could be killed: \(result.stderr)")
            }
        }
        let listedBeforeKill = try XCTUnwrap(killedWith, "could not kill catalog add in the middle in 4 attempts")
        XCTAssertFalse(listedBeforeKill.isEmpty)

        let catalog = try Catalog(path: catalogPath)
        let refs = try catalog.references()
        XCTAssertGreaterThanOrEqual(refs.count, listedBeforeKill.count)
        XCTAssertLessThanOrEqual(refs.count, count)
        XCTAssertTrue(Set(listedBeforeKill).isSubset(of: Set(refs.map(\.item.id))))
        for r in refs {
            XCTAssertGreaterThan(r.postingCount, 0, r.item.id)
            XCTAssertGreaterThan(r.postingBytes, 0, r.item.id)
            XCTAssertEqual(r.duration, 90, accuracy: 0.1, r.item.id)
        }
        let index = try catalog.loadIndex()
        XCTAssertEqual(index.references.map(\.item.id), refs.map(\.item.id))
        XCTAssertEqual(index.postings.count, refs.reduce(0) { $0 + $1.postingCount })

        // Running the add again completes the catalog without redoing what was committed.
        let again = try TestSupport.run(binary, ["catalog", "add", "--catalog", catalogPath, media.path])
        XCTAssertEqual(again.status, 0, again.stderr)
        let final = try Catalog(path: catalogPath).references()
        XCTAssertEqual(final.map(\.item.id), (1...count).map { "noise-\($0)" })
        XCTAssertTrue(final.allSatisfy { $0.postingCount > 0 })
        let lines = again.stderr.split(separator: "\n")
        XCTAssertEqual(lines.filter { $0.contains("skipped (already in the catalog") }.count, refs.count, again.stderr)
        XCTAssertEqual(lines.filter { $0.contains(": added ") }.count, count - refs.count, again.stderr)
        // The references committed before the kill are byte-for-byte those of the second run.
        for r in refs { XCTAssertEqual(final.first { $0.item.id == r.item.id }, r) }
    }
}

/// The longest reference a catalog takes (identify's vote offsets reach 2^24 frames).
final class CatalogLimitTests: XCTestCase {
    func testReferenceLongerThanTheLimitIsRefusedWithAMessage() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let catalog = try Catalog(path: dir.appendingPathComponent("c.db").path, create: true)
        let config = Configuration()
        let landmarks = [Landmark(anchorFrame: 100, anchorBin: 40, targetBin: 50, deltaFrames: 10),
                         Landmark(anchorFrame: Int32(Catalog.maximumReferenceFrames), anchorBin: 40, targetBin: 50, deltaFrames: 10)]
        let signature = Signature(configuration: config, landmarks: landmarks,
                                  sampleCount: Int64(Catalog.maximumReferenceFrames + 100) * Int64(config.hopLength))
        XCTAssertThrowsError(try catalog.addReferenceSignature(signature, representing: MediaItem(id: "long"), source: "long.flac")) { error in
            guard case SoundmarkError.referenceTooLong(let path, let duration, let limit) = error else {
                return XCTFail("unexpected error \(error)")
            }
            XCTAssertEqual(path, "long.flac")
            XCTAssertEqual(limit, 268_435.456, accuracy: 0.001) // 2^24 · 16 ms
            XCTAssertGreaterThan(duration, limit)
            XCTAssertTrue(error.localizedDescription.hasPrefix("long.flac: 74.6 h of audio"), error.localizedDescription)
        }
        XCTAssertEqual(try catalog.references().count, 0)
    }
}
