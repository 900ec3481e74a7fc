import Foundation
import XCTest

/// Issue 36.4: audio re-timed just past what the line can follow gets no answer rather than
/// wrong times. `sox tempo` (WSOLA: locally at speed 1, overall at the tempo) gave knolls at
/// 0.9 a play at speed 1 whose reference start was 1.18 s off, and battle at 1.1 (in a catalog
/// of five samples) one 1.28 s off; speech at tempo 1.1 gave plays at speed 1 mapped 0.5 s off at both ends. Audio at a
/// speed the scan does follow (forest at 0.9) keeps its exact times.
final class RetimedAudioTests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples/references")

    /// Segments of `scan --format json` as (id, start, end, referenceStart, referenceEnd).
    private func segments(_ json: String) throws -> [(id: String, start: Double, end: Double, referenceStart: Double, referenceEnd: Double)] {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        return (object?["segments"] as? [[String: Any]] ?? []).map { s in
            ((s["reference"] as? [String: Any])?["id"] as? String ?? "?", s["start"] as? Double ?? .nan, s["end"] as? Double ?? .nan,
             s["referenceStart"] as? Double ?? .nan, s["referenceEnd"] as? Double ?? .nan)
        }
    }

    func testTempoPastTheLineGivesNoWrongTimes() throws {
        let bin = try CLISupport.soundmarkBinary()
        let dir = try CLISupport.temporaryDirectory(self, prefix: "retimed")
        let db = dir.appendingPathComponent("c.db").path
        // (knolls at 0.9 gave a play at speed 1 from 1.18 s too early; battle at 1.1, followed
        // at 1.1 or not at all depending on the catalog, must never come out at speed 1.)
        let cases: [(name: String, tempo: Double, plays: Int?)] = [("wesnoth-knolls", 0.9, 0), ("wesnoth-battle", 1.1, nil), ("supertux-forest", 0.9, 1)]
        for c in cases {
            let add = try CLISupport.run(bin, ["catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("\(c.name).ogg").path], in: dir)
            XCTAssertEqual(add.status, 0, add.stderr)
        }
        for c in cases {
            let plain = dir.appendingPathComponent("\(c.name).wav").path, retimed = dir.appendingPathComponent("\(c.name)-\(c.tempo).wav").path
            let decode = try CLISupport.run("/usr/bin/env", ["ffmpeg", "-v", "error", "-y", "-i", Self.samples.appendingPathComponent("\(c.name).ogg").path,
                                                             "-ar", "16000", "-ac", "1", plain], in: dir)
            XCTAssertEqual(decode.status, 0, decode.stderr)
            let sox = try CLISupport.run("/usr/bin/env", ["sox", plain, retimed, "tempo", "\(c.tempo)"], in: dir)
            XCTAssertEqual(sox.status, 0, sox.stderr)
            let scan = try CLISupport.run(bin, ["scan", "--catalog", db, "--format", "json", retimed], in: dir)
            let found = try segments(scan.stdout)
            XCTAssertEqual(scan.status, found.isEmpty ? 1 : 0, scan.stderr) // 1: nothing found
            // Every time printed is right: recording time t plays reference time tempo × t.
            for s in found {
                XCTAssertEqual(s.id, c.name, scan.stdout)
                XCTAssertEqual(s.referenceStart, c.tempo * s.start, accuracy: 0.15, "\(c.name): \(scan.stdout)")
                XCTAssertEqual(s.referenceEnd, c.tempo * s.end, accuracy: 0.15, "\(c.name): \(scan.stdout)")
            }
            if let plays = c.plays { XCTAssertEqual(found.count, plays, "\(c.name) at tempo \(c.tempo): \(scan.stdout)") }
        }
    }
}
