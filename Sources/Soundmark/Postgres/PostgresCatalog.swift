import CSQLite
import Foundation

/// A catalog shared on a PostgreSQL server, used through a local SQLite cache.
///
/// **On the server** the tables are the SQLite catalog's (`meta`, `reference`, `annotation`,
/// `reference_marker`, `shazam_signature`, `version_chroma`: same columns, postings and
/// chroma as bytea) plus `reference_removed(id, version)`. `meta` holds `format_version`, the `configuration` JSON,
/// `instance` (a random token made with the schema) and `version`: a bigint every committing
/// transaction bumps; each `reference` row carries the version that last wrote it (with its
/// annotations, marker, Shazam peaks and version features), each removal a `reference_removed` row.
///
/// **The local cache** is an ordinary SQLite catalog (with its `.index` file) under
/// `$XDG_CACHE_HOME/soundmark` (else `~/.cache/soundmark`), named by a hash of the server's host,
/// port and database (never the password). ``open(readOnly:)`` brings it up to date first:
/// one query when the server's version equals the cache's, else only the references written
/// since (and the removals) in one REPEATABLE READ snapshot, so a reader never waits for a
/// writer. All matching then runs on the cache unchanged: no query per landmark.
///
/// **Writes** go through the cache: every write transaction of a ``Catalog`` returned by
/// ``open(readOnly:)`` first takes the server's version row (`SELECT … FOR UPDATE`: writers on
/// every machine take turns, one reference at a time), pulls what other writers committed into
/// the cache, runs the catalog's own logic (duplicate check, re-add rules) on that up-to-date
/// state, then writes the references it changed (tracked by temporary triggers) to the server
/// and bumps the version, committing on the server just before the cache commits. One
/// reference is one transaction on both sides; a failure rolls both back.
public final class PostgresCatalog {
    /// The server and database.
    public let location: PostgresLocation
    /// The fingerprint configuration (its reference-side parameters must equal the stored ones).
    public let configuration: Configuration
    /// The local cache: an SQLite catalog file (its index is `cachePath + ".index"`).
    public let cachePath: String
    private var connection: PostgresConnection?
    private let lock = NSLock()
    private var inTransaction = false
    private var holdsLock = false
    /// The server's format version when this object connected (2 or 3); a writable
    /// ``open(readOnly:)`` of a format 2 catalog raises it to ``serverFormatVersion``.
    public private(set) var storedFormatVersion = PostgresCatalog.serverFormatVersion

    /// The default folder of local caches: `$XDG_CACHE_HOME/soundmark`, else `~/.cache/soundmark`.
    public static var defaultCacheDirectory: String {
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/soundmark" }
        return NSHomeDirectory() + "/.cache/soundmark"
    }

