import Foundation
import XCTest

/// What the end-to-end test classes share.
enum CLISupport {
    /// The package root (this file is `Tests/SoundmarkCLITests/CLISupport.swift`).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The built `soundmark` binary: `$SOUNDMARK_BIN`, else the one next to the test bundle or
    /// the test process (the build directory `swift test` used), else `<root>/.build/debug` or
    /// `/tmp/tests-build/debug`.
    /// - Throws: `XCTSkip` naming every place tried when none holds an executable.
    static func soundmarkBinary() throws -> String {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["SOUNDMARK_BIN"], !env.isEmpty { candidates.append(env) }
        candidates.append(URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
            .deletingLastPathComponent().appendingPathComponent("soundmark").path)
        var bundleDir = Bundle.main.bundleURL
        while bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        candidates.append(bundleDir.appendingPathComponent("soundmark").path)
        candidates.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("soundmark").path)
        candidates.append(root.appendingPathComponent(".build/debug/soundmark").path)
        candidates.append("/tmp/tests-build/debug/soundmark")
        for c in candidates where FileManager.default.isExecutableFile(atPath: c) { return c }
        throw XCTSkip("soundmark binary not found (tried \(candidates.joined(separator: ", ")))")
    }

    /// What a run of a program printed and how it ended.
    struct Run {
        /// Exit status (the signal number when `signalled`).
        var status: Int32
        var stdout: String
        var stderr: String
        /// Whether the process was killed by a signal (a crash) rather than exiting.
        var signalled: Bool
        /// stderr split into lines (a final newline does not start another line).
        var stderrLines: [Substring] {
            guard !stderr.isEmpty else { return [] }
            return Array(stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast(stderr.hasSuffix("\n") ? 1 : 0))
        }
    }

    /// A fresh temporary directory named `soundmark-PREFIX-UUID`, removed when `test` ends.
    static func temporaryDirectory(_ test: XCTestCase, prefix: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// Runs `executable` with `arguments`, standard input empty, standard output and error
    /// through files in `directory` (no pipe can fill up; the files are removed afterwards),
    /// in `currentDirectory` (default: this process's).
    static func run(_ executable: String, _ arguments: [String], in directory: URL, currentDirectory: URL? = nil) throws -> Run {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let out = directory.appendingPathComponent("out-\(UUID().uuidString)")
        let err = directory.appendingPathComponent("err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        if let currentDirectory { p.currentDirectoryURL = currentDirectory }
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                   stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "", signalled: p.terminationReason == .uncaughtSignal)
    }
}
