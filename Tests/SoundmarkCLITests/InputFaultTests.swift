import Foundation
import XCTest

/// End-to-end tests of issue 9 ("every input, every failure") on the built `soundmark` binary:
/// each test is one kind of fault with the input that showed it. Media is made with sox.
final class InputFaultTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-input-faults-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory {
            _ = try? run("/bin/chmod", ["-R", "u+rwX", directory.path])
            try? FileManager.default.removeItem(at: directory)
        }
    }

    // MARK: - helpers

    typealias Result = CLISupport.Run

    private func binary() throws -> String { try CLISupport.soundmarkBinary() }

    /// Runs `executable` in the test directory (or `cwd`); see ``CLISupport/run(_:_:in:currentDirectory:)``.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], in cwd: URL? = nil) throws -> Result {
        try CLISupport.run(executable, arguments, in: directory, currentDirectory: cwd ?? directory)
    }

    private func soundmark(_ arguments: String..., in cwd: URL? = nil) throws -> Result {
        let r = try run(try binary(), arguments, in: cwd)
        XCTAssertFalse(r.signalled, "soundmark \(arguments.joined(separator: " ")) crashed: \(r.stderr.prefix(400))")
        return r
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func write(_ name: String, _ text: String) throws -> String {
        let p = path(name)
        try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        return p
    }

    /// A few seconds of distinct tones (sox), different for every `seed`, at `name`.
    @discardableResult
    private func tone(_ name: String, seed: Int, seconds: Int = 4) throws -> String {
        let p = path(name)
        try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sox") else { throw XCTSkip("no sox") }
        // A chirp sequence: each quarter second another pair of tones, from the seed.
        var parts: [String] = []
        for k in 0..<seconds * 4 {
            let f1 = 300 + ((seed * 7919 + k * 104_729) % 2900), f2 = 400 + ((seed * 104_723 + k * 7_927) % 2500)
            let part = path(".part-\(seed)-\(k).wav")
            let r = try run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", part, "synth", "0.25", "sine", "\(f1)", "sine", "\(f2)"])
            XCTAssertEqual(r.status, 0, r.stderr)
            parts.append(part)
        }
        let r = try run("/usr/bin/sox", parts + [p])
        XCTAssertEqual(r.status, 0, r.stderr)
        for part in parts { try? FileManager.default.removeItem(atPath: part) }
        return p
    }

    /// Exit 2, nothing on stdout, one stderr line starting `soundmark:` that names `name`.
    private func assertOneLineError(_ r: Result, naming name: String?, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(r.signalled, "crashed: \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.status, 2, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stdout, "", file: file, line: line)
        XCTAssertEqual(r.stderrLines.count, 1, "stderr: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("soundmark:"), r.stderr, file: file, line: line)
        if let name { XCTAssertTrue(r.stderr.contains(name), "stderr does not name \(name): \(r.stderr)", file: file, line: line) }
    }

    private func ids(_ catalog: String) throws -> [String] {
        let list = try soundmark("catalog", "list", "--catalog", catalog)
        XCTAssertEqual(list.status, 0, list.stderr)
        return list.stdout.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    // MARK: - 1. one-character catalog paths

    /// An M4A whose index (moov atom) follows the audio, ffmpeg's default, cannot be read from a
    /// pipe: the error says why and what to do, not only FFmpeg's "Invalid data found"; the same
    /// file given by its path reads.
    func testAnM4AWithItsIndexLastOnStandardInputSaysWhy() throws {
        let wav = try tone("late-index.wav", seed: 5, seconds: 12)
        let m4a = path("late-index.m4a")
        XCTAssertEqual(try run("/usr/bin/ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-i", wav, "-c:a", "aac", m4a]).status, 0)
        let catalog = path("late-index.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, wav).status, 0)
        let piped = try run("/bin/sh", ["-c", "exec \"$0\" identify --catalog \"$1\" - < \"$2\"", try binary(), catalog, m4a])
        XCTAssertEqual(piped.status, 2)
        XCTAssertEqual(piped.stderr, "soundmark: <stdin>: read failed: Invalid data found when processing input; an MP4/M4A/MOV whose "
                       + "index (moov atom) follows the audio cannot be read from a pipe: give its path, or rewrite it with "
                       + "'ffmpeg -i IN -c copy -movflags +faststart OUT'\n")
        XCTAssertEqual(try soundmark("identify", "--catalog", catalog, m4a).status, 0)
    }

    func testOneCharacterCatalogPathsWork() throws {
        let media = try tone("one.wav", seed: 1)
        for name in ["-", "a", "~"] {
            let add = try soundmark("catalog", "add", "--catalog", name, media)
            XCTAssertEqual(add.status, 0, "\(name): \(add.stderr)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path(name)), "\(name) not created in the working directory")
            XCTAssertEqual(try ids(name), ["one"])
            let show = try soundmark("catalog", "show", "--catalog", name, "one")
            XCTAssertEqual(show.status, 0, show.stderr)
            XCTAssertTrue(show.stdout.hasPrefix("id:        one\n"), show.stdout)
            let identify = try soundmark("identify", "--catalog", name, media)
            XCTAssertEqual(identify.status, 0, identify.stderr)
            XCTAssertEqual(try soundmark("catalog", "remove", "--catalog", name, "one").status, 0)
        }
        assertOneLineError(try soundmark("catalog", "list", "--catalog", "b"), naming: "b: cannot read catalog: no such file")
    }

    /// A tester's example: an id holding a tab or a line break was stored and broke the
    /// tab-separated `catalog list`. It is refused; what is stored stays.
    func testIDsWithControlCharactersAreRefused() throws {
        let media = try tone("ctl.wav", seed: 7)
        let catalog = path("ctl.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, "--id", "kept", media).status, 0)
        for id in ["line1\nline2", "a\tb", "bell\u{7}"] {
            let r = try soundmark("catalog", "add", "--catalog", catalog, "--allow-duplicates", "--id", id, media)
            XCTAssertFalse(r.signalled, r.stderr)
            XCTAssertNotEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(media): the reference id holds a control character"), r.stderr)
        }
        XCTAssertEqual(try ids(catalog), ["kept"])
    }

    // MARK: - 2. timeline merge with huge times

    func testTimelineMergeRejectsOutOfRangeTimesWithFileAndLine() throws {
        let big = try write("big.jsonl", "{\"time\":1e16}\n")
        let huge = try write("huge.jsonl", "{\"time\":0,\"duration\":1e308}\n")
        for format in ["srt", "vtt", "json", "csv"] {
            let r = try soundmark("timeline", "merge", "--format", format, big)
            assertOneLineError(r, naming: "\(big): line 1: field \"time\"")
            XCTAssertTrue(r.stderr.contains("out of range"), r.stderr)
            let h = try soundmark("timeline", "merge", "--format", format, huge)
            assertOneLineError(h, naming: "\(huge): line 1: field \"duration\"")
        }
        // Among good lines, the bad one is a warning with its line and the rest is written.
        let mixed = try write("mixed.jsonl", "{\"time\":5,\"title\":\"A\"}\n{\"time\":1e16}\n")
        let r = try soundmark("timeline", "merge", "--format", "srt", mixed)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, "1\n00:00:05,000 --> 00:00:10,000\nA\n\n")
        XCTAssertEqual(r.stderr, "soundmark: warning: \(mixed): line 2: field \"time\": 1e+16 s is out of range (more than 1000000000000 s)\n")
    }

    // MARK: - 3. annotations with huge times

    func testOutOfRangeAnnotationIsRefusedAndStoredOnesNeverCrash() throws {
        let media = try tone("ref.wav", seed: 3)
        let catalog = path("c.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        let json = try write("big.json", #"[{"start":1,"end":1e16,"text":"x"}]"#)
        let r = try soundmark("catalog", "annotate", "--catalog", catalog, "ref", json)
        assertOneLineError(r, naming: "big.json:1:")
        XCTAssertTrue(r.stderr.contains("\"end\" 1e+16 s is out of range"), r.stderr)
        let srt = try write("big.srt", "1\n00:00:01,000 --> 999999999:00:00,000\nx\n")
        assertOneLineError(try soundmark("catalog", "annotate", "--catalog", catalog, "ref", srt), naming: "big.srt:2:")
        let show = try soundmark("catalog", "show", "--catalog", catalog, "ref")
        XCTAssertTrue(show.stdout.hasSuffix("annotations: 0\n"), show.stdout)

        // A value stored by an older soundmark: show and scan write it without trapping.
        let sqlite = "/usr/bin/sqlite3"
        guard FileManager.default.isExecutableFile(atPath: sqlite) else { throw XCTSkip("no sqlite3 CLI") }
        let insert = try run(sqlite, [catalog, "INSERT INTO annotation(reference_id, seq, start, \"end\", text) VALUES ('ref', 0, 1, 1e16, 'x')"])
        XCTAssertEqual(insert.status, 0, insert.stderr)
        let stored = try soundmark("catalog", "show", "--catalog", catalog, "ref")
        XCTAssertEqual(stored.status, 0, stored.stderr)
        XCTAssertTrue(stored.stdout.hasSuffix("annotations: 1\n  00:00:01.000 --> 1e+16 s  x\n"), stored.stdout)
        for format in ["srt", "vtt", "audacity", "cue", "json"] {
            let scan = try soundmark("scan", "--catalog", catalog, "--format", format, "--cues", "annotations", media)
            XCTAssertEqual(scan.status, 0, "\(format): \(scan.stderr)")
        }
    }

    // MARK: - 5. empty catalog path

    func testEmptyCatalogPathIsAUsageError() throws {
        let media = try tone("e.wav", seed: 5)
        for command in [["catalog", "add", "--catalog", "", media], ["catalog", "list", "--catalog", ""],
                        ["identify", "--catalog", "", media], ["catalog", "annotate", "--catalog", "", "x", media]] {
            let r = try run(try binary(), command)
            assertOneLineError(r, naming: "--catalog needs a non-empty value")
        }
    }

    // MARK: - 4. default ids

    func testDefaultIdsKeepEveryScriptAndNeverCollide() throws {
        let names = ["j/夜明けの歌.wav", "j/Привет мир.wav", "j/Ελληνικά.wav", "j/ガーデン.wav"]
        for (k, name) in names.enumerated() { try tone(name, seed: 40 + k) }
        try tone("a/01 Track.wav", seed: 50)
        try tone("b/01 Track.wav", seed: 51)
        let catalog = path("ids.db")
        let r = try soundmark("catalog", "add", "--catalog", catalog, path("j"), path("a"), path("b"))
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try ids(catalog).sorted(), ["a-01-track", "b-01-track", "ελληνικά", "ガーデン", "привет-мир", "夜明けの歌"].sorted())
        // Stable: the same batch again changes nothing.
        let again = try soundmark("catalog", "add", "--catalog", catalog, path("j"), path("a"), path("b"))
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(again.stderrLines.filter { $0.contains("skipped (already in the catalog, unchanged)") }.count, 6, again.stderr)
        // Explicit files with one name in two folders, added one at a time: the second takes its folder.
        let one = path("one.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", one, path("a/01 Track.wav")).status, 0)
        let second = try soundmark("catalog", "add", "--catalog", one, path("b/01 Track.wav"))
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(try ids(one), ["01-track", "b-01-track"])
        // Names a slug cannot tell apart get a suffix.
        try tone("s/Track 1.wav", seed: 60)
        try tone("s/track_1.wav", seed: 61)
        let s = path("s.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", s, path("s")).status, 0)
        XCTAssertEqual(try ids(s), ["track-1", "track-1-2"])
    }

    // MARK: - 6. per-reference options and the metadata sidecar

    func testBatchRefusesSingleReferenceOptions() throws {
        try tone("f/x.wav", seed: 70)
        try tone("f/y.wav", seed: 71)
        let srt = try write("cues.srt", "1\n00:00:01,000 --> 00:00:02,000\nhello\n")
        for option in [["--title", "Same"], ["--annotations", srt], ["--id", "one"]] {
            let r = try soundmark(["catalog", "add", "--catalog", path("b.db")] + option + [path("f")])
            assertOneLineError(r, naming: "\(option[0]) is for one reference but 2 files were given")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path("b.db")))
    }

    private func soundmark(_ arguments: [String]) throws -> Result {
        let r = try run(try binary(), arguments)
        XCTAssertFalse(r.signalled, "crashed: \(r.stderr.prefix(400))")
        return r
    }

    func testMetadataCSVGivesEachFileItsOwnMetadata() throws {
        try tone("lib/one.wav", seed: 80)
        try tone("lib/two.wav", seed: 81)
        try tone("lib/three.wav", seed: 82)
        _ = try write("lib/one.srt", "1\n00:00:01,000 --> 00:00:02,000\nfirst cue\n")
        let csv = try write("lib/meta.csv", """
            path,id,title,artist,properties,annotations\r
            one.wav,first,"One, with a comma",Ann,label=demo;year=2020,one.srt\r
            two.wav,,"Two ""quoted""
            on two lines",Bob,,\r
            three.wav,third,Three,,mood=calm,\r

            """)
        let catalog = path("meta.db")
        let r = try soundmark("catalog", "add", "--catalog", catalog, "--metadata", csv)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try ids(catalog), ["first", "third", "two"])
        let show = try soundmark("catalog", "show", "--catalog", catalog, "--format", "json", "first")
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["title"] as? String, "One, with a comma")
        XCTAssertEqual(object["artist"] as? String, "Ann")
        XCTAssertEqual(object["properties"] as? [String: String], ["label": "demo", "year": "2020"])
        XCTAssertEqual((object["annotationList"] as? [[String: Any]])?.first?["text"] as? String, "first cue")
        let two = try soundmark("catalog", "show", "--catalog", catalog, "--format", "json", "two")
        let twoObject = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(two.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(twoObject["title"] as? String, "Two \"quoted\"\non two lines")

        // JSON sidecar with positional files: a row changes the title of an unchanged file without decoding.
        let json = try write("lib/meta.json", #"[{"path":"three.wav","id":"third","title":"Three (remaster)","properties":{"mood":"calm"}}]"#)
        let update = try soundmark("catalog", "add", "--catalog", catalog, "--metadata", json, path("lib/three.wav"))
        XCTAssertEqual(update.status, 0, update.stderr)
        XCTAssertTrue(update.stderr.hasPrefix("third: updated"), update.stderr)

        // Bad sidecars: one line naming the file and line.
        let unterminated = try write("bad.csv", "path,title\nx.wav,\"never closed\n")
        assertOneLineError(try soundmark("catalog", "add", "--catalog", catalog, "--metadata", unterminated), naming: "bad.csv:2: quoted field never closed")
        let unknown = try write("bad2.csv", "path,colour\nx.wav,red\n")
        assertOneLineError(try soundmark("catalog", "add", "--catalog", catalog, "--metadata", unknown), naming: "bad2.csv:1: unknown column 'colour'")
        let badProperty = try write("bad3.csv", "path,properties\nx.wav,novalue\n")
        assertOneLineError(try soundmark("catalog", "add", "--catalog", catalog, "--metadata", badProperty), naming: "bad3.csv:2: property 'novalue' is not key=value")
        let twice = try write("bad4.csv", "path,id\nx.wav,a\ny.wav,a\n")
        assertOneLineError(try soundmark("catalog", "add", "--catalog", catalog, "--metadata", twice), naming: "bad4.csv:3: id 'a' already used")
    }

    // MARK: - 7. unknown formats

    func testUnknownFormatsAreRefusedByEveryCommand() throws {
        let media = try tone("fmt.wav", seed: 90)
        let catalog = path("fmt.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        let events = try write("e.jsonl", "{\"time\":1}\n")
        for command in [["catalog", "list", "--catalog", catalog], ["catalog", "show", "--catalog", catalog, "fmt"],
                        ["identify", "--catalog", catalog, media], ["scan", "--catalog", catalog, media],
                        ["timeline", "merge", events], ["monitor", "--catalog", catalog, media]] {
            let r = try soundmark(command + ["--format", "xml"])
            assertOneLineError(r, naming: "--format is ")
            XCTAssertTrue(r.stderr.contains("got 'xml'"), r.stderr)
        }
        assertOneLineError(try soundmark("scan", "--catalog", catalog, "--cues", "all", media), naming: "--cues is annotations or segments, got 'all'")
    }

    // MARK: - 8. re-adding unchanged files

    func testReAddingSkipsUnchangedFilesWithoutDecodingAndShowsProgressOnlyWhenAsked() throws {
        try tone("re/a.wav", seed: 100)
        try tone("re/b.wav", seed: 101)
        let catalog = path("re.db")
        let first = try soundmark("catalog", "add", "--catalog", catalog, path("re"))
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertFalse(first.stderr.contains("progress"), first.stderr)
        // Proof that a skip decodes nothing: same size and time but bytes no decoder reads.
        let original = try FileManager.default.attributesOfItem(atPath: path("re/a.wav"))
        let size = try XCTUnwrap(original[.size] as? Int)
        try Data(repeating: 0x5A, count: size).write(to: URL(fileURLWithPath: path("re/a.wav")))
        try FileManager.default.setAttributes([.modificationDate: original[.modificationDate]!], ofItemAtPath: path("re/a.wav"))
        let second = try soundmark("catalog", "add", "--catalog", catalog, "--progress", path("re"))
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(second.stderrLines, [
            "progress: 0/2 files, 0 %: \(path("re/a.wav"))",
            "a: skipped (already in the catalog, unchanged) 4.0 s, \(path("re/a.wav"))",
            "progress: 1/2 files, 50 %: \(path("re/b.wav"))",
            "b: skipped (already in the catalog, unchanged) 4.0 s, \(path("re/b.wav"))",
        ])
        // A copy under another name: same content digest, skipped as a duplicate without decoding.
        try FileManager.default.copyItem(atPath: path("re/b.wav"), toPath: path("copy.wav"))
        let copy = try soundmark("catalog", "add", "--catalog", catalog, path("copy.wav"))
        XCTAssertEqual(copy.stderr, "copy: skipped (same audio as 'b') 4.0 s, \(path("copy.wav"))\n")
        // Touched (new time, same bytes): still skipped, and the new time is stored.
        let later = Date().addingTimeInterval(60)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: path("re/b.wav"))
        let touched = try soundmark("catalog", "add", "--catalog", catalog, path("re/b.wav"))
        XCTAssertTrue(touched.stderr.hasPrefix("b: skipped (already in the catalog, unchanged)"), touched.stderr)
        // Changed content: fingerprinted again.
        try tone("re/b.wav", seed: 102)
        let changed = try soundmark("catalog", "add", "--catalog", catalog, path("re/b.wav"))
        // (A 4 s chirp is too short for scan at this catalog's size: catalog add warns so first.)
        XCTAssertTrue(changed.stderrLines.contains { $0.hasPrefix("b: replaced (new audio)") }, changed.stderr)
    }

    // MARK: - 16. small ones

    func testAnnotateOnADirectoryNamesTheCause() throws {
        let media = try tone("d.wav", seed: 110)
        let catalog = path("d.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        try FileManager.default.createDirectory(atPath: path("folder"), withIntermediateDirectories: true)
        let r = try soundmark("catalog", "annotate", "--catalog", catalog, "d", path("folder"))
        assertOneLineError(r, naming: "\(path("folder")): cannot read annotation file: is a directory")
    }

    func testReadOnlyOpenLeavesNoSharedMemoryFile() throws {
        let media = try tone("r.wav", seed: 120)
        let catalog = path("ro.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: catalog)
        XCTAssertEqual(try soundmark("catalog", "list", "--catalog", catalog).status, 0)
        XCTAssertEqual(try soundmark("identify", "--catalog", catalog, media).status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: catalog + "-shm"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: catalog + "-wal"))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: catalog)
        XCTAssertEqual(try soundmark("catalog", "remove", "--catalog", catalog, "r").status, 0)
        XCTAssertEqual(try ids(catalog), [])
    }

    func testFlippedBitInPostingsIsReportedWithTheReference() throws {
        let media = try tone("crc.wav", seed: 130)
        let catalog = path("crc.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        let sqlite = "/usr/bin/sqlite3"
        guard FileManager.default.isExecutableFile(atPath: sqlite) else { throw XCTSkip("no sqlite3 CLI") }
        // Flip the lowest bit of the blob's 10th byte.
        let hex = try run(sqlite, [catalog, "SELECT hex(postings) FROM reference"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes = Array(hex.utf8)
        XCTAssertGreaterThan(bytes.count, 20)
        let digit = Int(String(UnicodeScalar(bytes[19])), radix: 16)! ^ 1
        bytes[19] = Array(String(digit, radix: 16, uppercase: true).utf8)[0]
        let flip = try run(sqlite, [catalog, "UPDATE reference SET postings = x'\(String(decoding: bytes, as: UTF8.self))'"])
        XCTAssertEqual(flip.status, 0, flip.stderr)
        // The index file built by the add still holds the intact postings: matching goes on.
        let indexed = try soundmark("identify", "--catalog", catalog, media)
        XCTAssertEqual(indexed.status, 0, indexed.stderr)
        XCTAssertTrue(indexed.stdout.contains("(crc)"), indexed.stdout)
        // Rebuilding it reads the damaged blob: a one-line error naming the reference.
        try FileManager.default.removeItem(atPath: catalog + ".index")
        let r = try soundmark("identify", "--catalog", catalog, media)
        assertOneLineError(r, naming: "postings of reference 'crc' fail their CRC-32 check")
        XCTAssertFalse(FileManager.default.fileExists(atPath: catalog + ".index"))
    }

    // MARK: - 11. legacy encodings

    /// The annotation texts stored for `id`, read back through `catalog show --format json`.
    private func storedTexts(_ catalog: String, _ id: String) throws -> [String] {
        let show = try soundmark("catalog", "show", "--catalog", catalog, "--format", "json", id)
        XCTAssertEqual(show.status, 0, show.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        return (object["annotationList"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
    }

    func testLegacyEncodedSubtitlesAreDetected() throws {
        let media = try tone("enc.wav", seed: 140)
        let catalog = path("enc.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        // Bytes written by iconv (the same files a Windows subtitle editor writes).
        let samples: [(String, String)] = [
            ("CP1250", "Příliš žluťoučký kůň úpěl ďábelské ódy."),
            ("CP1256", "سلام دنيا، اين يک آزمايش است."),
            ("CP949", "안녕하세요 세계, 이것은 시험입니다."),
            ("CP1251", "Съешь же ещё этих мягких французских булок."),
            ("SHIFT_JIS", "こんにちは世界、これはテストです。"),
        ]
        for (encoding, text) in samples {
            let utf8 = try write("\(encoding).utf8.srt", "1\n00:00:01,000 --> 00:00:02,000\n\(text)\n")
            let converted = path("\(encoding).srt")
            let iconv = try run("/usr/bin/iconv", ["-f", "UTF-8", "-t", encoding, utf8, "-o", converted])
            XCTAssertEqual(iconv.status, 0, iconv.stderr)
            let r = try soundmark("catalog", "annotate", "--catalog", catalog, "enc", converted)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stderr, "enc: 1 annotation(s) stored\n", "\(encoding): a sure guess needs no warning")
            XCTAssertEqual(try storedTexts(catalog, "enc"), [text], encoding)
            // And named explicitly.
            let named = try soundmark("catalog", "annotate", "--catalog", catalog, "--encoding", encoding.lowercased(), "enc", converted)
            XCTAssertEqual(named.status, 0, named.stderr)
            XCTAssertEqual(try storedTexts(catalog, "enc"), [text], encoding)
        }
        // One byte that several code pages read as different letters: a doubtful guess is said.
        let doubtful = path("doubtful.srt")
        try Data("1\n00:00:01,000 --> 00:00:02,000\nx\u{E8}\n".utf8.map { $0 }.filter { $0 < 0x80 } + [0xE8, 0x0A]).write(to: URL(fileURLWithPath: doubtful))
        let guess = try soundmark("catalog", "annotate", "--catalog", catalog, "enc", doubtful)
        XCTAssertEqual(guess.status, 0, guess.stderr)
        XCTAssertTrue(guess.stderr.hasPrefix("soundmark: warning: \(doubtful): not UTF-8; text encoding guessed as "), guess.stderr)
        XCTAssertTrue(guess.stderr.contains("pass --encoding"), guess.stderr)
        // Bytes the named encoding does not define, and unknown names.
        assertOneLineError(try soundmark("catalog", "annotate", "--catalog", catalog, "--encoding", "cp949", "enc", doubtful),
                           naming: "doubtful.srt: not valid CP949 text")
        assertOneLineError(try soundmark("catalog", "annotate", "--catalog", catalog, "--encoding", "klingon", "enc", doubtful),
                           naming: "unknown --encoding 'klingon'")
    }

    // MARK: - 12. ASS/SSA

    func testASSSubtitlesAreReadAndWritten() throws {
        let media = try tone("ass.wav", seed: 150, seconds: 8)
        let catalog = path("ass.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        let ass = try write("in.ass", """
            [Script Info]
            Title: test
            ScriptType: v4.00+

            [V4+ Styles]
            Format: Name, Fontname, Fontsize
            Style: Default,Arial,20

            [Events]
            Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
            Dialogue: 0,0:00:01.50,0:00:03.00,Default,,0,0,0,,{\\i1}Hello{\\i0}, world\\Nsecond line
            Comment: 0,0:00:02.00,0:00:03.00,Default,,0,0,0,,not shown
            Dialogue: 0,0:00:04.00,0:00:05.25,Default,,0,0,0,,{\\pos(10,10)}a, b, c
            Dialogue: 0,0:00:09.00,0:00:08.00,Default,,0,0,0,,backwards

            """)
        let r = try soundmark("catalog", "annotate", "--catalog", catalog, "ass", ass)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, """
            soundmark: warning: \(ass):14: skipped event: end time 0:00:08.00 is before start time 0:00:09.00
            ass: 2 annotation(s) stored

            """)
        XCTAssertEqual(try storedTexts(catalog, "ass"), ["{\\i1}Hello{\\i0}, world\nsecond line", "{\\pos(10,10)}a, b, c"])
        let scan = try soundmark("scan", "--catalog", catalog, "--format", "ass", "--cues", "annotations", media)
        XCTAssertEqual(scan.status, 0, scan.stderr)
        XCTAssertTrue(scan.stdout.hasPrefix("[Script Info]\nScriptType: v4.00+\n"), scan.stdout)
        let events = scan.stdout.split(separator: "\n").filter { $0.hasPrefix("Dialogue:") }
        XCTAssertEqual(events.count, 2, scan.stdout)
        XCTAssertTrue(events[0].hasSuffix(",Default,,0,0,0,,{\\i1}Hello{\\i0}, world\\Nsecond line"), String(events[0]))
        // FFmpeg reads it back.
        let written = try write("out.ass", scan.stdout)
        let ffmpeg = try run("/usr/bin/ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", written, "-f", "srt", "-"])
        XCTAssertEqual(ffmpeg.status, 0, ffmpeg.stderr)
        XCTAssertTrue(ffmpeg.stdout.replacingOccurrences(of: "\r", with: "").contains("00:00:01,500 --> 00:00:03,000\n<i>Hello</i>, world\nsecond line\n"), ffmpeg.stdout)
    }

    func testUnsupportedSubtitleFormatsAreNamed() throws {
        let media = try tone("u.wav", seed: 160)
        let catalog = path("u.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        for (name, content, format) in [("a.ttml", "<?xml version=\"1.0\"?>\n<tt xmlns=\"http://www.w3.org/ns/ttml\"></tt>\n", "TTML/XML"),
                                        ("a.smi", "<SAMI>\n<BODY></BODY>\n</SAMI>\n", "SAMI"),
                                        ("a.sub", "{1}{25}Hello\n{26}{50}World\n", "MicroDVD/MPL2"),
                                        ("a.lrc", "[00:12.00]la la la\n", "LRC lyrics")] {
            let file = try write(name, content)
            let r = try soundmark("catalog", "annotate", "--catalog", catalog, "u", file)
            assertOneLineError(r, naming: "\(file): \(format) is not a supported annotation format")
            XCTAssertFalse(r.stderr.contains("invalid JSON"), r.stderr)
        }
    }

    // MARK: - 14. the query side of a match

    func testIdentifyReportsTheMatchedStretchOfTheQuery() throws {
        let samples = Self.root.appendingPathComponent("samples/references/wesnoth-knolls.ogg").path
        let jingle = path("jingle.wav"), silence = path("silence.wav"), clip = path("clip.wav")
        XCTAssertEqual(try run("/usr/bin/ffmpeg", ["-loglevel", "error", "-y", "-ss", "20", "-t", "6", "-i", samples,
                                                   "-ar", "8000", "-ac", "1", jingle]).status, 0)
        XCTAssertEqual(try run("/usr/bin/sox", ["-n", "-r", "8000", "-c", "1", silence, "trim", "0", "2"]).status, 0)
        XCTAssertEqual(try run("/usr/bin/sox", [silence, jingle, clip]).status, 0)
        let catalog = path("jingle.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, jingle).status, 0)
        let r = try soundmark("identify", "--catalog", catalog, "--format", "json", clip)
        XCTAssertEqual(r.status, 0, r.stderr)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let match = try XCTUnwrap((object["matches"] as? [[String: Any]])?.first)
        let value = { (key: String) -> Double in (match[key] as? NSNumber)?.doubleValue ?? .nan }
        XCTAssertEqual(value("matchOffset"), -2, accuracy: 0.02)
        XCTAssertEqual(value("queryStart"), 2, accuracy: 0.1)         // the jingle starts 2 s into the clip
        XCTAssertEqual(value("queryEnd"), 7.8, accuracy: 0.2)         // and lasts to its end (8 s, less the last landmark's reach)
        XCTAssertEqual(value("referenceStart"), 0, accuracy: 0.1)
        XCTAssertEqual(value("referenceEnd"), value("queryEnd") - 2, accuracy: 0.02)
    }

    func testCatalogFromBeforeChecksumsIsReadThenMigrated() throws {
        let media = try tone("old.wav", seed: 170)
        let catalog = path("old.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        let sqlite = "/usr/bin/sqlite3"
        guard FileManager.default.isExecutableFile(atPath: sqlite) else { throw XCTSkip("no sqlite3 CLI") }
        let downgrade = try run(sqlite, [catalog, """
            DROP INDEX reference_file; ALTER TABLE reference DROP COLUMN postings_crc; ALTER TABLE reference DROP COLUMN file_size;
            ALTER TABLE reference DROP COLUMN file_mtime; ALTER TABLE reference DROP COLUMN file_digest;
            """])
        XCTAssertEqual(downgrade.status, 0, downgrade.stderr)
        XCTAssertEqual(try ids(catalog), ["old"])                       // read-only: read as it is
        XCTAssertEqual(try soundmark("identify", "--catalog", catalog, media).status, 0)
        let columns = { try self.run(sqlite, [catalog, "SELECT count(*) FROM pragma_table_info('reference') WHERE name = 'postings_crc'"]).stdout }
        XCTAssertEqual(try columns(), "0\n")
        let readd = try soundmark("catalog", "add", "--catalog", catalog, media)   // writable: migrated, checksums filled in
        XCTAssertEqual(readd.status, 0, readd.stderr)
        XCTAssertEqual(try columns(), "1\n")
        let crc = try run(sqlite, [catalog, "SELECT postings_crc IS NOT NULL FROM reference"]).stdout
        XCTAssertEqual(crc, "1\n")
        XCTAssertEqual(try soundmark("identify", "--catalog", catalog, media).status, 0)
    }

    /// Helper-found: a clip whose channels are in antiphase (left = −right, one polarity
    /// inverted: a miswired cable, a broadcast chain's fault) matched nothing, its sum being
    /// silence. 10 s of the sample knolls from 10 s, mono, as left and inverted right (WAV and
    /// MP3): found at 10 s with a warning that says so; the same with both channels in phase:
    /// found, no warning.
    func testAClipWithAnInvertedChannelIsMatched() throws {
        let knolls = Self.root.appendingPathComponent("samples/references/wesnoth-knolls.ogg").path
        let catalog = path("phase.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, knolls).status, 0)
        for (name, pan, inverted) in [("anti.wav", "c1=-1*c0", true), ("anti.mp3", "c1=-1*c0", true), ("plain.wav", "c1=c0", false)] {
            let clip = path(name)
            let made = try run("/usr/bin/ffmpeg", ["-hide_banner", "-nostdin", "-loglevel", "error", "-y", "-ss", "10", "-t", "10", "-i", knolls,
                                                  "-af", "pan=mono|c0=0.5*c0+0.5*c1,pan=stereo|c0=c0|\(pan)", clip])
            XCTAssertEqual(made.status, 0, made.stderr)
            let r = try soundmark("identify", "--catalog", catalog, "--format", "json", clip)
            XCTAssertEqual(r.status, 0, "\(name): \(r.stderr)")
            let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            let first = (json?["matches"] as? [[String: Any]])?.first
            XCTAssertEqual((first?["reference"] as? [String: Any])?["id"] as? String, "wesnoth-knolls", name)
            XCTAssertEqual(first?["matchOffset"] as? Double ?? -1, 10, accuracy: 0.05, name)
            XCTAssertEqual(r.stderr.contains("out of phase"), inverted, "\(name): \(r.stderr)")
        }
    }

    /// Issue 40: a catalog this user may read but not write (another user's file; a read-only
    /// folder or mount behaves alike). Adding, removing and upgrading said "cannot read catalog:
    /// attempt to write a readonly database" although the catalog was read; they now say it is
    /// read-only for this user, exit 2, and change nothing, while identify still reads it. Run
    /// as `nobody` (root is not held back by permissions); skipped where that cannot be done.
    func testCommandsThatWriteSayTheCatalogIsReadOnly() throws {
        let runuser = "/usr/sbin/runuser"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: runuser) else {
            throw XCTSkip("needs root and runuser to run as an unprivileged user")
        }
        let media = try tone("first.wav", seed: 181), other = try tone("second.wav", seed: 182)
        let catalog = path("shared.db")
        XCTAssertEqual(try soundmark("catalog", "add", "--catalog", catalog, media).status, 0)
        _ = try run("/bin/chmod", ["-R", "a+rX", directory.path])
        let bin = try binary()
        let probe = try run(runuser, ["-u", "nobody", "--", bin, "--version"])
        guard probe.status == 0 else { throw XCTSkip("user nobody cannot run \(bin): \(probe.stderr.prefix(200))") }
        for command in [["catalog", "add", "--catalog", catalog, other], ["catalog", "remove", "--catalog", catalog, "first"],
                        ["catalog", "upgrade", "--catalog", catalog]] {
            let r = try run(runuser, ["-u", "nobody", "--", bin] + command)
            let name = command.prefix(2).joined(separator: " ")
            XCTAssertEqual(r.status, 2, "\(name): \(r.stderr)")
            XCTAssertEqual(r.stderrLines.count, 1, "\(name): \(r.stderr)")
            XCTAssertTrue(r.stderr.hasPrefix("soundmark: \(catalog): cannot write catalog: it is read-only for this user"), "\(name): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("cannot read"), "\(name): \(r.stderr)")
        }
        XCTAssertEqual(try ids(catalog), ["first"])
        let identify = try run(runuser, ["-u", "nobody", "--", bin, "identify", "--catalog", catalog, media])
        XCTAssertEqual(identify.status, 0, identify.stderr)
        XCTAssertTrue(identify.stdout.contains("(first)"), identify.stdout)
    }
}
