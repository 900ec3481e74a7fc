import XCTest
@testable import Soundmark

/// Partial material (``PartialMaterial``): lines of another reference inside a play that the
/// references themselves do not share in full are listed apart from the plays, never as one.
final class PartialMaterialTests: XCTestCase {
    /// A segment of `reference` from `start` to `end` on the line through reference time
    /// `referenceStart` at `start` (speed 1).
    private func part(_ start: Double, _ end: Double, from referenceStart: Double, hits: Int, reference: Int) -> Segment {
        Segment(referenceIndex: reference, item: MediaItem(id: "r\(reference)"), start: start, end: end,
                referenceStart: referenceStart, referenceEnd: referenceStart + end - start, frequencySkew: 0,
                timeScale: 1, confidence: 1, hits: hits)
    }

    /// Shapes of the public bench's mix01: Warzone 2100's track 22 plays for 80 s and lines of
    /// track 9, which shares a stem with it, lie inside the play with a fifth of its reference
    /// slots held by track 22 (measured 0.15–0.18) and a few percent of its hits; lines of a
    /// remaster of the playing track (slots shared 0.7–0.8) lie there too. The plays are those
    /// of `resolveOverlaps`; the loop's two lines 5 s apart are one stretch of partial
    /// material on one line, its share the hits-weighted mean; the remaster is a version, not listed.
    func testALayerInsideAPlayIsPartialMaterialAndAVersionIsNot() {
        let play = part(879, 959, from: 0, hits: 1370, reference: 0)
        let segments = [play, part(886.5, 920, from: 30, hits: 60, reference: 1), part(925, 945, from: 68.5, hits: 40, reference: 1),
                        part(890, 940, from: 11, hits: 300, reference: 2)]
        let share: [Int: Double] = [1: 0.15, 2: 0.75]
        var sameRecording: (Segment, Segment) -> Double = { a, _ in a.referenceIndex == 1 && a.start > 900 ? 0.2 : share[a.referenceIndex] ?? 0 }
        let resolved = RecordingScanner.resolve(segments, threshold: 0.5, sameRecording: sameRecording)
        XCTAssertEqual(resolved.plays, RecordingScanner.resolveOverlaps(segments, threshold: 0.5, sameRecording: sameRecording))
        XCTAssertEqual(resolved.plays.map(\.item.id), ["r0"])
        XCTAssertEqual(resolved.plays.first?.alternatives.count, 0)
        XCTAssertEqual(resolved.partial.count, 1)
        guard let p = resolved.partial.first else { return }
        XCTAssertEqual(p.segment.item.id, "r1")
        XCTAssertEqual(p.within.id, "r0")
        XCTAssertEqual(p.segment.start, 886.5)
        XCTAssertEqual(p.segment.end, 945)
        // The two parts of the line are joined as a play's would be: reference times along it,
        // both parts' hits, the share measured over the joined stretch.
        XCTAssertEqual(p.segment.referenceStart, 30, accuracy: 1e-9)
        XCTAssertEqual(p.segment.referenceEnd, 88.5, accuracy: 1e-9)
        XCTAssertEqual(p.segment.hits, 100)
        XCTAssertEqual(p.sharedSlots, 0.15, accuracy: 1e-9)

        // The same recording over the stretch (a marked copy: every slot shared) is no partial material.
        sameRecording = { _, _ in 1 }
        XCTAssertEqual(RecordingScanner.resolve(segments, threshold: 0.5, sameRecording: sameRecording).partial.count, 0)
    }

    /// A user's mix of two Warzone tracks that share a stem, track 22 (0–100 s) then track 9
    /// (100.1–140 s): track 9's stem line ran from 3.95 s, before its reference's start
    /// (−0.06 s), to 121.08 s, past the play it was listed within and into track 9's own play;
    /// lines of the stem at other alignments made 14 entries in all. Partial material stays
    /// inside the play it names and inside its reference, times along its own line; of
    /// overlapping lines of one reference in one play, the strongest stands for the others.
    func testPartialMaterialStaysInsideItsPlayAndItsReference() {
        let segments = [part(0, 100, from: 140, hits: 3000, reference: 0), part(100.1, 140, from: 60, hits: 1500, reference: 1),
                        part(3.95, 121.08, from: -0.06, hits: 300, reference: 1), part(40, 60, from: 80, hits: 60, reference: 1),
                        part(102, 110, from: 30, hits: 30, reference: 0)]
        let resolved = RecordingScanner.resolve(segments, threshold: 0.5, sameRecording: { _, _ in 0.2 })
        XCTAssertEqual(resolved.plays.map(\.item.id), ["r0", "r1"])
        let p = resolved.partial
        XCTAssertEqual(p.map(\.segment.item.id), ["r1", "r0"])
        XCTAssertEqual(p.map(\.within.id), ["r0", "r1"])
        guard p.count == 2 else { return }
        // The stem line: from where its reference starts to where track 22's play ends.
        XCTAssertEqual(p[0].segment.start, 4.01, accuracy: 1e-9)
        XCTAssertEqual(p[0].segment.referenceStart, 0, accuracy: 1e-9)
        XCTAssertEqual(p[0].segment.end, 100, accuracy: 1e-9)
        XCTAssertEqual(p[0].segment.referenceEnd, 95.99, accuracy: 1e-9)
        XCTAssertEqual(p[0].segment.hits, 300)
        // Track 22's material inside track 9's play.
        XCTAssertEqual(p[1].segment.start, 102)
        XCTAssertEqual(p[1].segment.end, 110)
        XCTAssertEqual(p[1].segment.referenceStart, 30)
        // Nothing over a play of its own reference.
        for m in p {
            XCTAssertFalse(resolved.plays.contains { $0.referenceIndex == m.segment.referenceIndex
                && min($0.end, m.segment.end) > max($0.start, m.segment.start) })
        }
    }

    /// A line of another reference that no play covers stays a play of its own: partial
    /// material is only what lies inside another reference's play.
    func testALineOutsideAnyPlayIsNotPartialMaterial() {
        let segments = [part(0, 60, from: 0, hits: 1000, reference: 0), part(70, 90, from: 5, hits: 60, reference: 1)]
        let resolved = RecordingScanner.resolve(segments, threshold: 0.5, sameRecording: { _, _ in 0.1 })
        XCTAssertEqual(resolved.plays.map(\.item.id), ["r0", "r1"])
        XCTAssertTrue(resolved.partial.isEmpty)
    }
}
