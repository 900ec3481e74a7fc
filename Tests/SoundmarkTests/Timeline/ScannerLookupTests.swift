import XCTest
@testable import Soundmark

/// ``RecordingScanner`` keeps what a landmark finds in a reference's postings for the windows that
/// follow (consecutive windows share three quarters of their landmarks): the segments and
/// events are those of looking every landmark up again in each window.
final class ScannerLookupTests: XCTestCase {
    private let rate = 8000

    private func piece(_ id: String, from: Double, seconds: Double) throws -> [Float] {
        try TestSupport.piece(id, from: from, seconds: seconds)
    }

    /// Scans `samples` with lookups kept or not; `reorder` moves one landmark in 3000 behind
    /// those anchored up to 200 frames after it (landmarks fed out of order). Also returns
    /// whether the scanner still kept lookups at the end.
    private func scan(_ samples: [Float], index: CatalogIndex, reusing: Bool,
                      reorder: Bool = false) -> (segments: [Segment], events: [ScanEvent], kept: Bool) {
        let scanner = RecordingScanner(index: index)
        scanner.reusesLookups = reusing
        var events: [ScanEvent] = []
        scanner.onEvent = { events.append($0) }
        var landmarks: [Landmark] = []
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        samples.withUnsafeBufferPointer { p in g.append(p) { landmarks.append($0) } }
        g.finish { landmarks.append($0) }
        if reorder {
            var i = 1000
            while i < landmarks.count {
                let moved = landmarks.remove(at: i)
                let to = landmarks[i...].firstIndex { $0.anchorFrame > moved.anchorFrame + 200 } ?? landmarks.count
                landmarks.insert(moved, at: to)
                i += 3000
            }
        }
        scanner.consume(landmarks)
        let segments = scanner.finish(recordingDuration: Double(samples.count) / Double(rate))
        return (segments, events, scanner.reusesLookups)
    }

    /// Knolls 20 s (from 2 s), 6 s of music not in the catalog, battle 20 s, then knolls again
    /// from 22 s (a new play of it, at another alignment): three segments, the same ones (every
    /// field) and the same events whether lookups are kept or not.
    func testKeptLookupsGiveTheSegmentsOfFreshOnes() throws {
        let items = try ["wesnoth-knolls", "wesnoth-battle", "supertux-forest"].map { id in
            (MediaItem(id: id), try TestSupport.referenceSignature(id))
        }
        let index = CatalogIndex(configuration: Configuration(), items: items)
        let recording = try piece("wesnoth-knolls", from: 2, seconds: 20) + piece("supertux-chipdisko", from: 10, seconds: 6)
            + piece("wesnoth-battle", from: 5, seconds: 20) + piece("wesnoth-knolls", from: 22, seconds: 16)
        let kept = scan(recording, index: index, reusing: true)
        let fresh = scan(recording, index: index, reusing: false)
        XCTAssertEqual(kept.segments.map(\.item.id), ["wesnoth-knolls", "wesnoth-battle", "wesnoth-knolls"])
        XCTAssertEqual(kept.segments, fresh.segments)
        XCTAssertEqual(kept.segments.map(\.hits), fresh.segments.map(\.hits))
        XCTAssertEqual(kept.events, fresh.events)
        XCTAssertFalse(kept.events.isEmpty)
        XCTAssertTrue(kept.kept)
        XCTAssertFalse(fresh.kept)
        // The plays are where they were put (their exact edges are ScannerEdgeTests' business:
        // battle's start comes out at 25.71 s, in the other music's last notes).
        guard kept.segments.count == 3 else { return }
        XCTAssertEqual(kept.segments[0].start, 0, accuracy: 0.1)
        XCTAssertEqual(kept.segments[1].start, 26, accuracy: 0.35)
        XCTAssertEqual(kept.segments[2].start, 46, accuracy: 0.1)
        XCTAssertEqual(kept.segments[2].referenceTime(at: 50), 26, accuracy: 0.05)
    }

    /// Landmarks fed out of order (against the documented order) leave the window's sequence
    /// numbers unusable: the scanner stops keeping lookups and gives what fresh lookups give.
    func testLandmarksOutOfOrderGiveWhatFreshLookupsGive() throws {
        let items = try ["wesnoth-knolls", "wesnoth-battle"].map { id in
            (MediaItem(id: id), try TestSupport.referenceSignature(id))
        }
        let index = CatalogIndex(configuration: Configuration(), items: items)
        let recording = try piece("wesnoth-battle", from: 5, seconds: 25) + piece("wesnoth-knolls", from: 12, seconds: 20)
        let kept = scan(recording, index: index, reusing: true, reorder: true)
        let fresh = scan(recording, index: index, reusing: false, reorder: true)
        XCTAssertEqual(kept.segments.map(\.item.id), ["wesnoth-battle", "wesnoth-knolls"])
        XCTAssertFalse(kept.kept, "out-of-order landmarks stop the reuse")
        XCTAssertEqual(kept.segments, fresh.segments)
        XCTAssertEqual(kept.events, fresh.events)
    }
}
