import XCTest
@testable import Soundmark

/// Cue mapping through the pieces of a scan, on a hand-made re-cut: a 10 s pre-roll, the
/// programme from 0 to 30 s, a 20 s ad break, the programme from 40 s (30–40 s removed) to 60 s,
/// then a rewind replaying 50–55 s.
final class AlignmentMapTests: XCTestCase {
    private let item = MediaItem(id: "programme")

    private func piece(_ start: Double, _ end: Double, from referenceStart: Double, speed: Double = 1) -> Segment {
        Segment(referenceIndex: 0, item: item, start: start, end: end, referenceStart: referenceStart,
                referenceEnd: referenceStart + speed * (end - start), frequencySkew: speed - 1, timeScale: speed,
                confidence: 1, hits: 100)
    }

    private var map: AlignmentMap {
        AlignmentMap(segments: [piece(10, 40, from: 0), piece(60, 80, from: 40), piece(80, 85, from: 50)],
                     recordingDuration: 86)
    }

    func testCuesInsideAPieceMoveWithIt() {
        let mapped = map.cues(for: [Annotation(start: 2, end: 4, text: "a"), Annotation(start: 45, end: 47, text: "b")],
                              referenceIndex: 0)
        XCTAssertEqual(mapped.cues, [Cue(start: 12, end: 14, text: "a"), Cue(start: 65, end: 67, text: "b")])
        XCTAssertEqual(mapped.dropped, [])
    }

    func testCueCutByARemovedStretchIsClippedAndOneInsideItDropped() {
        let annotations = [Annotation(start: 28, end: 32, text: "cut at the end"),
                           Annotation(start: 33, end: 36, text: "removed"),
                           Annotation(start: 38, end: 42, text: "cut at the start")]
        let mapped = map.cues(for: annotations, referenceIndex: 0)
        XCTAssertEqual(mapped.cues, [Cue(start: 38, end: 40, text: "cut at the end"),
                                     Cue(start: 60, end: 62, text: "cut at the start")])
        XCTAssertEqual(mapped.dropped, [Annotation(start: 33, end: 36, text: "removed")])
    }

    func testARewindReplaysItsCuesInTimeOrder() {
        let mapped = map.cues(for: [Annotation(start: 51, end: 53, text: "again")], referenceIndex: 0)
        XCTAssertEqual(mapped.cues, [Cue(start: 71, end: 73, text: "again"), Cue(start: 81, end: 83, text: "again")])
    }

    func testCuesNeverNegativeZeroLengthOrPastTheEnd() {
        let shifted = AlignmentMap(segments: [piece(0, 10, from: 5), piece(80, 90, from: 50)], recordingDuration: 86)
        let mapped = shifted.cues(for: [Annotation(start: 0, end: 6, text: "before the recording"),
                                        Annotation(start: 5, end: 5.01, text: "too short"),
                                        Annotation(start: 55, end: 70, text: "past the end")], referenceIndex: 0)
        XCTAssertEqual(mapped.cues, [Cue(start: 0, end: 1, text: "before the recording"),
                                     Cue(start: 85, end: 86, text: "past the end")])
        XCTAssertEqual(mapped.dropped.map(\.text), ["too short"])
        XCTAssertTrue(mapped.cues.allSatisfy { $0.start >= 0 && $0.end > $0.start && $0.end <= 86 })
    }

    func testSpeedChangedPieceScalesCues() {
        // Played 5 % fast: 2.1 s of reference per 2 s of recording.
        let fast = AlignmentMap(segments: [piece(0, 20, from: 10, speed: 1.05)], recordingDuration: 20)
        let mapped = fast.cues(for: [Annotation(start: 20.5, end: 22.6, text: "x")], referenceIndex: 0)
        XCTAssertEqual(mapped.cues.count, 1)
        XCTAssertEqual(mapped.cues[0].start, 10, accuracy: 1e-9)
        XCTAssertEqual(mapped.cues[0].end, 12, accuracy: 1e-9)
    }

    func testOtherReferencesAreNotMapped() {
        XCTAssertEqual(map.cues(for: [Annotation(start: 2, end: 4, text: "a")], referenceIndex: 1).cues, [])
    }

    /// Issue 39.1: one annotated reference among plays of others. Each play keeps cues, and no
    /// cue leaves its own segment (the annotation running past the programme's end is clipped).
    func testPlayCuesGiveEveryUnannotatedSegmentACueOfItsOwn() {
        let other = MediaItem(id: "jingle", title: "Jingle")
        let jingle = Segment(referenceIndex: 1, item: other, start: 40, end: 60, referenceStart: 0, referenceEnd: 20,
                             frequencySkew: 0, timeScale: 1, confidence: 1, hits: 100)
        let map = AlignmentMap(segments: [piece(10, 40, from: 0), jingle, piece(60, 80, from: 40)], recordingDuration: 86)
        let play = map.playCues(annotations: [0: [Annotation(start: 25, end: 35, text: "runs past the cut"),
                                                  Annotation(start: 70, end: 75, text: "never aired")]],
                                segmentText: { $0.item.displayTitle })
        XCTAssertEqual(play.cues, [Cue(start: 35, end: 40, text: "runs past the cut"), Cue(start: 40, end: 60, text: "Jingle", kind: .plain),
                                   Cue(start: 60, end: 80, text: "programme", kind: .plain)])
        XCTAssertEqual(play.segmentIndices, [0, 1, 2])
        XCTAssertEqual(play.segmentCues, [1, 2])
    }
}
