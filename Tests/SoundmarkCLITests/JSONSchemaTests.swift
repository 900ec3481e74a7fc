import Foundation
import XCTest

/// Issue 39.4, one vocabulary across outputs: every JSON output of the built binary, from the
/// samples, is checked against its schema in docs/schemas by scripts/validate-json.py (Python's
/// jsonschema, Debian's python3-jsonschema), and the shared fields hold the right values.
final class JSONSchemaTests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private var work: URL!

    override func setUpWithError() throws {
        work = try CLISupport.temporaryDirectory(self, prefix: "json-schema")
    }

    private func soundmark(_ arguments: [String]) throws -> CLISupport.Run {
        try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
    }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    private func sample(_ name: String) -> String { Self.samples.appendingPathComponent(name).path }

    /// Runs soundmark with `-o FILE` (so every command's `-o` is exercised too) and returns FILE.
    private func output(_ name: String, _ arguments: [String], status: Int32 = 0,
                        file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let target = path(name)
        let run = try soundmark(arguments + ["-o", target])
        XCTAssertEqual(run.status, status, "\(arguments.joined(separator: " ")): \(run.stderr)", file: file, line: line)
        XCTAssertEqual(run.stdout, "", "with -o nothing goes to stdout", file: file, line: line)
        return target
    }

    /// The JSON objects of a file: one object, or one per line.
    private func objects(_ file: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: file, encoding: .utf8)
        if let one = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] { return [one] }
        return try text.split(separator: "\n").map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    private func referenceID(_ object: Any?) -> String? { (object as? [String: Any])?["id"] as? String }

    func testEveryJSONOutputMatchesItsSchemaAndSharesOneVocabulary() throws {
        let catalog = path("c.db"), library = path("lib.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, sample("references")]).status, 0)
        XCTAssertEqual(try soundmark(["catalog", "annotate", "--catalog", catalog, "wesnoth-knolls", sample("wesnoth-knolls.srt")]).status, 0)
        let clip = sample("clip.mp3"), recording = sample("recording.mp3")

        var checks: [(schema: String, file: String)] = []
        // identify: one clip and several give the same object, each naming its source.
        let one = try output("identify.json", ["identify", "--catalog", catalog, "--format", "json", clip])
        let several = try output("identify.jsonl", ["identify", "--catalog", catalog, "--format", "json", clip, recording])
        checks += [("identify", one), ("identify", several)]
        let identified = try objects(one)
        XCTAssertEqual(identified.count, 1)
        XCTAssertEqual(identified.first?["source"] as? String, clip)
        XCTAssertEqual(referenceID((identified.first?["matches"] as? [[String: Any]])?.first?["reference"]), "supertux-forest")
        let lines = try objects(several)
        XCTAssertEqual(lines.map { $0["source"] as? String }, [clip, recording])
        XCTAssertEqual(Set(lines[0].keys), Set(identified[0].keys))
        let version = try XCTUnwrap(identified.first?["version"] as? [String: Any])
        XCTAssertEqual(version["format"] as? Int, 3)
        XCTAssertNotNil((version["program"] as? String)?.range(of: #"^\d+\.\d+\.\d+$"#, options: .regularExpression))

        // scan (one recording and several), recorded into a library with wall-clock times.
        let scan = try output("scan.json", ["scan", "--catalog", catalog, "--format", "json", "--library", library,
                                            "--source", "radio1", "--start-time", "2026-12-01T08:00:00Z", recording])
        checks += [("scan", scan), ("scan", try output("scan.jsonl", ["scan", "--catalog", catalog, "--format", "json", recording, clip]))]
        let scanned = try XCTUnwrap(try objects(scan).first)
        XCTAssertEqual(scanned["source"] as? String, recording)
        let segments = try XCTUnwrap(scanned["segments"] as? [[String: Any]])
        XCTAssertEqual(segments.map { referenceID($0["reference"]) },
                       ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual(segments.first?["start"] as? Double, 0)
        XCTAssertEqual(segments.first?["end"] as? Double ?? 0, 36.2, accuracy: 0.5)
        // Cues name their reference with the same object (was "reference":"wesnoth-knolls").
        XCTAssertEqual(referenceID((scanned["cues"] as? [[String: Any]])?.first?["reference"]), "wesnoth-knolls")

        // monitor events and their timeline.
        let events = try output("events.jsonl", ["monitor", "--catalog", catalog, "--clock", "wall", recording])
        let timeline = try output("timeline.json", ["timeline", "merge", events])
        checks += [("monitor-event", events), ("timeline", timeline)]
        let started = try objects(events).filter { $0["event"] as? String == "segment.started" }
        XCTAssertEqual(started.map { $0["material_id"] as? String },
                       ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual((try objects(timeline).first?["rows"] as? [[String: Any]])?.count, 4)
        // Events carry the reference object beside the payload's material_id.
        XCTAssertEqual(started.map { referenceID($0["reference"]) }, started.map { $0["material_id"] as? String })

        // The library: airings (report and list), counts by every grouping, recordings.
        XCTAssertEqual(try soundmark(["identify", "--catalog", catalog, "--library", library, "--source", "radio2", clip]).status, 0)
        let airings = try output("airings.json", ["report", "airings", "--library", library, "--format", "json"])
        checks += [("airings", airings), ("airings", try output("list.json", ["library", "list", "--library", library, "--format", "json"]))]
        let aired = try XCTUnwrap(try objects(airings).first?["airings"] as? [[String: Any]])
        XCTAssertEqual(aired.count, 5)
        let first = try XCTUnwrap(aired.first)
        // One reference object (was "reference":"wesnoth-knolls" with the title beside it).
        XCTAssertEqual(first["reference"] as? [String: String],
                       ["id": "wesnoth-knolls", "title": "The Knolls of Doldesh", "artist": "Timothy Pinkham"])
        XCTAssertNil(first["title"])
        XCTAssertEqual(first["wallStart"] as? String, "2026-12-01T08:00:00.000Z")
        XCTAssertEqual(first["source"] as? String, "radio1")
        for by in ["day", "week", "source", "reference"] {
            let counts = try output("counts-\(by).json", ["report", "counts", "--library", library, "--by", by, "--format", "json"])
            checks.append(("counts", counts))
            if by == "source" {
                let rows = try XCTUnwrap(try objects(counts).first?["counts"] as? [[String: Any]])
                XCTAssertEqual(rows.map { "\($0["source"] as? String ?? "?") \(referenceID($0["reference"]) ?? "?") \($0["plays"] as? Int ?? 0)" },
                               ["radio1 supertux-chipdisko 1", "radio1 wesnoth-battle 1", "radio1 wesnoth-knolls 1",
                                "radio1 wesnoth-the-dangerous-symphony 1", "radio2 supertux-forest 1"])
            }
        }
        let recordings = try output("recordings.json", ["library", "show", "--library", library, "--format", "json"])
        let digest = try XCTUnwrap((try objects(recordings).first?["recordings"] as? [[String: Any]])?.first?["digest"] as? String)
        checks += [("library-show", recordings),
                   ("library-show", try output("recording.json", ["library", "show", "--library", library, "--format", "json", digest]))]

        // The catalog and the versions matchers.
        checks += [("catalog-list", try output("catalog-list.json", ["catalog", "list", "--catalog", catalog, "--format", "json"])),
                   ("catalog-show", try output("catalog-show.json", ["catalog", "show", "--catalog", catalog, "--format", "json", "wesnoth-knolls"])),
                   ("identify-versions", try output("identify-versions.json", ["identify", "--versions", "--catalog", catalog, "--format", "json", clip],
                                                    status: 1)),
                   ("scan-versions", try output("scan-versions.json", ["scan", "--versions", "--catalog", catalog, "--format", "json", recording]))]
        XCTAssertEqual(try objects(checks.last!.file).first?["source"] as? String, recording)
        // Signature files: a soundmark .smsig, Shazam signatures and a ShazamKit catalog (Tests/Fixtures/Shazam).
        let smsig = path("clip.smsig")
        XCTAssertEqual(try soundmark(["signature", "-o", smsig, clip]).status, 0)
        let shazam = CLISupport.root.appendingPathComponent("Tests/Fixtures/Shazam")
        for (i, file) in [smsig, shazam.appendingPathComponent("andresparejo_Trim1.mp4.shazamsignature").path,
                          shazam.appendingPathComponent("shazamio-core_probe.flac.sig").path,
                          shazam.appendingPathComponent("SoundCatalogKit_MyCatalog.shazamcatalog").path].enumerated() {
            let shown = try output("signature-\(i).json", ["signature", "show", "--format", "json", file])
            checks.append(("signature-show", shown))
            XCTAssertEqual(try objects(shown).first?["source"] as? String, file)
        }
        XCTAssertEqual(try objects(checks.last!.file).first?["catalogVersion"] as? Int, 1)

        // Audio markers: samples/clip.mp3 carries none (exit 1, an empty list).
        let markers = try output("markers.json", ["marker", "detect", "--format", "json", clip], status: 1)
        checks.append(("markers", markers))
        XCTAssertEqual((try objects(markers).first?["markers"] as? [Any])?.count, 0)

        try validate(checks)
    }

    /// Runs scripts/validate-json.py over `checks`; fails with its report (or with why it could not run).
    private func validate(_ checks: [(schema: String, file: String)], file: StaticString = #filePath, line: UInt = #line) throws {
        let script = CLISupport.root.appendingPathComponent("scripts/validate-json.py").path
        let schemas = CLISupport.root.appendingPathComponent("docs/schemas").path
        let run = try CLISupport.run("/usr/bin/env", ["python3", script, schemas] + checks.map { "\($0.schema)=\($0.file)" }, in: work)
        switch run.status {
        case 0: XCTAssertTrue(run.stdout.hasPrefix("ok: "), run.stdout, file: file, line: line)
        case 3: XCTFail("cannot check the schemas: \(run.stderr) (the Makefile's deps install python3-jsonschema)", file: file, line: line)
        case 127: XCTFail("cannot check the schemas: python3 not found", file: file, line: line)
        default: XCTFail("outputs that do not match their schema:\n\(run.stdout)\(run.stderr)", file: file, line: line)
        }
    }
}
