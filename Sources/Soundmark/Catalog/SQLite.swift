import CSQLite
import Foundation

/// A thin wrapper over one SQLite connection (https://sqlite.org/c3ref/intro.html).
final class SQLiteDatabase {
    let path: String
    private(set) var handle: OpaquePointer?

    /// Opens (or with `create`, creates) the database file; `readOnly` opens it for reading
    /// only, and `immutable` also without locking or a WAL index (for a catalog in a folder the
    /// process may not write to).
    init(path: String, create: Bool, readOnly: Bool = false, immutable: Bool = false) throws {
        self.path = path
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        var escaped = ""
        for c in path.unicodeScalars {
            switch c {
            case "%": escaped += "%25"
            case "?": escaped += "%3F"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(c)
            }
        }
        let uri = "file:" + escaped + (immutable ? "?immutable=1" : readOnly ? "?mode=ro" : "")
        let rc = sqlite3_open_v2(uri, &handle, flags, nil)
        if rc != SQLITE_OK {
            let why = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            handle = nil
            throw SoundmarkError.catalogUnreadable(path: path, reason: why)
        }
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit { sqlite3_close_v2(handle) }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// Runs one or more statements without results.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let why = message.map { String(cString: $0) } ?? lastError
            sqlite3_free(message)
            throw SQLiteFailure(message: why, code: rc)
        }
    }

    /// Prepares a statement.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else {
            throw SQLiteFailure(message: lastError, code: sqlite3_errcode(handle))
        }
        return SQLiteStatement(stmt, db: self)
    }

    /// Told about every write transaction of this connection (the PostgreSQL catalog's local
    /// cache mirrors each one to the server: `Postgres/PostgresCatalog.swift`); nil for a plain
    /// SQLite catalog.
    var writeObserver: SQLiteWriteObserver?

    /// Runs `body` inside a transaction, rolling back when it throws. Writers use
    /// `BEGIN IMMEDIATE` (take the write lock up front); readers (`write: false`) a deferred
    /// `BEGIN`, a consistent snapshot that never blocks a writer in WAL mode.
    func transaction<T>(write: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(write ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            if write { try writeObserver?.didBegin(self) }
            let result = try body()
            if write { try writeObserver?.willCommit(self) }
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            if write { writeObserver?.didRollBack() }
            throw error
        }
    }
}

/// Sees the write transactions of one ``SQLiteDatabase`` (see ``SQLiteDatabase/writeObserver``).
protocol SQLiteWriteObserver: AnyObject {
    /// Called right after `BEGIN IMMEDIATE`; throwing rolls the transaction back.
    func didBegin(_ db: SQLiteDatabase) throws
    /// Called right before `COMMIT`, inside the transaction; throwing rolls it back.
    func willCommit(_ db: SQLiteDatabase) throws
    /// Called after a rollback.
    func didRollBack()
}

/// An SQLite error message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let message: String
    /// SQLite's result code (extended codes keep the primary one in the low byte);
    /// `SQLITE_ERROR` for failures raised by this package rather than by SQLite.
    var code: Int32 = SQLITE_ERROR
    var description: String { message }
    /// Whether SQLite refused a write to a database it opened read-only (`SQLITE_READONLY`):
    /// a file, folder or file system this process may read but not write.
    var isReadOnly: Bool { code & 0xFF == SQLITE_READONLY }
}

/// A prepared statement; parameters are 1-based, columns 0-based.
final class SQLiteStatement {
    private let stmt: OpaquePointer
    private unowned let db: SQLiteDatabase

    init(_ stmt: OpaquePointer, db: SQLiteDatabase) {
        self.stmt = stmt
        self.db = db
    }

    deinit { sqlite3_finalize(stmt) }

    /// Binds values in order: String, Int, Int64, Double, Data, or nil for NULL.
    @discardableResult
    func bind(_ values: Any?...) -> SQLiteStatement { bind(array: values) }

    /// Binds the values of an array in order (see ``bind(_:)``).
    @discardableResult
    func bind(array values: [Any?]) -> SQLiteStatement {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
        for (i, value) in values.enumerated() {
            let k = Int32(i + 1)
            switch value {
            case let v as String: sqlite3_bind_text(stmt, k, v, -1, csqlite_transient())
            case let v as Int: sqlite3_bind_int64(stmt, k, Int64(v))
            case let v as Int64: sqlite3_bind_int64(stmt, k, v)
            case let v as Double: sqlite3_bind_double(stmt, k, v)
            case let v as Data:
                v.withUnsafeBytes { p in
                    _ = sqlite3_bind_blob(stmt, k, p.baseAddress, Int32(v.count), csqlite_transient())
                }
            default: sqlite3_bind_null(stmt, k)
            }
        }
        return self
    }

    /// Steps once; `true` when a row is available.
    func step() throws -> Bool {
        let rc = sqlite3_step(stmt)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw SQLiteFailure(message: db.lastError, code: rc)
    }

    /// Steps to the end (for statements without results).
    func run() throws { while try step() {} }

    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(stmt, column)) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(stmt, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }
    /// The cell as its stored type: `Int64`, `Double`, `String`, `Data` or nil (NULL), ready
    /// for ``bind(array:)`` (copying rows between catalogs).
    func value(_ column: Int32) -> Any? {
        switch sqlite3_column_type(stmt, column) {
        case SQLITE_INTEGER: return Int64(sqlite3_column_int64(stmt, column))
        case SQLITE_FLOAT: return sqlite3_column_double(stmt, column)
        case SQLITE_TEXT: return string(column)
        case SQLITE_BLOB: return Data(blob(column))
        default: return nil
        }
    }
    func string(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, column) else { return nil }
        return String(cString: p)
    }
    func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(stmt, column))
        guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }
}
