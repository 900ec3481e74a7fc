import Foundation
import XCTest
@testable import Soundmark

/// The recognition library: recording, replacing, querying, counting, removing, importing.
final class LibraryTests: XCTestCase {
    /// 2026-12-01T08:00:00Z.
    let morning = 1_796_083_200.0 + 8 * 3600

    private func library() throws -> Library {
        let dir = try TestSupport.temporaryDirectory(self)
        return try Library(path: dir.appendingPathComponent("library.db").path, create: true)
    }

    private func airing(_ reference: String, _ start: Double, _ end: Double, wall: Double? = nil, duration: Double? = 60) -> Airing {
        Airing(reference: reference, title: reference.uppercased(), artist: "Artist", referenceDuration: duration,
               start: start, end: end, wallStart: wall.map { $0 + start }, wallEnd: wall.map { $0 + end },
               referenceStart: 10, referenceEnd: 10 + end - start, confidence: 0.9)
    }

    func testDayNamesAndISOWeeks() {
        XCTAssertEqual(Library.dayName(Int(morning / 86_400)), "2026-12-01")
        XCTAssertEqual(Library.isoWeek(Int(morning / 86_400)), "2026-W49")
        // 2027-01-01 is a Friday: the last ISO week of 2026 (a year that starts on a Thursday has 53).
        XCTAssertEqual(Library.isoWeek(Library.daysFromCivil(year: 2027, month: 1, day: 1)), "2026-W53")
        // 2024-12-30 (a Monday) is in week 1 of 2025.
        XCTAssertEqual(Library.isoWeek(Library.daysFromCivil(year: 2024, month: 12, day: 30)), "2025-W01")
        XCTAssertEqual(Library.dayName(0), "1970-01-01")
    }

    func testImportedAiringsOutOfRangeAreRefused() {
        // An imported event with end 1e308 made `report html` crash and `report counts` print an
        // airtime of 1e+308; a start of −5 and a confidence of 7 were stored as they were.
        XCTAssertNil(TimelineImport.problem(airing("a", 0, 30)))
        var far = airing("a", 0, 30); far.end = 1e308
        XCTAssertEqual(TimelineImport.problem(far), "start 0.0 s or end 1e+308 s outside 0…1e9")
        var early = airing("a", 0, 30); early.start = -5
        XCTAssertNotNil(TimelineImport.problem(early))
        var sure = airing("a", 0, 30); sure.confidence = 7
        XCTAssertEqual(TimelineImport.problem(sure), "confidence 7.0 outside 0…1")
        var nan = airing("a", 0, 30); nan.referenceStart = .nan
        XCTAssertNotNil(TimelineImport.problem(nan))
        var backwards = airing("a", 30, 30); backwards.end = 10
        XCTAssertEqual(TimelineImport.problem(backwards), "end 10.0 s before start 30.0 s")
    }

    func testTheSameDigestReplacesItsAiringsAndAnotherAdds() throws {
        let lib = try library()
        let first = try lib.record(LibraryRecording(digest: "aaaa0001", name: "a.mp3", source: "radio1", duration: 100),
                                   airings: [airing("spot-a", 0, 20), airing("spot-b", 30, 50)])
        XCTAssertFalse(first.replaced)
        let again = try lib.record(LibraryRecording(digest: "aaaa0001", name: "renamed.mp3", source: "radio1", duration: 100),
                                   airings: [airing("spot-a", 1, 21)])
        XCTAssertTrue(again.replaced)
        try lib.record(LibraryRecording(digest: "bbbb0002", name: "b.mp3", source: "radio2", duration: 100),
                       airings: [airing("spot-a", 5, 15)])
        let all = try lib.airings()
        XCTAssertEqual(all.count, 2)
        XCTAssertEqual(try lib.recordings().map(\.name), ["renamed.mp3", "b.mp3"])
        XCTAssertEqual(try lib.airings(LibraryFilter(source: "radio1")).map(\.start), [1])
        XCTAssertEqual(try lib.airings(LibraryFilter(recording: "bbbb00")).map(\.source), ["radio2"])
        let a = try XCTUnwrap(try lib.airings(LibraryFilter(source: "radio1")).first)
        XCTAssertEqual(a.title, "SPOT-A")
        XCTAssertEqual(a.durationAired, 20)
        XCTAssertEqual(try XCTUnwrap(a.fractionAired), 20.0 / 60, accuracy: 1e-9)
    }