    /// Connects and checks (with `create`, creates) the catalog tables on the server.
    /// - Parameters:
    ///   - uri: a libpq connection URI (`postgresql://…` or `postgres://…`).
    ///   - create: create the tables when the database has none (`catalog add`, `catalog copy`).
    ///   - cacheDirectory: where the local cache lives (default ``defaultCacheDirectory``).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` (the path is the location
    ///   without password) when the server cannot be reached or holds no soundmark catalog;
    ///   ``SoundmarkError/catalogMismatch(path:reason:)`` for another format version or
    ///   fingerprint configuration.
    public init(uri: String, create: Bool = false, configuration: Configuration = Configuration(),
                cacheDirectory: String? = nil) throws {
        location = try PostgresLocation(uri)
        self.configuration = configuration
        let folder = cacheDirectory ?? PostgresCatalog.defaultCacheDirectory
        let key = [location.host, location.port, location.database].joined(separator: "\u{0}")
        cachePath = folder + "/pg-" + String(format: "%016llx", fnv1a64(Array(key.utf8))) + ".catalog"
        do {
            let db = try connect()
            if create { try createSchema(db) }
            try checkMeta(db)
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "\(error)")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "cannot create the local cache folder \(folder)")
        }
    }

    /// The open connection, reconnecting when the server dropped it.
    private func connect() throws -> PostgresConnection {
        if let connection, connection.isAlive { return connection }
        connection = nil
        let c = try PostgresConnection(location)
        connection = c
        return c
    }

    /// Runs `body` on the connection; when the server had dropped it (a restart), once more on
    /// a new connection.
    private func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try body(try connect())
        } catch let failure as PostgresFailure where failure.connectionLost {
            connection = nil
            return try body(try connect())
        }
    }

    private func createSchema(_ db: PostgresConnection) throws {
        try db.transaction {
            // Two first writers at once: one creates, the other waits and finds the tables.
            try db.query("SELECT pg_advisory_xact_lock(7253011)")
            try db.execute("""
                CREATE TABLE IF NOT EXISTS meta(key text PRIMARY KEY, value text NOT NULL);
                CREATE TABLE IF NOT EXISTS reference(
                    id text PRIMARY KEY, title text, subtitle text, artist text,
                    properties text NOT NULL DEFAULT '{}', source text,
                    sample_count bigint NOT NULL, posting_count bigint NOT NULL,
                    audio_digest text NOT NULL, postings bytea NOT NULL,
                    postings_crc bigint, file_size bigint, file_mtime double precision, file_digest text,
                    version bigint NOT NULL);
                CREATE INDEX IF NOT EXISTS reference_version ON reference(version);
                CREATE TABLE IF NOT EXISTS annotation(
                    reference_id text NOT NULL REFERENCES reference(id) ON DELETE CASCADE,
                    seq bigint NOT NULL, start double precision NOT NULL, "end" double precision NOT NULL, text text NOT NULL,
                    PRIMARY KEY(reference_id, seq));
                CREATE TABLE IF NOT EXISTS reference_marker(
                    reference_id text PRIMARY KEY REFERENCES reference(id) ON DELETE CASCADE, payload bigint NOT NULL);
                CREATE TABLE IF NOT EXISTS shazam_signature(
                    id text PRIMARY KEY REFERENCES reference(id) ON DELETE CASCADE, data bytea NOT NULL);
                CREATE TABLE IF NOT EXISTS reference_removed(id text PRIMARY KEY, version bigint NOT NULL);
                CREATE INDEX IF NOT EXISTS reference_removed_version ON reference_removed(version);
                """)
            try db.execute(PostgresCatalog.versionTable)
            let json = String(decoding: try JSONEncoder.sorted.encode(configuration), as: UTF8.self)
            let rows: [(String, String)] = [("format_version", "\(PostgresCatalog.serverFormatVersion)"), ("configuration", json),
                                            ("version", "0"), ("instance", "\(UInt64.random(in: 1 ... .max))")]
            for (key, value) in rows {
                try db.query("INSERT INTO meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [.text(key), .text(value)])
            }
        }
    }

    /// The server schema's format version: 3 since the version features (the `version_chroma`
    /// table, as in the SQLite catalog), 2 before. Kept apart from ``Catalog/formatVersion``:
    /// the server's schema changes on its own steps. A format 2 catalog is read as having no
    /// version features and raised to 3 by the first writable ``open(readOnly:)``.
    public static let serverFormatVersion = 3

    /// The server's `version_chroma` table: a reference's ``ChromaSequence/encoded()`` bytes.
    static let versionTable = """
        CREATE TABLE IF NOT EXISTS version_chroma(
            reference_id text PRIMARY KEY REFERENCES reference(id) ON DELETE CASCADE, data bytea NOT NULL)
        """

    /// Format 2 → 3 (writable opens only, as the SQLite catalog's migration): the empty
    /// `version_chroma` table, `format_version` 3 and a new `instance` token, in one
    /// transaction. The new token makes every local cache pull the whole catalog once: a cache
    /// written by an earlier soundmark kept the version features of its own adds, which never
    /// reached the server, and must not pass for the server's.
    private func migrateToVersionFeatures() throws {
        guard storedFormatVersion == 2 else { return }
        lock.lock(); defer { lock.unlock() }
        do {
            try withConnection { db in try db.transaction {
                try db.query("SELECT pg_advisory_xact_lock(7253011)")
                // Another writer may have migrated between the check and the lock.
                guard try db.query("SELECT value FROM meta WHERE key = 'format_version'").string(0, 0) == "2" else { return }
                try db.execute(PostgresCatalog.versionTable)
                try db.query("UPDATE meta SET value = $1 WHERE key = 'format_version'", [.text("\(PostgresCatalog.serverFormatVersion)")])
                try db.query("UPDATE meta SET value = $1 WHERE key = 'instance'", [.text("\(UInt64.random(in: 1 ... .max))")])
            } }
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: location.display, reason: "format version 2 not raised to \(PostgresCatalog.serverFormatVersion): \(error)")
        }
        storedFormatVersion = PostgresCatalog.serverFormatVersion
    }

    private func checkMeta(_ db: PostgresConnection) throws {
        let tables = try db.query("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name IN ('meta', 'reference')")
        guard tables.int(0, 0) == 2 else {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "no soundmark catalog in this database (create one with 'soundmark catalog add' or 'catalog copy')")
        }
        let rows = try db.query("SELECT key, value FROM meta")
        var meta: [String: String] = [:]
        for r in 0..<rows.rowCount { meta[rows.string(r, 0) ?? ""] = rows.string(r, 1) }
        guard let version = meta["format_version"], let json = meta["configuration"], meta["version"] != nil else {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "not a soundmark catalog (no format version)")
        }
        guard version == "\(PostgresCatalog.serverFormatVersion)" || version == "2" else {
            throw SoundmarkError.catalogMismatch(path: location.display, reason: "catalog format version \(version), this soundmark reads version \(PostgresCatalog.serverFormatVersion); rebuild the catalog")
        }
        storedFormatVersion = Int(version) ?? PostgresCatalog.serverFormatVersion
        guard let stored = try? JSONDecoder().decode(Configuration.self, from: Data(json.utf8)) else {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "unreadable configuration record")
        }
        guard stored.referenceAnalysis == configuration.referenceAnalysis else {
            let differences = stored.referenceAnalysis.differences(from: configuration.referenceAnalysis)
            throw SoundmarkError.catalogMismatch(path: location.display, reason: "catalog was built with another fingerprint configuration (\(differences)); rebuild it with this soundmark")
        }
    }

    /// Brings the local cache up to date and opens it.
    ///
    /// - Parameter readOnly: open the cache for reading only (identify, scan, list); otherwise
    ///   every write transaction of the returned catalog is also committed on the server (see
    ///   the type's notes), and a format 2 catalog is first raised to ``serverFormatVersion``.
    /// - Returns: a ``Catalog`` on the cache file.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when the server or the cache
    ///   cannot be read (the path names the server without password);
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when the format cannot be raised.
    public func open(readOnly: Bool = false) throws -> Catalog {
        if !readOnly { try migrateToVersionFeatures() }
        try refresh()
        let catalog = try Catalog(path: cachePath, readOnly: readOnly, configuration: configuration)
        if !readOnly {
            do {
                try PostgresCatalog.prepareCache(catalog.db)
            } catch {
                throw SoundmarkError.catalogUnreadable(path: cachePath, reason: "\(error)")
            }
            catalog.db.writeObserver = self
        }
        return catalog
    }

    /// The server's version stamp (bumped by every committed change).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)``.
    public func serverVersion() throws -> Int64 {
        lock.lock(); defer { lock.unlock() }
        do {
            return try withConnection { try $0.query("SELECT value::bigint FROM meta WHERE key = 'version'").int(0, 0) }
        } catch {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "\(error)")
        }
    }

    /// Pulls the changes committed on the server since the cache's version into the cache
    /// (one REPEATABLE READ snapshot on the server, one SQLite transaction on the cache).
    /// - Returns: `true` when the cache changed.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)``.
    @discardableResult
    public func refresh() throws -> Bool {
        lock.lock(); defer { lock.unlock() }
        do {
            let cache = try Catalog(path: cachePath, create: true, configuration: configuration)
            try PostgresCatalog.prepareCache(cache.db)
            return try withConnection { db in try db.transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                let (version, instance) = try serverState(db, forUpdate: false)
                let cached = try PostgresCatalog.cacheState(cache.db)
                if cached.instance == instance && cached.version == version { return false }
                try cache.db.execute("BEGIN IMMEDIATE")
                do {
                    try pull(from: db, into: cache.db, version: version, instance: instance)
                    try cache.db.execute("DELETE FROM temp.soundmark_dirty")
                    try cache.db.execute("COMMIT")
                } catch {
                    try? cache.db.execute("ROLLBACK")
                    throw error
                }
                return true
            } }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "\(error)")
        }
    }

    // MARK: cache tables

    /// The mirrored tables: name, key column (the reference id), columns and their kinds.
    static let tables: [(name: String, key: String, columns: [(String, Kind)])] = [
        ("reference", "id", [("id", .text), ("title", .text), ("subtitle", .text), ("artist", .text), ("properties", .text),
                             ("source", .text), ("sample_count", .int), ("posting_count", .int), ("audio_digest", .text),
                             ("postings", .bytes), ("postings_crc", .int), ("file_size", .int), ("file_mtime", .double),
                             ("file_digest", .text)]),
        ("annotation", "reference_id", [("reference_id", .text), ("seq", .int), ("start", .double), ("\"end\"", .double), ("text", .text)]),
        ("reference_marker", "reference_id", [("reference_id", .text), ("payload", .int)]),
        ("shazam_signature", "id", [("id", .text), ("data", .bytes)]),
        ("version_chroma", "reference_id", [("reference_id", .text), ("data", .bytes)]),
    ]

    enum Kind { case text, int, double, bytes }

    /// Creates the optional tables, the cache's server stamp and the temporary triggers that
    /// record which references a transaction of this connection changed.
    static func prepareCache(_ db: SQLiteDatabase) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS reference_marker(reference_id TEXT PRIMARY KEY, payload INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS shazam_signature(id TEXT PRIMARY KEY, data BLOB NOT NULL);
            CREATE TEMP TABLE IF NOT EXISTS soundmark_dirty(id TEXT PRIMARY KEY);
            """)
        try db.execute(Catalog.versionTable)
        for table in tables {
            for (event, row) in [("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")] {
                var body = "INSERT OR IGNORE INTO soundmark_dirty(id) VALUES (\(row).\(table.key));"
                if event == "UPDATE" { body += " INSERT OR IGNORE INTO soundmark_dirty(id) VALUES (old.\(table.key));" }
                try db.execute("CREATE TEMP TRIGGER IF NOT EXISTS soundmark_dirty_\(table.name)_\(event.lowercased()) AFTER \(event) ON main.\(table.name) BEGIN \(body) END")
            }
        }
    }

    /// The server instance and version the cache holds ("" and -1 for a new cache).
    static func cacheState(_ db: SQLiteDatabase) throws -> (instance: String, version: Int64) {
        let q = try db.prepare("SELECT key, value FROM meta WHERE key IN ('pg_instance', 'pg_version')")
        var instance = "", version: Int64 = -1
        while try q.step() {
            if q.string(0) == "pg_instance" { instance = q.string(1) ?? "" } else { version = Int64(q.string(1) ?? "") ?? -1 }
        }
        return (instance, version)
    }

    private func serverState(_ db: PostgresConnection, forUpdate: Bool) throws -> (Int64, String) {
        let r = try db.query("SELECT value::bigint, (SELECT value FROM meta WHERE key = 'instance') FROM meta WHERE key = 'version'"
                             + (forUpdate ? " FOR UPDATE" : ""))
        guard r.rowCount == 1 else {
            throw SoundmarkError.catalogUnreadable(path: location.display, reason: "not a soundmark catalog (no version stamp)")
        }
        return (r.int(0, 0), r.string(0, 1) ?? "")
    }

    /// Copies every reference the server changed after the cache's version (all of them for a
    /// new cache or another server instance) and applies the removals, inside the caller's
    /// transactions on both sides; then records the server's version and a new index token.
    /// A format 2 server (no `version_chroma` table yet) gives no version features.
    private func pull(from db: PostgresConnection, into cache: SQLiteDatabase, version: Int64, instance: String) throws {
        var (cachedInstance, since) = try PostgresCatalog.cacheState(cache)
        if cachedInstance != instance {
            for table in PostgresCatalog.tables.reversed() { try cache.execute("DELETE FROM \(table.name)") }
            since = -1
            cachedInstance = instance
        }
        let removed = try db.query("SELECT id FROM reference_removed WHERE version > $1", [.int(since)])
        let changed = try db.query("SELECT id FROM reference WHERE version > $1", [.int(since)])
        let ids = (0..<removed.rowCount).map { removed.string($0, 0) ?? "" } + (0..<changed.rowCount).map { changed.string($0, 0) ?? "" }
        for id in ids {
            for table in PostgresCatalog.tables.reversed() {
                try cache.prepare("DELETE FROM \(table.name) WHERE \(table.key) = ?").bind(id).run()
            }
        }
        let hasVersionTable = try db.query("SELECT (to_regclass('version_chroma') IS NOT NULL)::int").int(0, 0) == 1
        for table in PostgresCatalog.tables where hasVersionTable || table.name != "version_chroma" {
            let columns = table.columns.map(\.0).joined(separator: ", ")
            let filter = table.name == "reference" ? "version > $1" : "\(table.key) IN (SELECT id FROM reference WHERE version > $1)"
            let rows = try db.query("SELECT \(columns) FROM \(table.name) WHERE \(filter)", [.int(since)])
            let insert = try cache.prepare("INSERT INTO \(table.name)(\(columns)) VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))")
            for r in 0..<rows.rowCount {
                let values: [Any?] = table.columns.indices.map { c in
                    if rows.isNull(r, c) { return nil }
                    switch table.columns[c].1 {
                    case .text: return rows.string(r, c)
                    case .int: return rows.int(r, c)
                    case .double: return rows.double(r, c)
                    case .bytes: return Data(rows.bytes(r, c))
                    }
                }
                try insert.bind(array: values).run()
            }
        }
        try PostgresCatalog.setCacheState(cache, instance: cachedInstance, version: version)
    }

    private static func setCacheState(_ cache: SQLiteDatabase, instance: String, version: Int64) throws {
        let set = try cache.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)")
        try set.bind("pg_instance", instance).run()
        try set.bind("pg_version", "\(version)").run()
        try set.bind("index_token", "\(UInt64.random(in: 1 ... .max))").run()
    }

    /// Writes the current cache state of reference `id` (row, annotations, marker, Shazam
    /// peaks, version features; or its absence) to the server, stamped with `version`.
    private func push(id: String, from cache: SQLiteDatabase, to db: PostgresConnection, version: Int64) throws {
        try db.query("DELETE FROM reference WHERE id = $1", [.text(id)])
        let exists = try cache.prepare("SELECT count(*) FROM reference WHERE id = ?").bind(id)
        guard try exists.step(), exists.int(0) > 0 else {
            try db.query("INSERT INTO reference_removed(id, version) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                         [.text(id), .int(version)])
            return
        }
        try db.query("DELETE FROM reference_removed WHERE id = $1", [.text(id)])
        for table in PostgresCatalog.tables {
            let columns = table.columns.map(\.0)
            let q = try cache.prepare("SELECT \(columns.joined(separator: ", ")) FROM \(table.name) WHERE \(table.key) = ?").bind(id)
            let extra = table.name == "reference" ? ", version" : ""
            let placeholders = (1...(columns.count + (extra.isEmpty ? 0 : 1))).map { "$\($0)" }.joined(separator: ", ")
            let sql = "INSERT INTO \(table.name)(\(columns.joined(separator: ", "))\(extra)) VALUES (\(placeholders))"
            while try q.step() {
                var values: [PostgresValue] = columns.indices.map { c in
                    switch q.value(Int32(c)) {
                    case let v as Int64: return .int(v)
                    case let v as Double: return .double(v)
                    case let v as String: return .text(v)
                    case let v as Data: return .bytes([UInt8](v))
                    default: return .null
                    }
                }
                if !extra.isEmpty { values.append(.int(version)) }
                try db.query(sql, values)
            }
        }
    }
}

extension PostgresCatalog: SQLiteWriteObserver {
    func didBegin(_ cache: SQLiteDatabase) throws {
        lock.lock()
        holdsLock = true
        let db = try withConnection { db in
            try db.execute("BEGIN")
            return db
        }
        inTransaction = true
        let (version, instance) = try serverState(db, forUpdate: true)
        let cached = try PostgresCatalog.cacheState(cache)
        if cached.instance != instance || cached.version != version {
            try pull(from: db, into: cache, version: version, instance: instance)
        }
        try cache.execute("DELETE FROM temp.soundmark_dirty")
    }

    func willCommit(_ cache: SQLiteDatabase) throws {
        guard let db = connection, inTransaction else { return }
        let q = try cache.prepare("SELECT id FROM temp.soundmark_dirty ORDER BY id")
        var ids: [String] = []
        while try q.step() { ids.append(q.string(0) ?? "") }
        if ids.isEmpty {
            try db.execute("ROLLBACK")
        } else {
            let version = try db.query("UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'version' RETURNING value::bigint").int(0, 0)
            for id in ids { try push(id: id, from: cache, to: db, version: version) }
            let (instance, _) = try PostgresCatalog.cacheState(cache)
            try PostgresCatalog.setCacheState(cache, instance: instance, version: version)
            try cache.execute("DELETE FROM temp.soundmark_dirty")
            try db.execute("COMMIT")
        }
        inTransaction = false
        release()
    }

    func didRollBack() {
        if inTransaction, let db = connection, db.isAlive { try? db.execute("ROLLBACK") }
        inTransaction = false
        release()
    }

    private func release() {
        if holdsLock {
            holdsLock = false
            lock.unlock()
        }
    }
}
