import Foundation
import Soundmark
import XCTest

/// Issue 39, what a new user meets: outputs that never hide a play, versions named, the same
/// option spellings everywhere, errors that name their cause.
final class UserOutputTests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    private var work: URL!

    override func setUpWithError() throws {
        work = try CLISupport.temporaryDirectory(self, prefix: "user-output")
    }

    private func soundmark(_ arguments: String..., in directory: URL? = nil) throws -> CLISupport.Run {
        try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work, currentDirectory: directory)
    }

    private func soundmark(_ arguments: [String]) throws -> CLISupport.Run {
        try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
    }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    /// A catalog of samples/references with wesnoth-knolls annotated (samples/wesnoth-knolls.srt).
    private func annotatedCatalog() throws -> String {
        let db = path("references.db")
        let add = try soundmark("catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("references").path)
        XCTAssertEqual(add.status, 0, add.stderr)
        let annotate = try soundmark("catalog", "annotate", "--catalog", db, "wesnoth-knolls",
                                     Self.samples.appendingPathComponent("wesnoth-knolls.srt").path)
        XCTAssertEqual(annotate.status, 0, annotate.stderr)
        return db
    }

    // MARK: - 1. subtitles and CUE sheets never hide a play

    /// samples/recording.mp3 holds four plays; only the first reference (wesnoth-knolls) has
    /// annotations. By default (`--cues annotations`) the last CUE track, "Last chord", ran from
    /// 0:35 to the end of the file (2:38) over three other plays, which appeared nowhere. Every
    /// play has cues now and no cue or track spans another play's audio.
    func testAnnotationCuesKeepEveryPlayAndNeverSpanAnother() throws {
        let db = try annotatedCatalog()
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        let scan = try soundmark("scan", "--catalog", db, "--format", "json", recording)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        let report = try JSONSerialization.jsonObject(with: Data(scan.stdout.utf8)) as? [String: Any]
        let segments = try XCTUnwrap(report?["segments"] as? [[String: Any]])
        let plays = segments.map { s -> (id: String, start: Double, end: Double) in
            ((s["reference"] as? [String: Any])?["id"] as? String ?? "?", s["start"] as? Double ?? -1, s["end"] as? Double ?? -1)
        }
        XCTAssertEqual(plays.map(\.id), ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle", "wesnoth-the-dangerous-symphony"])
        guard plays.count == 4 else { return }
        /// The plays a span overlaps by more than 0.05 s (CD frames and milliseconds round).
        func overlapped(_ start: Double, _ end: Double) -> [String] {
            plays.filter { min(end, $0.end) - max(start, $0.start) > 0.05 }.map(\.id)
        }

        // SRT (WebVTT, ASS and Audacity labels are written from the same cues).
        let srt = try soundmark("scan", "--catalog", db, "--format", "srt", recording)
        XCTAssertEqual(srt.status, 0, srt.stderr)
        let cues = try AnnotationReader.parse(Data(srt.stdout.utf8), name: "scan.srt", format: .srt).annotations
        XCTAssertEqual(cues.count, 12, srt.stdout)  // knolls' 9 annotations and one cue per other play
        for cue in cues {
            XCTAssertEqual(overlapped(cue.start, cue.end).count, 1, "\(cue) spans \(overlapped(cue.start, cue.end))")
        }
        for (title, play) in zip(["Mortimer's Chipdisko – Mortimer Twang", "Battle Music – Aleksi Aubry-Carlson",
                                  "The Dangerous Symphony – Gianmarco Leone"], plays.dropFirst()) {
            let cue = try XCTUnwrap(cues.first { $0.text == title }, "\(title) missing: \(srt.stdout)")
            XCTAssertEqual(cue.start, play.start, accuracy: 0.001)
            XCTAssertEqual(cue.end, play.end, accuracy: 0.001)
        }
        XCTAssertEqual(cues.first?.text, "Opening — the knolls at dawn")
        XCTAssertEqual(srt.stderrLines.count, 1, srt.stderr)
        XCTAssertTrue(srt.stderr.contains(": 3 segment(s) without annotations are one cue each: supertux-chipdisko at 00:00:36, "
                                          + "wesnoth-battle at 00:01:28, wesnoth-the-dangerous-symphony at 00:02:02"), srt.stderr)
        for format in ["vtt", "ass", "audacity"] {
            let r = try soundmark("scan", "--catalog", db, "--format", format, recording)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("Battle Music"), "\(format): \(r.stdout)")
        }

        // CUE: a track lasts from its INDEX 01 to the next track's INDEX 00 (else INDEX 01),
        // the last one to the end of the file.
        let cue = try soundmark("scan", "--catalog", db, "--format", "cue", recording)
        XCTAssertEqual(cue.status, 0, cue.stderr)
        var tracks: [(title: String, index0: Double?, index1: Double)] = []
        func seconds(_ line: Substring) -> Double {
            let p = line.split(separator: " ").last!.split(separator: ":").map { Double($0)! }
            return p[0] * 60 + p[1] + p[2] / 75
        }
        for line in cue.stdout.split(separator: "\r\n").map({ $0.drop { $0 == " " } }) {
            if line.hasPrefix("TITLE ") { tracks.append((String(line.dropFirst(7).dropLast()), nil, -1)) }
            if line.hasPrefix("INDEX 00 ") { tracks[tracks.count - 1].index0 = seconds(line) }
            if line.hasPrefix("INDEX 01 ") { tracks[tracks.count - 1].index1 = seconds(line) }
        }
        XCTAssertEqual(tracks.count, 12, cue.stdout)
        XCTAssertEqual(tracks.last?.title, "The Dangerous Symphony", cue.stdout)
        XCTAssertEqual(tracks.map(\.title).filter { ["Mortimer's Chipdisko", "Battle Music"].contains($0) }.count, 2, cue.stdout)
        for (n, track) in tracks.enumerated() {
            let end = n + 1 < tracks.count ? tracks[n + 1].index0 ?? tracks[n + 1].index1 : 158
            XCTAssertEqual(overlapped(track.index1, end).count, 1, "\(track.title) \(track.index1)–\(end): \(overlapped(track.index1, end))")
        }
        // cuebreakpoints splits at every play's start.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/cuebreakpoints") else { return }
        let sheet = path("recording.cue")
        try cue.stdout.write(toFile: sheet, atomically: true, encoding: .utf8)
        let breaks = try CLISupport.run("/usr/bin/cuebreakpoints", [sheet], in: work)
        XCTAssertEqual(breaks.status, 0, breaks.stderr)
        // m:ss.ff (CD frames)
        let points = breaks.stdout.split(separator: "\n").map { p -> Double in
            let f = p.split(whereSeparator: { $0 == ":" || $0 == "." }).map { Double($0)! }
            return f[0] * 60 + f[1] + f[2] / 75
        }
        for play in plays.dropFirst() {
            XCTAssertTrue(points.contains { abs($0 - play.start) < 0.02 }, "no break at \(play.id) \(play.start): \(breaks.stdout)")
        }
    }

    /// What the annotation cues leave out is said on stderr: 10–30 s of wesnoth-knolls airs 5
    /// of its 9 annotations; the other 4 are counted on one line (`--verbose` lists them).
    func testAnnotationsThatDidNotAirAreCountedOnStderr() throws {
        let db = try annotatedCatalog()
        let part = path("part.wav")
        let cut = try CLISupport.run("/usr/bin/ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-ss", "10", "-t", "20", "-i",
                                                         Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path, part], in: work)
        XCTAssertEqual(cut.status, 0, cut.stderr)
        let srt = try soundmark("scan", "--catalog", db, "--format", "srt", part)
        XCTAssertEqual(srt.status, 0, srt.stderr)
        let cues = try AnnotationReader.parse(Data(srt.stdout.utf8), name: "part.srt", format: .srt).annotations
        XCTAssertEqual(cues.map(\.text), ["Theme, first statement", "Theme answered by the horns", "Crescendo", "Quiet bridge",
                                          "Theme returns, fuller"])
        XCTAssertEqual(srt.stderr, "soundmark: \(part): 4 annotation(s) of wesnoth-knolls not aired, left out (--verbose lists them)\n")
    }

    // MARK: - 4. the same option spellings everywhere

    /// `report html` and `report airings` took `--output` but not `-o`; `report counts` took
    /// neither; the help of `catalog export` and `signature` printed `--o FILE`. Every command
    /// that writes a file takes `-o/--output` and says so in its help, spelt once.
    func testEveryCommandThatWritesAFileTakesDashOAndDashDashOutput() throws {
        for command in [["signature"], ["catalog", "export"], ["report", "airings"], ["report", "counts"], ["report", "html"]] {
            let help = try CLISupport.run(try CLISupport.soundmarkBinary(), command + ["--help"], in: work)
            XCTAssertEqual(help.status, 0, help.stderr)
            XCTAssertTrue(help.stdout.contains("\n  -o, --output FILE"), "\(command): \(help.stdout)")
            XCTAssertFalse(help.stdout.contains("--o "), "\(command): \(help.stdout)")
        }
        // A library of two airings (a monitor event stream imported).
        let events = path("events.jsonl"), library = path("airings.db")
        try """
            {"event":"segment.started","activity_id":"a1","material_id":"spot-a","title":"Spot A","time":10,"position":0}
            {"event":"segment.ended","activity_id":"a1","material_id":"spot-a","time":40,"position":30}
            {"event":"segment.started","activity_id":"a2","material_id":"spot-b","time":50,"position":0}
            {"event":"segment.ended","activity_id":"a2","material_id":"spot-b","time":60,"position":10}

            """.write(toFile: events, atomically: true, encoding: .utf8)
        XCTAssertEqual(try soundmark("library", "import", "--library", library, "--source", "tv", events).status, 0)
        for (command, spelling) in [(["report", "airings"], "-o"), (["report", "airings"], "--output"), (["report", "counts"], "-o"),
                                    (["report", "html"], "-o"), (["report", "html"], "--output=")] {
            let out = path("\(command[1])-\(spelling.filter { $0.isLetter }).out")
            let args = command + ["--library", library] + (spelling.hasSuffix("=") ? [spelling + out] : [spelling, out])
            let r = try CLISupport.run(try CLISupport.soundmarkBinary(), args, in: work)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", "\(args)")
            let written = try String(contentsOfFile: out, encoding: .utf8)
            switch command[1] {
            case "airings": XCTAssertEqual(written.split(separator: "\r\n").count, 3, written)  // header and two airings
            case "counts":
                XCTAssertTrue(written.hasPrefix("reference,title,artist,plays,airtime\r\n"), written)
                XCTAssertTrue(written.contains("\r\nspot-a,Spot A,,1,30"), written)
            default: XCTAssertTrue(written.hasPrefix("<!DOCTYPE html>"), String(written.prefix(80)))
            }
        }
        // Both spellings at once are the same option given twice.
        let twice = try soundmark("report", "counts", "--library", library, "-o", path("a"), "--output", path("b"))
        XCTAssertEqual(twice.status, 2)
        XCTAssertTrue(twice.stderr.contains("option --output given twice"), twice.stderr)
        // signature and catalog export write with -o and with --output.
        let knolls = Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path
        for spelling in ["-o", "--output"] {
            let sig = path("knolls\(spelling.count).smsig")
            let r = try soundmark("signature", spelling, sig, knolls)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(FileManager.default.fileExists(atPath: sig), spelling)
        }
    }

    // MARK: - 6. errors that name their cause

    /// A PostgreSQL connection failure printed `connection to server at "…", port 55439
    /// failed`: the host was hidden with the password. It names the host (and the socket, and
    /// the host name that did not resolve); the password still never appears.
    func testAPostgresConnectionFailureNamesTheHost() throws {
        // Port 1 on the loopback: nothing listens there (connection refused at once).
        let refused = try soundmark("catalog", "list", "--catalog", "postgresql://sm:Se3cret@127.0.0.1:1/soundmark")
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertEqual(refused.stderrLines.count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.hasPrefix("soundmark: postgresql://sm@127.0.0.1:1/soundmark: cannot read catalog: cannot connect: "
                                               + "connection to server at \"127.0.0.1\", port 1 failed: Connection refused"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("Se3cret"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("…"), refused.stderr)
        let socket = try soundmark("catalog", "list", "--catalog", "postgresql://sm@%2Fnonexistent-folder/soundmark")
        XCTAssertEqual(socket.status, 2, socket.stderr)
        XCTAssertTrue(socket.stderr.contains("connection to server on socket \"/nonexistent-folder/.s.PGSQL.5432\" failed"), socket.stderr)
        let unknown = try soundmark("catalog", "list", "--catalog", "postgresql://sm:Se3cret@no-such-host.invalid/soundmark")
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("could not translate host name \"no-such-host.invalid\" to address"), unknown.stderr)
        XCTAssertFalse(unknown.stderr.contains("Se3cret"), unknown.stderr)
    }

    // MARK: - 3. sources stored absolute

    /// `catalog add --metadata batch2/tracks.csv` stored `batch2/pirate.ogg`; `catalog export`
    /// from another folder then failed (after computing the others) with a hint to "add it with
    /// --shazam" that could not help: re-adding an unchanged file was skipped. Sources are stored
    /// absolute, a missing one is named before anything is read, and the hint works.
    func testSourcesAreStoredAbsoluteAndAMissingOneIsNamed() throws {
        let batch = work.appendingPathComponent("batch2"), elsewhere = work.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: batch, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let pirate = batch.appendingPathComponent("pirate.ogg").path
        try FileManager.default.copyItem(atPath: Self.samples.appendingPathComponent("references/wesnoth-battle.ogg").path, toPath: pirate)
        try "path,id,title\npirate.ogg,pirate,Pirate\n".write(toFile: batch.appendingPathComponent("tracks.csv").path,
                                                            atomically: true, encoding: .utf8)
        let add = try soundmark("catalog", "add", "--catalog", "c.db", "--metadata", "batch2/tracks.csv", in: work)
        XCTAssertEqual(add.status, 0, add.stderr)
        let db = path("c.db")
        let show = try soundmark("catalog", "show", "--catalog", db, "--format", "json", "pirate")
        let stored = try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any]
        // (the working directory as the process sees it: symbolic links resolved)
        let folder = work.resolvingSymlinksInPath().path
        XCTAssertEqual(stored?["source"] as? String, folder + "/batch2/pirate.ogg", show.stdout)

        // From another folder: the export reads the source.
        let exported = try soundmark("catalog", "export", "--catalog", db, "--format", "shazamcatalog", "-o", "p.shazamcatalog", in: elsewhere)
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("p.shazamcatalog").path))

        // The file moved: one line names the reference, the missing file and a command that helps.
        let moved = batch.appendingPathComponent("moved.ogg").path
        try FileManager.default.moveItem(atPath: pirate, toPath: moved)
        let missing = try soundmark("catalog", "export", "--catalog", db, "--format", "shazamcatalog", "-o", path("m.shazamcatalog"))
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertEqual(missing.stderrLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("no Shazam peaks and no source file to compute them from for 'pirate' (source file '"
                                              + folder + "/batch2/pirate.ogg' is missing); store them with "
                                              + "'soundmark catalog add --catalog \(db) --shazam --id ID FILE'"), missing.stderr)
        XCTAssertTrue(try soundmark("catalog", "show", "--catalog", db, "pirate").stdout.contains("/batch2/pirate.ogg  (missing)\n"))
        // The hint helps, for the moved file (same content, new path)...
        let again = try soundmark("catalog", "add", "--catalog", db, "--shazam", "--id", "pirate", moved)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.hasPrefix("pirate: Shazam peaks stored\n"), again.stderr)
        let fixed = try soundmark("catalog", "export", "--catalog", db, "--format", "shazamcatalog", "-o", path("m.shazamcatalog"))
        XCTAssertEqual(fixed.status, 0, fixed.stderr)
        // ...and for a file added earlier, unchanged at its path.
        let other = try soundmark("catalog", "add", "--catalog", db, Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path)
        XCTAssertEqual(other.status, 0, other.stderr)
        let unchanged = try soundmark("catalog", "add", "--catalog", db, "--shazam",
                                      Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path)
        XCTAssertTrue(unchanged.stderr.hasPrefix("wesnoth-knolls: Shazam peaks stored\n"), unchanged.stderr)

        // A relative source stored by an older soundmark is named as such.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { return }
        let update = try CLISupport.run("/usr/bin/sqlite3", [db, "DELETE FROM shazam_signature; UPDATE reference SET source = 'batch2/moved.ogg' WHERE id = 'pirate'"], in: work)
        XCTAssertEqual(update.status, 0, update.stderr)
        let relative = try soundmark("catalog", "export", "--catalog", db, "--format", "shazamcatalog", "-o", path("r.shazamcatalog"), in: elsewhere)
        XCTAssertEqual(relative.status, 2, relative.stderr)
        XCTAssertTrue(relative.stderr.contains("'pirate' (source file 'batch2/moved.ogg' is missing here (stored relative to the folder catalog add ran in))"),
                      relative.stderr)
    }

    /// Issue 39 item 3, the same kind in `catalog upgrade`: a reference lacking version
    /// features whose source moved was listed by id with "re-add them", which could not help
    /// (re-adding an unchanged file skipped it). The line names the missing file, and the
    /// hint's command stores the features for a file already in the catalog.
    func testCatalogUpgradeNamesAMissingSourceAndTheHintHelps() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else { throw XCTSkip("no /usr/bin/sqlite3") }
        let pirate = path("pirate.ogg"), moved = path("moved.ogg"), db = path("v.db")
        try FileManager.default.copyItem(atPath: Self.samples.appendingPathComponent("references/wesnoth-battle.ogg").path, toPath: pirate)
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", db, "--id", "pirate", pirate).status, 0)
        let drop = try CLISupport.run("/usr/bin/sqlite3", [db, "DELETE FROM version_chroma"], in: work)
        XCTAssertEqual(drop.status, 0, drop.stderr)
        try FileManager.default.moveItem(atPath: pirate, toPath: moved)
        let upgrade = try soundmark("catalog", "upgrade", "--catalog", db)
        XCTAssertEqual(upgrade.status, 0, upgrade.stderr)
        XCTAssertEqual(upgrade.stderrLines.last, "\(db): 1 reference(s) lack version features: 'pirate' (source file '"
                       + work.resolvingSymlinksInPath().path + "/pirate.ogg' is missing); compute them with "
                       + "'soundmark catalog add --catalog \(db) --id ID FILE'", upgrade.stderr)
        let again = try soundmark("catalog", "add", "--catalog", db, "--id", "pirate", moved)
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stderr.hasPrefix("pirate: version features stored\n"), again.stderr)
        let fixed = try soundmark("catalog", "upgrade", "--catalog", db)
        XCTAssertFalse(fixed.stderr.contains("lack version features"), fixed.stderr)
    }

    /// A user's trial: `-o` naming the catalog, the library or the recording wrote the output over
    /// it (`catalog list --catalog v.db -o v.db` left "not a soundmark catalog"), and `monitor -o`
    /// emptied an existing file before failing on a bad source. Such an `-o` is refused naming
    /// the input, and a failed monitor leaves the file as it was.
    func testOutputNeverOverwritesAnInputAndAFailedMonitorKeepsTheFile() throws {
        let db = path("v.db"), recording = path("rec.mp3")
        try FileManager.default.copyItem(atPath: Self.samples.appendingPathComponent("recording.mp3").path, toPath: recording)
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", db,
                                     Self.samples.appendingPathComponent("references/wesnoth-knolls.ogg").path).status, 0)
        let listing = try soundmark("catalog", "list", "--catalog", db, "-o", db)
        XCTAssertEqual(listing.status, 2)
        XCTAssertEqual(listing.stderr, "soundmark: \(db): cannot write the output: it is also an input (--catalog \(db))\n")
        XCTAssertEqual(try soundmark("catalog", "list", "--catalog", db, "--format", "json").status, 0)
        let index = try soundmark("catalog", "list", "--catalog", db, "-o", db + ".index")
        XCTAssertEqual(index.status, 2, index.stderr)
        let before = try Data(contentsOf: URL(fileURLWithPath: recording))
        let scan = try soundmark("scan", "--catalog", db, "-o", recording, recording)
        XCTAssertEqual(scan.status, 2)
        XCTAssertEqual(scan.stderr, "soundmark: \(recording): cannot write the output: it is also an input (argument \(recording))\n")
        let library = path("l.db")
        XCTAssertEqual(try soundmark("scan", "--catalog", db, "--library", library, recording).status, 0)
        let overLibrary = try soundmark("scan", "--catalog", db, "--library", library, "-o", library, recording)
        XCTAssertEqual(overLibrary.status, 2, overLibrary.stderr)
        XCTAssertTrue(overLibrary.stderr.contains("it is also an input (--library"), overLibrary.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: recording)), before)
        // A trial the day after: the commands that write their -o file themselves (signature,
        // catalog export, the reports) wrote it over the audio, the catalog or the library, exit 0.
        let catalogBytes = try Data(contentsOf: URL(fileURLWithPath: db))
        let libraryBytes = try Data(contentsOf: URL(fileURLWithPath: library))
        for (command, input) in [(["signature", "-o", recording, recording], "argument \(recording)"),
                                 (["signature", "--format", "shazam", "-o", recording, recording], "argument \(recording)"),
                                 (["catalog", "export", "--catalog", db, "-o", db], "--catalog \(db)"),
                                 (["catalog", "export", "--catalog", db, "-o", db + ".index"], "--catalog \(db)"),
                                 (["report", "airings", "--library", library, "-o", library], "--library \(library)"),
                                 (["report", "counts", "--library", library, "-o", library], "--library \(library)"),
                                 (["report", "html", "--library", library, "-o", library], "--library \(library)")] {
            let r = try soundmark(command)
            XCTAssertEqual(r.status, 2, command.joined(separator: " "))
            XCTAssertEqual(r.stderr, "soundmark: \(command[command.firstIndex(of: "-o")! + 1]): cannot write the output: it is also an input (\(input))\n")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: recording)), before)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: db)), catalogBytes)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: library)), libraryBytes)

        let kept = path("keep.jsonl"), text = path("text.mp3")
        try Data("previous events\n".utf8).write(to: URL(fileURLWithPath: kept))
        try Data("not audio at all\n".utf8).write(to: URL(fileURLWithPath: text))
        for (catalog, source) in [(db, text), (path("missing.db"), recording)] {
            XCTAssertEqual(try soundmark("monitor", "--catalog", catalog, "-o", kept, source).status, 2)
            XCTAssertEqual(try String(contentsOfFile: kept, encoding: .utf8), "previous events\n", "\(catalog) \(source)")
        }
        let monitored = try soundmark("monitor", "--catalog", db, "-o", kept, recording)
        XCTAssertEqual(monitored.status, 0, monitored.stderr)
        let lines = try String(contentsOfFile: kept, encoding: .utf8).split(separator: "\n")
        XCTAssertFalse(lines.contains("previous events"))
        XCTAssertTrue(lines.contains { $0.contains(#""event":"segment.started""#) && $0.contains("wesnoth-knolls") }, lines.joined(separator: "\n"))
    }

    /// Every command that writes a format takes `-o/--output`, spelt and shown the same way, and a
    /// file it cannot write is a one-line error naming it (exit 2), before any work.
    func testEveryFormatCommandTakesDashO() throws {
        for words in [["identify"], ["scan"], ["monitor"], ["timeline", "merge"], ["catalog", "list"], ["catalog", "show"],
                      ["library", "list"], ["library", "show"], ["report", "airings"], ["report", "counts"], ["report", "html"],
                      ["marker", "detect"], ["signature"], ["catalog", "export"]] {
            let help = try CLISupport.run(try CLISupport.soundmarkBinary(), words + ["--help"], in: work)
            XCTAssertEqual(help.status, 0, words.joined(separator: " "))
            XCTAssertTrue(help.stdout.contains("\n  -o, --output "), "\(words.joined(separator: " ")) --help:\n\(help.stdout)")
            XCTAssertFalse(help.stdout.contains("--o "), words.joined(separator: " "))
        }
        let missing = path("no/such/folder/out.json")
        let run = try CLISupport.run(try CLISupport.soundmarkBinary(), ["timeline", "merge", "-o", missing, Self.samples.appendingPathComponent("clip.mp3").path], in: work)
        XCTAssertEqual(run.status, 2)
        XCTAssertEqual(run.stderr, "soundmark: \(missing): cannot write the output: No such file or directory\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))

        // -o FILE holds what standard output would; a command that fails writes no FILE.
        let events = path("events.jsonl"), merged = path("merged.json")
        try Data(#"{"event":"segment.started","activity_id":"a1","material_id":"forest","time":0,"start":0,"end":5}"#.utf8 + [10])
            .write(to: URL(fileURLWithPath: events))
        let printed = try soundmark("timeline", "merge", events)
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let written = try soundmark("timeline", "merge", "--output", merged, events)
        XCTAssertEqual(written.status, 0, written.stderr)
        XCTAssertEqual(written.stdout, "")
        XCTAssertEqual(try String(contentsOfFile: merged, encoding: .utf8), printed.stdout)
        XCTAssertTrue(printed.stdout.contains(#""rows":[{"activity_id":"a1","material_id":"forest""#), printed.stdout)
        let empty = path("empty.jsonl"), none = path("none.json")
        try Data().write(to: URL(fileURLWithPath: empty))
        let failed = try soundmark("timeline", "merge", "-o", none, empty)
        XCTAssertEqual(failed.status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: none), "a failed command left \(none)")
    }
}
