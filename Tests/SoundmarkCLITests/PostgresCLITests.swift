import Foundation
import XCTest

/// End-to-end tests of the PostgreSQL catalog, `catalog copy`, the work queue and workers,
/// against a real server each test class starts for itself: `initdb` into a temporary folder,
/// `pg_ctl start` listening only on a Unix socket in that folder (no TCP port), stopped in
/// `tearDown`. As root the server runs as the `postgres` user (it refuses root). Skipped only
/// when the server binaries are missing (`make test` installs `postgresql`).
final class PostgresCLITests: XCTestCase {
    private static let samples = CLISupport.root.appendingPathComponent("samples")
    nonisolated(unsafe) private static var server: TestServer?
    nonisolated(unsafe) private static var serverError: Error?
    private var work: URL!

    /// A PostgreSQL server in a temporary folder.
    final class TestServer {
        let folder: URL
        let bin: String
        let port = Int.random(in: 20_000...60_000)
        var data: String { folder.appendingPathComponent("data").path }
        var socketFolder: String { folder.path }

        init() throws {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            guard let bin = versions.sorted().reversed().map({ "/usr/lib/postgresql/\($0)/bin" })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) else {
                throw XCTSkip("PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)")
            }
            self.bin = bin
            folder = URL(fileURLWithPath: "/tmp/smpg-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            if getuid() == 0 { try Self.shell(["/bin/chown", "postgres", folder.path]) }
            try asServerUser([bin + "/initdb", "-D", data, "-A", "trust", "-U", "sm", "--no-sync"])
            try start()
            try psql("postgres", "CREATE DATABASE soundmark")
        }

        /// Runs a server binary as the server's user (`postgres` when this process is root).
        func asServerUser(_ command: [String]) throws {
            try Self.shell(getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command)
        }

        static func shell(_ command: [String]) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: command[0])
            p.arguments = Array(command.dropFirst())
            // Output through a file: a server started by pg_ctl would hold a pipe open.
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("smpg-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: log) }
            p.standardOutput = FileHandle.nullDevice
            p.standardError = try FileHandle(forWritingTo: log)
            try p.run()
            p.waitUntilExit()
            let message = (try? Data(contentsOf: log)) ?? Data()
            guard p.terminationStatus == 0 else {
                throw NSError(domain: "PostgresCLITests", code: Int(p.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "\(command.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))"])
            }
        }

        func start() throws {
            try asServerUser([bin + "/pg_ctl", "-D", data, "-w", "-l", folder.appendingPathComponent("log").path,
                              "-o", "-p \(port) -k \(socketFolder) -c listen_addresses='' -c fsync=off", "start"])
        }

        func stop() throws { try asServerUser([bin + "/pg_ctl", "-D", data, "-w", "-m", "fast", "stop"]) }

        func psql(_ database: String, _ sql: String) throws {
            try Self.shell(["/usr/bin/psql", "-X", "-q", "-h", socketFolder, "-p", "\(port)", "-U", "sm", "-d", database, "-c", sql])
        }

