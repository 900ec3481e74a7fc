import XCTest
@testable import Soundmark

/// Starts put where the recording's spectrum changes from other audio to the stretch
/// (``ChangeEdge``), and butt splices put where the second play begins.
final class ChangeEdgeTests: XCTestCase {
    private let rate = 8000

    private func index() throws -> CatalogIndex {
        CatalogIndex(configuration: Configuration(),
                     items: try ["wesnoth-knolls", "wesnoth-battle", "wesnoth-the-dangerous-symphony"].map {
                         (MediaItem(id: $0), try TestSupport.referenceSignature($0))
                     })
    }

    private func piece(_ id: String, from: Double, seconds: Double) throws -> [Float] {
        let samples = try TestSupport.referenceSamples(id)
        let a = Int(from * Double(rate))
        return Array(samples[a..<(a + Int(seconds * Double(rate)))])
    }

    /// Scans `samples` with the spectrum rows fed, as `scan` does.
    private func scan(_ samples: [Float], index: CatalogIndex) -> [Segment] {
        let scanner = RecordingScanner(index: index)
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        samples.withUnsafeBufferPointer { p in
            g.append(p, emit: { scanner.consume($0) },
                     spectrum: { scanner.consumeSpectrum(frame: $0, levels: SpectrumRing.quantise($1)) })
        }
        g.finish { scanner.consume($0) }
        return scanner.finish(recordingDuration: Double(samples.count) / Double(rate))
    }

    /// The change point of scores that step from one level to another is the first score of the
    /// second level, the whole variance explained; with two plateaus (other music in the
    /// stretch's key scores half way) the free fit takes the first step and the fit to the
    /// stretch's own level the second.
    func testChangePointFits() throws {
        let s = try XCTUnwrap(ChangeEdge.step([0.1, 0.1, 0.1, 0.8, 0.8, 0.8]))
        XCTAssertEqual(s.index, 3)
        XCTAssertEqual(s.fit, 1, accuracy: 1e-9)
        XCTAssertEqual(s.step, 0.7, accuracy: 1e-9)
        let plateaus = [0.1, 0.1, 0.1, 0.45, 0.45, 0.45, 0.45, 0.45, 0.45, 0.75, 0.75]
        XCTAssertEqual(ChangeEdge.step(plateaus)?.index, 3)
        let fixed = try XCTUnwrap(ChangeEdge.step(plateaus, after: 0.75))
        XCTAssertEqual(fixed.index, 9)
        XCTAssertEqual(fixed.step, 0.75 - (0.3 + 2.7) / 9, accuracy: 1e-9)
        XCTAssertNil(ChangeEdge.step([0.5, 0.5, 0.5]))
        // Falling scores have no change to the stretch.
        XCTAssertNil(ChangeEdge.step([0.8, 0.8, 0.8, 0.1, 0.1, 0.1]))
    }

    /// A stretch after 8 s of other music starts at the cut (within 0.05 s). From hits alone
    /// battle from 15.7 s and from 14.4 s started 0.11 s and 0.06 s early after the chip tune
    /// (landmarks of the tune's last notes hit by chance).
    func testStartAfterOtherMusicIsAtTheCut() throws {
        let index = try index()
        for (id, from, lead, tail) in [("wesnoth-battle", 15.7, ("supertux-chipdisko", 3.0), ("supertux-forest", 10.0)),
                                       ("wesnoth-battle", 14.4, ("supertux-chipdisko", 3.0), ("supertux-forest", 10.0))] {
            let recording = try piece(lead.0, from: lead.1, seconds: 8) + piece(id, from: from, seconds: 12)
                + piece(tail.0, from: tail.1, seconds: 5)
            let segments = scan(recording, index: index)
            let name = "\(id) from \(from) s after \(lead.0)"
            XCTAssertEqual(segments.map(\.item.id), [id], name)
            guard let s = segments.first else { continue }
            XCTAssertEqual(s.start, 8, accuracy: 0.05, name)
            XCTAssertEqual(s.referenceTime(at: 8), from, accuracy: 0.02, name)
            XCTAssertEqual(s.end, 20, accuracy: 0.15, name)
        }
    }

