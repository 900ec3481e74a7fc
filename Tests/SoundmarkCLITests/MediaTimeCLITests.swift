import Foundation
import XCTest

/// End-to-end: times on the media's playback time line (a video whose audio starts late) and
/// the choice of audio stream by language (issues 8.4 and 9.10). Media are made with ffmpeg
/// from samples/references.
final class MediaTimeCLITests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let knolls = root.appendingPathComponent("samples/references/wesnoth-knolls.ogg").path
    private var directory: URL!

    private struct Result { var status: Int32; var stdout: String; var stderr: String }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-mediatime-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { [directory] in try? FileManager.default.removeItem(at: directory!) }
    }

    private func binary() throws -> String { try CLISupport.soundmarkBinary() }

    private func run(_ executable: String, _ arguments: [String]) throws -> Result {
        let r = try CLISupport.run(executable, arguments, in: directory)
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    private func soundmark(_ arguments: String...) throws -> Result { try run(try binary(), arguments) }

    private func ffmpeg(_ arguments: [String], _ name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let r = try run("/usr/bin/ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"] + arguments + [path])
        guard r.status == 0 else { throw XCTSkip("ffmpeg failed: \(r.stderr)") }
        return path
    }

    /// A catalog holding wesnoth-knolls.
    private func catalog() throws -> String {
        let db = directory.appendingPathComponent("knolls.db").path
        let r = try soundmark("catalog", "add", "--catalog", db, Self.knolls)
        XCTAssertEqual(r.status, 0, r.stderr)
        return db
    }

    private func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testVideoWithLateAudioIsTimedOnThePlaybackTimeLine() throws {
        let db = try catalog()
        // 20 s of video; the audio (knolls from 10 s, 12 s long) starts 4.06 s in.
        let excerpt = try ffmpeg(["-ss", "10", "-t", "12", "-i", Self.knolls], "excerpt.wav")
        for container in ["mkv", "mp4", "ts"] {
            let video = try ffmpeg(["-f", "lavfi", "-i", "color=c=blue:size=64x64:rate=10:duration=20",
                                    "-itsoffset", "4.06", "-i", excerpt,
                                    "-map", "0:v", "-map", "1:a", "-c:v", "mpeg4", "-c:a", "aac"], "late.\(container)")
            let scan = try soundmark("scan", "--catalog", db, "--format", "json", video)
            XCTAssertEqual(scan.status, 0, scan.stderr)
            let result = try json(scan.stdout)
            let recording = try XCTUnwrap(result["recording"] as? [String: Any])
            XCTAssertEqual(recording["duration"] as? Double ?? 0, 20, accuracy: 0.05, container)
            let segments = try XCTUnwrap(result["segments"] as? [[String: Any]])
            XCTAssertEqual(segments.count, 1, "\(container): \(scan.stdout)")
            guard let s = segments.first else { continue }
            let start = s["start"] as? Double ?? 0, referenceStart = s["referenceStart"] as? Double ?? 0
            // The same alignment as the player's: recording time − reference time = 4.06 − 10.
            XCTAssertEqual(start - referenceStart, 4.06 - 10, accuracy: 0.03, "\(container): \(s)")
            XCTAssertEqual(start, 4.06, accuracy: 0.1, "\(container): \(s)")
            // (The scanner's segment ends trail the last audible hit by up to a window's hop.)
            XCTAssertEqual(s["end"] as? Double ?? 0, 16.06, accuracy: 0.3, "\(container): \(s)")

            // identify: the reference time at the clip's (playback) start.
            let identify = try soundmark("identify", "--catalog", db, "--format", "json", video)
            XCTAssertEqual(identify.status, 0, identify.stderr)
            let match = try XCTUnwrap((try json(identify.stdout)["matches"] as? [[String: Any]])?.first)
            XCTAssertEqual(match["matchOffset"] as? Double ?? 0, 10 - 4.06, accuracy: 0.03, container)
        }
    }

    func testLostPacketsKeepLaterSegmentsInPlace() throws {
        let db = try catalog()
        // knolls (40 s) as an MPEG-TS, with the packets of 20–22 s cut out.
        let whole = try ffmpeg(["-i", Self.knolls, "-c:a", "mp2", "-f", "mpegts"], "whole.ts")
        let probe = try run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                 "packet=pts_time,pos", "-of", "csv=p=0", whole])
        let packets = probe.stdout.split(separator: "\n").compactMap { line -> (Double, Int)? in
            let f = line.split(separator: ",")
            guard f.count >= 2, let t = Double(f[0]), let p = Int(f[1]) else { return nil }
            return (t - 1.4, p)
        }
        let from = try XCTUnwrap(packets.first { $0.0 >= 20 }?.1), to = try XCTUnwrap(packets.first { $0.0 >= 22 }?.1)
        var data = try Data(contentsOf: URL(fileURLWithPath: whole))
        data.removeSubrange(from..<to)
        let damaged = directory.appendingPathComponent("input.ts").path
        try data.write(to: URL(fileURLWithPath: damaged))

        let scan = try soundmark("scan", "--catalog", db, "--format", "json", damaged)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        XCTAssertTrue(scan.stderr.contains("\(damaged): 2.0 s of audio missing at 20.0 s"), scan.stderr)
        let result = try json(scan.stdout)
        XCTAssertEqual((result["recording"] as? [String: Any])?["duration"] as? Double ?? 0, 40, accuracy: 0.05)
        let segments = try XCTUnwrap(result["segments"] as? [[String: Any]])
        XCTAssertFalse(segments.isEmpty)
        for s in segments { // every stretch where it was: recording time = reference time
            XCTAssertEqual((s["start"] as? Double ?? 0) - (s["referenceStart"] as? Double ?? 9), 0, accuracy: 0.03, "\(s)")
        }
        XCTAssertGreaterThan(segments.last?["end"] as? Double ?? 0, 39)

        // The catalog stores the whole length, not a shortened reference.
        let add = try soundmark("catalog", "add", "--catalog", directory.appendingPathComponent("damaged.db").path, damaged)
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stderr.contains("added 40.0 s"), add.stderr)
    }

    /// Stream 0: a 440 Hz tone tagged German (default); stream 1: knolls tagged English.
    private func twoLanguages() throws -> String {
        try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=440:duration=12", "-ss", "5", "-t", "12", "-i", Self.knolls,
                    "-map", "0:a", "-map", "1:a", "-c:a", "flac",
                    "-metadata:s:a:0", "language=ger", "-metadata:s:a:1", "language=eng",
                    "-disposition:a:0", "default", "-disposition:a:1", "0"], "dubbed.mkv")
    }

    func testLanguageChoosesTheAudioStream() throws {
        let db = try catalog()
        let movie = try twoLanguages()

        // Default stream (German tone): nothing found, and the message names the other stream.
        let plain = try soundmark("scan", "--catalog", db, movie)
        XCTAssertEqual(plain.status, 1, plain.stderr)
        XCTAssertTrue(plain.stderr.contains("nothing matched in audio stream 0 (ger); it has other audio streams: 1 (eng)"),
                      plain.stderr)
        let identifyPlain = try soundmark("identify", "--catalog", db, movie)
        XCTAssertEqual(identifyPlain.status, 1)
        XCTAssertTrue(identifyPlain.stderr.contains("other audio streams: 1 (eng)"), identifyPlain.stderr)

        for code in ["eng", "en", "ENG"] {
            let r = try soundmark("identify", "--catalog", db, "--language", code, "--verbose", movie)
            XCTAssertEqual(r.status, 0, "\(code): \(r.stderr)")
            XCTAssertTrue(r.stdout.contains("wesnoth-knolls"), r.stdout)
            XCTAssertTrue(r.stderr.contains("audio stream 1 (eng, flac, 2 channels) of 2 audio streams"), r.stderr)
        }
        let scan = try soundmark("scan", "--catalog", db, "--language", "eng", movie)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        // German by its terminology code and its two-letter code.
        for code in ["deu", "de"] {
            let r = try soundmark("identify", "--catalog", db, "--language", code, "--verbose", movie)
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("audio stream 0 (ger, flac, 1 channel, default)"), r.stderr)
        }
        let add = try soundmark("catalog", "add", "--catalog", directory.appendingPathComponent("dub.db").path,
                                "--language", "en", "--verbose", movie)
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stderr.contains("audio stream 1 (eng"), add.stderr)

        let missing = try soundmark("scan", "--catalog", db, "--language", "fre", movie)
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("\(movie): no audio stream in language 'fre'; audio streams: 0 (ger), 1 (eng)"),
                      missing.stderr)
        for bad in ["english", "e1", "xx"] {
            let r = try soundmark("scan", "--catalog", db, "--language", bad, movie)
            XCTAssertEqual(r.status, 2, bad)
            XCTAssertTrue(r.stderr.contains("--language takes an ISO 639 code"), r.stderr)
        }
        let both = try soundmark("scan", "--catalog", db, "--language", "eng", "--stream", "1", movie)
        XCTAssertEqual(both.status, 2)
    }
}