    func testAFailedRecordingLeavesTheLibraryAsItWas() throws {
        let lib = try library()
        try lib.record(LibraryRecording(digest: "cafe01", name: "a.mp3", source: "radio1", duration: 100),
                       airings: [airing("spot-a", 0, 20), airing("spot-b", 30, 50)])
        var bad = airing("spot-c", 60, 70)
        bad.start = .nan
        XCTAssertThrowsError(try lib.record(LibraryRecording(digest: "cafe01", name: "a.mp3", source: "radio9", duration: 100),
                                            airings: [airing("spot-a", 0, 10), bad])) { error in
            XCTAssertTrue("\(error.localizedDescription)".contains("cannot write library"), "\(error)")
        }
        XCTAssertEqual(try lib.airings().map(\.reference), ["spot-a", "spot-b"])
        XCTAssertEqual(try lib.recordings().map(\.source), ["radio1"])
    }

    func testFiltersByReferenceAndWallClockRange() throws {
        let lib = try library()
        try lib.record(LibraryRecording(digest: "d1", name: "day1", source: "radio1", duration: 7200, wallStart: morning),
                       airings: [airing("spot-a", 0, 30, wall: morning), airing("spot-a", 3600, 3630, wall: morning),
                                 airing("spot-b", 4000, 4020, wall: morning)])
        try lib.record(LibraryRecording(digest: "d2", name: "untimed", source: "radio1", duration: 100),
                       airings: [airing("spot-a", 0, 30)])
        XCTAssertEqual(try lib.airings(LibraryFilter(reference: "spot-a")).count, 3)
        // Airings without wall-clock times never match a time range.
        let range = LibraryFilter(since: morning + 1800, until: morning + 3700)
        XCTAssertEqual(try lib.airings(range).map(\.start), [3600])
        XCTAssertEqual(try lib.airings(LibraryFilter(reference: "spot-a", since: morning)).map(\.start), [0, 3600])
    }

    func testCountsByDayWeekSourceAndReference() throws {
        let lib = try library()
        let nextDay = morning + 86_400
        try lib.record(LibraryRecording(digest: "r1d1", name: "r1", source: "radio1", duration: 7200, wallStart: morning),
                       airings: [airing("spot-a", 0, 30, wall: morning), airing("spot-a", 100, 120, wall: morning),
                                 airing("spot-b", 200, 215, wall: morning)])
        try lib.record(LibraryRecording(digest: "r1d2", name: "r1b", source: "radio1", duration: 7200, wallStart: nextDay),
                       airings: [airing("spot-a", 0, 30, wall: nextDay)])
        try lib.record(LibraryRecording(digest: "r2d1", name: "r2", source: "radio2", duration: 7200, wallStart: morning),
                       airings: [airing("spot-b", 0, 10, wall: morning)])
        let byDay = try lib.counts(by: .day, filter: LibraryFilter(source: "radio1"))
        XCTAssertEqual(byDay.map { "\($0.group ?? "-") \($0.reference) \($0.plays) \($0.airtime)" },
                       ["2026-12-01 spot-a 2 50.0", "2026-12-01 spot-b 1 15.0", "2026-12-02 spot-a 1 30.0"])
        let byWeek = try lib.counts(by: .week)
        XCTAssertEqual(byWeek.map { "\($0.group ?? "-") \($0.reference) \($0.plays)" }, ["2026-W49 spot-a 3", "2026-W49 spot-b 2"])
        let bySource = try lib.counts(by: .source)
        XCTAssertEqual(bySource.map { "\($0.group ?? "-") \($0.reference) \($0.plays) \($0.airtime)" },
                       ["radio1 spot-a 3 80.0", "radio1 spot-b 1 15.0", "radio2 spot-b 1 10.0"])
        let byReference = try lib.counts(by: .reference)
        XCTAssertEqual(byReference.map { "\($0.reference) \($0.plays) \($0.title ?? "")" }, ["spot-a 3 SPOT-A", "spot-b 2 SPOT-B"])
    }

