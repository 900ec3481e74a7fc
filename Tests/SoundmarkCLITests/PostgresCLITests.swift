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
    /// This test's folder (its local caches in `cache`), removed after it.
    var work: URL!

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

        /// Runs a command and waits for it (posix_spawn and waitpid: Foundation's `Process`
        /// would wait for the server pg_ctl leaves running, which inherits its status socket).
        static func shell(_ command: [String]) throws {
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("smpg-\(UUID().uuidString).log").path
            defer { try? FileManager.default.removeItem(atPath: log) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let argv = command.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            var pid: pid_t = 0
            let rc = posix_spawn(&pid, command[0], &actions, nil, argv, environ)
            guard rc == 0 else { throw NSError(domain: "PostgresCLITests", code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "cannot run \(command[0])"]) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            guard status == 0 else {
                let message = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw NSError(domain: "PostgresCLITests", code: Int(status),
                              userInfo: [NSLocalizedDescriptionKey: "\(command.joined(separator: " ")): \(message)"])
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

        /// The first cell of a query's result, as text.
        func value(_ database: String, _ sql: String) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            p.arguments = ["-X", "-A", "-t", "-h", socketFolder, "-p", "\(port)", "-U", "sm", "-d", database, "-c", sql]
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
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

    /// This class's server.
    var server: TestServer { Self.server! }

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

    /// A process started without waiting (posix_spawn: a server pg_ctl restarts meanwhile
    /// must not inherit a Foundation `Process` status socket, or its end would go unnoticed).
    struct Spawned {
        let pid: pid_t
        /// Waits for the end. - Returns: the exit status, or nil when a signal ended it.
        func wait() -> Int32? {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
        }
    }

    /// Starts the binary without waiting; its output goes to files `name.out` / `name.err` in the work folder.
    func launch(_ arguments: [String], name: String) throws -> Spawned {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, work.appendingPathComponent("\(name).out").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, work.appendingPathComponent("\(name).err").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let binary = try CLISupport.soundmarkBinary()
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, binary, &actions, nil, argv, environ)
        guard rc == 0 else { throw NSError(domain: "PostgresCLITests", code: Int(rc)) }
        return Spawned(pid: pid)
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

        // ShazamKit export from PostgreSQL and import into another PostgreSQL catalog.
        let exported = work.appendingPathComponent("two.shazamcatalog").path
        r = try run(["catalog", "export", "--catalog", uri, "--format", "shazamcatalog", "-o", exported, "wesnoth-knolls", "supertux-forest"])
        XCTAssertEqual(r.status, 0, r.err)
        let other = try newDatabase()
        r = try run(["catalog", "import", "--catalog", other, exported])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(try listedIDs(other), ["supertux-forest", "wesnoth-knolls"])
        r = try run(["catalog", "show", "--catalog", other, "--format", "json", "wesnoth-knolls"])
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])?["annotations"] as? Int, 9, r.out)
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
        // A tester's example: a damaged local cache was reported as the server's fault.
        let machine = work.appendingPathComponent("cache-damaged")
        setenv("XDG_CACHE_HOME", machine.path, 1)
        XCTAssertEqual(try run(["catalog", "list", "--catalog", empty.replacingOccurrences(of: "&password=hunter2", with: "")]).status, 2)
        let fresh = try newDatabase()
        XCTAssertEqual(try run(["catalog", "add", "--catalog", fresh, references + "/wesnoth-battle.ogg"]).status, 0)
        let caches = try FileManager.default.contentsOfDirectory(atPath: machine.appendingPathComponent("soundmark").path)
            .filter { $0.hasSuffix(".catalog") }
        XCTAssertEqual(caches.count, 1, "\(caches)")
        let cache = machine.appendingPathComponent("soundmark").appendingPathComponent(caches[0]).path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: cache))
        r = try run(["catalog", "list", "--catalog", fresh])
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
        XCTAssertTrue(r.err.contains("(local cache \(cache): delete it to fetch the catalog again)"), r.err)
        try FileManager.default.removeItem(atPath: cache)
        r = try run(["catalog", "list", "--catalog", fresh])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix("wesnoth-battle\t"), r.out)
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
        let (statusA, statusB) = (a.wait(), b.wait())
        XCTAssertEqual(statusA, 0, output("a"))
        XCTAssertEqual(statusB, 0, output("b"))
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-a").path, 1)
        XCTAssertEqual(try listedIDs(uri), sampleIDs)
        let r = try run(["identify", "--catalog", uri, "--format", "json", clip])
        XCTAssertTrue(r.out.contains("\"id\":\"supertux-forest\""), r.out)
    }

    /// The database name in a test URI.
    func databaseName(_ uri: String) -> String { String(uri.split(separator: "/")[2].split(separator: "?")[0]) }

    /// A catalog of the sample references on a new database, a long recording (the sample
    /// recording four times, 10.5 min, 8 kHz mono: a scan takes a while) and both queued.
    func queuedScans() throws -> (uri: String, media: [String]) {
        let uri = try newDatabase()
        var r = try run(["catalog", "add", "--catalog", uri, references])
        XCTAssertEqual(r.status, 0, r.err)
        let long = work.appendingPathComponent("long.wav").path
        try TestServer.shell(["/usr/bin/ffmpeg", "-v", "error", "-y", "-stream_loop", "3", "-i",
                              Self.samples.appendingPathComponent("recording.mp3").path, "-ar", "8000", "-ac", "1", long])
        let media = [long, clip]
        r = try run(["queue", "add", "--catalog", uri] + media)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "1\t\(long)\n2\t\(clip)\n")
        return (uri, media)
    }

    /// The state of job `id` from `queue status --format json`.
    func jobState(_ uri: String, _ id: Int) throws -> (state: String, attempts: Int) {
        let r = try run(["queue", "status", "--catalog", uri, "--format", "json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], r.err)
        let job = try XCTUnwrap((object["jobs"] as? [[String: Any]])?.first { $0["id"] as? Int == id })
        return (job["state"] as? String ?? "", job["attempts"] as? Int ?? -1)
    }

    /// Waits (up to 60 s) until job `id` is running.
    func waitUntilRunning(_ uri: String, _ id: Int) throws {
        for _ in 0..<600 {
            if try jobState(uri, id).state == "running" { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTFail("job \(id) never ran")
    }

    /// Checks that every job is done, recorded exactly once in the library tables, and that the
    /// reports equal `scan --format json` of the same recordings.
    func checkDoneOnce(_ uri: String, _ media: [String]) throws {
        let r = try run(["queue", "status", "--catalog", uri])
        XCTAssertTrue(r.out.hasPrefix("pending 0, running 0, done \(media.count), failed 0"), r.out)
        let database = databaseName(uri)
        for id in 1...media.count {
            XCTAssertEqual(try server.value(database, "SELECT count(*) FROM library_recording WHERE job_id = \(id)"), "1")
        }
        XCTAssertEqual(try server.value(database, "SELECT count(*) FROM library_recording"), "\(media.count)")
        // The long recording holds the sample's three plays four times over; the clip one.
        XCTAssertEqual(try server.value(database, "SELECT count(*) FROM library_airing WHERE job_id = 2"), "1")
        let airings = Int(try server.value(database, "SELECT count(*) FROM library_airing WHERE job_id = 1")) ?? 0
        XCTAssertGreaterThanOrEqual(airings, 12)
        let results = try run(["queue", "results", "--catalog", uri])
        let scan = try run(["scan", "--catalog", uri, "--format", "json"] + media)
        XCTAssertEqual(scan.status, 0, scan.err)
        XCTAssertEqual(results.out, scan.out)
        XCTAssertEqual(results.out.split(separator: "\n").count, media.count)
    }

    /// A tester's example: SIGTERM to a worker without --wait killed it mid-job, and the job
    /// stayed claimed until its lease ran out. The job in hand now finishes, once, and the
    /// worker exits 0 without claiming another.
    func testWorkerStoppedBySIGTERMFinishesTheJobInHand() throws {
        let (uri, _) = try queuedScans()
        let worker = try launch(["worker", "--catalog", uri, "--lease", "30"], name: "term")
        try waitUntilRunning(uri, 1)
        kill(worker.pid, SIGTERM)
        XCTAssertEqual(worker.wait(), 0, output("term"))
        XCTAssertEqual(try jobState(uri, 1).state, "done")
        XCTAssertEqual(try jobState(uri, 1).attempts, 1)
        XCTAssertEqual(try jobState(uri, 2).state, "pending")
        XCTAssertEqual(try server.value(databaseName(uri), "SELECT count(*) FROM library_recording WHERE job_id = 1"), "1")
    }

    func testWorkerKilledMidJobIsFinishedOnceByAnother() throws {
        let (uri, media) = try queuedScans()
        let first = try launch(["worker", "--catalog", uri, "--lease", "2"], name: "first")
        try waitUntilRunning(uri, 1)
        kill(first.pid, SIGKILL)
        XCTAssertNil(first.wait(), "killed by the signal")
        // The killed worker's claim holds until its lease expires; nothing of it is stored.
        XCTAssertEqual(try server.value(databaseName(uri), "SELECT count(*) FROM library_recording WHERE job_id = 1"), "0")
        let second = try run(["worker", "--catalog", uri, "--lease", "2"])
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertTrue(second.err.contains("job 1: done"), second.err)
        XCTAssertEqual(try jobState(uri, 1).attempts, 2)
        try checkDoneOnce(uri, media)
    }

    func testServerRestartedDuringAWorkersRun() throws {
        let (uri, media) = try queuedScans()
        let worker = try launch(["worker", "--catalog", uri, "--lease", "30"], name: "worker")
        try waitUntilRunning(uri, 1)
        try server.stop()
        Thread.sleep(forTimeInterval: 1)
        try server.start()
        XCTAssertEqual(worker.wait(), 0, output("worker"))
        for line in output("worker").split(separator: "\n") where line.contains("retrying") {
            XCTAssertFalse(line.contains("sm@"), "no connection string in messages: \(line)")
        }
        try checkDoneOnce(uri, media)
    }

    func testTwoWorkersShareTheQueue() throws {
        let (uri, media) = try queuedScans()
        let a = try launch(["worker", "--catalog", uri], name: "a")
        let b = try launch(["worker", "--catalog", uri], name: "b")
        let (statusA, statusB) = (a.wait(), b.wait())
        XCTAssertEqual(statusA, 0, output("a"))
        XCTAssertEqual(statusB, 0, output("b"))
        try checkDoneOnce(uri, media)
        // A recording that cannot be read fails with its error after --max-attempts claims.
        let bad = work.appendingPathComponent("bad.mp3").path
        try Data("not audio".utf8).write(to: URL(fileURLWithPath: bad))
        var r = try run(["queue", "add", "--catalog", uri, bad])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["worker", "--catalog", uri, "--max-attempts", "2"])
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertEqual(try jobState(uri, 3).state, "failed")
        XCTAssertEqual(try jobState(uri, 3).attempts, 2)
        r = try run(["queue", "status", "--catalog", uri])
        XCTAssertTrue(r.out.contains("failed 1"), r.out)
        XCTAssertTrue(r.out.contains("bad.mp3"), r.out)
        // The JSON: versioned, the recording as `source` (one vocabulary), and its schema holds.
        r = try run(["queue", "status", "--catalog", uri, "--format", "json"])
        let status = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any], r.err)
        XCTAssertEqual(status["counts"] as? [String: Int], ["pending": 0, "running": 0, "done": 2, "failed": 1])
        XCTAssertEqual((status["jobs"] as? [[String: Any]])?.compactMap { $0["source"] as? String }, media + [bad])
        let statusFile = work.appendingPathComponent("queue-status.json").path
        try Data(r.out.utf8).write(to: URL(fileURLWithPath: statusFile))
        let check = try CLISupport.run("/usr/bin/env", ["python3", CLISupport.root.appendingPathComponent("scripts/validate-json.py").path,
                                                        CLISupport.root.appendingPathComponent("docs/schemas").path,
                                                        "queue-status=\(statusFile)"], in: work)
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        // A tester's example: a folder was queued as one job that failed ("is a directory").
        // Its media files are queued; a folder without any is refused.
        let folder = work.appendingPathComponent("incoming-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("day2"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        try FileManager.default.copyItem(atPath: bad, toPath: folder.appendingPathComponent("day1.mp3").path)
        try FileManager.default.copyItem(atPath: bad, toPath: folder.appendingPathComponent("day2/late.wav").path)
        r = try run(["queue", "add", "--catalog", uri, folder.path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out.split(separator: "\n").map { String($0.split(separator: "\t").last ?? "") }.sorted(),
                       [folder.appendingPathComponent("day1.mp3").path, folder.appendingPathComponent("day2/late.wav").path])
        let empty = work.appendingPathComponent("empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        r = try run(["queue", "add", "--catalog", uri, empty.path])
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertTrue(r.err.contains("\(empty.path): a folder with no media files"), r.err)
    }

    /// Review: workers write airings on the server, but no library or report command read them
    /// there. `library list/show` and `report` read a PostgreSQL library (the same rows as a scan
    /// into a library file gives); the commands that write a library file refuse it in one line.
    func testLibraryAndReportCommandsReadWhatWorkersWrote() throws {
        let uri = try newDatabase()
        var r = try run(["library", "list", "--library", uri])
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertTrue(r.err.contains("holds no recognition library yet"), r.err)
        XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
        r = try run(["catalog", "add", "--catalog", uri, references])
        XCTAssertEqual(r.status, 0, r.err)
        let recording = Self.samples.appendingPathComponent("recording.mp3").path
        r = try run(["queue", "add", "--catalog", uri, "--source", "Radio 1", recording, clip])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["worker", "--catalog", uri])
        XCTAssertEqual(r.status, 0, r.err)
        let file = work.appendingPathComponent("airings.db").path
        for media in [recording, clip] {
            r = try run(["scan", "--catalog", uri, "--library", file, "--source", "Radio 1", media])
            XCTAssertEqual(r.status, 0, r.err)
        }
        for command in [["library", "list", "--format", "csv"], ["library", "list"], ["report", "counts", "--by", "reference"],
                        ["report", "airings", "--format", "json"], ["library", "show"]] {
            let server = try run(command + ["--library", uri])
            let local = try run(command + ["--library", file])
            XCTAssertEqual(server.status, 0, server.err)
            XCTAssertEqual(server.out, local.out, command.joined(separator: " "))
        }
        r = try run(["library", "list", "--library", uri, "--format", "csv"])
        XCTAssertEqual(r.out.split(separator: "\r\n").count, 6, r.out) // the header, the recording's 4 plays and the clip
        let html = work.appendingPathComponent("report.html").path
        r = try run(["report", "html", "--library", uri, "--output", html])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(try String(contentsOfFile: html, encoding: .utf8).contains("Radio 1"))
        for command in [["library", "remove", "--source", "Radio 1"], ["library", "import", clip],
                        ["scan", "--catalog", uri, clip]] {
            r = try run(command + ["--library", server.uri(databaseName(uri), password: "s3cret")])
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertEqual(r.err.split(separator: "\n").count, 1, r.err)
            XCTAssertTrue(r.err.contains("is written only by workers"), r.err)
            XCTAssertFalse(r.err.contains("s3cret"), r.err)
        }
    }

    /// Issue 39 item 2: the same file queued for workers under the sources "Radio 1" and
    /// "Radio 9" kept only Radio 9's airings (the library knew a recording by its digest
    /// alone). Each named source keeps its airings; queued again, a source's are replaced.
    func testTheSameFileFromTwoSourcesKeepsBothSourcesAirings() throws {
        let uri = try newDatabase()
        var r = try run(["catalog", "add", "--catalog", uri, references])
        XCTAssertEqual(r.status, 0, r.err)
        for source in ["Radio 1", "Radio 9", "Radio 1"] {
            r = try run(["queue", "add", "--catalog", uri, "--source", source, clip])
            XCTAssertEqual(r.status, 0, r.err)
        }
        r = try run(["worker", "--catalog", uri])
        XCTAssertEqual(r.status, 0, r.err)
        r = try run(["library", "list", "--library", uri, "--format", "csv"])
        XCTAssertEqual(r.status, 0, r.err)
        let sources = r.out.split(separator: "\r\n").dropFirst().map { String($0.split(separator: ",")[0]) }
        XCTAssertEqual(sources.sorted(), ["Radio 1", "Radio 9"], r.out)
        r = try run(["library", "show", "--library", uri])
        XCTAssertTrue(r.out.hasSuffix("2 recording(s), 2 airing(s)\n"), r.out)
    }

    /// Review of issue 10 item 5 on PostgreSQL: two machines adding copies of one recording at
    /// once both stored it. The server's version row is held locked while both fingerprint, so
    /// both write at the same time: one is stored, the other reported as the same recording.
    func testConcurrentAddsOfOneRecordingStoreItOnce() throws {
        let uri = try newDatabase()
        let r = try run(["catalog", "add", "--catalog", uri, references + "/supertux-forest.ogg"])
        XCTAssertEqual(r.status, 0, r.err)
        let wav = work.appendingPathComponent("knolls.wav").path, mp3 = work.appendingPathComponent("knolls.mp3").path
        try TestServer.shell(["/usr/bin/ffmpeg", "-v", "error", "-y", "-t", "12", "-i", references + "/wesnoth-knolls.ogg", wav])
        try TestServer.shell(["/usr/bin/ffmpeg", "-v", "error", "-y", "-i", wav, "-b:a", "128k", mp3])
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        locker.arguments = ["-X", "-q", "-h", server.socketFolder, "-p", "\(server.port)", "-U", "sm", "-d", databaseName(uri)]
        let input = Pipe()
        locker.standardInput = input
        locker.standardOutput = FileHandle.nullDevice
        try locker.run()
        input.fileHandleForWriting.write(Data("BEGIN;\nSELECT value FROM meta WHERE key = 'version' FOR UPDATE;\n".utf8))
        Thread.sleep(forTimeInterval: 1)
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-a").path, 1)
        let a = try launch(["catalog", "add", "--catalog", uri, wav], name: "a")
        setenv("XDG_CACHE_HOME", work.appendingPathComponent("cache-b").path, 1)
        let b = try launch(["catalog", "add", "--catalog", uri, mp3], name: "b")
        Thread.sleep(forTimeInterval: 5)
        input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
        try input.fileHandleForWriting.close()
        locker.waitUntilExit()
        let (statusA, statusB) = (a.wait(), b.wait())
        XCTAssertEqual(statusA, 0, output("a"))
        XCTAssertEqual(statusB, 0, output("b"))
        let messages = output("a") + output("b")
        XCTAssertEqual(messages.split(separator: "\n").filter { $0.contains(": skipped, the same recording as 'knolls") }.count, 1, messages)
        let ids = try listedIDs(uri)
        XCTAssertEqual(ids.count, 2, "\(ids)")
        XCTAssertEqual(ids.filter { $0.hasPrefix("knolls") }.count, 1, "\(ids)")
    }
}
