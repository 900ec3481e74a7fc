import Foundation
@testable import Soundmark
import XCTest

/// The version features of `--versions` on PostgreSQL catalogs and through `catalog copy`, on
/// the server of ``PostgresCLITests`` (`initdb` and `pg_ctl` in a temporary folder, a Unix
/// socket only). References: three 40 s samples; the clip another performance of one of them
/// (`sox pitch 200 tempo 0.95`), the recording another sample then the clip.
extension PostgresCLITests {
    /// Every later run keeps its local caches in `name` (another machine for each new name).
    private func cache(_ name: String) { setenv("XDG_CACHE_HOME", work.appendingPathComponent(name).path, 1) }

    private func path(_ name: String) -> String { work.appendingPathComponent(name).path }

    /// A new, empty database on the test server: its name and its URI with a password, which
    /// no message may show.
    private func newVersionsDatabase() throws -> (name: String, uri: String) {
        let uri = try newDatabase()
        return (databaseName(uri), server.uri(databaseName(uri), password: "s3cret-pw"))
    }

    /// Runs soundmark, checking its exit status and that no message shows the password.
    @discardableResult
    private func checked(_ arguments: [String], status: Int32 = 0) throws -> CLISupport.Run {
        let r = try CLISupport.run(try CLISupport.soundmarkBinary(), arguments, in: work)
        XCTAssertEqual(r.status, status, "\(arguments.joined(separator: " ")): \(r.stderr)")
        XCTAssertFalse(r.stderr.contains("s3cret-pw"), r.stderr)
        return r
    }

    private var versionSamples: URL { CLISupport.root.appendingPathComponent("samples/references") }

    private func sh(_ arguments: [String]) throws {
        let r = try CLISupport.run("/usr/bin/env", arguments, in: work)
        XCTAssertEqual(r.status, 0, "\(arguments.joined(separator: " ")): \(r.stderr)")
    }

    /// The `version_chroma` rows of an SQLite catalog: "id:HEX" each, by id, the bytes as stored.
    private func fileBlobs(_ file: String) throws -> [String] {
        let catalog = try Catalog(path: file, readOnly: true)
        let q = try catalog.db.prepare("SELECT reference_id, hex(data) FROM version_chroma ORDER BY reference_id")
        var rows: [String] = []
        while try q.step() { rows.append("\(q.string(0) ?? ""):\(q.string(1) ?? "")") }
        return rows
    }

    /// The same on the server.
    private func serverBlobs(_ database: String) throws -> [String] {
        let text = try server.value(database, "SELECT string_agg(reference_id || ':' || upper(encode(data, 'hex')), ' ' ORDER BY reference_id) FROM version_chroma")
        return text.split(separator: " ").map(String.init)
    }

    /// `version.wav` (the knolls sample two semitones up, 5 % slower) and `recording.wav`
    /// (the chipdisko sample, 40.0 s, then the version).
    private func makeClips() throws {
        try sh(["ffmpeg", "-v", "error", "-y", "-i", versionSamples.appendingPathComponent("wesnoth-knolls.ogg").path, "-ar", "22050", "-ac", "1", path("k.wav")])
        try sh(["sox", path("k.wav"), path("version.wav"), "pitch", "200", "tempo", "0.95"])
        try sh(["ffmpeg", "-v", "error", "-y", "-i", versionSamples.appendingPathComponent("supertux-chipdisko.ogg").path, "-ar", "22050", "-ac", "1", path("c.wav")])
        try sh(["sox", path("c.wav"), path("version.wav"), path("recording.wav")])
    }

    private var versionIDs: [String] { ["supertux-chipdisko", "wesnoth-battle", "wesnoth-knolls"] }
    private var versionFiles: [String] { versionIDs.map { versionSamples.appendingPathComponent("\($0).ogg").path } }

