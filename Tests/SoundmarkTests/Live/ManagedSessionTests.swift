import Foundation
import XCTest
import Soundmark

/// ``ManagedSession``: a live source followed through the library, with the events
/// `soundmark monitor` prints.
final class ManagedSessionTests: XCTestCase {
    private func index() throws -> CatalogIndex {
        let items = try TestSupport.referenceIDs.map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) }
        return CatalogIndex(configuration: Configuration(), items: items)
    }

    /// 6 s of silence, then supertux-forest from 12 s to 32 s, then 6 s of silence: one
    /// activity, started near recording time 6 at reference 12, ended near 26; the last event
    /// is the stream's end at 32 s. The same events arrive on `events` and `onEvent`, and the
    /// session is matching while it reports them, idle before and after.
    func testRunReportsOneActivityAndTheStreamEnd() async throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let file = dir.appendingPathComponent("stream.wav").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=44100:cl=mono", "-ss", "12", "-t", "20",
                                "-i", TestSupport.referencePath("supertux-forest"),
                                "-filter_complex", "[0]atrim=0:6[a];[1]aformat=channel_layouts=mono,aresample=44100[b];[0]atrim=0:6[c];[a][b][c]concat=n=3:v=0:a=1"],
                               output: file)
        let session = ManagedSession(index: try index())
        XCTAssertEqual(session.state, .idle)
        var seen: [LiveEvent] = []
        var states: Set<String> = []
        session.onEvent = { event in
            seen.append(event)
            states.insert("\(session.state)")
        }
        let collected = Task { () -> [LiveEvent] in
            var all: [LiveEvent] = []
            for await e in session.events { all.append(e) }
            return all
        }
        var audio = 0.0
        session.onAudio = { samples, time in
            XCTAssertEqual(time, audio, accuracy: 1e-9)  // contiguous, in recording seconds
            audio += Double(samples.count) / 8000
        }
        let outcome = try session.run(source: file)
        XCTAssertEqual(outcome, .ended)
        XCTAssertEqual(session.state, .idle)
        XCTAssertEqual(states, ["matching"])
        let fromStream = await collected.value
        XCTAssertEqual(fromStream, seen)
        XCTAssertEqual(audio, 32, accuracy: 0.01)

        let segments = seen.compactMap { e -> ScanEvent? in if case .segment(let s) = e { return s } else { return nil } }
        guard case .started(let id, let started)? = segments.first else { return XCTFail("no activity: \(seen)") }
        XCTAssertEqual(id, 1)
        XCTAssertEqual(started.item.id, "supertux-forest")
        XCTAssertEqual(started.referenceTime(at: 6), 12, accuracy: 0.05)
        XCTAssertEqual(started.start, 6, accuracy: 1.5)
        guard case .ended(1, let ended)? = segments.last else { return XCTFail("no end: \(segments)") }
        XCTAssertEqual(ended.end, 26, accuracy: 1.5)
        XCTAssertFalse(segments.contains { if case .started(let other, _) = $0 { return other != 1 } else { return false } })
        guard case .ended(let end)? = seen.last else { return XCTFail("last event: \(String(describing: seen.last))") }
        XCTAssertEqual(end, 32, accuracy: 0.01)
    }

    /// The one-shot result: the first activity of a reference file, and no match for silence.
    func testResultIsTheFirstActivityOrNoMatch() async throws {
        let session = ManagedSession(index: try index())
        let result = await session.result(from: TestSupport.referencePath("wesnoth-battle"))
        guard case .match(let segment) = result else { return XCTFail("\(result)") }
        XCTAssertEqual(segment.item.id, "wesnoth-battle")
        XCTAssertEqual(segment.referenceTime(at: segment.start), segment.start, accuracy: 0.05)
        XCTAssertEqual(session.state, .idle)

        let dir = try TestSupport.temporaryDirectory(self)
        let silence = dir.appendingPathComponent("silence.wav").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-t", "8"], output: silence)
        let none = await ManagedSession(index: try index()).result(from: silence)
        XCTAssertEqual(none, .noMatch)
    }

    /// A source that cannot be opened: the run throws one line naming it, nothing is reported;
    /// result(from:) gives the same line as an error.
    func testUnreadableSourceThrowsAndReportsNothing() async throws {
        let session = ManagedSession(index: try index())
        var seen: [LiveEvent] = []
        session.onEvent = { seen.append($0) }
        XCTAssertThrowsError(try session.run(source: "/nonexistent/stream.mp3")) { error in
            XCTAssertTrue("\(error.localizedDescription)".contains("/nonexistent/stream.mp3"), "\(error)")
        }
        XCTAssertEqual(seen, [])
        XCTAssertEqual(session.state, .idle)
        let result = await ManagedSession(index: try index()).result(from: "/nonexistent/stream.mp3")
        guard case .error(let text) = result else { return XCTFail("\(result)") }
        XCTAssertTrue(text.contains("/nonexistent/stream.mp3"), text)
    }

    /// prepare() reads ahead (prerecording) and the run matches from the first sample; stop()
    /// from another thread ends the run with the open activity ended and the stream's end.
    func testPrepareThenStopFromAnotherThread() throws {
        let session = ManagedSession(index: try index())
        let source = TestSupport.referencePath("wesnoth-knolls")
        session.prepare(source: source)
        XCTAssertEqual(session.state, .prerecording)
        var first: Double?
        var seen: [LiveEvent] = []
        session.onAudio = { _, time in if first == nil { first = time } }
        session.onEvent = { event in
            seen.append(event)
            if case .segment(.started) = event { DispatchQueue.global().async { session.stop() } }
        }
        XCTAssertEqual(try session.run(source: source), .stopped)
        XCTAssertEqual(first, 0)
        guard case .segment(.started(1, let segment))? = seen.first else { return XCTFail("\(seen)") }
        XCTAssertEqual(segment.item.id, "wesnoth-knolls")
        XCTAssertTrue(seen.contains { if case .segment(.ended(1, _)) = $0 { return true } else { return false } })
        guard case .ended(let end)? = seen.last else { return XCTFail("\(seen)") }
        XCTAssertLessThan(end, 40)
    }
}
