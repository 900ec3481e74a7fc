import XCTest
@testable import Soundmark

/// Edges of spots mixed under louder audio, moved outwards by the reference's peaks in the
/// recording's spectrum (``SpectrumEdge``).
final class SpectrumEdgeTests: XCTestCase {
    private let rate = 8000

    private func rms(_ x: ArraySlice<Float>) -> Double {
        (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot()
    }

    /// Scans `samples`, feeding the spectrum rows when `spectrum`.
    private func scan(_ samples: [Float], index: CatalogIndex, spectrum: Bool = true) -> [Segment] {
        let scanner = Scanner(index: index)
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        samples.withUnsafeBufferPointer { p in
            g.append(p, emit: { scanner.consume($0) },
                     spectrum: spectrum ? { scanner.consumeSpectrum(frame: $0, levels: SpectrumRing.quantise($1)) } : nil)
        }
        g.finish { scanner.consume($0) }
        return scanner.finish(recordingDuration: Double(samples.count) / Double(rate))
    }

    /// `seconds` of reference `id` from `from` s mixed `db` dB under a bed of `bed` from 0 s, at `at` s
    /// of a 36 s recording.
    private func mix(_ id: String, from: Double, seconds: Double, under bed: String, db: Double, at: Double) throws -> [Float] {
        let reference = try TestSupport.referenceSamples(id)
        let a = Int(from * Double(rate))
        let spot = Array(reference[a..<(a + Int(seconds * Double(rate)))])
        var out = Array(try TestSupport.referenceSamples(bed)[0..<(36 * rate)])
        let start = Int(at * Double(rate))
        let gain = Float(rms(out[start..<(start + spot.count)]) / rms(spot[...]) * pow(10, -db / 20))
        for (i, v) in spot.enumerated() { out[start + i] += gain * v }
        return out
    }

    /// About 40 s of synthetic speech (espeak-ng), 8000 Hz mono; skips when espeak-ng is missing.
    private func speech() throws -> [Float] {
        let espeak = "/usr/bin/espeak-ng"
        guard FileManager.default.isExecutableFile(atPath: espeak) else { throw XCTSkip("espeak-ng not found at \(espeak)") }
        let dir = try TestSupport.temporaryDirectory(self)
        let wav = dir.appendingPathComponent("speech.wav").path
        let text = String(repeating: "Good evening, here is the news and the weather for the whole region tonight. "
                          + "Traffic is slow on the bridge, and the trains are running about ten minutes late. ", count: 4)
        let r = try TestSupport.run(espeak, ["-s", "150", "-w", wav, text])
        guard r.status == 0 else { throw XCTSkip("espeak-ng failed: \(r.stderr)") }
        return try MediaDecoder.decodeAll(source: wav, sampleRate: rate)
    }

    func testSpotUnderSpeech() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        let bed = try speech()
        print("EDGE speech", Double(bed.count) / Double(rate))
        for id in ["wesnoth-knolls", "wesnoth-battle"] {
            for db in [6.0, 9.0] {
                let reference = try TestSupport.referenceSamples(id)
                let spot = Array(reference[(12 * rate)..<(28 * rate)])
                var out = Array(bed[0..<(36 * rate)])
                let start = 10 * rate
                let gain = Float(rms(out[start..<(start + spot.count)]) / rms(spot[...]) * pow(10, -db / 20))
                for (i, v) in spot.enumerated() { out[start + i] += gain * v }
                let before = scan(out, index: index, spectrum: false), after = scan(out, index: index)
                print("EDGE", id, "speech", db, before.map { ($0.item.id, $0.start, $0.end) }, after.map { ($0.item.id, $0.start, $0.end) })
            }
        }
    }

    func testSpotUnderLouderMusicKeepsItsEdges() throws {
        let index = CatalogIndex(configuration: Configuration(),
                                 items: try ["wesnoth-knolls", "wesnoth-battle"].map { (MediaItem(id: $0), try TestSupport.referenceSignature($0)) })
        for (id, bed) in [("wesnoth-knolls", "supertux-chipdisko"), ("wesnoth-battle", "supertux-forest"),
                          ("wesnoth-knolls", "wesnoth-the-dangerous-symphony"), ("wesnoth-battle", "supertux-chipdisko")] {
            for db in [6.0, 9.0] {
                let x = try mix(id, from: 12, seconds: 16, under: bed, db: db, at: 10)
                let before = scan(x, index: index, spectrum: false), after = scan(x, index: index)
                print("EDGE", id, bed, db, before.map { ($0.item.id, $0.start, $0.end) }, after.map { ($0.item.id, $0.start, $0.end) })
            }
        }
    }
}