    func testVersionFeaturesTravelBothWaysByteForByte() throws {
        try makeClips()
        let file = path("local.db")
        try checked(["catalog", "add", "--catalog", file] + versionFiles)
        let sqliteBlobs = try fileBlobs(file)
        XCTAssertEqual(sqliteBlobs.map { String($0.prefix { $0 != ":" }) }, versionIDs)
        // 30 bytes a second of audio (2 hex digits a byte): 40 s references.
        for row in sqliteBlobs { XCTAssertGreaterThan(row.count, 2 * 30 * 39, row.prefix(40) + "…") }

        // SQLite → PostgreSQL → SQLite (the second copy from another machine's cache).
        let db = try newVersionsDatabase()
        XCTAssertTrue(try checked(["catalog", "copy", file, db.uri]).stderr.contains("3 reference(s) copied"))
        cache("cache-2")
        let back = path("back.db")
        try checked(["catalog", "copy", db.uri, back])
        XCTAssertEqual(try serverBlobs(db.name), sqliteBlobs)
        XCTAssertEqual(try fileBlobs(back), sqliteBlobs)

        // identify and scan --versions: the same answers from the three, the PostgreSQL one
        // from a machine whose cache starts empty (the features come from the server).
        cache("cache-3")
        var identified: [String] = [], scanned: [String] = []
        for catalog in [file, db.uri, back] {
            identified.append(try checked(["identify", "--versions", "--catalog", catalog, "--format", "json", path("version.wav")]).stdout)
            scanned.append(try checked(["scan", "--versions", "--catalog", catalog, "--format", "json", path("recording.wav")]).stdout)
        }
        XCTAssertEqual(Set(identified).count, 1, identified.joined(separator: "\n"))
        XCTAssertEqual(Set(scanned).count, 1, scanned.joined(separator: "\n"))
        let match = ((try JSONSerialization.jsonObject(with: Data(identified[0].utf8)) as? [String: Any])?["matches"] as? [[String: Any]])?.first
        XCTAssertEqual((match?["reference"] as? [String: Any])?["id"] as? String, "wesnoth-knolls", identified[0])
        XCTAssertEqual(match?["transposition"] as? Int, 2, identified[0])
        let segments = (try JSONSerialization.jsonObject(with: Data(scanned[0].utf8)) as? [String: Any])?["segments"] as? [[String: Any]] ?? []
        XCTAssertEqual(segments.compactMap { ($0["reference"] as? [String: Any])?["id"] as? String }, ["supertux-chipdisko", "wesnoth-knolls"], scanned[0])
        XCTAssertEqual(segments.last?["start"] as? Double ?? 0, 40.0, accuracy: 0.5, scanned[0])

        // catalog add straight to PostgreSQL stores the same bytes on the server.
        let added = try newVersionsDatabase()
        try checked(["catalog", "add", "--catalog", added.uri] + versionFiles)
        XCTAssertEqual(try serverBlobs(added.name), sqliteBlobs)
        // Removing a reference removes its features everywhere.
        try checked(["catalog", "remove", "--catalog", added.uri, "wesnoth-battle"])
        XCTAssertEqual(try serverBlobs(added.name), sqliteBlobs.filter { !$0.hasPrefix("wesnoth-battle:") })
    }

    /// A catalog written before the server held version features (format 2: no
    /// `version_chroma`): readers find none and say what to run; `catalog upgrade` raises the
    /// format, computes the features from the sources and names the reference whose source is
    /// gone in the words it uses for an SQLite file.
    func testVersionFeaturesOfAFormat2CatalogAfterUpgrade() throws {
        try makeClips()
        let db = try newVersionsDatabase()
        try checked(["catalog", "add", "--catalog", db.uri] + versionFiles)
        XCTAssertEqual(try server.value(db.name, "SELECT value FROM meta WHERE key = 'format_version'"), "3")
        let moved = "/nonexistent/wesnoth-battle.ogg"
        try server.psql(db.name, """
            DROP TABLE version_chroma; UPDATE meta SET value = '2' WHERE key = 'format_version';
            UPDATE reference SET source = '\(moved)' WHERE id = 'wesnoth-battle'
            """)
        let display = "postgresql://sm@[socket \(server.socketFolder)]:\(server.port)/\(db.name)"

        // A reader on another machine: plain identify works, --versions says what to run, and
        // the server keeps its format (readers never change it).
        cache("cache-2")
        try checked(["identify", "--catalog", db.uri, path("k.wav")])
        let none = try checked(["identify", "--versions", "--catalog", db.uri, path("version.wav")], status: 2)
        XCTAssertEqual(none.stderr, "soundmark: the catalog holds no version features; run 'soundmark catalog upgrade --catalog \(display)' to compute them\n")
        XCTAssertEqual(try server.value(db.name, "SELECT value FROM meta WHERE key = 'format_version'"), "2")

        let upgrade = try checked(["catalog", "upgrade", "--catalog", db.uri])
        XCTAssertEqual(try server.value(db.name, "SELECT value FROM meta WHERE key = 'format_version'"), "3")
        XCTAssertEqual(try serverBlobs(db.name).map { String($0.prefix { $0 != ":" }) }, ["supertux-chipdisko", "wesnoth-knolls"])

        // The same catalog as an SQLite file, upgraded: the same report but for the name.
        let file = path("local.db")
        try checked(["catalog", "add", "--catalog", file] + versionFiles)
        try Catalog(path: file).db.execute("DELETE FROM version_chroma; UPDATE reference SET source = '\(moved)' WHERE id = 'wesnoth-battle'")
        let fileUpgrade = try checked(["catalog", "upgrade", "--catalog", file])
        let lines = fileUpgrade.stderrLines.dropFirst().map { $0.replacingOccurrences(of: file, with: display) }
        XCTAssertEqual(lines, ["\(display): version features computed for 2 reference(s)",
                               "\(display): 1 reference(s) lack version features: 'wesnoth-battle' (source file '\(moved)' is missing); compute them with 'soundmark catalog add --catalog \(display) --id ID FILE'"])
        XCTAssertEqual(upgrade.stderrLines.map(String.init), ["\(display): upgraded from format version 2 to 3; local cache and index up to date"] + lines)

        // Another machine now gets the features (its cache pulls the whole catalog again).
        cache("cache-3")
        let pg = try checked(["identify", "--versions", "--catalog", db.uri, "--format", "json", path("version.wav")])
        XCTAssertEqual(pg.stdout, try checked(["identify", "--versions", "--catalog", file, "--format", "json", path("version.wav")]).stdout)
        XCTAssertTrue(pg.stdout.contains("\"wesnoth-knolls\""), pg.stdout)
        cache("cache-2")
        XCTAssertEqual(try checked(["identify", "--versions", "--catalog", db.uri, "--format", "json", path("version.wav")]).stdout, pg.stdout)
    }
}
