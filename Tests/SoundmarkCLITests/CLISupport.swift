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
}
