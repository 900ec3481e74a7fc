import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// End-to-end tests of `soundmark monitor` on the built binary: files, stdin, UDP, HTTP, HLS,
/// SIGTERM and reconnects. Network tests use loopback (127.0.0.1) only; every child process is
/// bounded in time and killed by its pid when it overstays.
final class MonitorTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let recording = root.appendingPathComponent("samples/recording.mp3").path
    /// The set-list of samples/recording.mp3, in order.
    private static let expectedMaterials = ["wesnoth-knolls", "supertux-chipdisko", "wesnoth-battle",
                                            "wesnoth-the-dangerous-symphony"]

    /// The binary: `$SOUNDMARK_BIN`, else the one built next to this test bundle, else
    /// `<package>/.build/debug/soundmark`, else `/tmp/mon-build/debug/soundmark`.
    private static let binary: String = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["SOUNDMARK_BIN"], !env.isEmpty { return env }
        let bundleDir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        let candidates = [bundleDir + "/soundmark", root.path + "/.build/debug/soundmark", "/tmp/mon-build/debug/soundmark"]
        return candidates.first { fm.isExecutableFile(atPath: $0) } ?? candidates[1]
    }()

    /// Scratch directory of the whole class (catalog, served files, scripts).
    private static let work = FileManager.default.temporaryDirectory.appendingPathComponent("monitor-tests-\(UUID().uuidString)")
    /// The catalog of samples/references, built once.
    nonisolated(unsafe) private static var catalogPath: String?

    override class func setUp() {
        super.setUp()
        signal(SIGPIPE, SIG_IGN) // writing to a child that exited must not kill the test runner
        try? FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    }

    override class func tearDown() {
        try? FileManager.default.removeItem(at: work)
        super.tearDown()
    }

    override func setUpWithError() throws {
        try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: Self.binary), "no soundmark binary at \(Self.binary)")
    }

    // MARK: - helpers

    /// A child process whose stdout lines are collected as they arrive.
    private final class Child: @unchecked Sendable {
        let process = Process()
        private let condition = NSCondition()
        private var lines: [String] = []
        private var pending = Data()
        private var stderrData = Data()
        private var openPipes = 2
        private var stdoutClosed = false

        /// Starts `executable` with `arguments`; stdin is `input` (a Pipe or FileHandle) or /dev/null.
        init(_ executable: String, _ arguments: [String], input: Any? = nil) throws {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let out = Pipe(), err = Pipe()
            process.standardOutput = out
            process.standardError = err
            process.standardInput = input ?? FileHandle.nullDevice
            try process.run()
            Thread { [self] in
                while true {
                    let data = out.fileHandleForReading.availableData
                    condition.lock()
                    if data.isEmpty {
                        if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
                        stdoutClosed = true
                        openPipes -= 1
                        condition.broadcast()
                        condition.unlock()
                        return
                    }
                    pending.append(data)
                    while let nl = pending.firstIndex(of: 0x0A) {
                        lines.append(String(decoding: pending[pending.startIndex..<nl], as: UTF8.self))
                        pending = Data(pending[(nl + 1)...])
                    }
                    condition.broadcast()
                    condition.unlock()
                }
            }.start()
            Thread { [self] in
                let data = err.fileHandleForReading.readDataToEndOfFile()
                condition.lock()
                stderrData = data
                openPipes -= 1
                condition.broadcast()
                condition.unlock()
            }.start()
        }

        /// The stdout lines so far.
        var output: [String] {
            condition.lock()
            defer { condition.unlock() }
            return lines
        }

        /// Waits until a stdout line satisfies `predicate`; nil after `timeout` seconds or at EOF.
        func waitForLine(timeout: Double, _ predicate: (String) -> Bool) -> String? {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let line = lines.first(where: predicate) { return line }
                if stdoutClosed { return nil }
                if !condition.wait(until: deadline) { return lines.first(where: predicate) }
            }
        }

        /// Waits for the process to exit (SIGKILL after `timeout` seconds); returns its status,
        /// whether it exited normally (not by a signal) and its stdout lines and stderr.
        func finish(timeout: Double) -> (status: Int32, exited: Bool, lines: [String], stderr: String, timedOut: Bool) {
            let deadline = Date(timeIntervalSinceNow: timeout)
            var timedOut = false
            while process.isRunning {
                if Date() > deadline {
                    kill(process.processIdentifier, SIGKILL)
                    timedOut = true
                    break
                }
                usleep(20_000)
            }
            process.waitUntilExit()
            condition.lock()
            let drained = Date(timeIntervalSinceNow: 5)
            while openPipes > 0 && condition.wait(until: drained) {}
            let result = (process.terminationStatus, process.terminationReason == .exit, lines,
                          String(decoding: stderrData, as: UTF8.self), timedOut)
            condition.unlock()
            return result
        }

        /// Sends `signal` to the process (by its pid).
        func send(_ signal: Int32) { kill(process.processIdentifier, signal) }
    }

    /// Runs the binary to completion (bounded by `timeout`).
    private func run(_ arguments: [String], input: Any? = nil, timeout: Double = 60)
        throws -> (status: Int32, exited: Bool, lines: [String], stderr: String, timedOut: Bool) {
        try Child(Self.binary, arguments, input: input).finish(timeout: timeout)
    }

    /// The catalog of samples/references (built on first use).
    private func catalog() throws -> String {
        if let path = Self.catalogPath { return path }
        let path = Self.work.appendingPathComponent("catalog.db").path
        let result = try run(["catalog", "add", "--catalog", path, Self.root.appendingPathComponent("samples/references").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        Self.catalogPath = path
        return path
    }

    /// Parses event lines (failing on anything that is not a JSON object with an `event`).
    private func events(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) -> [[String: Any]] {
        lines.compactMap { text in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
                  object["event"] is String else {
                XCTFail("not a JSON event line: \(text)", file: file, line: line)
                return nil
            }
            return object
        }
    }

    /// Material ids of the `segment.started` events in order, with consecutive repeats merged
    /// (the live scanner may announce a second, short alignment of the same reference at a
    /// crossfade, which `scan` later drops as covered by the stronger one).
    private func startedMaterials(_ events: [[String: Any]]) -> [String] {
        var ids: [String] = []
        for e in events where e["event"] as? String == "segment.started" {
            let id = e["material_id"] as? String ?? "?"
            if ids.last != id { ids.append(id) }
        }
        return ids
    }

    /// Checks the invariants of every run: an `ended` for every `started` (same activity_id,
    /// later line), unique started ids, no event after `stream.ended`, which comes last.
    private func checkStructure(_ events: [[String: Any]], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(events.last?["event"] as? String, "stream.ended", "last event", file: file, line: line)
        XCTAssertEqual(events.filter { $0["event"] as? String == "stream.ended" }.count, 1, file: file, line: line)
        var started: [String: Int] = [:], ended: [String: Int] = [:]
        for (i, e) in events.enumerated() {
            let kind = e["event"] as? String ?? ""
            guard kind.hasPrefix("segment.") else { continue }
            guard let id = e["activity_id"] as? String, e["material_id"] is String, e["time"] is Double || e["time"] is Int,
                  e["start"] != nil, e["end"] != nil, e["position"] != nil, e["referenceStart"] != nil,
                  e["frequencySkew"] != nil, e["confidence"] != nil else {
                XCTFail("incomplete segment event \(e)", file: file, line: line)
                continue
            }
            switch kind {
            case "segment.started":
                XCTAssertNil(started[id], "activity id \(id) started twice", file: file, line: line)
                started[id] = i
            case "segment.ended":
                XCTAssertNil(ended[id], "activity id \(id) ended twice", file: file, line: line)
                ended[id] = i
            default:
                XCTAssertNotNil(started[id], "refined before started: \(id)", file: file, line: line)
            }
        }
        XCTAssertEqual(Set(started.keys), Set(ended.keys), "every started has an ended", file: file, line: line)
        // No event lies past the end of the stream (issue 8.11).
        let streamEnd = number(events.last?["time"]) ?? -1
        for e in events {
            for key in ["time", "start", "end"] {
                guard let value = number(e[key]) else { continue }
                XCTAssertLessThanOrEqual(value, streamEnd, "\(key) past the stream's end: \(e)", file: file, line: line)
            }
        }
        for (id, s) in started { if let e = ended[id] { XCTAssertLessThan(s, e, "\(id) ended before started", file: file, line: line) } }
    }

    /// A JSON number (integer or not) as a Double.
    private func number(_ value: Any?) -> Double? {
        (value as? Double) ?? (value as? Int).map(Double.init) ?? (value as? NSNumber)?.doubleValue
    }

    /// Runs `soundmark timeline merge` on monitor output lines; returns its stdout.
    private func merge(_ lines: [String], format: String = "json") throws -> String {
        let input = Pipe()
        let merge = try Child(Self.binary, ["timeline", "merge", "--format", format, "-"], input: input)
        input.fileHandleForWriting.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let merged = merge.finish(timeout: 30)
        XCTAssertEqual(merged.status, 0, merged.stderr)
        return merged.lines.joined(separator: "\n")
    }

    /// Makes a WAV file (16 kHz mono) of `parts`: ("silence"|"noise", seconds) or (reference file
    /// name, "start+length").
    private func makeRecording(_ name: String, _ parts: [(String, String)]) throws -> String {
        let path = Self.work.appendingPathComponent(name).path
        var inputs: [String] = [], labels = ""
        for (i, (what, span)) in parts.enumerated() {
            switch what {
            case "silence": inputs += ["-f", "lavfi", "-t", span, "-i", "anullsrc=r=16000:cl=mono"]
            case "noise": inputs += ["-f", "lavfi", "-t", span, "-i", "anoisesrc=color=pink:amplitude=0.1:sample_rate=16000"]
            default:
                let bounds = span.split(separator: "+").map(String.init)
                inputs += ["-ss", bounds[0], "-t", bounds[1], "-i", Self.root.appendingPathComponent("samples/references/\(what)").path]
            }
            labels += "[\(i):a]aresample=16000,aformat=channel_layouts=mono[p\(i)];"
        }
        let chain = labels + (0..<parts.count).map { "[p\($0)]" }.joined() + "concat=n=\(parts.count):v=0:a=1"
        let made = try run0("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-y"] + inputs
                            + ["-filter_complex", chain, "-ar", "16000", "-ac", "1", path])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// Runs any program to completion (bounded by `timeout`).
    private func run0(_ executable: String, _ arguments: [String], timeout: Double = 60)
        throws -> (status: Int32, exited: Bool, lines: [String], stderr: String, timedOut: Bool) {
        try Child(executable, arguments).finish(timeout: timeout)
    }

    /// A loopback HTTP server playing `path` (a CBR MP3 of 192-byte frames, 48 kHz) live: its
    /// clock starts at the first request, every connection gets the audio of the moment from
    /// then on, in real time. During `[drop, drop + outage)` it closes the connection and
    /// refuses new ones; it refuses every request once the file has been played. It prints
    /// `port N`, then `start <Unix time>` at the first request. `delay`: seconds before it listens;
    /// `block`: it sends the audio in blocks of that many seconds, each once its last frame is
    /// live (as an encoder's output buffer does; audio of an unfinished block is lost at a drop).
    private func startLiveServer(_ path: String, drops: [Double], outage: Double, port: Int = 0, delay: Double = 0,
                                 block: Double = 0) throws -> (Child, Int) {
        let script = Self.work.appendingPathComponent("live-server.py")
        try """
        import socket, sys, time
        data = open(sys.argv[1], "rb").read()
        drops = [float(x) for x in sys.argv[2].split(",") if x]
        outage = float(sys.argv[3])
        time.sleep(float(sys.argv[5]))
        FRAME, FPS = 192, 48000 / 1152
        BLOCK = max(1, int(float(sys.argv[6]) * FPS))
        total = len(data) // FRAME
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", int(sys.argv[4])))
        srv.listen(8)
        print("port", srv.getsockname()[1], flush=True)
        t0 = None
        def live(): return time.time() - t0
        def down(t): return any(d <= t < d + outage for d in drops)
        while True:
            conn, _ = srv.accept()
            request = b""
            while b"\\r\\n\\r\\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                request += chunk
            if t0 is None:
                t0 = time.time()
                print("start %.3f" % t0, flush=True)
            t = live()
            if down(t) or t * FPS >= total:
                conn.close()
                continue
            try:
                conn.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Type: audio/mpeg\\r\\n\\r\\n")
                index = int(t * FPS)
                while not down(live()) and index < total:
                    target = min(int(live() * FPS) + 1, total)
                    if index < target and (target - index >= BLOCK or target >= total):
                        conn.sendall(data[index * FRAME:target * FRAME])
                        index = target
                    time.sleep(0.02)
            except OSError:
                pass
            conn.close()
        """.write(to: script, atomically: true, encoding: .utf8)
        let server = try Child("/usr/bin/env", ["python3", "-u", script.path, path, drops.map { String($0) }.joined(separator: ","),
                                                String(outage), String(port), String(delay), String(block)])
        if port != 0 { return (server, port) }
        guard let line = server.waitForLine(timeout: 10, { $0.hasPrefix("port ") }), let found = Int(line.dropFirst(5)) else {
            server.send(SIGKILL)
            throw XCTSkip("the live server did not start")
        }
        return (server, found)
    }

    /// The first `seconds` of samples/recording.mp3 as a live-servable MP3 (48 kHz, 64 kbit/s CBR,
    /// no ID3 or Xing header: 192-byte frames of 24 ms).
    private func liveMP3(seconds: Int) throws -> String {
        let path = Self.work.appendingPathComponent("live-\(seconds).mp3").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let made = try run0("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-y", "-t", String(seconds), "-i", Self.recording,
                                            "-ar", "48000", "-ac", "1", "-c:a", "libmp3lame", "-b:a", "64k", "-write_xing", "0",
                                            "-id3v2_version", "0", path])
        XCTAssertEqual(made.status, 0, made.stderr)
        return path
    }

    /// A stdin pipe fed from `path` by a background thread: `chunk` bytes every `interval`
    /// seconds until the data runs out (then closed) or ``stop()`` (then kept open until ``close()``).
    private final class Feeder: @unchecked Sendable {
        let pipe = Pipe()
        private let lock = NSLock()
        private var stopped = false
        private var closed = false

        init(path: String, chunk: Int, interval: Double) throws {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let fd = pipe.fileHandleForWriting.fileDescriptor
            Thread { [self] in
                var offset = 0
                while offset < data.count {
                    if isStopped { return }
                    let n = min(chunk, data.count - offset)
                    let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, n) }
                    if written <= 0 { break }
                    offset += written
                    if interval > 0 { usleep(UInt32(interval * 1e6)) }
                }
                close()
            }.start()
        }

        private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

        /// Stops writing but keeps the pipe open (a stalled producer).
        func stop() { lock.lock(); stopped = true; lock.unlock() }

        /// Closes the pipe's write end (once).
        func close() {
            lock.lock()
            defer { lock.unlock() }
            if !closed { closed = true; try? pipe.fileHandleForWriting.close() }
        }
    }

    /// A free local port of `type` (SOCK_DGRAM or SOCK_STREAM) on 127.0.0.1.
    private func freePort(_ type: Int32) throws -> Int {
        let fd = socket(AF_INET, type, 0)
        guard fd >= 0 else { throw XCTSkip("no socket") }
        defer { Glibc.close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Int32 in
                guard bind(fd, sa, len) == 0 else { return -1 }
                return getsockname(fd, sa, &len)
            }
        }
        guard bound == 0 else { throw XCTSkip("cannot bind a local port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Starts `python3 -m http.server` on 127.0.0.1 serving `directory`; returns it and its port.
    private func startHTTPServer(_ directory: URL) throws -> (Child, Int) {
        let server = try Child("/usr/bin/env", ["python3", "-u", "-m", "http.server", "--bind", "127.0.0.1",
                                                "--directory", directory.path, "0"])
        guard let line = server.waitForLine(timeout: 10, { $0.contains(" port ") }),
              let port = line.components(separatedBy: " port ").last?.split(separator: " ").first.flatMap({ Int($0) }) else {
            server.send(SIGKILL)
            throw XCTSkip("python3 http.server did not start")
        }
        return (server, port)
    }

    // MARK: - tests

    func testFileEventsMatchScan() throws {
        let catalog = try catalog()
        let result = try run(["monitor", "--catalog", catalog, Self.recording], timeout: 60)
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        XCTAssertEqual(startedMaterials(events), Self.expectedMaterials)
        XCTAssertEqual(events.filter { $0["event"] as? String == "stream.ended" }.first?["time"] as? Double ?? 0, 158, accuracy: 0.5)

        // Segment boundaries agree with `scan` within ±1 s.
        let scan = try run(["scan", "--catalog", catalog, "--format", "json", Self.recording])
        XCTAssertEqual(scan.status, 0, scan.stderr)
        let scanJSON = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(scan.lines.joined(separator: "\n").utf8)) as? [String: Any])
        let segments = try XCTUnwrap(scanJSON["segments"] as? [[String: Any]])
        XCTAssertEqual(segments.count, 4)
        let ended = events.filter { $0["event"] as? String == "segment.ended" }
        for s in segments {
            let id = (s["reference"] as? [String: Any])?["id"] as? String
            let start = s["start"] as? Double ?? -1, end = s["end"] as? Double ?? -1
            let match = ended.first { e in
                e["material_id"] as? String == id && abs((e["start"] as? Double ?? -99) - start) <= 1
                    && abs((e["end"] as? Double ?? -99) - end) <= 1
            }
            XCTAssertNotNil(match, "no ended event for \(id ?? "?") \(start)–\(end) within ±1 s; ended: \(ended)")
        }
        // position is the reference time at `time`; started's time is the segment's start.
        for e in events where e["event"] as? String == "segment.started" {
            XCTAssertEqual(e["time"] as? Double ?? -1, e["start"] as? Double ?? -2, accuracy: 1e-9)
            XCTAssertEqual(e["position"] as? Double ?? -1, e["referenceStart"] as? Double ?? -2, accuracy: 0.002)
            XCTAssertTrue((e["activity_id"] as? String ?? "").hasPrefix("a"))
        }

        // The events fold into a timeline: one row per activity, in the set-list order.
        let input = Pipe()
        let merge = try Child(Self.binary, ["timeline", "merge", "-"], input: input)
        input.fileHandleForWriting.write(Data((result.lines.joined(separator: "\n") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let merged = merge.finish(timeout: 30)
        XCTAssertEqual(merged.status, 0, merged.stderr)
        let rows = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(merged.lines.joined().utf8)) as? [String: Any])?["rows"] as? [[String: Any]])
        var materials: [String] = []
        for r in rows { if let m = r["material_id"] as? String, materials.last != m { materials.append(m) } }
        XCTAssertEqual(materials, Self.expectedMaterials)
    }

    func testSetlistAndWallClock() throws {
        let catalog = try catalog()
        let setlist = try run(["monitor", "--catalog", catalog, "--format", "setlist", Self.recording])
        XCTAssertEqual(setlist.status, 0, setlist.stderr)
        let first = try XCTUnwrap(setlist.lines.first)
        XCTAssertNotNil(first.range(of: #"^00:00:00  started  The Knolls of Doldesh – Timothy Pinkham \(wesnoth-knolls\) at ref 00:0[12]$"#,
                                    options: .regularExpression), first)
        XCTAssertTrue(setlist.lines.last?.hasSuffix("  stream ended") ?? false)

        let before = Date().timeIntervalSince1970
        let wall = try run(["monitor", "--catalog", catalog, "--clock", "wall", Self.recording])
        XCTAssertEqual(wall.status, 0, wall.stderr)
        let events = events(wall.lines)
        checkStructure(events)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var origins: [Double] = []
        for e in events {
            let text = try XCTUnwrap(e["wall_time"] as? String, "\(e)")
            XCTAssertNotNil(text.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), text)
            let date = try XCTUnwrap(iso.date(from: text), text)
            origins.append(date.timeIntervalSince1970 - ((e["time"] as? Double) ?? Double(e["time"] as? Int ?? 0)))
        }
        // wall_time − time is the opening time, the same for every event (to the millisecond).
        XCTAssertLessThanOrEqual((origins.max() ?? 0) - (origins.min() ?? 0), 0.0021)
        XCTAssertEqual(origins.first ?? 0, before, accuracy: 30)
    }

    func testStdinPipeGivesTheSameSetlist() throws {
        let catalog = try catalog()
        let feeder = try Feeder(path: Self.recording, chunk: 1 << 16, interval: 0)
        let result = try run(["monitor", "--catalog", catalog, "-"], input: feeder.pipe)
        feeder.close()
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        XCTAssertEqual(startedMaterials(events), Self.expectedMaterials)
    }

    func testSIGTERMClosesOpenSegmentsAndExitsZero() throws {
        try stopMidStream(with: SIGTERM)
    }

    func testSIGINTClosesOpenSegmentsAndExitsZero() throws {
        try stopMidStream(with: SIGINT)
    }

    /// Feeds stdin slowly, sends `signal` after the first started event while the producer
    /// stalls (the monitor is blocked reading an open pipe), and checks the orderly end.
    private func stopMidStream(with signal: Int32, file: StaticString = #filePath, line: UInt = #line) throws {
        let catalog = try catalog()
        // About 8× real time (128 kbit/s MP3): the first segment is announced within a second.
        let feeder = try Feeder(path: Self.recording, chunk: 4096, interval: 0.032)
        defer { feeder.close() }
        let child = try Child(Self.binary, ["monitor", "--catalog", catalog, "-"], input: feeder.pipe)
        let started = child.waitForLine(timeout: 30) { $0.contains("\"segment.started\"") }
        XCTAssertNotNil(started)
        // A stalled producer: the monitor is blocked reading a pipe that stays open.
        feeder.stop()
        child.send(signal)
        let result = child.finish(timeout: 15)
        XCTAssertFalse(result.timedOut, "monitor did not exit after signal \(signal)")
        XCTAssertTrue(result.exited, "killed by a signal")
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        let first = try XCTUnwrap(events.first { $0["event"] as? String == "segment.started" })
        XCTAssertEqual(first["material_id"] as? String, "wesnoth-knolls")
        XCTAssertTrue(events.contains { $0["event"] as? String == "segment.ended" && $0["activity_id"] as? String == first["activity_id"] as? String })
        let endTime = events.last?["time"] as? Double ?? Double(events.last?["time"] as? Int ?? -1)
        XCTAssertGreaterThan(endTime, 0)
        XCTAssertLessThan(endTime, 150, "stopped mid-stream")
    }

    func testUDPMPEGTS() throws {
        let catalog = try catalog()
        let port = try freePort(Int32(SOCK_DGRAM.rawValue))
        let monitor = try Child(Self.binary, ["monitor", "--catalog", catalog, "udp://127.0.0.1:\(port)?timeout=3000000"])
        usleep(500_000)
        let sender = try Child("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-readrate", "4", "-i", Self.recording,
                                                "-t", "40", "-c:a", "mp2", "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"])
        let sent = sender.finish(timeout: 60)
        XCTAssertEqual(sent.status, 0, sent.stderr)
        let result = monitor.finish(timeout: 30)
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 0, result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        XCTAssertEqual(startedMaterials(events).first, "wesnoth-knolls")
    }

    func testHTTPFileAndHLS() throws {
        let catalog = try catalog()
        let site = Self.work.appendingPathComponent("site-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.recording, toPath: site.appendingPathComponent("recording.mp3").path)
        let hls = try Child("/usr/bin/env", ["ffmpeg", "-nostdin", "-v", "error", "-i", Self.recording, "-c:a", "aac", "-b:a", "96k",
                                             "-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod",
                                             "-hls_segment_filename", site.appendingPathComponent("seg%03d.ts").path,
                                             site.appendingPathComponent("recording.m3u8").path]).finish(timeout: 60)
        XCTAssertEqual(hls.status, 0, hls.stderr)
        let (server, port) = try startHTTPServer(site)
        defer { server.send(SIGKILL); _ = server.finish(timeout: 5) }

        for name in ["recording.mp3", "recording.m3u8"] {
            let result = try run(["monitor", "--catalog", catalog, "http://127.0.0.1:\(port)/\(name)"], timeout: 60)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stderr)")
            let events = events(result.lines)
            checkStructure(events)
            XCTAssertEqual(startedMaterials(events), Self.expectedMaterials, name)
        }
    }

    func testReconnectAfterTheServerDropsTheConnection() throws {
        let catalog = try catalog()
        // Request 1: the first half of the file, announced with the full length, then the
        // connection is closed (premature end). Request 2: the rest. Later requests: 503.
        let script = Self.work.appendingPathComponent("dropping-server.py")
        try """
        import socket, sys
        data = open(sys.argv[1], "rb").read()
        half = len(data) // 2
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        print("port", srv.getsockname()[1], flush=True)
        n = 0
        while True:
            conn, _ = srv.accept()
            n += 1
            request = b""
            while b"\\r\\n\\r\\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                request += chunk
            print("request", n, flush=True)
            if n == 1:
                head = "HTTP/1.1 200 OK\\r\\nContent-Type: audio/mpeg\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(data)
                conn.sendall(head.encode() + data[:half])
            elif n == 2:
                conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: audio/mpeg\\r\\nConnection: close\\r\\n\\r\\n" + data[half:])
            else:
                conn.sendall(b"HTTP/1.1 503 Service Unavailable\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
            conn.shutdown(socket.SHUT_WR)
            conn.close()
        """.write(to: script, atomically: true, encoding: .utf8)
        let server = try Child("/usr/bin/env", ["python3", "-u", script.path, Self.recording])
        defer { server.send(SIGKILL); _ = server.finish(timeout: 5) }
        let portLine = try XCTUnwrap(server.waitForLine(timeout: 10) { $0.hasPrefix("port ") })
        let port = try XCTUnwrap(Int(portLine.dropFirst(5)))

        let result = try run(["monitor", "--catalog", catalog, "--reconnect", "--reconnect-timeout", "2",
                              "http://127.0.0.1:\(port)/live.mp3"], timeout: 60)
        XCTAssertFalse(result.timedOut)
        let events = events(result.lines)
        checkStructure(events)
        let gaps = events.filter { $0["event"] as? String == "stream.gap" }
        let reconnects = events.filter { $0["event"] as? String == "stream.reconnected" }
        XCTAssertEqual(gaps.count, 1, "\(result.lines)")
        XCTAssertEqual(reconnects.count, 1, "\(result.lines)")
        let gapTime = gaps.first?["time"] as? Double ?? -1, gapLength = gaps.first?["duration"] as? Double ?? -1
        XCTAssertEqual(gapTime, 79, accuracy: 3, "the first half is about 79 s of audio")
        XCTAssertGreaterThan(gapLength, 0.4, "at least the first back-off (0.5 s)")
        XCTAssertEqual(reconnects.first?["time"] as? Double ?? -1, gapTime + gapLength, accuracy: 0.002)
        XCTAssertEqual(reconnects.first?["attempt"] as? Int, 1)
        // Recording time runs on through the gap.
        let endTime = events.last?["time"] as? Double ?? -1
        XCTAssertEqual(endTime, 158 + gapLength, accuracy: 2)
        XCTAssertEqual(startedMaterials(events).first, "wesnoth-knolls")
        XCTAssertEqual(startedMaterials(events).last, "wesnoth-the-dangerous-symphony")
        // Reconnecting finally gives up on the 503s: a one-line error and exit code 2.
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("gave up reconnecting"), result.stderr)
    }

    /// Issue 8.6: a single play of a reference followed by silence or other audio is one
    /// activity (the sliding window used to find the same line again after its end and start
    /// a second, short activity), and `timeline merge` gives one row.
    func testOnePlayIsOneActivity() throws {
        let catalog = try catalog()
        let cases: [(String, [(String, String)])] = [
            ("play-chipdisko.wav", [("silence", "4"), ("supertux-chipdisko.ogg", "5+20"), ("silence", "12")]),
            ("play-knolls.wav", [("noise", "4"), ("wesnoth-knolls.ogg", "30+12"), ("noise", "12")]),
            ("play-battle.wav", [("noise", "4"), ("wesnoth-battle.ogg", "30+20"), ("noise", "12")]),
            ("play-symphony.wav", [("noise", "4"), ("wesnoth-the-dangerous-symphony.ogg", "30+20"), ("noise", "12")]),
        ]
        for (name, parts) in cases {
            let path = try makeRecording(name, parts)
            let result = try run(["monitor", "--catalog", catalog, path])
            XCTAssertEqual(result.status, 0, result.stderr)
            let events = events(result.lines)
            checkStructure(events)
            let started = events.filter { $0["event"] as? String == "segment.started" }
            XCTAssertEqual(started.count, 1, "\(name): \(result.lines.joined(separator: "\n"))")
            let material = parts[1].0.replacingOccurrences(of: ".ogg", with: "")
            XCTAssertEqual(started.first?["material_id"] as? String, material, name)
            // The activity is the segment `scan` finds (the play, as far as it is audible).
            let ended = try XCTUnwrap(events.first { $0["event"] as? String == "segment.ended" }, name)
            let scan = try run(["scan", "--catalog", catalog, "--format", "json", path])
            let scanJSON = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(scan.lines.joined(separator: "\n").utf8)) as? [String: Any])
            let segments = try XCTUnwrap(scanJSON["segments"] as? [[String: Any]])
            XCTAssertEqual(segments.count, 1, name)
            XCTAssertEqual(number(ended["start"]) ?? -1, number(segments.first?["start"]) ?? -9, accuracy: 1, name)
            XCTAssertEqual(number(ended["end"]) ?? -1, number(segments.first?["end"]) ?? -9, accuracy: 1, name)
            XCTAssertEqual(number(ended["start"]) ?? -1, 4, accuracy: 1, name)
            let rows = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(try merge(result.lines).utf8)) as? [String: Any])?["rows"] as? [[String: Any]])
            XCTAssertEqual(rows.count, 1, name)
        }
    }

    /// The monitor reads the spectrum as `scan` does: other music at a speed change that lines up
    /// with a reference sharing its theme (Wesnoth's *Revelation* 5 % faster or 7 % slower
    /// against an excerpt of *Loyalists*, `Tests/SoundmarkTests/Fixtures/quoted-theme`) started
    /// an activity of 16 s (7.8-23.7 s) where `scan` found nothing; now neither does. The
    /// excerpt itself made 5 % faster after it is one activity from the end of the other music.
    func testOtherMusicAtASearchedSpeedStartsNoActivity() throws {
        let fixtures = Self.root.appendingPathComponent("Tests/SoundmarkTests/Fixtures/quoted-theme")
        let reference = fixtures.appendingPathComponent("wesnoth-loyalists-70-110.flac").path
        let db = Self.work.appendingPathComponent("quoted.db").path
        let add = try run(["catalog", "add", "--catalog", db, "--id", "loyalists", reference])
        XCTAssertEqual(add.status, 0, add.stderr)
        for name in ["wesnoth-revelation-fast-30s.flac", "wesnoth-revelation-slow-25s.flac"] {
            let result = try run(["monitor", "--catalog", db, "--catalog-poll", "0", fixtures.appendingPathComponent(name).path])
            XCTAssertEqual(result.status, 0, result.stderr)
            let started = events(result.lines).filter { $0["event"] as? String == "segment.started" }
            XCTAssertEqual(started.count, 0, "\(name): \(result.lines)")
        }
        let sped = Self.work.appendingPathComponent("quoted-then-fast.wav").path
        let sox = try Child("/usr/bin/sox", [fixtures.appendingPathComponent("wesnoth-revelation-fast-30s.flac").path, reference, sped,
                                             "speed", "1.05"]).finish(timeout: 60)
        XCTAssertEqual(sox.status, 0, sox.stderr)
        let result = try run(["monitor", "--catalog", db, "--catalog-poll", "0", sped])
        let started = events(result.lines).filter { $0["event"] as? String == "segment.started" }
        XCTAssertEqual(started.map { $0["material_id"] as? String ?? "?" }, ["loyalists"], "\(result.lines)")
        // (sox speed 1.05 of both: the other music lasts 28.6 / 1.05 s.)
        XCTAssertEqual(number(started.first?["start"]) ?? -1, 28.6 / 1.05, accuracy: 0.3)
    }

    /// Issue 8.9: `timeline merge` of the monitor's own output. The monitor writes a track's
    /// `segment.ended` after the next track's `segment.started`; the row still ends where the
    /// monitor measured the end, and every row is closed.
    func testTimelineMergeOfMonitorOutputEndsEveryRowWhereItsActivityEnded() throws {
        let catalog = try catalog()
        // Two 15 s tracks back to back.
        let backToBack = try makeRecording("back-to-back.wav", [("wesnoth-knolls.ogg", "10+15"), ("wesnoth-battle.ogg", "10+15")])
        for (path, truth) in [(backToBack, [15.0, 30.0]), (Self.recording, [36.0, 68.0, 122.0, 158.0])] {
            let result = try run(["monitor", "--catalog", catalog, path])
            XCTAssertEqual(result.status, 0, result.stderr)
            let events = events(result.lines)
            checkStructure(events)
            // The end the monitor measured, per activity.
            var endOf: [String: Double] = [:]
            for e in events where e["event"] as? String == "segment.ended" { endOf[e["activity_id"] as? String ?? ""] = number(e["time"]) }
            let rows = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(try merge(result.lines).utf8)) as? [String: Any])?["rows"] as? [[String: Any]])
            XCTAssertEqual(rows.count, truth.count, path)
            for (row, want) in zip(rows, truth) {
                let id = row["activity_id"] as? String ?? "?"
                let end = try XCTUnwrap(number(row["end"]), "\(path) row \(id) has no end")
                XCTAssertEqual(end, endOf[id] ?? -1, accuracy: 1e-9, "\(path) \(id)")
                // supertux-chipdisko crossfades into music not in the catalog at 68 s: it ends where
                // its own peaks fade out in the spectrum, up to half the 4 s crossfade past the
                // middle, as in `scan` (testScanRecordingMatchesExpectedSetList).
                if path == Self.recording && want == 68 {
                    XCTAssertTrue((want - 1)...(want + 2) ~= end, "\(path) \(id) end \(end), crossfade middle \(want)")
                } else {
                    XCTAssertEqual(end, want, accuracy: 1, "\(path) \(id)")
                }
                XCTAssertEqual(number((row["fields"] as? [String: Any])?["end"]) ?? -1, end, accuracy: 1e-9, "\(path) \(id) fields.end")
                XCTAssertEqual(row["closed"] as? Bool, true, "\(path) \(id)")
            }
            // Subtitles: each cue from the activity's first report to its end.
            let srt = try merge(result.lines, format: "srt")
            let timings = srt.split(separator: "\n").filter { $0.contains(" --> ") }
            XCTAssertEqual(timings.count, truth.count, srt)
            for (timing, row) in zip(timings, rows) {
                let end = number(row["end"]) ?? 0
                let ms = Int((end * 1000).rounded())
                let text = String(format: "%02d:%02d:%02d,%03d", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
                XCTAssertTrue(timing.hasSuffix(" --> " + text), "\(timing) should end at \(text)")
            }
        }
    }

    /// Issue 8.7: a live HTTP MP3 stream (played in real time by a loopback server) that drops
    /// twice for 1.5 s. Each gap is the real outage, and after the reconnects recording time and
    /// `--clock wall` follow the wall clock: the second track still starts at 36 s, and every
    /// wall_time is the server's clock at that audio.
    func testReconnectsToALiveStreamKeepRecordingAndWallTime() throws {
        let catalog = try catalog()
        let mp3 = try liveMP3(seconds: 50)
        let (server, port) = try startLiveServer(mp3, drops: [20, 30], outage: 1.5, block: 2)
        defer { server.send(SIGKILL); _ = server.finish(timeout: 5) }
        let result = try run(["monitor", "--catalog", catalog, "--clock", "wall", "--reconnect", "--reconnect-timeout", "2",
                              "http://127.0.0.1:\(port)/live.mp3"], timeout: 120)
        XCTAssertFalse(result.timedOut)
        let serverStart = try XCTUnwrap(server.output.first { $0.hasPrefix("start ") }.flatMap { Double($0.dropFirst(6)) })
        let events = events(result.lines)
        checkStructure(events)
        let gaps = events.filter { $0["event"] as? String == "stream.gap" }
        XCTAssertEqual(gaps.count, 2, "\(result.lines)")
        // Each gap is the audio lost: the 1.5 s outage and what the server had not sent yet
        // (up to a 2 s block). So recording time after the gap is where the audio is.
        for (gap, at) in zip(gaps, [20.0, 30.0]) {
            let time = number(gap["time"]) ?? -1, duration = number(gap["duration"]) ?? -1
            XCTAssertEqual(time, at, accuracy: 2.2)
            XCTAssertEqual(time + duration, at + 1.5, accuracy: 0.6, "the stream is back 1.5 s after the drop")
            XCTAssertLessThan(duration, 1.5 + 2.2, "the gap is the audio lost")
        }
        // The first track played on through both drops: one activity.
        XCTAssertEqual(startedMaterials(events), ["wesnoth-knolls", "supertux-chipdisko"])
        XCTAssertEqual(events.filter { $0["event"] as? String == "stream.reconnected" }.count, 2)
        let chipdisko = try XCTUnwrap(events.first { $0["event"] as? String == "segment.started" && $0["material_id"] as? String == "supertux-chipdisko" })
        XCTAssertEqual(number(chipdisko["time"]) ?? -1, 36, accuracy: 1.5, "recording time after two reconnects")
        XCTAssertEqual(number(events.last?["time"]) ?? -1, 50, accuracy: 1, "stream.ended at the end of the live audio")
        // wall_time: the same offset from recording time for every event (to the millisecond),
        // and that is the server's clock at the audio (within the 2 s of a block).
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var offsets: [Double] = []
        for e in events {
            let wall = try XCTUnwrap((e["wall_time"] as? String).flatMap { iso.date(from: $0) }, "\(e)")
            offsets.append(wall.timeIntervalSince1970 - (number(e["time"]) ?? 0))
        }
        XCTAssertLessThanOrEqual((offsets.max() ?? 0) - (offsets.min() ?? 0), 0.0021)
        XCTAssertEqual(offsets.first ?? 0, serverStart, accuracy: 2.2, "wall_time is the server's clock at that audio")
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("gave up reconnecting"), result.stderr)
    }

    /// Issue 9.15: `--reconnect` retries the first connection too, with a warning per failed
    /// attempt, and gives up (exit 2) after --reconnect-timeout.
    func testReconnectRetriesTheFirstConnection() throws {
        let catalog = try catalog()
        let port = try freePort(Int32(SOCK_STREAM.rawValue))
        let nobody = try run(["monitor", "--catalog", catalog, "--reconnect", "--reconnect-timeout", "1.2", "http://127.0.0.1:\(port)/live.mp3"])
        XCTAssertEqual(nobody.status, 2, nobody.stderr)
        XCTAssertEqual(nobody.lines, [])
        let lines = nobody.stderr.split(separator: "\n")
        // One warning per failed attempt (0.5 s apart: at least two in 1.2 s), then the error.
        let warnings = lines.filter { $0.hasPrefix("soundmark: warning: ") && $0.contains("; connecting attempt ") }
        XCTAssertEqual(warnings.count, lines.count - 1, nobody.stderr)
        XCTAssertGreaterThanOrEqual(warnings.count, 2, nobody.stderr)
        XCTAssertTrue(warnings.allSatisfy { $0.contains("127.0.0.1:\(port)") }, "warnings name the source: \(nobody.stderr)")
        XCTAssertTrue(lines.last?.hasPrefix("soundmark: http://127.0.0.1:\(port)/live.mp3: gave up connecting after \(warnings.count) attempt(s)") ?? false,
                      nobody.stderr)

        // A server that comes up 2 s after the monitor started.
        let mp3 = try liveMP3(seconds: 12)
        let (server, _) = try startLiveServer(mp3, drops: [], outage: 0, port: port, delay: 2)
        defer { server.send(SIGKILL); _ = server.finish(timeout: 5) }
        let result = try run(["monitor", "--catalog", catalog, "--reconnect", "--reconnect-timeout", "10", "http://127.0.0.1:\(port)/live.mp3"], timeout: 90)
        XCTAssertFalse(result.timedOut)
        XCTAssertTrue(result.stderr.contains("connecting attempt 1 failed"), result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        XCTAssertEqual(startedMaterials(events), ["wesnoth-knolls"])
        XCTAssertEqual(number(events.last?["time"]) ?? -1, 12, accuracy: 1)
    }

    /// Issue 9.15: references added to the catalog while `monitor` runs are matched from then
    /// on; the activity playing while the catalog is reloaded stays one activity.
    func testReferencesAddedWhileMonitoringAreMatched() throws {
        let path = Self.work.appendingPathComponent("growing.db").path
        try? FileManager.default.removeItem(atPath: path)
        let references = Self.root.appendingPathComponent("samples/references")
        for name in ["wesnoth-knolls.ogg", "supertux-chipdisko.ogg", "wesnoth-battle.ogg"] {
            let added = try run(["catalog", "add", "--catalog", path, references.appendingPathComponent(name).path])
            XCTAssertEqual(added.status, 0, added.stderr)
        }
        // About 3× real time: the last track (122 s in) plays some 40 s after the start.
        let feeder = try Feeder(path: Self.recording, chunk: 4096, interval: 0.085)
        defer { feeder.close() }
        let child = try Child(Self.binary, ["monitor", "--catalog", path, "--catalog-poll", "1", "-"], input: feeder.pipe)
        XCTAssertNotNil(child.waitForLine(timeout: 60) { $0.contains("\"segment.started\"") })
        let added = try run(["catalog", "add", "--catalog", path, references.appendingPathComponent("wesnoth-the-dangerous-symphony.ogg").path])
        XCTAssertEqual(added.status, 0, added.stderr)
        let result = child.finish(timeout: 120)
        XCTAssertFalse(result.timedOut)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("changed: monitoring 4 reference(s)"), result.stderr)
        let events = events(result.lines)
        checkStructure(events)
        let started = events.filter { $0["event"] as? String == "segment.started" }.map { $0["material_id"] as? String ?? "?" }
        XCTAssertEqual(started, Self.expectedMaterials, "one activity per track, the new reference included")
        let symphony = try XCTUnwrap(events.first { $0["event"] as? String == "segment.ended" && $0["material_id"] as? String == "wesnoth-the-dangerous-symphony" })
        XCTAssertEqual(number(symphony["start"]) ?? -1, 122, accuracy: 1.5)
    }

    func testErrorsAndHelp() throws {
        let catalog = try catalog()
        let missing = try run(["monitor", "--catalog", catalog, Self.work.appendingPathComponent("missing.mp3").path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertEqual(missing.lines, [])
        XCTAssertEqual(missing.stderr.split(separator: "\n").count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("no such file"), missing.stderr)

        let notCatalog = Self.work.appendingPathComponent("not-a-catalog.db")
        try Data("hello, this is not SQLite\n".utf8).write(to: notCatalog)
        let bad = try run(["monitor", "--catalog", notCatalog.path, Self.recording])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.lines, [])
        XCTAssertEqual(bad.stderr.split(separator: "\n").count, 1, bad.stderr)

        let badPoll = try run(["monitor", "--catalog", catalog, "--catalog-poll", "soon", Self.recording])
        XCTAssertEqual(badPoll.status, 2)
        XCTAssertEqual(badPoll.stderr.split(separator: "\n").count, 1, badPoll.stderr)
        XCTAssertTrue(badPoll.stderr.contains("--catalog-poll"), badPoll.stderr)

        let help = try run(["monitor", "--help"])
        XCTAssertEqual(help.status, 0)
        let text = help.lines.joined(separator: "\n")
        for phrase in ["Latency", "about 28 s after its end", "60 s", "--reconnect", "--clock", "stream.gap", "--catalog-poll", "data_version"] {
            XCTAssertTrue(text.contains(phrase), "help lacks '\(phrase)'")
        }
    }
}
