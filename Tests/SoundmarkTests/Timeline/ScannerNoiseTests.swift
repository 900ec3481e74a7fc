import Foundation
import XCTest
@testable import Soundmark

/// Issue 10 (matching in the hard cases): which copy of a passage a reference repeats
/// ``Scanner`` puts a play on, clean and under noise. Recordings are assembled from the sample
/// references at 8000 Hz mono, so the truth is exact.
final class ScannerNoiseTests: XCTestCase {
    private let rate = 8000

    private func piece(_ id: String, from: Double, seconds: Double) throws -> [Float] {
        try TestSupport.piece(id, from: from, seconds: seconds)
    }

    private func scan(_ samples: [Float], index: CatalogIndex) -> [Segment] { TestSupport.scan(samples, index: index) }

    /// A reference that repeats a 30 s passage (knolls 5-35 s at 0 s and again at 40 s, with
    /// 10 s of battle between and 15 s of other battle after the second copy), the copies
    /// bit-exact or the second one altered (0.9 times as loud, pink noise 20 dB under it). A
    /// recording of 6 s of chipdisko, one copy with what follows it in the reference, then 4 s
    /// of forest, under pink noise (none, 5 dB, 0 dB): one play from 6 s, on the copy that
    /// played (reference time 0 or 40 s at 6 s). The copy found first kept the other from
    /// opening: a play of the bit-exact second copy started 17.6 s late (ref 57.6 s), and a
    /// play of the first copy was put on the altered second (ref 39.9 s).
    func testRepeatedPassageIsPlacedOnTheCopyThatPlays() throws {
        let passage = try piece("wesnoth-knolls", from: 5, seconds: 30)
        let between = try piece("wesnoth-battle", from: 5, seconds: 10)
        let after = try piece("wesnoth-battle", from: 20, seconds: 15)
        let altered = TestSupport.withPinkNoise(passage.map { $0 * 0.9 }, snr: 20, seed: 3)
        let lead = try piece("supertux-chipdisko", from: 3, seconds: 6), tail = try piece("supertux-forest", from: 20, seconds: 4)
        for (copies, second) in [("bit-exact", passage), ("altered", altered)] {
            let reference = passage + between + second + after
            let index = CatalogIndex(configuration: Configuration(),
                                     items: [(MediaItem(id: "repeats"), TestSupport.signature(of: reference, role: .reference))])
            for (played, body, referenceStart) in [("first", passage + between, 0.0), ("second", second + after, 40.0)] {
                for snr: Float? in [nil, 5, 0] {
                    let heard = snr.map { TestSupport.withPinkNoise(body, snr: $0, seed: 5) } ?? body
                    let segments = scan(lead + heard + tail, index: index)
                    let name = "\(copies) copies, \(played) played, noise \(snr.map { "\($0) dB" } ?? "none")"
                    XCTAssertEqual(segments.count, 1, name)
                    guard let s = segments.first else { continue }
                    XCTAssertEqual(s.start, 6, accuracy: 0.1, name)
                    XCTAssertEqual(s.end, 6 + Double(body.count) / Double(rate), accuracy: 0.1, name)
                    XCTAssertEqual(s.referenceTime(at: 6), referenceStart, accuracy: 0.1, name)
                    XCTAssertEqual(s.timeScale, 1, accuracy: 0.002, name)
                }
            }
        }
    }

    /// The monitor's path (events, no kept segments) over the bit-exact repeat played from its
    /// second copy under pink noise at 5 dB: one activity, and the segment it ends with is on
    /// the copy that played (reference time 40 s at 6 s, start within 0.1 s of 6 s).
    func testRepeatedPassageIsOneActivityOnTheCopyThatPlays() throws {
        let passage = try piece("wesnoth-knolls", from: 5, seconds: 30)
        let reference = passage + (try piece("wesnoth-battle", from: 5, seconds: 10)) + passage
            + (try piece("wesnoth-battle", from: 20, seconds: 15))
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "repeats"), TestSupport.signature(of: reference, role: .reference))])
        let heard = TestSupport.withPinkNoise(passage + (try piece("wesnoth-battle", from: 20, seconds: 15)), snr: 5, seed: 5)
        let recording = (try piece("supertux-chipdisko", from: 3, seconds: 6)) + heard
            + [Float](repeating: 0, count: 10 * rate)
        var started: [Int] = [], ended: [(id: Int, segment: Segment)] = []
        for e in TestSupport.monitorEvents(recording, index: index) {
            switch e {
            case .started(let id, _): started.append(id)
            case .ended(let id, let s): ended.append((id, s))
            case .refined: break
            }
        }
        XCTAssertEqual(started, [1])
        XCTAssertEqual(ended.map(\.id), [1])
        guard let s = ended.first?.segment else { return }
        XCTAssertEqual(s.start, 6, accuracy: 0.1)
        XCTAssertEqual(s.referenceTime(at: 6), 40, accuracy: 0.1)
        XCTAssertEqual(s.end, 51, accuracy: 0.2)
    }

    /// A segment of `reference` from `start` to `end` on the line through reference time
    /// `referenceStart` at `start` (speed 1).
    private func part(_ start: Double, _ end: Double, from referenceStart: Double, hits: Int, confidence: Double = 1,
                      reference: Int = 0) -> Segment {
        Segment(referenceIndex: reference, item: MediaItem(id: "r\(reference)"), start: start, end: end,
                referenceStart: referenceStart, referenceEnd: referenceStart + end - start, frequencySkew: 0,
                timeScale: 1, confidence: confidence, hits: hits)
    }

    /// Bench example (edges c04: a 21 s spot of stx-theme 6 dB under speech, a reference that
    /// repeats its passages): the play's line broke off at 45.5 s for a few windows in which a
    /// line at another copy of the passage held, and the set-list had two entries, 34.5-45.5 s
    /// and 45.5-55.4 s, both on the play's line. The parts of one line join across a segment of
    /// the reference at another alignment (here 30 s further into it, inside the play, or
    /// overlapping its end), which the joined play then covers.
    func testPartsOfOneLineJoinAcrossAnotherCopysSegment() {
        for other in [part(44, 47, from: 108, hits: 40), part(43, 56, from: 131, hits: 90)] {
            let segments = Scanner.resolveOverlaps([part(34.5, 45.5, from: 97.25, hits: 300), other,
                                                    part(45.5, 55.4, from: 108.25, hits: 250)], threshold: 0.5)
            XCTAssertEqual(segments.count, 1, "\(other.start)-\(other.end)")
            guard let s = segments.first else { continue }
            XCTAssertEqual(s.start, 34.5)
            XCTAssertEqual(s.end, 55.4)
            XCTAssertEqual(s.referenceStart, 97.25)
            XCTAssertEqual(s.hits, 550)
        }
        // Parts of another line (1 s off) stay apart, as after a skip in the recording.
        let skipped = Scanner.resolveOverlaps([part(34.5, 45.5, from: 97.25, hits: 300),
                                               part(45.5, 55.4, from: 109.25, hits: 250)], threshold: 0.5)
        XCTAssertEqual(skipped.map(\.referenceStart), [97.25, 109.25])
    }
}
