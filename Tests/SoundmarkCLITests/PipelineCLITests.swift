import Foundation
import Soundmark
import XCTest

/// The library's pipelines (``RecordingScan``, ``ClipIdentification``, ``ScanReport``) give a
/// Swift program exactly what the built `soundmark` binary prints for the same input.
final class PipelineCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")

    /// A catalog of samples/references with wesnoth-knolls annotated from its SRT (so scan's
    /// JSON has cues), in a fresh directory.
    private func annotatedCatalog(_ binary: String, in dir: URL) throws -> String {
        let path = dir.appendingPathComponent("references.db").path
        let add = try CLISupport.run(binary, ["catalog", "add", "--catalog", path,
                                              Self.samples.appendingPathComponent("references").path], in: dir)
        XCTAssertEqual(add.status, 0, add.stderr)
        let annotate = try CLISupport.run(binary, ["catalog", "annotate", "--catalog", path, "wesnoth-knolls",
                                                   Self.samples.appendingPathComponent("wesnoth-knolls.srt").path], in: dir)
        XCTAssertEqual(annotate.status, 0, annotate.stderr)
        return path
    }

    /// What the built binary prints for each of `commands` (each followed by `--catalog`, a
    /// fresh annotated catalog, and `input`), asserting that each exits 0; and the catalog's path.
    private func printed(_ commands: [[String]], input: String) throws -> (catalog: String, stdout: [String]) {
        let binary = try CLISupport.soundmarkBinary()
        let dir = try CLISupport.temporaryDirectory(self, prefix: "pipeline")
        let catalogPath = try annotatedCatalog(binary, in: dir)
        let runs = try commands.map { try CLISupport.run(binary, $0 + ["--catalog", catalogPath, input], in: dir) }
        for r in runs { XCTAssertEqual(r.status, 0, r.stderr) }
        return (catalogPath, runs.map(\.stdout))
    }

    func testScanReportOfRecordingScanIsWhatScanPrints() throws {
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        let (catalogPath, stdout) = try printed([["scan", "--format", "json"], ["scan", "--format", "csv"]], input: recording)

        let catalog = try Catalog(path: catalogPath, readOnly: true)
        let index = try catalog.loadIndex()
        let scan = try RecordingScan(index: index).run(recording)
        XCTAssertEqual(scan.segments.map(\.item.id),
                       ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        XCTAssertEqual(scan.warnings, [])
        let cues = try ScanReport.mappedAnnotations(scan.segments, duration: scan.duration, catalog: catalog, index: index)
        XCTAssertFalse(cues.isEmpty, "the annotated reference's cues are in the recording")
        let report = ScanReport.json(source: recording, duration: scan.duration, segments: scan.segments, cues: cues,
                                     partial: scan.partial, warnings: scan.warnings)
        XCTAssertEqual(report.text + "\n", stdout[0])
        XCTAssertEqual(ScanReport.csv(scan.segments), stdout[1])
    }

    func testClipIdentificationIsWhatIdentifyPrints() throws {
        let clip = Self.samples.appendingPathComponent("clip.mp3").path
        let (catalogPath, stdout) = try printed([["identify", "--format", "json"]], input: clip)

        let matcher = Matcher(index: try Catalog(path: catalogPath, readOnly: true).loadIndex())
        let result = try ClipIdentification(matcher: matcher).run(clip)
        XCTAssertEqual(result.matches.first?.item.id, "supertux-forest")
        XCTAssertEqual(result.matches.first?.matchOffset ?? -1, 15, accuracy: 0.1)
        let object = JSONOutput.object([("version", OutputVersion.json), ("source", .string(clip)),
                                        ("matches", .array(result.matches.map(\.json)))], warnings: result.warnings)
        XCTAssertEqual(object.text + "\n", stdout[0])
    }
}
