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
}
