import Foundation
import XCTest
@testable import Soundmark

/// Synthetic songs with known answers: melodies of harmonic tones, "performed" again in another
/// key, at another tempo and with another timbre.
final class VersionMatcherTests: XCTestCase {
    /// A melody: `count` notes (MIDI numbers) drawn from a fixed seed, each `noteSeconds` long.
    static func melody(seed: UInt64, count: Int) -> [Int] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return 57 + Int((state >> 33) % 15)
        }
    }

    /// The melody rendered at 8 kHz: each note a tone of `harmonics` (amplitude per partial),
    /// transposed by `semitones`, with every note lasting `noteSeconds`.
    static func render(_ notes: [Int], noteSeconds: Double, semitones: Int = 0, harmonics: [Float] = [1, 0.5, 0.25]) -> [Float] {
        let rate = 8000.0, perNote = Int(noteSeconds * rate)
        var out = [Float](repeating: 0, count: perNote * notes.count)
        for (i, note) in notes.enumerated() {
            let f = 440 * pow(2, Double(note + semitones - 69) / 12)
            for t in 0..<perNote {
                let env = Float(min(1, Double(t) / 80, Double(perNote - t) / 80))
                var v: Float = 0
                for (h, a) in harmonics.enumerated() where f * Double(h + 1) < 3900 {
                    v += a * Float(sin(2 * Double.pi * f * Double(h + 1) * Double(t) / rate))
                }
                out[i * perNote + t] = 0.2 * env * v
            }
        }
        return out
    }

    func testChromaOfATonePeaksAtItsPitchClass() {
        let a440 = (0..<16000).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 8000)) }
        let chroma = ChromaAccumulator.chroma(of: a440)
        XCTAssertEqual(chroma.count, 16000 / 128 / 25 - 1) // frames completed: (16000 − 1024) / 128 + 1 = 118 rows → 4 blocks
        for f in 0..<chroma.count {
            let frame = Array(chroma.values[(f * 12)..<(f * 12 + 12)])
            XCTAssertEqual(frame.firstIndex(of: frame.max()!), 9, "A is pitch class 9")
            XCTAssertEqual(frame[9], 1)
        }
        // Silence is zero.
        let silent = ChromaAccumulator.chroma(of: [Float](repeating: 0, count: 16000))
        XCTAssertTrue(silent.values.allSatisfy { $0 == 0 })
    }

    func testChanceModelReadsALeadAsAnExponentialTail() {
        // No lead, no confidence; with 47 other references (a_N = √(2 ln 47) = 2.775) a lead of
        // 1.08 sd is the 5 % tail, of 1.41 sd the 2 % tail.
        XCTAssertEqual(VersionMatcher.confidence(gap: 0, nullCount: 47), 0)
        XCTAssertEqual(VersionMatcher.confidence(gap: 1.08, nullCount: 47), 0.95, accuracy: 0.001)
        XCTAssertEqual(VersionMatcher.confidence(gap: 1.41, nullCount: 47), 0.98, accuracy: 0.001)
        XCTAssertEqual(VersionMatcher.confidence(gap: 5, nullCount: 1), 0)
        // The lead is measured in the null sample's standard deviation (here 1.0).
        XCTAssertEqual(VersionMatcher.gapScore(best: 0, null: [2, 3, 4]), 2, accuracy: 1e-9)
        XCTAssertEqual(VersionMatcher.gapScore(best: 5, null: [2, 3, 4]), 0)
    }

    func testEncodingRoundTripsToAByte() {
        let chroma = ChromaSequence(frameDuration: 0.4, values: (0..<24).map { Float($0) / 23 })
        let back = ChromaSequence(encoded: chroma.encoded())!
        XCTAssertEqual(back.frameDuration, 0.4)
        XCTAssertEqual(back.count, 2)
        for (a, b) in zip(chroma.values, back.values) { XCTAssertEqual(a, b, accuracy: 0.5 / 255) }
        XCTAssertNil(ChromaSequence(encoded: [1, 2, 3]))
    }

    func testSubsequenceDTWFindsAnExactExcerptAtZeroCost() {
        let song = ChromaAccumulator.chroma(of: Self.render(Self.melody(seed: 1, count: 40), noteSeconds: 0.5))
        let reference = PreparedChroma(song)
        let query = reference.slice(10..<30)
        let a = SubsequenceDTW.align(query, in: reference)!
        XCTAssertEqual(a.referenceStart, 10)
        XCTAssertEqual(a.referenceEnd, 29)
        XCTAssertEqual(a.distance, 0, accuracy: 1e-5)
    }

    func testAnotherPerformanceIsNamedWithItsKeyAndTempo() {
        let songA = Self.melody(seed: 7, count: 120), songB = Self.melody(seed: 99, count: 120)
        let songC = Self.melody(seed: 1234, count: 120)
        let references = [songA, songB, songC].map { ChromaAccumulator.chroma(of: Self.render($0, noteSeconds: 0.5)) }
        let matcher = VersionMatcher(references: references)
        // Song B, 2 semitones up, 10 % faster (0.4545 s per note), other timbre; notes 40..<90.
        let live = Self.render(Array(songB[40..<90]), noteSeconds: 0.5 / 1.1, semitones: 2, harmonics: [1, 0.1, 0.6, 0.3])
        let match = matcher.best(PreparedChroma(ChromaAccumulator.chroma(of: live)))!
        XCTAssertEqual(match.referenceIndex, 1)
        XCTAssertEqual(match.transposition, 2)
        XCTAssertEqual(match.timeScale, 1.1, accuracy: 0.08)
        XCTAssertEqual(match.referenceStart, 20, accuracy: 1.0) // note 40 × 0.5 s
        XCTAssertGreaterThan(match.confidence, 0.9)
        // A melody that is none of them.
        let other = Self.render(Self.melody(seed: 555, count: 50), noteSeconds: 0.45, harmonics: [1, 0.1, 0.6, 0.3])
        let none = matcher.best(PreparedChroma(ChromaAccumulator.chroma(of: other)))!
        XCTAssertLessThan(none.confidence, 0.5, "score \(none.score)")
    }

    func testScanListsTheSongsPlayedInOrderWithTheirBoundaries() {
        let songs = (0..<4).map { Self.melody(seed: UInt64(10 + $0), count: 120) }  // 60 s each
        let references = songs.map { ChromaAccumulator.chroma(of: Self.render($0, noteSeconds: 0.5)) }
        let matcher = VersionMatcher(references: references)
        // Concert: 10 s silence, song 2 (−1 semitone, 0.9× tempo: 66.7 s), 10 s silence, a
        // non-catalog song (50 s), song 0 as written (60 s), 10 s silence.
        let gap = [Float](repeating: 0, count: 80000)
        let concert = gap + Self.render(songs[2], noteSeconds: 0.5 / 0.9, semitones: -1, harmonics: [1, 0.2, 0.5])
            + gap + Self.render(Self.melody(seed: 777, count: 100), noteSeconds: 0.5) + Self.render(songs[0], noteSeconds: 0.5) + gap
        let segments = matcher.scan(ChromaAccumulator.chroma(of: concert), referenceDurations: references.map(\.duration))
        XCTAssertEqual(segments.map(\.match.referenceIndex), [2, 0])
        XCTAssertEqual(segments.map(\.match.transposition), [-1, 0])
        XCTAssertEqual(segments[0].start, 10, accuracy: 3)
        XCTAssertEqual(segments[0].end, 76.7, accuracy: 3)
        XCTAssertEqual(segments[0].timeScale, 0.9, accuracy: 0.06)
        XCTAssertEqual(segments[1].start, 136.7, accuracy: 3)
        XCTAssertEqual(segments[1].end, 196.7, accuracy: 5) // the floor: 5 s
    }

    func testEntryEdgesMoveInToWhereTheSongsKeyHolds() {
        let songs = (0..<3).map { Self.melody(seed: UInt64(20 + $0), count: 120) }  // 60 s each
        let references = songs.map { ChromaAccumulator.chroma(of: Self.render($0, noteSeconds: 0.5)) }
        let matcher = VersionMatcher(references: references)
        // 20 s of a non-catalog melody, song 1 two semitones up (60 s), 20 s of another one.
        let recording = Self.render(Self.melody(seed: 901, count: 40), noteSeconds: 0.5, harmonics: [1, 0.3])
            + Self.render(songs[1], noteSeconds: 0.5, semitones: 2, harmonics: [1, 0.2, 0.5])
            + Self.render(Self.melody(seed: 902, count: 40), noteSeconds: 0.5, harmonics: [1, 0.3])
        let prepared = PreparedChroma(ChromaAccumulator.chroma(of: recording))
        let match = VersionMatch(referenceIndex: 1, transposition: 2, timeScale: 1, referenceStart: 0, referenceEnd: 60,
                                 distance: 0.1, score: 3, confidence: 0.99)
        // An entry that spans both other melodies (5…95 s) is cut back to the song (20…80 s):
        // the first 6 s window that begins three holding ones starts at frame 48 (19.2 s), the
        // last such one ends at frame 201 (80.4 s); reference times follow at time scale 1.
        let wide = VersionSegment(start: 5, end: 95, match: match, referenceStart: -15, referenceEnd: 75, timeScale: 1, windows: 5)
        let trimmed = matcher.trimmed(wide, in: prepared)
        XCTAssertEqual(trimmed.start, 19.2, accuracy: 1e-9)
        XCTAssertEqual(trimmed.end, 80.4, accuracy: 1e-9)
        XCTAssertEqual(trimmed.referenceStart, -0.8, accuracy: 1e-9)
        XCTAssertEqual(trimmed.referenceEnd, 60.4, accuracy: 1e-9)
        // Edges only move inward: an entry inside the song keeps its edges.
        let inside = VersionSegment(start: 30, end: 70, match: match, referenceStart: 10, referenceEnd: 50, timeScale: 1, windows: 3)
        XCTAssertEqual(matcher.trimmed(inside, in: prepared), inside)
        // In the wrong key the song never holds: the edges stay.
        var wrongKey = wide
        wrongKey.match.transposition = -4
        XCTAssertEqual(matcher.trimmed(wrongKey, in: prepared), wrongKey)
    }

    func testCatalogStoresVersionFeaturesAndMigratesFormat2() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("versions-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("c.db").path
        let audio = Self.render(Self.melody(seed: 3, count: 40), noteSeconds: 0.5)
        let generator = SignatureGenerator()
        generator.append(audio)
        let chroma = ChromaAccumulator.chroma(of: audio)
        do {
            let catalog = try Catalog(path: path, create: true)
            try catalog.addReferenceSignature(generator.signature(), representing: MediaItem(id: "song"))
            try catalog.setVersionFeatures(chroma, forReference: "song")
            XCTAssertEqual(try catalog.versionFeatures()["song"]?.count, chroma.count)
            // Back to a format 2 catalog without the table.
            try catalog.db.execute("DROP TABLE version_chroma")
            try catalog.db.execute("UPDATE meta SET value = '2' WHERE key = 'format_version'")
        }
        do {
            let readOnly = try Catalog(path: path, readOnly: true)
            XCTAssertEqual(try readOnly.versionFeatures().count, 0)
        }
        let catalog = try Catalog(path: path)
        XCTAssertEqual(catalog.storedFormatVersion, 3)
        XCTAssertEqual(try catalog.versionFeatures().count, 0)
        try catalog.setVersionFeatures(chroma, forReference: "song")
        XCTAssertThrowsError(try catalog.setVersionFeatures(chroma, forReference: "nothing"))
        XCTAssertTrue(try catalog.remove(id: "song"))
        XCTAssertEqual(try catalog.versionFeatures().count, 0)
    }
}
