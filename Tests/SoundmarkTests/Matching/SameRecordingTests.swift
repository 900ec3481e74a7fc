import Foundation
import XCTest
@testable import Soundmark

/// What `catalog add` counts as the same recording (``Matcher/alignedCopies(of:)``,
/// ``RecordingComparison``): the whole length matching at skew 0 with the evidence of a
/// re-encoding, not most of it.
final class SameRecordingTests: XCTestCase {
    private static let rate = 8000

    /// Issue 40, item 1: 20 s slices of looped music (a 2 s bar repeated under a melody that
    /// differs) were merged as one recording: the bar's landmarks filled 80 % of the slots. The
    /// slices hold about a third of each other's landmarks, evenly: two recordings, a
    /// near-duplicate; an MP3 128k of one slice is still the same recording as it.
    func testSlicesOfLoopedMusicAreNearDuplicatesNotTheSameRecording() throws {
        let bar = try TestSupport.piece("wesnoth-knolls", from: 10, seconds: 2)
        let loop = Array((0..<20).map { _ in bar }.joined())
        // A melody of 0.25 s triangle notes, the same pseudo-random choice every run.
        var seed: UInt64 = 7
        let notes: [Float] = [262, 294, 330, 349, 392, 440, 494, 523, 587, 659]
        var melody: [Float] = []
        for _ in 0..<160 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let f = notes[Int(seed >> 33) % notes.count], count = Self.rate / 4
            melody += (0..<count).map { i in
                let phase = (Float(i) * f / Float(Self.rate)).truncatingRemainder(dividingBy: 1)
                let fade = min(1, Float(i) / 80, Float(count - i) / 400)
                return (4 * abs(phase - 0.5) - 1) * fade
            }
        }
        let mixed = zip(loop, melody).map { 0.7 * $0 + 0.5 * $1 }
        let half = 20 * Self.rate
        let a = Array(mixed[0..<half]), b = Array(mixed[half...])
        // The example's waveform correlation: 0.41 (0.40 in the issue).
        XCTAssertEqual(pearson(a, b), 0.41, accuracy: 0.01)
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "slice-a"), TestSupport.signature(of: a, role: .reference))])
        let matcher = Matcher(index: index)
        let other = TestSupport.signature(of: b, role: .reference)
        XCTAssertNil(matcher.sameRecording(as: other))
        let near = try XCTUnwrap(matcher.alignedCopies(of: other).first)
        XCTAssertGreaterThanOrEqual(near.coverage, Matcher.duplicateCoverage, "what made it a duplicate before")
        XCTAssertEqual(near.comparison.share, 0.38, accuracy: 0.02)
        XCTAssertLessThan(near.comparison.share, SameRecordingRule.overallFloor)
        XCTAssertFalse(near.comparison.isSameRecording)
        // The same slice re-encoded (MP3 128k) is the same recording.
        let dir = try TestSupport.temporaryDirectory(self)
        let wav = dir.appendingPathComponent("a.wav"), mp3 = dir.appendingPathComponent("a.mp3").path
        try SignatureFileTests.writeFloatWAV(a, sampleRate: Self.rate, to: wav)
        try TestSupport.ffmpeg(["-i", wav.path, "-b:a", "128k"], output: mp3)
        let copy = TestSupport.signature(of: try MediaDecoder.decodeAll(source: mp3, sampleRate: Self.rate), role: .reference)
        let same = try XCTUnwrap(matcher.alignedCopies(of: copy).first)
        XCTAssertTrue(same.comparison.isSameRecording, "\(same.comparison.share) \(same.comparison.differing)")
        XCTAssertEqual(matcher.sameRecording(as: copy)?.referenceIndex, 0)
    }

    /// A recording that differs from a stored one over one stretch only (the first 2 s replaced
    /// by other music: another intro) is a near-duplicate whose comparison names that stretch;
    /// the stored reference compared with itself differs nowhere.
    func testAnotherIntroDiffersOverItsFirstTwoSeconds() throws {
        let song = try TestSupport.piece("wesnoth-knolls", from: 0, seconds: 20)
        let intro = try TestSupport.piece("wesnoth-battle", from: 0, seconds: 2)
        let edit = intro + song[(2 * Self.rate)...]
        let index = CatalogIndex(configuration: Configuration(), items: [(MediaItem(id: "song"), TestSupport.signature(of: song, role: .reference))])
        let matcher = Matcher(index: index)
        let near = try XCTUnwrap(matcher.alignedCopies(of: TestSupport.signature(of: edit, role: .reference)).first)
        XCTAssertFalse(near.comparison.isSameRecording)
        let differing = try XCTUnwrap(near.comparison.differing.first)
        XCTAssertEqual(near.comparison.differing.count, 1, "\(near.comparison.differing)")
        XCTAssertEqual(differing.lowerBound, 0, accuracy: 0.01)
        XCTAssertEqual(differing.upperBound, 2.0, accuracy: 0.3)
        let itself = try XCTUnwrap(matcher.alignedCopies(of: TestSupport.signature(of: song, role: .reference)).first)
        XCTAssertTrue(itself.comparison.isSameRecording)
        XCTAssertEqual(itself.comparison.share, 1, accuracy: 1e-9)
    }

    private func pearson(_ a: [Float], _ b: [Float]) -> Double {
        let n = Double(min(a.count, b.count))
        let ma = a.reduce(0) { $0 + Double($1) } / n, mb = b.reduce(0) { $0 + Double($1) } / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for (x, y) in zip(a, b) {
            let dx = Double(x) - ma, dy = Double(y) - mb
            sab += dx * dy; saa += dx * dx; sbb += dy * dy
        }
        return sab / (saa * sbb).squareRoot()
    }
}
