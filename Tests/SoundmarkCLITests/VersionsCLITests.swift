import Foundation
import XCTest

/// End-to-end tests of `identify --versions` and `scan --versions`: another performance of a
/// catalogued song (here the sample knolls two semitones up and 5 % slower, `sox pitch 200
/// tempo 0.95`) after a catalogued recording, in every output format.
final class VersionsCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples/references")

    private func sh(_ arguments: [String], in dir: URL) throws {
        let r = try CLISupport.run("/usr/bin/env", arguments, in: dir)
        XCTAssertEqual(r.status, 0, "\(arguments.joined(separator: " ")): \(r.stderr)")
    }

    func testAnotherPerformanceIsFoundInEveryFormat() throws {
        let bin = try CLISupport.soundmarkBinary()
        let dir = try CLISupport.temporaryDirectory(self, prefix: "versions")
        let db = dir.appendingPathComponent("c.db").path
        for name in ["supertux-chipdisko", "supertux-forest", "wesnoth-battle", "wesnoth-knolls", "wesnoth-the-dangerous-symphony"] {
            let add = try CLISupport.run(bin, ["catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("\(name).ogg").path], in: dir)
            XCTAssertEqual(add.status, 0, add.stderr)
        }
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        try sh(["ffmpeg", "-v", "error", "-y", "-i", Self.samples.appendingPathComponent("wesnoth-knolls.ogg").path, "-ar", "22050", "-ac", "1", path("k.wav")], in: dir)
        try sh(["sox", path("k.wav"), path("version.wav"), "pitch", "200", "tempo", "0.95"], in: dir)
        try sh(["ffmpeg", "-v", "error", "-y", "-i", Self.samples.appendingPathComponent("supertux-chipdisko.ogg").path, "-ar", "22050", "-ac", "1", path("c.wav")], in: dir)
        try sh(["sox", path("c.wav"), path("version.wav"), path("recording.wav")], in: dir)

        // identify: the version, two semitones up, at about 0.95 of the reference's tempo.
        let identify = try CLISupport.run(bin, ["identify", "--versions", "--catalog", db, "--format", "json", path("version.wav")], in: dir)
        XCTAssertEqual(identify.status, 0, identify.stderr)
        let match = ((try JSONSerialization.jsonObject(with: Data(identify.stdout.utf8)) as? [String: Any])?["matches"] as? [[String: Any]])?.first
        XCTAssertEqual((match?["reference"] as? [String: Any])?["id"] as? String, "wesnoth-knolls", identify.stdout)
        XCTAssertEqual(match?["transposition"] as? Int, 2, identify.stdout)
        XCTAssertEqual(match?["timeScale"] as? Double ?? 0, 0.95, accuracy: 0.02, identify.stdout)

        // scan, JSON: the recording (chipdisko, 40.0 s) then the version (41.6 s).
        let scan = try CLISupport.run(bin, ["scan", "--versions", "--catalog", db, "--format", "json", path("recording.wav")], in: dir)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        let segments = (try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [String: Any])?["segments"] as? [[String: Any]] ?? []
        XCTAssertEqual(segments.compactMap { ($0["reference"] as? [String: Any])?["id"] as? String }, ["supertux-chipdisko", "wesnoth-knolls"], scan.stdout)
        XCTAssertEqual(segments.map { $0["transposition"] as? Int ?? -99 }, [0, 2], scan.stdout)
        XCTAssertEqual(segments.last?["start"] as? Double ?? 0, 40.0, accuracy: 0.5, scan.stdout)
        XCTAssertEqual(segments.last?["end"] as? Double ?? 0, 81.6, accuracy: 1.0, scan.stdout)

        // The timeline formats carry the same two segments.
        let csv = try CLISupport.run(bin, ["scan", "--versions", "--catalog", db, "--format", "csv", path("recording.wav")], in: dir)
        XCTAssertEqual(csv.status, 0, csv.stderr)
        let rows = csv.stdout.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        XCTAssertEqual(rows.first, "start,end,id,title,artist,referenceStart,referenceEnd,confidence,frequencySkew,timeScale,transposition", csv.stdout)
        XCTAssertEqual(rows.dropFirst().map { $0.components(separatedBy: ",")[2] + " " + ($0.components(separatedBy: ",").last ?? "") },
                       ["supertux-chipdisko 0", "wesnoth-knolls 2"], csv.stdout)
        let srt = try CLISupport.run(bin, ["scan", "--versions", "--catalog", db, "--format", "srt", path("recording.wav")], in: dir)
        XCTAssertEqual(srt.status, 0, srt.stderr)
        XCTAssertTrue(srt.stdout.contains("\n2\n00:00:40,"), srt.stdout)
        XCTAssertTrue(srt.stdout.contains("The Knolls of Doldesh – Timothy Pinkham"), srt.stdout)
        let cue = try CLISupport.run(bin, ["scan", "--versions", "--catalog", db, "--format", "cue", path("recording.wav")], in: dir)
        XCTAssertEqual(cue.status, 0, cue.stderr)
        XCTAssertTrue(cue.stdout.contains("  TRACK 02 AUDIO\r\n    TITLE \"The Knolls of Doldesh\"\r\n"), cue.stdout) // (CRLF, as CUE tools expect)
        XCTAssertEqual(cue.stdout.components(separatedBy: "TRACK ").count - 1, 2, cue.stdout)

        // A format with no timeline is refused with the list.
        let html = try CLISupport.run(bin, ["scan", "--versions", "--catalog", db, "--format", "html", path("recording.wav")], in: dir)
        XCTAssertEqual(html.status, 2)
        XCTAssertTrue(html.stderr.hasPrefix("soundmark: scan --versions writes --format setlist, json, csv, srt, vtt, ass, audacity, cue, not html"), html.stderr)

        // Music that is no version of any catalogued song: nothing.
        try sh(["sox", "-n", "-r", "22050", path("noise.wav"), "synth", "20", "pinknoise"], in: dir)
        let none = try CLISupport.run(bin, ["identify", "--versions", "--catalog", db, path("noise.wav")], in: dir)
        XCTAssertEqual(none.status, 1, none.stdout + none.stderr)
        XCTAssertEqual(none.stdout, "no match\n")
    }
}
