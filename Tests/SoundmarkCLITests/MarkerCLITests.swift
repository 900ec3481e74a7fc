import Foundation
import XCTest

/// End-to-end tests of `soundmark marker embed` and `marker detect`.
final class MarkerCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples/references")
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-marker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        let out = Pipe(), err = Pipe()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    /// `ffmpeg -y ARGS OUT` (quiet), failing the test when it fails.
    private func ffmpeg(_ arguments: [String], _ output: String) throws {
        let r = try run("/usr/bin/env", ["ffmpeg", "-v", "error", "-y"] + arguments + [output])
        XCTAssertEqual(r.status, 0, r.err)
    }

    /// 14 s of real music (stereo, 44.1 kHz WAV) cut from a sample reference.
    private func music(_ name: String = "music.wav", from sample: String = "wesnoth-knolls.ogg", at start: Double = 20) throws -> String {
        let out = path(name)
        try ffmpeg(["-ss", "\(start)", "-t", "14", "-i", Self.samples.appendingPathComponent(sample).path, "-ar", "44100", "-ac", "2"], out)
        return out
    }

    func testRoundTripWAVAndMP3() throws {
        let bin = try CLISupport.soundmarkBinary()
        let original = try music()
        let marked = path("marked.wav")
        let embed = try run(bin, ["marker", "embed", "--payload", "123456789", original, marked])
        XCTAssertEqual(embed.status, 0, embed.err)
        XCTAssertEqual(embed.err, "")

        let detect = try run(bin, ["marker", "detect", marked])
        XCTAssertEqual(detect.status, 0, detect.err)
        XCTAssertTrue(detect.out.hasPrefix("payload 123456789 (0x075BCD15) from 00:00:00.000 to 00:00:14.000, confidence "), detect.out)
        XCTAssertEqual(detect.out.split(separator: "\n").count, 1)

        // The marked WAV keeps the original's rate, channels and length.
        let probe = try run("/usr/bin/env", ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate,channels,duration_ts",
                                             "-of", "csv=p=0", marked])
        XCTAssertEqual(probe.out.trimmingCharacters(in: .whitespacesAndNewlines), "pcm_s16le,44100,2,617400")

        let mp3 = path("marked.mp3")
        try ffmpeg(["-i", marked, "-b:a", "128k"], mp3)
        let json = try run(bin, ["marker", "detect", "--format", "json", mp3])
        XCTAssertEqual(json.status, 0, json.err)
        let object = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        let markers = object?["markers"] as? [[String: Any]] ?? []
        XCTAssertEqual(markers.count, 1, json.out)
        XCTAssertEqual(markers.first?["payload"] as? Int, 123_456_789)
        XCTAssertEqual(markers.first?["start"] as? Double, 0)
        XCTAssertEqual((markers.first?["end"] as? Double) ?? 0, 14, accuracy: 0.06) // MP3 padding
        XCTAssertGreaterThan((markers.first?["confidence"] as? Double) ?? 0, 0.7)
    }

    func testUnmarkedAudioGivesNothing() throws {
        let bin = try CLISupport.soundmarkBinary()
        for (i, sample) in ["wesnoth-knolls.ogg", "supertux-chipdisko.ogg", "wesnoth-battle.ogg"].enumerated() {
            let original = try music("plain\(i).wav", from: sample, at: 5)
            let detect = try run(bin, ["marker", "detect", original])
            XCTAssertEqual(detect.status, 1, sample)
            XCTAssertEqual(detect.out, "", sample)
            let json = try run(bin, ["marker", "detect", "--format", "json", original])
            XCTAssertTrue(json.out.hasPrefix("{\"version\":{\"program\":\""), json.out)
            XCTAssertTrue(json.out.hasSuffix("\"format\":3},\"source\":\"\(original)\",\"markers\":[]}\n"), json.out)
        }
    }

    func testEncodesByExtensionAndCopiesVideo() throws {
        let bin = try CLISupport.soundmarkBinary()
        let original = try music()
        let video = path("video.mkv")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-i", original, "-t", "14", "-c:v", "mpeg4", "-c:a", "flac",
                    "-shortest"], video)
        let marked = path("marked.mkv")
        let embed = try run(bin, ["marker", "embed", "--payload", "0x00C0FFEE", "--strength", "-18", video, marked])
        XCTAssertEqual(embed.status, 0, embed.err)
        let probe = try run("/usr/bin/env", ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "csv=p=0", marked])
        XCTAssertEqual(Set(probe.out.split(separator: "\n").map(String.init)), ["mpeg4,video", "vorbis,audio"])
        XCTAssertTrue(try run(bin, ["marker", "detect", marked]).out.hasPrefix("payload 12648430 (0x00C0FFEE) from 00:00:00.000"))

        // Audio that starts 4 s after the picture keeps its start (AAC's priming aside).
        let late = path("late.mp4")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-itsoffset", "4", "-i", original, "-map", "0", "-map", "1",
                    "-t", "16", "-c:v", "mpeg4", "-c:a", "aac"], late)
        let lateMarked = path("late-marked.mp4")
        XCTAssertEqual(try run(bin, ["marker", "embed", "--payload", "5", late, lateMarked]).status, 0)
        let starts = try run("/usr/bin/env", ["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=start_time",
                                              "-of", "csv=p=0", lateMarked])
        XCTAssertEqual(Double(starts.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0, 3.976, accuracy: 0.05, starts.out)
        XCTAssertTrue(try run(bin, ["marker", "detect", lateMarked]).out.hasPrefix("payload 5 (0x00000005) from 00:00:00.000"))

        let opus = path("marked.opus")
        XCTAssertEqual(try run(bin, ["marker", "embed", "--payload", "4294967295", original, opus]).status, 0)
        XCTAssertTrue(try run(bin, ["marker", "detect", opus]).out.hasPrefix("payload 4294967295 (0xFFFFFFFF) from 00:00:00.000"))
    }

    func testBadInputs() throws {
        let bin = try CLISupport.soundmarkBinary()
        let original = try music()
        let cases: [([String], String)] = [
            (["marker", "embed", "--payload", "4294967296", original, path("a.wav")],
             "soundmark: --payload takes a number 0…4294967295 (or 0x0…0xFFFFFFFF), got '4294967296' (see 'soundmark marker embed --help')\n"),
            (["marker", "embed", "--payload", "1", "--strength", "-3", original, path("a.wav")],
             "soundmark: --strength takes dB from -40 to -6, got '-3' (see 'soundmark marker embed --help')\n"),
            (["marker", "embed", "--payload", "1", original, path("a.xyz")],
             "soundmark: cannot write \(path("a.xyz")): no output format for the extension 'xyz'\n"),
            (["marker", "embed", "--payload", "1", path("missing.wav"), path("a.wav")],
             "soundmark: cannot open \(path("missing.wav")): no such file\n"),
            (["marker", "embed", "--payload", "1", original, original],
             "soundmark: cannot write \(original): it is the input file; write the marked copy elsewhere\n"),
        ]
        for (arguments, message) in cases {
            let r = try run(bin, arguments)
            XCTAssertEqual(r.status, 2, arguments.joined(separator: " "))
            XCTAssertEqual(r.err, message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("a.wav")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("a.xyz")))
        // The input is untouched.
        XCTAssertEqual(try run(bin, ["marker", "detect", original]).status, 1)
    }

    /// Issue 36.3: a plain spot and its marked copy (the README's marker workflow: the copy
    /// added with `--allow-duplicates`) are one recording; a plain airing gathers fewer hits
    /// from the marked copy than from the plain one, and scan reported the airing twice, as
    /// spot-a and as spot-b over the same 40–60 s. It is one play, spot-a (the audio aired),
    /// with spot-b its alternative, in scan and in the library's play counts.
    func testPlainAiringOfAMarkedSpotIsOnePlay() throws {
        let bin = try CLISupport.soundmarkBinary()
        let a = path("spot-a.wav"), b = path("spot-b.wav")
        try ffmpeg(["-ss", "20", "-t", "20", "-i", Self.samples.appendingPathComponent("wesnoth-knolls.ogg").path], a)
        XCTAssertEqual(try run(bin, ["marker", "embed", "--payload", "222", a, b]).status, 0)
        let db = path("spots.db")
        XCTAssertEqual(try run(bin, ["catalog", "add", "--catalog", db, "--id", "spot-a", a]).status, 0)
        let addB = try run(bin, ["catalog", "add", "--catalog", db, "--id", "spot-b", "--marker", "222", "--allow-duplicates", b])
        XCTAssertEqual(addB.status, 0, addB.err)
        let forest = Self.samples.appendingPathComponent("supertux-forest.ogg").path
        XCTAssertEqual(try run(bin, ["catalog", "add", "--catalog", db, "--id", "forest", forest]).status, 0)
        // forest (40 s), the plain spot (20 s), 20 s of music not in the catalog.
        let recording = path("recording.mp3")
        let format = "aresample=44100,aformat=channel_layouts=stereo"
        try ffmpeg(["-t", "40", "-i", forest, "-i", a, "-ss", "30", "-t", "20",
                    "-i", Self.samples.appendingPathComponent("supertux-chipdisko.ogg").path,
                    "-filter_complex", "[0]\(format)[x];[1]\(format)[y];[2]\(format)[z];[x][y][z]concat=n=3:v=0:a=1",
                    "-b:a", "128k"], recording)
        let library = path("airings.db")
        let scan = try run(bin, ["scan", "--catalog", db, "--library", library, "--format", "json", recording])
        XCTAssertEqual(scan.status, 0, scan.err)
        let object = try JSONSerialization.jsonObject(with: Data(scan.out.utf8)) as? [String: Any]
        let segments = object?["segments"] as? [[String: Any]] ?? []
        let rows = segments.map { s -> String in
            let id = (s["reference"] as? [String: Any])?["id"] as? String ?? "?"
            let alternatives = (s["alternatives"] as? [[String: Any]] ?? []).compactMap { ($0["reference"] as? [String: Any])?["id"] as? String }
            return "\(Int(((s["start"] as? Double) ?? -1).rounded()))-\(Int(((s["end"] as? Double) ?? -1).rounded())) \(id) \(alternatives)"
        }
        XCTAssertEqual(rows, ["0-40 forest []", "40-60 spot-a [\"spot-b\"]"], scan.out)
        let counts = try run(bin, ["report", "counts", "--library", library, "--format", "csv"])
        XCTAssertEqual(counts.status, 0, counts.err)
        let spotRows = counts.out.components(separatedBy: "\n").filter { $0.contains("spot-") }
        XCTAssertEqual(spotRows.count, 1, counts.out)
    }

    /// Two references of the same audio marked with different payloads (two versions of a spot)
    /// are told apart in a scan by their markers; an unmarked copy keeps the fingerprint's answer.
    func testScanTellsMarkedVersionsApart() throws {
        let bin = try CLISupport.soundmarkBinary()
        let spot = path("spot.wav")
        try ffmpeg(["-ss", "2", "-t", "20", "-i", Self.samples.appendingPathComponent("wesnoth-knolls.ogg").path], spot)
        let (a, b) = (path("spot-a.wav"), path("spot-b.wav"))
        XCTAssertEqual(try run(bin, ["marker", "embed", "--payload", "111", spot, a]).status, 0)
        XCTAssertEqual(try run(bin, ["marker", "embed", "--payload", "222", spot, b]).status, 0)
        let db = path("spots.db")
        let addA = try run(bin, ["catalog", "add", "--catalog", db, "--id", "spot-a", "--marker", "111", a])
        XCTAssertEqual(addA.err, "spot-a: added 20.0 s, \(a)\nspot-a: marker payload 111 (0x0000006F)\n")
        let addB = try run(bin, ["catalog", "add", "--catalog", db, "--id", "spot-b", "--marker", "0xDE", "--allow-duplicates", b])
        XCTAssertEqual(addB.status, 0, addB.err)
        XCTAssertEqual(try run(bin, ["catalog", "add", "--catalog", db, "--id", "forest",
                                     Self.samples.appendingPathComponent("supertux-forest.ogg").path]).status, 0)
        let show = try run(bin, ["catalog", "show", "--catalog", db, "spot-b"])
        XCTAssertTrue(show.out.contains("\nmarker:    payload 222 (0x000000DE)\n"), show.out)
        XCTAssertFalse(try run(bin, ["catalog", "show", "--catalog", db, "forest"]).out.contains("\nmarker:"))
        XCTAssertTrue(try run(bin, ["catalog", "show", "--catalog", db, "--format", "json", "spot-a"]).out.contains("\"marker\":111,"))

        // forest (40 s), version B, version A, the unmarked spot.
        let recording = path("recording.mp3")
        try ffmpeg(["-i", Self.samples.appendingPathComponent("supertux-forest.ogg").path, "-i", b, "-i", a, "-i", spot,
                    "-filter_complex", "[0][1][2][3]concat=n=4:v=0:a=1", "-b:a", "128k"], recording)
        let scan = try run(bin, ["scan", "--catalog", db, "--format", "json", recording])
        XCTAssertEqual(scan.status, 0, scan.err)
        let object = try JSONSerialization.jsonObject(with: Data(scan.out.utf8)) as? [String: Any]
        let segments = object?["segments"] as? [[String: Any]] ?? []
        let rows = segments.map { s -> String in
            let id = (s["reference"] as? [String: Any])?["id"] as? String ?? "?"
            let start = Int(((s["start"] as? Double) ?? -1).rounded())
            let marker = s["marker"] as? [String: Any]
            let payload = marker.map { "\($0["payload"] as? Int ?? -1)" } ?? "-"
            return "\(start) \(id) \(payload)"
        }
        XCTAssertEqual(rows.count, 4, scan.out)
        XCTAssertEqual(Array(rows.prefix(3)), ["0 forest -", "40 spot-b 222", "60 spot-a 111"], scan.out)
        // The unmarked copy gives what the fingerprint gives: one entry for that audio (the smaller
        // id), the other reference of the same audio its alternative.
        XCTAssertEqual(rows.last, "80 spot-a -", scan.out)
        XCTAssertEqual(((segments[3]["alternatives"] as? [[String: Any]])?.first?["reference"] as? [String: Any])?["id"] as? String,
                       "spot-b", scan.out)
        let b40 = segments[1]["marker"] as? [String: Any]
        XCTAssertEqual((b40?["reference"] as? [String: Any])?["id"] as? String, "spot-b")
        // The fingerprint already picks spot-b (the two references are one recording, and the
        // airing of B gathers more hits from B): the marker confirms it.
        XCTAssertEqual(b40?["refined"] as? Bool, false)
        XCTAssertEqual(((segments[1]["alternatives"] as? [[String: Any]])?.first?["reference"] as? [String: Any])?["id"] as? String, "spot-a")
        // CSV: the same alternatives in the last column ("id start-end", recording seconds).
        let csv = try run(bin, ["scan", "--catalog", db, "--format", "csv", recording])
        XCTAssertEqual(csv.status, 0, csv.err)
        let csvRows = csv.out.components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
        XCTAssertEqual(csvRows.count, 4, csv.out)
        XCTAssertEqual(csvRows.map { String(($0.components(separatedBy: ",").last ?? "").prefix(7)) },
                       ["", "spot-a ", "spot-b ", "spot-b "], csv.out)
        // firstSeen: the end of the first 10 s window (one every 5 s) lying 60 % or more in the
        // segment that decoded the payload: 40–50 s.
        XCTAssertEqual(b40?["firstSeen"] as? Double, 50)

        // monitor: one activity per play (the other version its alternative, as in scan), and
        // segment.refined with trait.marker naming the marker's reference: the activity is
        // confirmed (refined false) or moved to that reference (refined true).
        let monitor = try run(bin, ["monitor", "--catalog", db, "--catalog-poll", "0", recording])
        XCTAssertEqual(monitor.status, 0, monitor.err)
        let events = monitor.out.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let markerEvents = events.filter { $0["marker"] != nil }.map { e -> String in
            let m = e["marker"] as? [String: Any] ?? [:]
            let trait = (e["trait"] as? [String: Any])?["marker"] as? Bool ?? false
            return "\(e["event"] as? String ?? "") \(e["material_id"] as? String ?? "") \(m["payload"] as? Int ?? -1) \(trait)"
        }
        XCTAssertEqual(markerEvents.sorted(), ["segment.refined spot-a 111 true", "segment.refined spot-b 222 true"], monitor.out)
        let started = events.filter { ($0["event"] as? String) == "segment.started" }
        XCTAssertEqual(started.count, 4, monitor.out)
        // The activity of the unmarked copy (started at 80 s) sees no marker.
        let late = events.filter { ($0["event"] as? String) == "segment.started" && (($0["time"] as? Double) ?? 0) >= 79 }
        XCTAssertEqual(late.count, 1, monitor.out)
        let lateIDs = Set(late.compactMap { $0["activity_id"] as? String })
        XCTAssertTrue(events.filter { lateIDs.contains($0["activity_id"] as? String ?? "") }.allSatisfy { $0["trait"] == nil })

        // Review: the library recorded only whether a marker was seen, and monitor's library the
        // reference before its marker refined it. Both keep the refined reference and the payload.
        for (command, name) in [(["scan", "--format", "json"], "scan"), (["monitor", "--catalog-poll", "0"], "monitor")] {
            let library = path("\(name)-airings.db")
            let r = try run(bin, command + ["--catalog", db, "--library", library, recording])
            XCTAssertEqual(r.status, 0, r.err)
            let list = try run(bin, ["library", "list", "--library", library, "--format", "json"])
            let airings = (try JSONSerialization.jsonObject(with: Data(list.out.utf8)) as? [String: Any])?["airings"] as? [[String: Any]] ?? []
            XCTAssertEqual(airings.map { "\(($0["reference"] as? [String: Any])?["id"] as? String ?? "?") \(($0["marker"] as? Int).map(String.init) ?? "-")" },
                           ["forest -", "spot-b 222", "spot-a 111", "spot-a -"], "\(name): \(list.out)")
        }

        // Without markers in the catalog the scan is the fingerprint's (both versions at every copy).
        XCTAssertEqual(try run(bin, ["catalog", "remove", "--catalog", db, "spot-a", "spot-b"]).status, 0)
        let plain = try run(bin, ["scan", "--catalog", db, "--format", "json", recording])
        XCTAssertFalse(plain.out.contains("\"marker\""), plain.out)
    }
}