        /// The URI of a database on this server.
        func uri(_ database: String = "soundmark", password: String? = nil) -> String {
            "postgresql://sm\(password.map { ":" + $0 } ?? "")@/\(database)?host=\(socketFolder)&port=\(port)"
        }
    }

    override class func setUp() {
        super.setUp()
        do { server = try TestServer() } catch { serverError = error }
    }

    override class func tearDown() {
        if let server {
            try? server.stop()
            try? FileManager.default.removeItem(at: server.folder)
        }
        super.tearDown()
    }

    override func setUpWithError() throws {
        if let e = Self.serverError { throw e }
        work = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-pg-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        // Every soundmark run of this test keeps its local caches in the test's folder.
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache").path, 1)
    }

    override func tearDownWithError() throws {
        if let work { try? FileManager.default.removeItem(at: work) }
    }

    private var server: TestServer { Self.server! }

    /// A new, empty database on the test server, and its URI.
    func newDatabase() throws -> String {
        let name = "db_" + UUID().uuidString.prefix(8).lowercased()
        try server.psql("postgres", "CREATE DATABASE \(name)")
        return server.uri(name)
    }

    struct Result { var status: Int32; var out: String; var err: String }

    func run(_ arguments: [String]) throws -> Result {
        let r = try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
        return Result(status: r.status, out: r.stdout, err: r.stderr)
    }

    /// Starts the binary without waiting; its output goes to files `name.out` / `name.err` in the work folder.
    func launch(_ arguments: [String], name: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try CLISupport.soundmarkBinary())
        p.arguments = arguments
        p.standardInput = FileHandle.nullDevice
        for (suffix, set) in [("out", { (h: FileHandle) in p.standardOutput = h }), ("err", { (h: FileHandle) in p.standardError = h })] {
            let path = work.appendingPathComponent("\(name).\(suffix)").path
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            set(try FileHandle(forWritingTo: URL(fileURLWithPath: path)))
        }
        try p.run()
        return p
    }

    func output(_ name: String, _ suffix: String = "err") -> String {
        (try? String(contentsOfFile: work.appendingPathComponent("\(name).\(suffix)").path, encoding: .utf8)) ?? ""
    }

    var references: String { Self.samples.appendingPathComponent("references").path }
    var clip: String { Self.samples.appendingPathComponent("clip.mp3").path }

    /// The reference ids `catalog list --format json` prints.
    func listedIDs(_ catalog: String) throws -> [String] {
        let r = try run(["catalog", "list", "--catalog", catalog, "--format", "json"])
        XCTAssertEqual(r.status, 0, r.err)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        return try XCTUnwrap(object["references"] as? [[String: Any]]).compactMap { $0["id"] as? String }
    }

    let sampleIDs = ["supertux-chipdisko", "supertux-forest", "wesnoth-battle", "wesnoth-knolls", "wesnoth-the-dangerous-symphony"]

    func testEveryCatalogCommandOnPostgres() throws {
        let uri = try newDatabase()
        var r = try run(["catalog", "add", "--catalog", uri, references])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
        // Re-adding the same files changes nothing.
        r = try run(["catalog", "add", "--catalog", uri, references])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.err.components(separatedBy: "skipped (already in the catalog, unchanged)").count - 1, 5, r.err)

        r = try run(["identify", "--catalog", uri, "--format", "json", clip])
        XCTAssertEqual(r.status, 0, r.err)
        let matches = try XCTUnwrap((JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["matches"] as? [[String: Any]])
        XCTAssertEqual((matches.first?["reference"] as? [String: Any])?["id"] as? String, "supertux-forest")
        XCTAssertEqual(try XCTUnwrap(matches.first?["matchOffset"] as? Double), 15.0, accuracy: 0.05)

        // Another machine (another cache folder) sees the same catalog and gets the same answer.
        let first = r.out
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-machine-2").path, 1)
        r = try run(["identify", "--catalog", uri, "--format", "json", clip])
        XCTAssertEqual(r.out, first)

        r = try run(["catalog", "annotate", "--catalog", uri, "wesnoth-knolls", Self.samples.appendingPathComponent("wesnoth-knolls.srt").path])
        XCTAssertEqual(r.status, 0, r.err)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache").path, 1)
        r = try run(["catalog", "show", "--catalog", uri, "--format", "json", "wesnoth-knolls"])
        XCTAssertEqual(r.status, 0, r.err)
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(shown["annotations"] as? Int, 9)
        XCTAssertEqual(shown["title"] as? String, "The Knolls of Doldesh")

        r = try run(["catalog", "remove", "--catalog", uri, "supertux-chipdisko", "no-such-id"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("supertux-chipdisko: removed"), r.err)
        XCTAssertTrue(r.err.contains("no reference with id 'no-such-id'"), r.err)
        XCTAssertFalse(r.err.contains("cache"), "messages name the server, not the local cache: \(r.err)")
        XCTAssertEqual(try listedIDs(uri), Array(sampleIDs.dropFirst()))
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-machine-2").path, 1)
        XCTAssertEqual(try listedIDs(uri), Array(sampleIDs.dropFirst()))

        r = try run(["catalog", "upgrade", "--catalog", uri])
        XCTAssertEqual(r.status, 0, r.err)
        // A removed reference added again comes back everywhere.
        r = try run(["catalog", "add", "--catalog", uri, references + "/supertux-chipdisko.ogg"])
        XCTAssertEqual(r.status, 0, r.err)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache").path, 1)
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
    }

    func testErrorsAreOneLineAndNeverShowThePassword() throws {
        // An empty database: no catalog in it.
        let empty = try newDatabase() + "&password=hunter2"
        var r = try run(["identify", "--catalog", empty, clip])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("no soundmark catalog in this database"), r.err)
        XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
        XCTAssertFalse(r.err.contains("hunter2"), r.err)
        // A server that refuses the connection (nothing listens on this port).
        let refused = "postgresql://sm:hunter2@/soundmark?host=\(server.socketFolder)&port=\(server.port + 1)"
        r = try run(["catalog", "list", "--catalog", refused])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("cannot connect"), r.err)
        XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
        XCTAssertFalse(r.err.contains("hunter2"), r.err)
        // A catalog made with another fingerprint configuration is refused.
        let other = try newDatabase()
        r = try run(["catalog", "add", "--catalog", other, references + "/wesnoth-battle.ogg"])
        XCTAssertEqual(r.status, 0, r.err)
        let database = String(other.split(separator: "/")[2].split(separator: "?")[0])
        try server.psql(database, "UPDATE meta SET value = replace(value, '\"hopLength\":128', '\"hopLength\":256') WHERE key = 'configuration'")
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-other").path, 1)
        r = try run(["catalog", "list", "--catalog", other])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("another fingerprint configuration"), r.err)
    }

    func testHostileIdsAndTitlesAreStoredAsText() throws {
        let uri = try newDatabase()
        let id = "x'); DROP TABLE reference; -- $$ $1 \\"
        let title = "It's \"quoted\"; $$DROP$$ ' OR '1'='1"
        var r = try run(["catalog", "add", "--catalog", uri, "--id", id, "--title", title, "--property", "note=$tag$;'",
                         references + "/wesnoth-battle.ogg"])
        XCTAssertEqual(r.status, 0, r.err)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-2").path, 1)
        XCTAssertEqual(try listedIDs(uri), [id])
        r = try run(["catalog", "show", "--catalog", uri, "--format", "json", id])
        let shown = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        XCTAssertEqual(shown["title"] as? String, title)
        XCTAssertEqual((shown["properties"] as? [String: String])?["note"], "$tag$;'")
        r = try run(["catalog", "remove", "--catalog", uri, id])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try listedIDs(uri), [])
    }

    func testCopyBothWaysGivesEqualAnswers() throws {
        let file = work.appendingPathComponent("local.db").path
        var r = try run(["catalog", "add", "--catalog", file, references])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["catalog", "annotate", "--catalog", file, "wesnoth-knolls", Self.samples.appendingPathComponent("wesnoth-knolls.srt").path])
        XCTAssertEqual(r.status, 0, r.err)
        let uri = try newDatabase()
        r = try run(["catalog", "copy", file, uri])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.err.contains("5 reference(s) copied"), r.err)
        let back = work.appendingPathComponent("back.db").path
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-2").path, 1)
        r = try run(["catalog", "copy", uri, back])
        XCTAssertEqual(r.status, 0, r.err)
        var answers: [String] = []
        var shows: [String] = []
        for catalog in [file, uri, back] {
            r = try run(["identify", "--catalog", catalog, "--format", "json", clip])
            XCTAssertEqual(r.status, 0, r.err)
            answers.append(r.out)
            r = try run(["catalog", "show", "--catalog", catalog, "--format", "json", "wesnoth-knolls"])
            shows.append(r.out)
            XCTAssertEqual(try listedIDs(catalog), sampleIDs)
        }
        XCTAssertEqual(Set(answers).count, 1, answers.joined(separator: "\n"))
        XCTAssertEqual(Set(shows).count, 1, shows.joined(separator: "\n"))
        XCTAssertTrue(shows[0].contains("Theme returns, fuller"))
    }

    func testTwoWriterProcessesAtOnce() throws {
        let uri = try newDatabase()
        // Each writer works from its own cache folder, as on two machines.
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-a").path, 1)
        let a = try launch(["catalog", "add", "--catalog", uri] + sampleIDs.prefix(3).map { references + "/\($0).ogg" }, name: "a")
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-b").path, 1)
        let b = try launch(["catalog", "add", "--catalog", uri] + sampleIDs.suffix(2).map { references + "/\($0).ogg" }, name: "b")
        a.waitUntilExit()
        b.waitUntilExit()
        XCTAssertEqual(a.terminationStatus, 0, output("a"))
        XCTAssertEqual(b.terminationStatus, 0, output("b"))
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-a").path, 1)
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
        let r = try run(["identify", "--catalog", uri, "--format", "json", clip])
        XCTAssertTrue(r.out.contains("\"id\":\"supertux-forest\""), r.out)
    }
}