    /// Speech, 0.6 s of digital silence, then the last 0.12 s of a syllable cut short by the
    /// stretch: the stretch starts after the syllable (within 0.05 s), not where the silence
    /// ends (0.12 s early, the onset rule alone).
    func testSyllableAfterSilenceIsNotTheStretch() throws {
        let espeak = "/usr/bin/espeak-ng"
        guard FileManager.default.isExecutableFile(atPath: espeak) else { throw XCTSkip("espeak-ng not found at \(espeak)") }
        let dir = try TestSupport.temporaryDirectory(self)
        let wav = dir.appendingPathComponent("speech.wav").path
        let r = try TestSupport.run(espeak, ["-s", "150", "-w", wav, "Good evening, here is the news and the weather for the whole region tonight. "
                                              + "Traffic is slow on the bridge, and the trains are running about ten minutes late."])
        guard r.status == 0 else { throw XCTSkip("espeak-ng failed: \(r.stderr)") }
        let speech = try MediaDecoder.decodeAll(source: wav, sampleRate: rate)
        // The loudest 20 ms of the speech's third second: a voiced syllable.
        var loudest = 2 * rate, level: Float = 0
        for a in stride(from: 2 * rate, to: 4 * rate, by: 80) {
            let e = speech[a..<(a + 160)].reduce(0) { $0 + $1 * $1 }
            if e > level { level = e; loudest = a }
        }
        let syllable = Array(speech[loudest..<(loudest + 960)])
        let index = try index()
        for (id, from) in [("wesnoth-knolls", 6.0), ("wesnoth-battle", 16.5), ("wesnoth-the-dangerous-symphony", 6.0)] {
            let head = Array(speech[0..<(6 * rate)]) + [Float](repeating: 0, count: 4800) + syllable
            let cut = Double(head.count) / Double(rate)
            let recording = head + (try piece(id, from: from, seconds: 14)) + (try piece("supertux-forest", from: 10, seconds: 5))
            let segments = scan(recording, index: index)
            let name = "\(id) from \(from) s after a syllable"
            XCTAssertEqual(segments.map(\.item.id), [id], name)
            guard let s = segments.first else { continue }
            XCTAssertEqual(s.start, cut, accuracy: 0.05, name)
            XCTAssertEqual(s.referenceTime(at: cut), from, accuracy: 0.02, name)
        }
    }

    /// A butt splice from one play to the next: the boundary is where the second play begins
    /// (within 0.05 s of the cut at 20 s). From hits the overlap's middle put it 0.14 s late
    /// (battle then knolls: the first play's hits reach into the second), and the symphony
    /// started 0.06 s late after battle.
    func testButtSpliceIsWhereTheSecondPlayBegins() throws {
        let index = try index()
        for (first, second) in [(("wesnoth-battle", 6.3), ("wesnoth-knolls", 13.7)),
                                (("wesnoth-battle", 8.6), ("wesnoth-the-dangerous-symphony", 17.6))] {
            let recording = try piece("supertux-forest", from: 20, seconds: 5) + piece(first.0, from: first.1, seconds: 15)
                + piece(second.0, from: second.1, seconds: 15) + piece("supertux-chipdisko", from: 10, seconds: 5)
            let segments = scan(recording, index: index)
            let name = "\(first) then \(second)"
            XCTAssertEqual(segments.map(\.item.id), [first.0, second.0], name)
            guard segments.count == 2 else { continue }
            XCTAssertEqual(segments[0].end, 20, accuracy: 0.05, name)
            XCTAssertEqual(segments[1].start, 20, accuracy: 0.05, name)
            XCTAssertEqual(segments[1].referenceTime(at: 20), second.1, accuracy: 0.02, name)
        }
    }
}
