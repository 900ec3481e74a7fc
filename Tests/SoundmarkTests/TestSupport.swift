import Foundation
import XCTest
import Soundmark

/// Shared helpers of the fingerprint, matching and catalog tests: the package root, the bundled
/// samples decoded once, an `ffmpeg` runner and a runner for the built `soundmark` binary.
enum TestSupport {
    /// The package root (this file is `Tests/SoundmarkTests/TestSupport.swift`).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let samples = packageRoot.appendingPathComponent("samples")
    static let referenceIDs = ["supertux-chipdisko", "supertux-forest", "wesnoth-battle", "wesnoth-knolls",
                               "wesnoth-the-dangerous-symphony"]

    static func referencePath(_ id: String) -> String {
        samples.appendingPathComponent("references/\(id).ogg").path
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var decoded: [String: [Float]] = [:]
    nonisolated(unsafe) private static var signatures: [String: Signature] = [:]

    /// Mono samples at 8000 Hz of a file, decoded once per test run.
    static func samples(ofFile path: String) throws -> [Float] {
        lock.lock(); defer { lock.unlock() }
        if let s = decoded[path] { return s }
        let s = try MediaDecoder.decodeAll(source: path, sampleRate: 8000)
        decoded[path] = s
        return s
    }

    /// Mono samples at 8000 Hz of reference `id`.
    static func referenceSamples(_ id: String) throws -> [Float] {
        try samples(ofFile: referencePath(id))
    }

    /// The reference signature (default configuration) of reference `id`, computed once.
    static func referenceSignature(_ id: String) throws -> Signature {
        let s = try referenceSamples(id)
        lock.lock(); defer { lock.unlock() }
        if let sig = signatures[id] { return sig }
        let sig = signature(of: s, role: .reference)
        signatures[id] = sig
        return sig
    }

    /// `seconds` of reference `id` from `from` seconds (8000 Hz mono samples).
    static func piece(_ id: String, from: Double, seconds: Double) throws -> [Float] {
        let s = try referenceSamples(id)
        let a = Int(from * 8000), b = a + Int(seconds * 8000)
        return Array(s[a..<b])
    }

    /// The segments ``RecordingScanner`` (default options) finds in `samples` (8000 Hz mono), fed as
    /// `scan` feeds a recording's landmarks.
    static func scan(_ samples: [Float], index: CatalogIndex) -> [Segment] {
        let scanner = RecordingScanner(index: index)
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        samples.withUnsafeBufferPointer { p in g.append(p) { scanner.consume($0) } }
        g.finish { scanner.consume($0) }
        return scanner.finish(recordingDuration: Double(samples.count) / 8000)
    }

    /// The events ``RecordingScanner`` sends over `samples` (8000 Hz mono) on the monitor's path: no
    /// segments kept, the clock advanced 400 frames past the audio before it finishes.
    static func monitorEvents(_ samples: [Float], index: CatalogIndex) -> [ScanEvent] {
        var options = ScanOptions()
        options.keepsSegments = false
        let scanner = RecordingScanner(index: index, options: options)
        var events: [ScanEvent] = []
        scanner.onEvent = { events.append($0) }
        let g = SignatureGenerator(configuration: index.configuration, role: .reference)
        g.append(samples)
        for l in g.signature().landmarks { scanner.consume(l) }
        scanner.advance(toFrame: samples.count / index.configuration.hopLength + 400)
        _ = scanner.finish(recordingDuration: Double(samples.count) / 8000)
        return events
    }

    /// The signature of `samples` (8000 Hz mono) with the default configuration.
    static func signature(of samples: [Float], role: SignatureGenerator.Role,
                          configuration: Configuration = Configuration()) -> Signature {
        let g = SignatureGenerator(configuration: configuration, role: role)
        g.append(samples)
        return g.signature()
    }

    /// `clip` with ``MarkerTests/pinkNoise(count:seed:)`` `snr` dB under (above, when negative) it.
    static func withPinkNoise(_ clip: [Float], snr: Float, seed: UInt64 = 7) -> [Float] {
        let noise = MarkerTests.pinkNoise(count: clip.count, seed: seed)
        let gain = (clip.reduce(0) { $0 + $1 * $1 } / noise.reduce(0) { $0 + $1 * $1 } / pow(10, snr / 10)).squareRoot()
        return zip(clip, noise).map { $0 + $1 * gain }
    }

    /// A fresh temporary directory, removed when the test case ends.
    static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("soundmark-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// Runs `body` with standard input (descriptor 0) reading the bytes of file `path` through a
    /// pipe that a writer thread fills, then restores standard input.
    /// - Throws: when the file cannot be read or the pipe cannot be made; whatever `body` throws.
    /// Starts `python3 -u script arguments…`, a server on 127.0.0.1 that prints the port it
    /// listens on as its first line; returns the process (to terminate) and the port. Skips
    /// the test when it does not start.
    static func startLocalServer(script: URL, arguments: [String]) throws -> (server: Process, port: String) {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-u", script.path] + arguments
        let out = Pipe()
        server.standardOutput = out
        try server.run()
        var port = ""
        while !port.hasSuffix("\n") {
            let byte = out.fileHandleForReading.readData(ofLength: 1)
            guard !byte.isEmpty else {
                server.terminate()
                server.waitUntilExit()
                throw XCTSkip("the test server did not start")
            }
            port += String(decoding: byte, as: UTF8.self)
        }
        return (server, port.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func withStandardInput<T>(from path: String, _ body: () throws -> T) throws -> T {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var fds: [Int32] = [0, 0]
        let savedStdin = dup(0)
        guard pipe(&fds) == 0, savedStdin >= 0 else {
            throw NSError(domain: "pipe", code: Int(errno), userInfo: [NSLocalizedDescriptionKey: "cannot make a pipe"])
        }
        dup2(fds[0], 0)
        close(fds[0])
        let writeEnd = fds[1]
        let writer = Thread {
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(writeEnd, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        defer {
            dup2(savedStdin, 0)
            close(savedStdin)
        }
        return try body()
    }

    static let ffmpegPath = "/usr/bin/ffmpeg"

    /// Runs `ffmpeg -y ARGS OUTPUT`; throws with ffmpeg's message when it fails.
    static func ffmpeg(_ arguments: [String], output: String) throws {
        guard FileManager.default.isExecutableFile(atPath: ffmpegPath) else {
            throw XCTSkip("ffmpeg CLI not found at \(ffmpegPath)")
        }
        let r = try run(ffmpegPath, ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"] + arguments + [output])
        guard r.status == 0 else {
            throw NSError(domain: "ffmpeg", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: r.stderr])
        }
    }

    struct ProcessResult {
        var status: Int32
        var stdout: String
        var stderr: String
        var signalled: Bool
    }

    /// Runs a program to completion, capturing its output through temporary files.
    static func run(_ executable: String, _ arguments: [String], currentDirectory: URL? = nil) throws -> ProcessResult {
        let p = try start(executable, arguments, currentDirectory: currentDirectory)
        p.process.waitUntilExit()
        return p.result()
    }

    /// A started process whose output goes to temporary files.
    final class Running {
        let process: Process
        let out: URL, err: URL
        init(process: Process, out: URL, err: URL) { self.process = process; self.out = out; self.err = err }
        func result() -> ProcessResult {
            let o = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            let e = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
            return ProcessResult(status: process.terminationStatus, stdout: o, stderr: e,
                                 signalled: process.terminationReason == .uncaughtSignal)
        }
    }

    static func start(_ executable: String, _ arguments: [String], currentDirectory: URL? = nil) throws -> Running {
        let tmp = FileManager.default.temporaryDirectory
        let out = tmp.appendingPathComponent("soundmark-out-\(UUID().uuidString)")
        let err = tmp.appendingPathComponent("soundmark-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let currentDirectory { p.currentDirectoryURL = currentDirectory }
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        return Running(process: p, out: out, err: err)
    }

    /// The built `soundmark` binary: `$SOUNDMARK_BIN`, else next to the test bundle (the build
    /// directory `swift test` used, whatever its scratch path), else `<root>/.build/debug` or
    /// `/tmp/tests-build/debug`.
    static func soundmarkBinary() throws -> String {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["SOUNDMARK_BIN"], !env.isEmpty { candidates.append(env) }
        let argv0 = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
        candidates.append(argv0.deletingLastPathComponent().appendingPathComponent("soundmark").path)
        var bundleDir = Bundle.main.bundleURL
        while bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        candidates.append(bundleDir.appendingPathComponent("soundmark").path)
        candidates.append(packageRoot.appendingPathComponent(".build/debug/soundmark").path)
        candidates.append("/tmp/tests-build/debug/soundmark")
        for c in candidates where FileManager.default.isExecutableFile(atPath: c) { return c }
        throw XCTSkip("soundmark binary not found (tried \(candidates.joined(separator: ", "))); run swift build first")
    }
}