    func testRemoveBySourceTimeRangeAndRecording() throws {
        let lib = try library()
        try lib.record(LibraryRecording(digest: "e1", name: "one", source: "radio1", duration: 7200, wallStart: morning),
                       airings: [airing("spot-a", 0, 30, wall: morning), airing("spot-b", 3600, 3630, wall: morning)])
        try lib.record(LibraryRecording(digest: "e2", name: "two", source: "radio2", duration: 100),
                       airings: [airing("spot-a", 0, 30)])
        try lib.record(LibraryRecording(digest: "e3", name: "three", source: "radio3", duration: 100), airings: [])
        XCTAssertThrowsError(try lib.remove(LibraryFilter()))
        var removed = try lib.remove(LibraryFilter(since: morning + 1000, until: morning + 4000))
        XCTAssertEqual(removed.airings, 1)
        XCTAssertEqual(removed.recordings, 0)
        removed = try lib.remove(LibraryFilter(source: "radio2"))
        XCTAssertEqual(removed.airings, 1)
        XCTAssertEqual(removed.recordings, 1)
        removed = try lib.remove(LibraryFilter(recording: "three"))
        XCTAssertEqual(removed.airings, 0)
        XCTAssertEqual(removed.recordings, 1)
        XCTAssertEqual(try lib.recordings().map(\.name), ["one"])
        XCTAssertEqual(try lib.airings().map(\.reference), ["spot-a"])
    }

