import Foundation
import XCTest
@testable import Soundmark

/// Issue 10 (matching in the hard cases): which copy of a passage a reference repeats
/// ``RecordingScanner`` puts a play on, clean and under noise, in `scan` and on the monitor's path, and
/// plays of material two references share. Recordings are assembled from the sample
/// references at 8000 Hz mono, so the truth is exact.
final class ScannerRepeatTests: XCTestCase {
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
        let (started, ended) = activities(recording, index: index)
        XCTAssertEqual(started, [1])
        XCTAssertEqual(ended.map(\.id), [1])
        guard let s = ended.first?.segment else { return }
        XCTAssertEqual(s.start, 6, accuracy: 0.1)
        XCTAssertEqual(s.referenceTime(at: 6), 40, accuracy: 0.1)
        XCTAssertEqual(s.end, 51, accuracy: 0.2)
    }

    /// Helper-found example: version a (*Beach* 40-60 s, `Fixtures/shared-intro`, then battle
    /// 10-30 s) and version b (chipdisko 10-30 s, then the same battle) catalogued; a recording of
    /// 6 or 12 s of silence, then a. a's line opened on its first window at speed 0.99 and kept
    /// it, so over the shared battle it gathered a third of b's hits and b came out as a play of
    /// its own (26-46 s), in `scan` and as a second activity in `monitor`. One segment for a,
    /// with b as the alternative over the shared stretch; one activity.
    func testAPlayIsCountedAtTheSpeedItsHitsShow() throws {
        let dir = TestSupport.packageRoot.appendingPathComponent("Tests/SoundmarkTests/Fixtures/shared-intro")
        let beach = try TestSupport.samples(ofFile: dir.appendingPathComponent("hedgewars-beach.flac").path)
        let shared = try piece("wesnoth-battle", from: 10, seconds: 20)
        let a = Array(beach.prefix(20 * rate)) + shared, b = (try piece("supertux-chipdisko", from: 10, seconds: 20)) + shared
        let index = CatalogIndex(configuration: Configuration(), items: [
            (MediaItem(id: "a"), TestSupport.signature(of: a, role: .reference)),
            (MediaItem(id: "b"), TestSupport.signature(of: b, role: .reference))])
        for lead in [6, 12] {
            let recording = [Float](repeating: 0, count: lead * rate) + a + [Float](repeating: 0, count: 4 * rate)
            let segments = scan(recording, index: index)
            XCTAssertEqual(segments.map(\.item.id), ["a"], "lead-in \(lead) s")
            if let s = segments.first {
                XCTAssertEqual(s.start, Double(lead), accuracy: 0.1, "lead-in \(lead) s")
                XCTAssertEqual(s.end, Double(lead + 40), accuracy: 0.1, "lead-in \(lead) s")
                XCTAssertEqual(s.frequencySkew, 0, accuracy: 0.002, "lead-in \(lead) s")
                XCTAssertEqual(s.alternatives.map(\.item.id), ["b"], "lead-in \(lead) s")
                XCTAssertEqual(s.alternatives.first?.start ?? 0, Double(lead + 20), accuracy: 0.3, "lead-in \(lead) s")
            }
            let (started, ended) = activities(recording, index: index)
            XCTAssertEqual(started, [1], "lead-in \(lead) s")
            XCTAssertEqual(ended.map(\.segment.item.id), ["a"], "lead-in \(lead) s")
        }
    }

    /// Helper-found example: knolls at 0.1 times the level of battle under it for 8 s (4-12 s,
    /// reference 0-8 s), 16 s of battle alone, then knolls from reference 24 s at full level
    /// (28-40 s, on the same line). The play was traced back through the 26 s landmark history
    /// to the faint hits and started at 16.3 s (reference 12.3 s), over battle alone. It starts
    /// at 28 s: the trace stops at a gap as long as a line's closing delay.
    func testAPlayIsNotTracedBackAcrossAGapWithoutHits() throws {
        let battle = try piece("wesnoth-battle", from: 0, seconds: 28), knolls = try piece("wesnoth-knolls", from: 0, seconds: 36)
        var bed = battle.map { $0 * 0.5 }
        for i in 0..<(8 * rate) { bed[4 * rate + i] += 0.1 * knolls[i] }
        let recording = bed + Array(knolls[(24 * rate)...])
        let index = CatalogIndex(configuration: Configuration(), items: try TestSupport.referenceIDs.map {
            (MediaItem(id: $0), try TestSupport.referenceSignature($0))
        })
        let knollsSegments = scan(recording, index: index).filter { $0.item.id == "wesnoth-knolls" }
        XCTAssertEqual(knollsSegments.count, 1)
        guard let s = knollsSegments.first else { return }
        XCTAssertEqual(s.start, 28, accuracy: 0.1)
        XCTAssertEqual(s.referenceTime(at: 28), 24, accuracy: 0.05)
    }

    /// Helper-found example on the monitor's path: a reference P Q P R (P bit-exact at 0 and
    /// 20 s: knolls 10-20 s; Q battle 5-15 s, R battle 25-35 s); a recording of 6 s of other
    /// music (chipdisko or symphony 10-16 s), P, and the same 6 s again. The line on one copy
    /// announced the play; the line on the other copy (over the same audio, ending with it, a
    /// chance hit or two later) was taken for a later play going on past it, and the activity
    /// ended at its start: 0.08 and 0.02 s long. One activity over the play, 6-16 s.
    func testAnotherCopyOverThePlayDoesNotCutItsActivity() throws {
        let p = try piece("wesnoth-knolls", from: 10, seconds: 10)
        let reference = p + (try piece("wesnoth-battle", from: 5, seconds: 10)) + p + (try piece("wesnoth-battle", from: 25, seconds: 10))
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "rep"), TestSupport.signature(of: reference, role: .reference))])
        for other in ["supertux-chipdisko", "wesnoth-the-dangerous-symphony"] {
            let around = try piece(other, from: 10, seconds: 6)
            let (started, ended) = activities(around + p + around, index: index)
            XCTAssertEqual(started, [1], other)
            XCTAssertEqual(ended.count, 1, other)
            guard let s = ended.first?.segment else { continue }
            XCTAssertEqual(s.start, 6, accuracy: 0.3, other)
            XCTAssertEqual(s.end, 16, accuracy: 0.3, other)
        }
    }

    /// The ids of the monitor's `started` events over `recording`, and its `ended` events.
    private func activities(_ recording: [Float], index: CatalogIndex) -> (started: [Int], ended: [(id: Int, segment: Segment)]) {
        var started: [Int] = [], ended: [(id: Int, segment: Segment)] = []
        for e in TestSupport.monitorEvents(recording, index: index) {
            switch e {
            case .started(let id, _): started.append(id)
            case .ended(let id, let s): ended.append((id, s))
            case .refined: break
            }
        }
        return (started, ended)
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
            let segments = RecordingScanner.resolveOverlaps([part(34.5, 45.5, from: 97.25, hits: 300), other,
                                                    part(45.5, 55.4, from: 108.25, hits: 250)], threshold: 0.5)
            XCTAssertEqual(segments.count, 1, "\(other.start)-\(other.end)")
            guard let s = segments.first else { continue }
            XCTAssertEqual(s.start, 34.5)
            XCTAssertEqual(s.end, 55.4)
            XCTAssertEqual(s.referenceStart, 97.25)
            XCTAssertEqual(s.hits, 550)
        }
        // Parts of another line (1 s off) stay apart, as after a skip in the recording.
        let skipped = RecordingScanner.resolveOverlaps([part(34.5, 45.5, from: 97.25, hits: 300),
                                               part(45.5, 55.4, from: 109.25, hits: 250)], threshold: 0.5)
        XCTAssertEqual(skipped.map(\.referenceStart), [97.25, 109.25])
    }

    /// A weak part on the play's own line that ends inside it (supertux-forest at sox tempo 0.9:
    /// the play 0.32-44.44 s on reference 0.28-40.00 s, and a part of 78 hits 0.88-16.94 s on
    /// reference 0.76-16.57 s) is joined into the play without shortening it: the play's end and
    /// its reference end stay (the joined play had said reference 0.28-16.57 s over 44 s).
    func testAPartEndingInsideThePlayLeavesItsEnd() {
        let play = Segment(referenceIndex: 0, item: MediaItem(id: "r0"), start: 0.32, end: 44.44, referenceStart: 0.28,
                           referenceEnd: 40.0, frequencySkew: 0, timeScale: 0.9, confidence: 1, hits: 1359)
        let inside = Segment(referenceIndex: 0, item: MediaItem(id: "r0"), start: 0.88, end: 16.94, referenceStart: 0.76,
                             referenceEnd: 16.57, frequencySkew: 0, timeScale: 0.9, confidence: 0, hits: 78)
        let segments = RecordingScanner.resolveOverlaps([play, inside], threshold: 0.5)
        XCTAssertEqual(segments.count, 1)
        XCTAssertEqual(segments.first?.start, 0.32)
        XCTAssertEqual(segments.first?.end, 44.44)
        XCTAssertEqual(segments.first?.referenceStart, 0.28)
        XCTAssertEqual(segments.first?.referenceEnd, 40.0)
        XCTAssertEqual(segments.first?.hits, 1437)
    }

    /// Two spots on one music bed with different voice-overs, one of them aired: both lines
    /// hold most of the stretch alike (the bed), so the slot share reaches
    /// ``Matcher/duplicateCoverage`` and the airing was listed with the other spot as "the same
    /// audio". References that differ in part of the stretch (`nearDuplicate`) are two
    /// recordings: the one with more hits is the play, alone; the other, whose hits the bed
    /// gave, is neither an alternative nor a play. Inside the play it is a version of the
    /// play's reference (most of its slots shared, ``PartialMaterial/versionShare``), so not
    /// partial material either; sharing less, it is partial material.
    func testANearDuplicateIsNeitherAnAlternativeNorAPlay() {
        let aired = part(10, 30, from: 0, hits: 900, reference: 0), other = part(10, 30, from: 0, hits: 600, reference: 1)
        let same = RecordingScanner.resolve([aired, other], threshold: 0.5, sameRecording: { _, _ in 0.85 })
        XCTAssertEqual(same.plays.map(\.item.id), ["r0"])
        XCTAssertEqual(same.plays.first?.alternatives.map(\.item.id), ["r1"])
        let near = RecordingScanner.resolve([aired, other], threshold: 0.5, sameRecording: { _, _ in 0.85 }, nearDuplicate: { _, _ in true })
        XCTAssertEqual(near.plays.map(\.item.id), ["r0"])
        XCTAssertEqual(near.plays.first?.alternatives.count, 0)
        XCTAssertEqual(near.partial.count, 0)
        let layer = RecordingScanner.resolve([aired, other], threshold: 0.5, sameRecording: { _, _ in 0.3 }, nearDuplicate: { _, _ in true })
        XCTAssertEqual(layer.plays.map(\.item.id), ["r0"])
        XCTAssertEqual(layer.plays.first?.alternatives.count, 0)
        XCTAssertEqual(layer.partial.map(\.segment.item.id), ["r1"])
        XCTAssertEqual(layer.partial.first?.within.id, "r0")
    }

    /// Three references that are the same recording over one stretch (a spot, its MP3
    /// re-encoding and its marked copy): one entry with both others as alternatives. Which copy
    /// folds into which depends on the hits each gathers; in the order below the weakest folds
    /// into the middle one, which the strongest folds in turn, and the weakest was lost from
    /// the alternatives (a plain airing under noise in Opus listed only one of the two copies).
    func testThreeCopiesOfOneRecordingAreOneEntryWithTwoAlternatives() {
        let copies = [part(20, 40, from: 0, hits: 2000, reference: 1), part(20, 40, from: 0, hits: 3000, reference: 0),
                      part(20, 40, from: 0, hits: 1000, reference: 2)]
        let segments = RecordingScanner.resolveOverlaps(copies, threshold: 0.5, sameRecording: { _, _ in 1 })
        XCTAssertEqual(segments.map(\.item.id), ["r0"])
        XCTAssertEqual(segments.first?.alternatives.map(\.item.id).sorted(), ["r1", "r2"])
        XCTAssertEqual(segments.first?.alternatives.map(\.start), [20, 20])
    }

    /// The lines of a passage a reference repeats back to back (its J T T M, T 8 s at 12 and
    /// 20 s) over a recording of T T T M from 10 s: T T M from 18 s (line at 12 s, the
    /// strongest), T M from 26 s (at 20 s), T T from 10 s (at 12 s) and T from 10 s (at 20 s).
    /// The first T was covered only by the T T line, which the strongest covers in turn, and
    /// went missing; only a kept segment covers: T from 10 s, then T T M from 18 s. Of two
    /// bit-exact copies over the same stretch (A at 0 and 24 s of A B A C, played as A A C) the
    /// one earlier in the reference is kept.
    func testOnlyAKeptSegmentCoversAnother() {
        let repeats = RecordingScanner.resolveOverlaps([part(18, 44, from: 12, hits: 520), part(26, 44, from: 20, hits: 360),
                                               part(10, 26, from: 12, hits: 320), part(10, 18, from: 20, hits: 160)],
                                              threshold: 0.5)
        XCTAssertEqual(repeats.map(\.start), [10, 18])
        XCTAssertEqual(repeats.map(\.referenceStart), [20, 12])
        let copies = RecordingScanner.resolveOverlaps([part(10, 22, from: 24, hits: 240), part(22, 46, from: 24, hits: 480),
                                              part(10, 22, from: 0, hits: 240)], threshold: 0.5)
        XCTAssertEqual(copies.map(\.start), [10, 22])
        XCTAssertEqual(copies.map(\.referenceStart), [0, 24])
    }

    /// Helper-found example: a play from a reference's first second after a butt splice whose
    /// boundary the spectrum put 0.19 s before the play's start from hits came out with
    /// reference start −0.192 s. The boundary ends the first play there; the second starts no
    /// earlier than its reference.
    func testASegmentStartsNoEarlierThanItsReference() {
        var a = part(0, 10.05, from: 20, hits: 500)
        a.changeEnd = 9.81
        var b = part(10, 34, from: 0, hits: 900, reference: 1)
        b.startsFromHits = true
        let segments = RecordingScanner.resolveOverlaps([a, b], threshold: 0.5)
        XCTAssertEqual(segments.map(\.end), [9.81, 34])
        XCTAssertEqual(segments.map(\.start), [0, 10])
        XCTAssertEqual(segments.map(\.referenceStart), [20, 0])
    }

    /// Helper-found example, scanned: a reference J T T M (T: knolls 5-13 s, J and M battle)
    /// and a recording of chipdisko (6 s), T T T M, forest (4 s). The first T is a play of its
    /// own: the set-list covers 6-40 s in two segments with no gap, each on a line that holds
    /// (T from 6 s, then T T M from 14 s at 12 s; or T T from 6 s at 12 s, then T M from 22 s
    /// at 20 s).
    func testAPassagePlayedMoreOftenThanTheReferenceRepeatsItIsCovered() throws {
        let t = try piece("wesnoth-knolls", from: 5, seconds: 8)
        let m = try piece("wesnoth-battle", from: 20, seconds: 10)
        let reference = (try piece("wesnoth-battle", from: 5, seconds: 12)) + t + t + m
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "backtoback"), TestSupport.signature(of: reference, role: .reference))])
        let segments = scan((try piece("supertux-chipdisko", from: 3, seconds: 6)) + t + t + t + m
                            + (try piece("supertux-forest", from: 20, seconds: 4)), index: index)
        XCTAssertEqual(segments.count, 2, "\(segments.map { ($0.start, $0.end, $0.referenceStart) })")
        guard segments.count == 2 else { return }
        XCTAssertEqual(segments[0].start, 6, accuracy: 0.1)
        XCTAssertEqual(segments[1].end, 40, accuracy: 0.1)
        XCTAssertEqual(segments[0].end, segments[1].start, accuracy: 0.1)
        let split = segments[1].start
        XCTAssertTrue(abs(split - 14) <= 0.1 || abs(split - 22) <= 0.1, "split at \(split)")
        // T at 6 s is the reference's 12 s or 20 s; the second play's line is the one that reaches M.
        XCTAssertTrue([12.0, 20.0].contains { abs(segments[0].referenceTime(at: 6) - $0) <= 0.1 })
        XCTAssertEqual(segments[1].referenceTime(at: 30), 28, accuracy: 0.1)
    }

    /// Helper-found example on the monitor's path: two references share a passage (knolls 5-14 s
    /// after 10 s of their own music, battle in one, forest in the other, then more of each) and
    /// a recording plays the second from the passage on (the passage as the first holds it). `scan` gives one segment with the other
    /// reference as its alternative; `monitor` started an activity for the first reference (the
    /// shared part) and a second one for the play. One activity, ending on the reference that
    /// played (its 10 s at 6 s).
    func testSharedPassageIsOneActivityOfTheVersionThatPlays() throws {
        let shared = try piece("wesnoth-knolls", from: 5, seconds: 9)
        let x = (try piece("wesnoth-battle", from: 0, seconds: 10)) + shared + (try piece("wesnoth-battle", from: 25, seconds: 10))
        let yAfter = try piece("supertux-forest", from: 10, seconds: 10)
        // (Y's copy of the passage a little apart from X's: 0.9 times as loud, pink noise 20 dB
        // under it; the recording holds X's copy, so X's line is the stronger over the passage.)
        let y = (try piece("supertux-forest", from: 25, seconds: 10))
            + TestSupport.withPinkNoise(shared.map { $0 * 0.9 }, snr: 20, seed: 9) + yAfter
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "version-x"), TestSupport.signature(of: x, role: .reference)),
                                         (MediaItem(id: "version-y"), TestSupport.signature(of: y, role: .reference))])
        let recording = (try piece("supertux-chipdisko", from: 3, seconds: 6)) + shared + yAfter
            + [Float](repeating: 0, count: 10 * rate)
        let scanned = scan(recording, index: index)
        XCTAssertEqual(scanned.map(\.item.id), ["version-y"])
        let (started, ended) = activities(recording, index: index)
        XCTAssertEqual(started, [1])
        XCTAssertEqual(ended.map(\.id), [1])
        XCTAssertEqual(ended.map(\.segment.item.id), ["version-y"])
        guard let s = ended.first?.segment else { return }
        XCTAssertEqual(s.start, 6, accuracy: 0.15)
        XCTAssertEqual(s.referenceTime(at: 6), 10, accuracy: 0.1)
        XCTAssertEqual(s.end, 25, accuracy: 0.2)
    }

    /// Helper-found examples on the monitor's path, bit-exact copies: (1) a reference A B A C
    /// (A: knolls 5-15 s, the copies 20.01 s apart) and a recording of chipdisko (6 s), A, A, 10 s of silence: two plays,
    /// 6-16 s and 16-26 s. The second A's two lines (one per copy) gave two overlapping
    /// activities, and the first A's activity moved between the copies with every window
    /// (8 `refined` events). (2) The J T T M reference played as T T T M: the first activity
    /// ended 7.9 s into the next one; it ends where the next starts.
    func testMonitorGivesOneActivityPerPlayOfABitExactPassage() throws {
        let a = try piece("wesnoth-knolls", from: 5, seconds: 10)
        // (B 10.01 s long: the second copy lies off the first's frame grid, as copies in real
        // music do, so the copies' lines gather a hit or two more or less than each other.)
        let abac = a + (try piece("wesnoth-battle", from: 5, seconds: 10.01)) + a + (try piece("wesnoth-battle", from: 20, seconds: 10))
        let index = CatalogIndex(configuration: Configuration(),
                                 items: [(MediaItem(id: "abac"), TestSupport.signature(of: abac, role: .reference))])
        let lead = try piece("supertux-chipdisko", from: 3, seconds: 6)
        let events = TestSupport.monitorEvents(lead + a + a + [Float](repeating: 0, count: 10 * rate), index: index)
        var starts: [Int: Double] = [:], ends: [Int: Double] = [:], refined: [Int: Int] = [:]
        for e in events {
            switch e {
            case .started(let id, let s): starts[id] = s.start
            case .refined(let id, _): refined[id, default: 0] += 1
            case .ended(let id, let s): ends[id] = s.end
            }
        }
        XCTAssertEqual(starts.keys.sorted(), [1, 2])
        XCTAssertEqual(starts[1] ?? 0, 6, accuracy: 0.1)
        XCTAssertEqual(ends[1] ?? 0, 16, accuracy: 0.1)
        XCTAssertEqual(starts[2] ?? 0, 16, accuracy: 0.1)
        XCTAssertEqual(ends[2] ?? 0, 26, accuracy: 0.1)
        XCTAssertLessThanOrEqual(refined.values.max() ?? 0, 1, "\(refined)")

        let t = try piece("wesnoth-knolls", from: 5, seconds: 8)
        let m = try piece("wesnoth-battle", from: 20, seconds: 10)
        let jttm = CatalogIndex(configuration: Configuration(),
                                items: [(MediaItem(id: "backtoback"),
                                         TestSupport.signature(of: (try piece("wesnoth-battle", from: 5, seconds: 12)) + t + t + m, role: .reference))])
        var plays: [(start: Double, end: Double)] = []
        var opened: [Int: Double] = [:]
        for e in TestSupport.monitorEvents(lead + t + t + t + m + [Float](repeating: 0, count: 10 * rate), index: jttm) {
            if case .started(let id, let s) = e { opened[id] = s.start }
            if case .ended(let id, let s) = e { plays.append((min(opened[id] ?? s.start, s.start), s.end)) }
        }
        plays.sort { $0.start < $1.start }
        XCTAssertEqual(plays.count, 2, "\(plays)")
        guard plays.count == 2 else { return }
        XCTAssertEqual(plays[0].start, 6, accuracy: 0.15)
        XCTAssertEqual(plays[1].end, 40, accuracy: 0.15)
        XCTAssertLessThanOrEqual(plays[0].end, plays[1].start + 0.1, "\(plays)")
    }
}
