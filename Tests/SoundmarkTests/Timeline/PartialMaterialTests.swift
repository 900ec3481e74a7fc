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
    /// material, its share the hits-weighted mean; the remaster is a version, not listed.
    func testALayerInsideAPlayIsPartialMaterialAndAVersionIsNot() {
        let play = part(879, 959, from: 0, hits: 1370, reference: 0)
        let segments = [play, part(886.5, 920, from: 30, hits: 60, reference: 1), part(925, 945, from: 70, hits: 40, reference: 1),
                        part(890, 940, from: 11, hits: 300, reference: 2)]
        let share: [Int: Double] = [1: 0.15, 2: 0.75]
        var sameRecording: (Segment, Segment) -> Double = { a, _ in a.referenceIndex == 1 && a.start > 900 ? 0.2 : share[a.referenceIndex] ?? 0 }
        let resolved = Scanner.resolve(segments, threshold: 0.5, sameRecording: sameRecording)
        XCTAssertEqual(resolved.plays, Scanner.resolveOverlaps(segments, threshold: 0.5, sameRecording: sameRecording))
        XCTAssertEqual(resolved.plays.map(\.item.id), ["r0"])
        XCTAssertEqual(resolved.plays.first?.alternatives.count, 0)
        XCTAssertEqual(resolved.partial.count, 1)
        guard let p = resolved.partial.first else { return }
        XCTAssertEqual(p.segment.item.id, "r1")
        XCTAssertEqual(p.within.id, "r0")
        XCTAssertEqual(p.segment.start, 886.5)
        XCTAssertEqual(p.segment.end, 945)
        // Reference times of the strongest line (60 hits, 30 s at 886.5 s) over the stretch.
        XCTAssertEqual(p.segment.referenceStart, 30, accuracy: 1e-9)
        XCTAssertEqual(p.segment.referenceEnd, 88.5, accuracy: 1e-9)
        XCTAssertEqual(p.segment.hits, 60)
        XCTAssertEqual(p.sharedSlots, (0.15 * 60 + 0.2 * 40) / 100, accuracy: 1e-9)

        // The same recording over the stretch (a marked copy: every slot shared) is no partial material.
        sameRecording = { _, _ in 1 }
        XCTAssertEqual(Scanner.resolve(segments, threshold: 0.5, sameRecording: sameRecording).partial.count, 0)
    }

    /// A line of another reference that no play covers stays a play of its own: partial
    /// material is only what lies inside another reference's play.
    func testALineOutsideAnyPlayIsNotPartialMaterial() {
        let segments = [part(0, 60, from: 0, hits: 1000, reference: 0), part(70, 90, from: 5, hits: 60, reference: 1)]
        let resolved = Scanner.resolve(segments, threshold: 0.5, sameRecording: { _, _ in 0.1 })
        XCTAssertEqual(resolved.plays.map(\.item.id), ["r0", "r1"])
        XCTAssertTrue(resolved.partial.isEmpty)
    }
}
