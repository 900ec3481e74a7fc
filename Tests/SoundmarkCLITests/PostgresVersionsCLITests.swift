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
}