    func testACatalogOrOtherFileIsNotALibrary() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let catalogPath = dir.appendingPathComponent("catalog.db").path
        _ = try Catalog(path: catalogPath, create: true)
        XCTAssertThrowsError(try Library(path: catalogPath, create: true)) { error in
            XCTAssertEqual(error.localizedDescription, "\(catalogPath): cannot read library: not a soundmark library (another SQLite database, a catalog?)")
        }
        let text = dir.appendingPathComponent("notes.txt").path
        try "hello, this is not SQLite at all, just some text that is long enough".write(toFile: text, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try Library(path: text)) { error in
            XCTAssertEqual(error.localizedDescription, "\(text): cannot read library: not a soundmark library")
        }
        XCTAssertThrowsError(try Library(path: dir.appendingPathComponent("missing.db").path))
    }

    func testMonitorEventsBecomeAiringsThroughTheTimelineRules() throws {
        let lines = [
            #"{"event":"segment.started","activity_id":"a1","material_id":"spot-a","title":"A","artist":"X","time":12.5,"wall_time":"2026-12-01T08:00:12.500Z","start":12.5,"end":15,"position":3,"referenceStart":3,"frequencySkew":0,"confidence":0.8}"#,
            #"{"event":"segment.refined","activity_id":"a1","material_id":"spot-a","title":"A","artist":"X","time":20,"start":12.5,"end":20,"position":10.5,"referenceStart":3,"frequencySkew":0,"confidence":0.95}"#,
            #"{"event":"segment.started","activity_id":"a2","material_id":"spot-b","title":"B","time":40,"start":40,"end":42,"position":0,"referenceStart":0,"confidence":0.7}"#,
            #"{"event":"segment.ended","activity_id":"a1","material_id":"spot-a","time":41,"start":12.5,"end":41,"position":31.5,"referenceStart":3,"confidence":0.95}"#,
            #"{"activity_id":"a1","material_id":"spot-a","trait":{"marker":true},"time":50}"#,
            #"{"event":"segment.ended","activity_id":"a2","material_id":"spot-b","time":55,"start":40,"end":55,"position":15,"referenceStart":0,"confidence":0.7}"#,
            #"{"event":"stream.ended","time":60}"#,
        ]
        let payloads = TimelinePayload.parseLines(lines.joined(separator: "\n")).payloads
        let timeline = ActivityTimeline(payloads: payloads.filter { $0.fields["event"]?.stringValue?.hasPrefix("stream.") != true })
        let airings = TimelineImport.airings(from: timeline.rows)
        XCTAssertEqual(airings.count, 2)
        XCTAssertEqual(airings[0].reference, "spot-a")
        XCTAssertEqual(airings[0].start, 12.5)
        XCTAssertEqual(airings[0].end, 41)
        XCTAssertEqual(airings[0].referenceStart, 3)
        XCTAssertEqual(airings[0].referenceEnd, 31.5)
        XCTAssertEqual(airings[0].confidence, 0.95)
        XCTAssertNil(airings[0].marker, "a late marker of a closed activity is ignored")
        XCTAssertEqual(try XCTUnwrap(airings[0].wallStart), morning + 12.5, accuracy: 1e-6)
        XCTAssertEqual(airings[1].reference, "spot-b")
        XCTAssertEqual(airings[1].start, 40)
        XCTAssertEqual(airings[1].end, 55)
        XCTAssertNil(airings[1].wallStart)
        let timed = TimelineImport.airings(from: timeline.rows, startTime: morning)
        XCTAssertEqual(try XCTUnwrap(timed[1].wallStart), morning + 40, accuracy: 1e-6)
    }

    func testRecogniserCallbacksWithISOTimesGetWallClockTimes() throws {
        let lines = [
            #"{"activity_id":"x1","material_id":"spot-a","time":"2026-12-01T08:00:10Z","position":2}"#,
            #"{"activity_id":"x1","material_id":"spot-a","time":"2026-12-01T08:00:20Z","trait":{"marker":true},"marker":{"payload":222,"windows":2}}"#,
            #"{"activity_id":"x2","material_id":"spot-b","time":"2026-12-01T09:00:30+01:00","trait":{"marker":true},"marker":7}"#,
            #"{"activity_id":"x3","material_id":"spot-c","time":"2026-12-01T09:00:40+01:00","trait":{"marker":true}}"#,
        ]
        let rows = ActivityTimeline(payloads: TimelinePayload.parseLines(lines.joined(separator: "\n")).payloads).rows
        let airings = TimelineImport.airings(from: rows)
        XCTAssertEqual(airings.map(\.reference), ["spot-a", "spot-b", "spot-c"])
        // Recording times count from the first callback; spot-a lasts until spot-b (08:00:30 UTC) closes it.
        XCTAssertEqual(airings[0].start, 0)
        XCTAssertEqual(airings[0].end, 20)
        XCTAssertEqual(try XCTUnwrap(airings[0].wallStart), morning + 10, accuracy: 1e-6)
        XCTAssertEqual(airings[0].referenceStart, 2)
        // Review: the library kept only whether a marker was seen; it keeps the payload (monitor's
        // marker object or a bare number), none when the recogniser gave only the trait.
        XCTAssertEqual(airings.map(\.marker), [222, 7, nil])
        XCTAssertEqual(airings[1].start, 20)
        XCTAssertEqual(try XCTUnwrap(airings[1].wallStart), morning + 30, accuracy: 1e-6)
    }

    func testAudioDigestDependsOnSamplesNotOnChunking() {
        let samples = (0..<1000).map { Float(sin(Double($0) * 0.1)) }
        var whole = AudioDigest(), parts = AudioDigest(), other = AudioDigest()
        whole.append(samples)
        parts.append(Array(samples[..<300]))
        parts.append(Array(samples[300...]))
        var changed = samples
        changed[500] += 1e-3
        other.append(changed)
        XCTAssertEqual(whole.hex, parts.hex)
        XCTAssertNotEqual(whole.hex, other.hex)
        XCTAssertEqual(whole.hex.count, 32)
    }

    /// Ten seconds at 8 kHz of a tone whose pitch and loudness wander (a stand-in for music).
    private func music(pitch: Double = 1) -> [Float] {
        var phase = 0.0
        return (0..<80_000).map { i in
            let t = Double(i) / 8000
            phase += 2 * Double.pi * pitch * (300 + 200 * sin(t * 1.3)) / 8000
            return Float((0.3 + 0.25 * sin(t * 2.1)) * sin(phase))
        }
    }

    private func audioDigest(_ samples: [Float]) -> AudioDigest {
        var d = AudioDigest()
        d.append(samples)
        return d
    }

    /// Issue 39 item 2: a piped MP3 decodes 48–61 samples more at 8 kHz than the same file
    /// (no gapless trim): a decoder's lead (near-silence) and trailing padding. The digests
    /// differ; the prints agree block for block, and other audio's print does not.
    func testAudioPrintIgnoresADecodersLeadAndTrim() {
        let trimmed = music()
        let lead = (0..<61).map { Float(sin(Double($0))) * 1e-4 }  // below −54 dBFS: skipped
        let untrimmed = lead + trimmed + [Float](repeating: 0, count: 48)
        let a = audioDigest(trimmed), b = audioDigest(untrimmed)
        XCTAssertNotEqual(a.hex, b.hex)
        XCTAssertEqual(a.audioPrint.blockCount, 80_000 / 512)
        XCTAssertEqual(a.audioPrint, b.audioPrint)
        XCTAssertTrue(a.audioPrint.sameAudio(as: b.audioPrint))
        // The same loudness at another pitch, the same audio shifted by one block, and silence.
        XCTAssertFalse(a.audioPrint.sameAudio(as: audioDigest(music(pitch: 1.5)).audioPrint))
        XCTAssertFalse(a.audioPrint.sameAudio(as: audioDigest(Array(trimmed.dropFirst(512))).audioPrint))
        XCTAssertEqual(audioDigest([Float](repeating: 0, count: 8000)).audioPrint.blockCount, 0)
        XCTAssertFalse(AudioPrint().sameAudio(as: AudioPrint()))
    }

    /// A print keeps every block of its first 4096, then one in 64, and the count of all: ten
    /// minutes at 8 kHz (9375 blocks) keep 4096 + 83 blocks, 8362 bytes stored instead of
    /// 18,750; it reads back equal, and still tells a copy 3 blocks shorter apart.
    func testALongPrintStaysSmallAndReadsBack() {
        var phase = 0.0
        let samples = (0..<(9375 * 512 + 100)).map { i -> Float in
            let t = Double(i) / 8000
            phase += 2 * Double.pi * (300 + 200 * sin(t * 0.7)) / 8000
            return Float((0.3 + 0.25 * sin(t * 1.9)) * sin(phase))
        }
        let whole = audioDigest(samples).audioPrint
        XCTAssertEqual(whole.blockCount, 9375)
        XCTAssertEqual(whole.bytes.count, 4 + 2 * (4096 + 83))
        XCTAssertEqual(AudioPrint(bytes: whole.bytes), whole)
        XCTAssertTrue(audioDigest([Float](repeating: 0, count: 61) + samples).audioPrint.sameAudio(as: whole))
        XCTAssertFalse(audioDigest(Array(samples.dropLast(3 * 512))).audioPrint.sameAudio(as: whole))
        XCTAssertEqual(AudioPrint(bytes: []).blockCount, 0)
    }

    /// Issue 39 item 2: one recording whatever the path, URL or pipe (a source that is only the
    /// input's name); two named sources that aired the same audio keep a recording each.
    func testOneRecordingPerAudioAndNamedSource() throws {
        let lib = try library()
        let file = audioDigest(music()), pipe = audioDigest([Float](repeating: 0, count: 61) + music())
        try lib.record(LibraryRecording(digest: file.hex, name: "/m/a.mp3", source: "/m/a.mp3", duration: 10,
                                        audioPrint: file.audioPrint), airings: [airing("spot-a", 0, 5)])
        let piped = try lib.record(LibraryRecording(digest: pipe.hex, name: "-", source: "stdin", duration: 10,
                                                    audioPrint: pipe.audioPrint), airings: [airing("spot-a", 0, 5)])
        XCTAssertTrue(piped.replaced)
        XCTAssertEqual(try lib.recordings().map(\.name), ["-"])
        for source in ["Radio 1", "Radio 9", "Radio 1"] {
            try lib.record(LibraryRecording(digest: file.hex, name: "/m/a.mp3", source: source, duration: 10,
                                            audioPrint: file.audioPrint), airings: [airing("spot-a", 0, 5), airing("spot-b", 5, 9)])
        }
        XCTAssertEqual(try lib.recordings().map(\.source), ["Radio 9", "Radio 1"])
        XCTAssertEqual(try lib.airings(LibraryFilter(source: "Radio 1")).count, 2)
        XCTAssertEqual(try lib.airings(LibraryFilter(source: "Radio 9")).count, 2)
        XCTAssertEqual(try lib.airings().count, 4)
    }

    /// A library of format 1 (digest unique, no print) is upgraded when opened: its recordings
    /// and airings are kept, and the same digest from another named source is then a second
    /// recording instead of a constraint failure.
    func testAVersion1LibraryIsUpgradedKeepingItsAirings() throws {
        let path = try TestSupport.temporaryDirectory(self).appendingPathComponent("v1.db").path
        do {
            let db = try SQLiteDatabase(path: path, create: true)
            try db.execute("""
                CREATE TABLE library_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                INSERT INTO library_meta VALUES ('format_version', '1');
                CREATE TABLE recording(id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
                    source TEXT NOT NULL, duration REAL NOT NULL, wall_start REAL, added_at REAL NOT NULL);
                CREATE INDEX recording_source ON recording(source);
                CREATE TABLE item(id INTEGER PRIMARY KEY, reference TEXT NOT NULL UNIQUE, title TEXT, artist TEXT, duration REAL);
                CREATE TABLE airing(id INTEGER PRIMARY KEY,
                    recording INTEGER NOT NULL REFERENCES recording(id) ON DELETE CASCADE,
                    source TEXT NOT NULL, item INTEGER NOT NULL REFERENCES item(id),
                    start REAL NOT NULL, "end" REAL NOT NULL, wall_start REAL, wall_end REAL, day INTEGER,
                    reference_start REAL NOT NULL, reference_end REAL NOT NULL,
                    confidence REAL NOT NULL, skew REAL NOT NULL, time_scale REAL NOT NULL, marker INTEGER);
                INSERT INTO recording VALUES (1, 'aaaa0001', 'a.mp3', 'Radio 1', 100, NULL, 0);
                INSERT INTO item VALUES (1, 'spot-a', 'Spot A', NULL, 60);
                INSERT INTO airing VALUES (1, 1, 'Radio 1', 1, 0, 20, NULL, NULL, NULL, 10, 30, 0.9, 0, 1, NULL);
                """)
        }
        let lib = try Library(path: path)
        XCTAssertEqual(try lib.airings().map(\.reference), ["spot-a"])
        try lib.record(LibraryRecording(digest: "aaaa0001", name: "a.mp3", source: "Radio 9", duration: 100),
                       airings: [airing("spot-a", 0, 20)])
        XCTAssertEqual(try lib.recordings().map(\.source), ["Radio 1", "Radio 9"])
        let again = try lib.record(LibraryRecording(digest: "aaaa0001", name: "a.mp3", source: "Radio 1", duration: 100),
                                   airings: [airing("spot-a", 1, 21)])
        XCTAssertTrue(again.replaced)
        XCTAssertEqual(try lib.airings(LibraryFilter(source: "Radio 1")).map(\.start), [1])
        let reopened = try SQLiteDatabase(path: path, create: false)
        let version = try reopened.prepare("SELECT value FROM library_meta WHERE key = 'format_version'")
        XCTAssertTrue(try version.step())
        XCTAssertEqual(version.string(0), "2")
    }
}
