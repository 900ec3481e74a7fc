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
        for (id, s) in started { if let e = ended[id] { XCTAssertLessThan(s, e, "\(id) ended before started", file: file, line: line) } }
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

        let help = try run(["monitor", "--help"])
        XCTAssertEqual(help.status, 0)
        let text = help.lines.joined(separator: "\n")
        for phrase in ["Latency", "closeAfterSeconds", "60 s", "--reconnect", "--clock", "stream.gap"] {
            XCTAssertTrue(text.contains(phrase), "help lacks '\(phrase)'")
        }
    }
}
