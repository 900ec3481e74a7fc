import Foundation
import XCTest

/// End-to-end tests of issue 40 ("nothing lost, nothing hangs") on the built `soundmark` binary:
/// each test is one kind of fault with the example input that showed it.
final class HostileInputTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try CLISupport.temporaryDirectory(self, prefix: "hostile")
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs the built binary in the test directory; a signal exit fails the test.
    private func soundmark(_ arguments: [String]) throws -> CLISupport.Run {
        let r = try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: directory, currentDirectory: directory)
        XCTAssertFalse(r.signalled, "soundmark \(arguments.joined(separator: " ")) crashed: \(r.stderr.prefix(400))")
        return r
    }

    /// `seconds` of a two-tone chord (sox) at `name`, 8 kHz mono WAV.
    private func tone(_ name: String, seconds: Int = 4) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { throw XCTSkip("no sox") }
        let r = try CLISupport.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", path(name), "synth", "\(seconds)",
                                                   "sine", "440-1200", "sine", "700-300"], in: directory)
        XCTAssertEqual(r.status, 0, r.stderr)
        return path(name)
    }

    /// Exit 2 with exactly `message` as the one line on stderr and nothing on stdout.
    private func assertRefused(_ r: CLISupport.Run, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, 2, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stdout, "", file: file, line: line)
        XCTAssertEqual(r.stderr, message + "\n", file: file, line: line)
    }

    // MARK: - 4. symbolic links

    /// `catalog add linkdir` (a symlink to a folder of WAVs) said "no media files found" (rc 2)
    /// and a symlinked subfolder inside a walked folder was skipped without a message: links are
    /// followed as `find -L` follows them, a link back to a folder being walked is named once.
    func testSymbolicLinksAreFollowedWithALoopGuard() throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: path("folder"), withIntermediateDirectories: true)
        try fm.createDirectory(atPath: path("elsewhere/inner"), withIntermediateDirectories: true)
        try fm.moveItem(atPath: try tone("a.wav", seconds: 4), toPath: path("folder/a.wav"))
        try fm.moveItem(atPath: try tone("b.wav", seconds: 5), toPath: path("elsewhere/inner/b.wav"))
        try fm.moveItem(atPath: try tone("c.wav", seconds: 6), toPath: path("elsewhere/c.wav"))
        try fm.createSymbolicLink(atPath: path("linkdir"), withDestinationPath: path("folder"))
        try fm.createSymbolicLink(atPath: path("folder/sub"), withDestinationPath: path("elsewhere"))
        try fm.createSymbolicLink(atPath: path("elsewhere/inner/loop"), withDestinationPath: path("elsewhere"))
        try fm.createSymbolicLink(atPath: path("folder/dangling.wav"), withDestinationPath: path("gone.wav"))
        let catalog = path("c.db")
        let r = try soundmark(["catalog", "add", "--allow-duplicates", "--catalog", catalog, "linkdir"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderrLines.filter { $0.contains("loop") },
                       ["soundmark: \(path("linkdir/sub/inner/loop")): skipped, a symbolic link back to a folder it is inside (a loop)"])
        let list = try soundmark(["catalog", "list", "--catalog", catalog, "--format", "json"])
        XCTAssertEqual(list.status, 0, list.stderr)
        let root = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
        let references = root?["references"] as? [[String: Any]] ?? []
        XCTAssertEqual(references.compactMap { $0["id"] as? String }.sorted(), ["a", "sub-c", "sub-inner-b"])
        XCTAssertEqual(references.compactMap { $0["duration"] as? Double }.sorted(), [4, 5, 6])
        // The sources are the paths through the links, as `find -L linkdir` prints them.
        let show = try soundmark(["catalog", "show", "--catalog", catalog, "sub-inner-b"])
        XCTAssertTrue(show.stdout.contains(path("linkdir/sub/inner/b.wav")), show.stdout)
    }

    // MARK: - 9. what holds no valid audio

    /// `signature` exited 0 and wrote a 0-peak file for empty or silent audio: it is refused with
    /// one line, in both formats, and no file is written.
    func testSignatureOfAudioWithoutLandmarksIsRefused() throws {
        let silent = path("silent.wav")
        XCTAssertEqual(try CLISupport.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", silent, "trim", "0", "3"], in: directory).status, 0)
        let tone = try tone("t.wav")
        let empty = path("empty.wav")
        XCTAssertEqual(try CLISupport.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", empty, "trim", "0", "0"], in: directory).status, 0)
        for (input, name) in [(silent, "silent.wav"), (empty, "empty.wav")] {
            for format in ["soundmark", "shazam"] {
                let r = try soundmark(["signature", "--format", format, "-o", path("out.sig"), input])
                assertRefused(r, "soundmark: \(path(name)): no audio content to fingerprint (silent or too short)")
                XCTAssertFalse(FileManager.default.fileExists(atPath: path("out.sig")))
            }
        }
        XCTAssertEqual(try soundmark(["signature", "-o", path("t.smsig"), tone]).status, 0)
    }

    /// Issue 40 item 11: a text file named `.flac` was "silent or too short" (FFmpeg takes the
    /// format from the name and finds no frame): it is no media, in every command that reads it;
    /// an empty WAV, which is a WAV, still holds no audio content.
    func testATextFileNamedFlacIsNoMedia() throws {
        let text = path("notes.flac")
        try Data("hello, this is text and not audio\n".utf8).write(to: URL(fileURLWithPath: text))
        let catalog = path("named.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, try tone("named.wav")]).status, 0)
        for command in [["identify", "--catalog", catalog, text], ["catalog", "add", "--catalog", catalog, text],
                        ["signature", "-o", path("notes.sig"), text], ["scan", "--catalog", catalog, text]] {
            assertRefused(try soundmark(command), "soundmark: cannot open \(text): not a media file or unsupported format (only its name looks like one)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("notes.sig")))
    }

    /// A Shazam signature whose header says 0 samples was imported as a 0.0 s reference holding
    /// 444 peaks: it is refused, naming the file, and the catalog is not created.
    func testShazamSignatureOfZeroSamplesIsNotImported() throws {
        let tone = try tone("t.wav", seconds: 6)
        let sig = path("t.shazamsignature")
        XCTAssertEqual(try soundmark(["signature", "--format", "shazam", "-o", sig, tone]).status, 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: sig)))
        let start = Int(UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24)
        for k in 0..<4 { bytes[start + 40 + k] = 0 }  // the header's sample count
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes[(start + 8)...] {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc = ~crc
        for k in 0..<4 { bytes[start + 4 + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        let zero = path("zero.shazamsignature")
        try Data(bytes).write(to: URL(fileURLWithPath: zero))
        let shown = try soundmark(["signature", "show", zero])
        XCTAssertEqual(shown.status, 0, shown.stderr)
        XCTAssertTrue(shown.stdout.contains("0 samples, duration 0.000 s"), shown.stdout)
        let peaksLine = try XCTUnwrap(shown.stdout.split(separator: "\n").first { $0.hasPrefix("peaks: ") })
        let peaks = try XCTUnwrap(Int(peaksLine.dropFirst(7).prefix { $0.isNumber }))
        XCTAssertGreaterThan(peaks, 50)
        assertRefused(try soundmark(["catalog", "import", "--catalog", path("c.db"), zero]),
                      "soundmark: \(zero): the Shazam signature's header records 0 samples (no audio, yet \(peaks) peaks): not imported")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("c.db")))
        // The unpatched file imports.
        XCTAssertEqual(try soundmark(["catalog", "import", "--catalog", path("c.db"), sig]).status, 0)
    }

    /// A WAV header claiming 7-bit samples was catalogued as a 2 s reference (FFmpeg rounds the
    /// size up to 8 bits): a PCM header of 1-7 bits is refused at open, by every command.
    func testAWavHeaderOfUnderEightBitSamplesIsRefused() throws {
        let eight = path("t8.wav")
        XCTAssertEqual(try CLISupport.run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", "-b", "8", "-e", "unsigned", eight,
                                                          "synth", "4", "sine", "440-1200", "sine", "700-300"], in: directory).status, 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: eight)))
        let fmt = try XCTUnwrap((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)] == [0x66, 0x6D, 0x74, 0x20] })
        XCTAssertEqual(bytes[fmt + 22], 8)
        bytes[fmt + 22] = 7  // wBitsPerSample
        let seven = path("t7.wav")
        try Data(bytes).write(to: URL(fileURLWithPath: seven))
        let message = "soundmark: cannot open \(seven): the header declares 7-bit samples, not a valid PCM sample format (8 bits or more)"
        assertRefused(try soundmark(["catalog", "add", "--catalog", path("c.db"), seven]), message)
        assertRefused(try soundmark(["signature", "-o", path("t7.smsig"), seven]), message)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("c.db")))
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", path("c.db"), eight]).status, 0)
    }

    // MARK: - 7. numeric options

    /// `monitor --catalog-poll 1e10` exited 132 (SIGILL: the poll's deadline overflowed); every
    /// numeric option now takes a finite number in a stated range and names it when refusing.
    func testEveryNumericOptionIsRangeChecked() throws {
        let clip = try tone("clip.wav")
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, clip]).status, 0)
        let cases: [([String], String)] = [
            (["monitor", "--catalog", catalog, "--catalog-poll", "1e10", clip],
             "--catalog-poll takes seconds from 0 to 86400 (0: never), got '1e10' (see 'soundmark monitor --help')"),
            (["monitor", "--catalog", catalog, "--catalog-poll", "1e300", clip],
             "--catalog-poll takes seconds from 0 to 86400 (0: never), got '1e300' (see 'soundmark monitor --help')"),
            (["monitor", "--catalog", catalog, "--reconnect", "--reconnect-timeout", "1e10", clip],
             "--reconnect-timeout takes seconds from 0 to 86400, got '1e10' (see 'soundmark monitor --help')"),
            (["monitor", "--catalog", catalog, "--open-timeout", "-1", clip],
             "--open-timeout takes seconds from 0 to 86400 (0: wait without end), got '-1' (see 'soundmark monitor --help')"),
            (["scan", "--catalog", catalog, "--min-duration", "nan", clip],
             "--min-duration takes seconds from 0 to 86400, got 'nan' (see 'soundmark scan --help')"),
            (["identify", "--catalog", catalog, "--threshold", "1.5", clip],
             "--threshold takes a confidence from 0 to 1, got '1.5' (see 'soundmark identify --help')"),
            (["identify", "--catalog", catalog, "--jobs", "1025", clip],
             "--jobs takes a whole number from 1 to 1024, got '1025' (see 'soundmark identify --help')"),
            (["identify", "--catalog", catalog, "--stream", "99999999999999999999", clip],
             "--stream takes a whole number from 0 to 65535 (a stream index), got '99999999999999999999' (see 'soundmark identify --help')"),
            (["marker", "embed", "--payload", "1", "--strength", "inf", clip, path("m.wav")],
             "--strength takes dB from -40 to -6, got 'inf' (see 'soundmark marker embed --help')"),
            (["worker", "--catalog", "postgresql://nobody@127.0.0.1:1/none", "--lease", "1e10"],
             "--lease takes seconds from 1 to 86400, got '1e10' (see 'soundmark worker --help')"),
            (["worker", "--catalog", "postgresql://nobody@127.0.0.1:1/none", "--max-attempts", "0.5"],
             "--max-attempts takes a whole number from 1 to 1000, got '0.5' (see 'soundmark worker --help')"),
        ]
        for (arguments, message) in cases {
            assertRefused(try soundmark(arguments), "soundmark: " + message)
        }
        // At the top of its range, an option works.
        let polled = try soundmark(["monitor", "--catalog", catalog, "--catalog-poll", "86400", "--min-duration", "86400", clip])
        XCTAssertEqual(polled.status, 0, polled.stderr)
    }

    // MARK: - 6. hangs

    /// A named pipe nothing writes to blocked identify, catalog add, signature, marker detect and
    /// scan for ever: it is refused after 10 s (monitor: after --open-timeout), with the catalog
    /// untouched; a pipe that is written to is read as before.
    func testANamedPipeWithoutWriterIsRefusedInTime() throws {
        let clip = try tone("clip.wav")
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, clip]).status, 0)
        let fifo = path("pipe.wav")
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let start = Date()
        assertRefused(try soundmark(["identify", "--catalog", catalog, fifo]),
                      "soundmark: cannot open \(fifo): a named pipe (FIFO) that nothing was written to within 10 s")
        XCTAssertLessThan(Date().timeIntervalSince(start), 15)
        let monitor = try soundmark(["monitor", "--catalog", catalog, "--open-timeout", "1", fifo])
        XCTAssertEqual(monitor.status, 2, monitor.stderr)
        XCTAssertTrue(monitor.stderr.contains("cannot open \(fifo): a named pipe (FIFO) that nothing was written to within 1 s"), monitor.stderr)
        // Written to (the writer may finish before the reader looks): matched as the file is.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "cat '\(clip)' > '\(fifo)'"]
        try writer.run()
        let found = try soundmark(["identify", "--catalog", catalog, fifo])
        writer.waitUntilExit()
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertTrue(found.stdout.hasPrefix("1. ") && found.stdout.contains("(clip)"), found.stdout)
    }

    /// `ln -s /dev/urandom r.mp3` was read for ever, a warning per packet: an input that yields
    /// less than 1 s of audio per 256 MB read is given up, with one error line naming it (here
    /// `/dev/zero`, the same every run, refused in about 3 s; `/dev/urandom` in about 5 s).
    func testAnEndlessStreamOfGarbageIsGivenUp() throws {
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, try tone("clip.wav")]).status, 0)
        let random = path("r.mp3")
        try FileManager.default.createSymbolicLink(atPath: random, withDestinationPath: "/dev/zero")
        let start = Date()
        let r = try soundmark(["identify", "--catalog", catalog, random])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertEqual(r.stderrLines.last.map(String.init), "soundmark: \(random): read failed: gave up after 256 MB read without 1 s "
                       + "of decodable audio (not media, or damaged beyond use)")
        XCTAssertLessThan(Date().timeIntervalSince(start), 15)
    }

    /// A 176 KB WAV whose header declares 1 Hz took 129 s and 355 MB before "no match": sample
    /// rates outside 1000–768000 Hz are refused at once.
    func testAnAbsurdSampleRateIsRefused() throws {
        let wav = try pcmWav("onehz.wav", channels: 1, rate: 1)
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, try tone("clip.wav")]).status, 0)
        assertRefused(try soundmark(["identify", "--catalog", catalog, wav]),
                      "soundmark: cannot open \(wav): the audio's sample rate 1 Hz is outside the supported 1000–768000 Hz")
    }

    // MARK: - 10. warnings in the output

    /// 20 s of a chord as a 128 kbit/s MP3 at `name` (ffmpeg), and a copy of its first 60 % at
    /// "cut-" + `name` (a truncated download: its header still declares 20 s).
    private func truncatedMP3(_ name: String) throws -> (whole: String, cut: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { throw XCTSkip("no ffmpeg") }
        let wav = try tone("whole.wav", seconds: 20)
        let r = try CLISupport.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-i", wav, "-c:a", "libmp3lame", "-b:a", "128k",
                                                      path(name)], in: directory)
        XCTAssertEqual(r.status, 0, r.stderr)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path(name)))
        try bytes.prefix(bytes.count * 6 / 10).write(to: URL(fileURLWithPath: path("cut-" + name)))
        return (path(name), path("cut-" + name))
    }

    /// A truncated MP3 warned "the audio ends at 12.0 s but the file declares 20.2 s" on stderr
    /// but nothing in identify's or scan's JSON marked it: both carry a "warnings" array holding
    /// the same line, and a clean input's JSON has no such member.
    func testATruncatedFilesWarningIsInTheJSON() throws {
        let (whole, cut) = try truncatedMP3("t.mp3")
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, whole]).status, 0)
        for command in ["identify", "scan"] {
            let r = try soundmark([command, "--catalog", catalog, "--format", "json", cut])
            XCTAssertEqual(r.status, 0, r.stderr)
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let warnings = try XCTUnwrap(object["warnings"] as? [String], r.stdout)
            XCTAssertEqual(warnings.count, 1, r.stdout)
            XCTAssertEqual(warnings[0], "\(cut): the audio ends at 12.0 s but the file declares 20.2 s: it is truncated")
            XCTAssertEqual(r.stderrLines.map(String.init), ["soundmark: warning: " + warnings[0]])
            let clean = try soundmark([command, "--catalog", catalog, "--format", "json", whole])
            XCTAssertEqual(clean.status, 0, clean.stderr)
            XCTAssertFalse(clean.stdout.contains("\"warnings\""), clean.stdout)
        }
    }

    /// `timeline merge --format srt` wrote a cue of no length (00:00:00,000 --> 00:00:00,000) for
    /// events at negative times: such a cue is left out with a warning, and the JSON output lists
    /// its warnings after the rows.
    func testTimelineCuesBeforeZeroAreNotWrittenAsEmptyCues() throws {
        let events = path("ev.jsonl")
        try """
        {"event":"segment.started","activity_id":"a1","material_id":"m1","time":-5}
        {"event":"segment.ended","activity_id":"a1","material_id":"m1","time":-2}
        {"event":"segment.started","activity_id":"a2","material_id":"m2","time":3}
        {"event":"segment.ended","activity_id":"a2","material_id":"m2","time":7}
        not json

        """.write(toFile: events, atomically: true, encoding: .utf8)
        let srt = try soundmark(["timeline", "merge", "--format", "srt", events])
        XCTAssertEqual(srt.status, 0, srt.stderr)
        XCTAssertEqual(srt.stdout, "1\n00:00:03,000 --> 00:00:07,000\nm2\n\n")
        XCTAssertEqual(srt.stderrLines.map(String.init), [
            "soundmark: warning: \(events): line 5: not valid JSON",
            "soundmark: warning: \(events): cue \"m1\" at -5.000–-2.000 s is before the time line's 0 s; left out"])
        let json = try soundmark(["timeline", "merge", events])
        XCTAssertEqual(json.status, 0, json.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["warnings"] as? [String], ["\(events): line 5: not valid JSON"])
        XCTAssertEqual((object["rows"] as? [Any])?.count, 2)
    }

    // MARK: - 9. damaged media is stored with its problem recorded

    /// Damaged but decodable media was catalogued with warnings only: the reference records
    /// them in its "decode-problems" property, which `catalog show` lists.
    func testDamagedMediaIsStoredWithItsProblemRecorded() throws {
        let (whole, cut) = try truncatedMP3("d.mp3")
        let catalog = path("c.db")
        let add = try soundmark(["catalog", "add", "--catalog", catalog, cut, whole, "--allow-duplicates"])
        XCTAssertEqual(add.status, 0, add.stderr)
        let show = try soundmark(["catalog", "show", "--catalog", catalog, "cut-d"])
        XCTAssertEqual(show.status, 0, show.stderr)
        let line = try XCTUnwrap(show.stdout.split(separator: "\n").first { $0.hasPrefix("property:  decode-problems=") }, show.stdout)
        XCTAssertTrue(line.hasSuffix("=\(cut): the audio ends at 12.0 s but the file declares 20.2 s: it is truncated"), String(line))
        let clean = try soundmark(["catalog", "show", "--catalog", catalog, "d"])
        XCTAssertFalse(clean.stdout.contains("decode-problems"), clean.stdout)
    }

    // MARK: - 2. references too short to be found

    /// `seconds` of the sample reference `name` (samples/references, CC BY-SA / GPL game music,
    /// see samples/README.md) from `from` s, as 22.05 kHz mono WAV at `output` (ffmpeg).
    private func excerpt(_ name: String, from: Double, seconds: Double, _ output: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") else { throw XCTSkip("no ffmpeg") }
        let source = CLISupport.root.appendingPathComponent("samples/references/\(name).ogg").path
        let r = try CLISupport.run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-ss", "\(from)", "-t", "\(seconds)", "-i", source,
                                                      "-ac", "1", "-ar", "22050", path(output)], in: directory)
        XCTAssertEqual(r.status, 0, r.stderr)
        return path(output)
    }

    /// References of 0.25-1.5 s were "added" but identify did not find them in their own file:
    /// a reference identify cannot find in itself is refused with the minimum stated, and no
    /// catalog is left behind; one it finds is added.
    func testAReferenceTooShortToBeFoundIsRefused() throws {
        let short = try excerpt("wesnoth-knolls", from: 13, seconds: 0.5, "short.wav")
        let catalog = path("c.db")
        assertRefused(try soundmark(["catalog", "add", "--catalog", catalog, short]),
                      "soundmark: \(short): too short to be found: identify does not find its 0.50 s even in itself; a reference "
                      + "needs 1.5-2.5 s of music (its landmarks must line up beyond chance over enough of it; the rule scores "
                      + "a clip against its reference alone, so this does not change with the catalog's size); not added")
        XCTAssertFalse(FileManager.default.fileExists(atPath: catalog))
        let longer = try excerpt("wesnoth-knolls", from: 13, seconds: 2, "longer.wav")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, longer]).status, 0)
        let found = try soundmark(["identify", "--catalog", catalog, longer])
        XCTAssertEqual(found.status, 0, found.stderr)
        XCTAssertTrue(found.stdout.hasPrefix("1. longer (longer) at 00:00:00.0"), found.stdout)
    }

    /// With the default --min-duration 2, complete plays of a 2 s reference (measured 1.94-1.95 s
    /// long) were dropped without a message: every complete play of a catalogued reference is
    /// reported whatever its length; the minimum still drops partial plays.
    func testCompletePlaysOfAShortReferenceAreNotDroppedByTheMinimumDuration() throws {
        let jingle = try excerpt("wesnoth-knolls", from: 13, seconds: 2, "jingle.wav")
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, jingle]).status, 0)
        // Other music, the jingle, other music, the jingle, other music: 4 s each between.
        var parts: [String] = []
        for k in 0..<3 {
            parts.append(try excerpt("supertux-forest", from: Double(4 * k), seconds: 4, "filler\(k).wav"))
            if k < 2 { parts.append(jingle) }
        }
        let recording = path("recording.wav")
        XCTAssertEqual(try CLISupport.run("/usr/bin/sox", parts + [recording], in: directory).status, 0)
        let r = try soundmark(["scan", "--catalog", catalog, "--format", "json", recording])
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let segments = try XCTUnwrap(object["segments"] as? [[String: Any]])
        XCTAssertEqual(segments.count, 2, r.stdout)
        for (segment, start) in zip(segments, [4.0, 10.0]) {
            XCTAssertEqual(try XCTUnwrap(segment["start"] as? Double), start, accuracy: 0.3, r.stdout)
            XCTAssertEqual(try XCTUnwrap(segment["end"] as? Double), start + 2, accuracy: 0.3, r.stdout)
        }
        // A partial play (the jingle's last 1.2 s) is still under the minimum.
        let tail = try excerpt("wesnoth-knolls", from: 13.8, seconds: 1.2, "tail.wav")
        let partial = path("partial.wav")
        XCTAssertEqual(try CLISupport.run("/usr/bin/sox", [parts[0], tail, parts[4], partial], in: directory).status, 0)
        let p = try soundmark(["scan", "--catalog", catalog, "--format", "json", partial])
        XCTAssertFalse(p.stdout.contains("\"reference\":{\"id\":\"jingle\""), p.stdout)
    }

    // MARK: - 11. messages

    /// A WAV header of 0 channels gave "no decoder available for codec 'pcm_s16le'": the
    /// message names what is wrong, the header's 0 channels.
    func testAWavHeaderOfZeroChannelsIsNamed() throws {
        let wav = try pcmWav("nochannels.wav", channels: 0, rate: 8000)
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark(["catalog", "add", "--catalog", catalog, try tone("clip.wav")]).status, 0)
        let message = "soundmark: cannot open \(wav): the header declares 0 channels (no audio)"
        assertRefused(try soundmark(["identify", "--catalog", catalog, wav]), message)
        assertRefused(try soundmark(["catalog", "add", "--catalog", catalog, wav]), message)
    }

    /// A 16-bit PCM WAV at `name` whose header declares `channels` and `rate` (Hz, the byte rate
    /// from them, 2 bytes a frame), holding 176,000 bytes of a fixed pattern; its path.
    private func pcmWav(_ name: String, channels: UInt16, rate: UInt32) throws -> String {
        var header = Data("RIFF".utf8) + le32(36 + 176_000) + Data("WAVEfmt ".utf8) + le32(16)
        header += Data([1, 0, UInt8(channels), UInt8(channels >> 8)]) + le32(rate) + le32(2 * rate) + Data([2, 0, 16, 0])
        header += Data("data".utf8) + le32(176_000)
        try (header + Data((0..<176_000).map { UInt8(truncatingIfNeeded: $0 &* 37) })).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    private func le32(_ v: UInt32) -> Data { withUnsafeBytes(of: v.littleEndian) { Data($0) } }
}
