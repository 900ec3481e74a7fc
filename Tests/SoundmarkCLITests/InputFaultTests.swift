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

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        var signalled: Bool
        /// stderr split into lines (a final newline does not start another line).
        var stderrLines: [Substring] {
            guard !stderr.isEmpty else { return [] }
            return Array(stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stderr.hasSuffix("\n") ? 1 : 0))
        }
    }

    private func binary() throws -> String {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["SOUNDMARK_BIN"], !env.isEmpty { candidates.append(env) }
        var bundleDir = Bundle.main.bundleURL
        while bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        candidates.append(bundleDir.appendingPathComponent("soundmark").path)
        candidates.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("soundmark").path)
        candidates.append(Self.root.appendingPathComponent(".build/debug/soundmark").path)
        for c in candidates where FileManager.default.isExecutableFile(atPath: c) { return c }
        throw XCTSkip("soundmark binary not found (tried \(candidates.joined(separator: ", ")))")
    }

    /// Runs `executable` in the test directory; stdout and stderr go to files (no pipe can block).
    @discardableResult
    private func run(_ executable: String, _ arguments: [String], in cwd: URL? = nil) throws -> Result {
        let out = directory.appendingPathComponent(".out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent(".err-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.currentDirectoryURL = cwd ?? directory
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Result(status: p.terminationStatus,
                      stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "",
                      signalled: p.terminationReason == .uncaughtSignal)
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
}
