import CPostgres
import Foundation

/// A value sent as a statement parameter (`$1`, `$2`…) or read from a result cell.
///
/// Parameters are always sent separately from the SQL text (`PQexecParams`), so a reference id
/// or title holding quotes, semicolons or `$$` is stored as the text it is. `bytes` travel in
/// binary (bytea); numbers as their exact decimal text.
public enum PostgresValue: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// Text (UTF-8).
    case text(String)
    /// A 64-bit integer (bigint; also accepted for integer columns).
    case int(Int64)
    /// A double-precision number (`Double.description` round-trips exactly).
    case double(Double)
    /// Binary data (bytea).
    case bytes([UInt8])
}

/// Where a PostgreSQL catalog lives, parsed from a libpq connection URI
/// (`postgresql://user@host:port/dbname?…` or `postgres://…`).
///
/// ``display`` is the form printed in messages and logs: it never holds the password
/// (which should come from `PGPASSWORD` or `~/.pgpass`, but is dropped even when the URI holds it).
public struct PostgresLocation: Sendable, Equatable {
    /// The URI as given (may hold a password: never print it).
    public let uri: String
    /// Host (or socket folder) as libpq resolves it ("" for libpq's default).
    public let host: String
    /// Port ("" for libpq's default, 5432).
    public let port: String
    /// Database name ("" for libpq's default: the user's name).
    public let database: String
    /// User name ("" for libpq's default).
    public let user: String

    /// Whether `text` names a PostgreSQL catalog rather than a file: it starts with
    /// `postgresql://` or `postgres://`.
    public static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgresql://") || text.hasPrefix("postgres://")
    }

    /// Parses a connection URI with libpq's own parser (`PQconninfoParse`).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when libpq cannot parse it
    ///   (the message names the URI without its password).
    public init(_ uri: String) throws {
        self.uri = uri
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &error) else {
            let why = error.map { PostgresLocation.scrubbed(oneLine(String(cString: $0)), uri: uri) } ?? "unparseable connection URI"
            if let error { PQfreemem(error) }
            throw SoundmarkError.catalogUnreadable(path: PostgresLocation.redacted(uri), reason: why)
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        host = values["host"] ?? values["hostaddr"] ?? ""
        port = values["port"] ?? ""
        database = values["dbname"] ?? ""
        user = values["user"] ?? ""
    }

    /// `postgresql://user@host:port/dbname`: the location without password or query options.
    public var display: String {
        let who = user.isEmpty ? "" : user + "@"
        let at = host.contains("/") ? "[socket \(host)]" : host
        return "postgresql://\(who)\(at)\(port.isEmpty ? "" : ":" + port)/\(database)"
    }

    /// libpq's `message` about `uri` with nothing of the URI in it: libpq quotes the URI or the
    /// token it could not parse ("…"), which may be or hold the password, so quoted text is
    /// dropped, and any remaining occurrence of the password is masked.
    static func scrubbed(_ message: String, uri: String) -> String {
        var text = ""
        var quoted = false
        for c in message {
            if c == "\"" {
                if !quoted { text += "\"…\"" }
                quoted.toggle()
            } else if !quoted {
                text.append(c)
            }
        }
        return maskingPassword(text, uri: uri)
    }

    /// `message` with every occurrence of `uri`'s password (between `://`, `:` and `@`) masked
    /// as `***`, and nothing else changed: for libpq's messages about a connection, whose quoted
    /// text is the host, socket folder, user or database the user needs to see, never the URI.
    static func maskingPassword(_ message: String, uri: String) -> String {
        guard let scheme = uri.range(of: "://"), let at = uri[scheme.upperBound...].lastIndex(of: "@"),
              let colon = uri[scheme.upperBound..<at].firstIndex(of: ":") else { return message }
        let password = String(uri[uri.index(after: colon)..<at])
        return password.isEmpty ? message : message.replacingOccurrences(of: password, with: "***")
    }

    /// A URI with anything between `://` and `@` after a `:` (the password) and its query
    /// string removed, for messages about a URI libpq could not parse.
    static func redacted(_ uri: String) -> String {
        var text = uri
        if let q = text.firstIndex(of: "?") { text = String(text[..<q]) }
        if let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") {
            let credentials = text[scheme.upperBound..<at]
            if let colon = credentials.firstIndex(of: ":") { text.replaceSubrange(colon..<at, with: "") }
        }
        return text
    }
}

/// Collapses a libpq message (often several lines: "FATAL: …\nDETAIL: …") into one line.
func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty }.joined(separator: "; ")
}

/// A PostgreSQL error: one line of libpq's message and the SQLSTATE when the server sent one.
public struct PostgresFailure: Error, CustomStringConvertible, Sendable {
    /// The message, on one line (never holds the connection string).
    public let message: String
    /// The five-character SQLSTATE (`40001`, `57P01`…), empty for connection failures.
    public let sqlState: String
    /// Whether the connection is gone (the server refused, restarted or dropped it): a retry
    /// on a new connection may succeed.
    public let connectionLost: Bool
    /// The message.
    public var description: String { message }
}

/// One result of a statement: rows of cells read in binary format.
public final class PostgresResult {
    private let result: OpaquePointer
    /// Number of rows.
    public let rowCount: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
    }

    deinit { PQclear(result) }

    /// Whether cell (`row`, `column`) is NULL.
    public func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(result, Int32(row), Int32(column)) != 0 }

    /// The raw bytes of a cell (binary format).
    public func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        let n = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard n > 0, let p = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
        return p.withMemoryRebound(to: UInt8.self, capacity: n) { Array(UnsafeBufferPointer(start: $0, count: n)) }
    }

    /// A text cell (nil when NULL).
    public func string(_ row: Int, _ column: Int) -> String? {
        isNull(row, column) ? nil : String(decoding: bytes(row, column), as: UTF8.self)
    }

    /// An integer cell of type int2, int4 or int8 (0 when NULL).
    public func int(_ row: Int, _ column: Int) -> Int64 {
        guard !isNull(row, column) else { return 0 }
        let b = bytes(row, column)
        var v: UInt64 = 0
        for byte in b { v = v << 8 | UInt64(byte) }
        switch b.count {
        case 2: return Int64(Int16(truncatingIfNeeded: v))
        case 4: return Int64(Int32(truncatingIfNeeded: v))
        default: return Int64(bitPattern: v)
        }
    }

    /// A float8 cell (0 when NULL).
    public func double(_ row: Int, _ column: Int) -> Double {
        guard !isNull(row, column) else { return 0 }
        var v: UInt64 = 0
        for byte in bytes(row, column) { v = v << 8 | UInt64(byte) }
        return Double(bitPattern: v)
    }
}

/// One libpq connection (https://www.postgresql.org/docs/15/libpq.html). Every statement is
/// sent with `PQexecParams` (parameters apart from the SQL text, results in binary). Not
/// thread-safe: use one connection per thread.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    /// The location connected to.
    public let location: PostgresLocation

    /// Connects.
    /// - Throws: ``PostgresFailure`` (one line, no password) when the server refuses or cannot be reached.
    public init(_ location: PostgresLocation) throws {
        self.location = location
        // A connection string is the URI; libpq reads PGPASSWORD and ~/.pgpass itself.
        handle = PQconnectdb(location.uri)
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            // The host, socket or database in libpq's quotes is the cause the user needs (it is
            // never the URI here: the URI was parsed already), so only the password is masked.
            let why = handle.map { PostgresLocation.maskingPassword(oneLine(String(cString: PQerrorMessage($0))), uri: location.uri) }
                ?? "out of memory"
            PQfinish(handle)
            self.handle = nil
            throw PostgresFailure(message: "cannot connect: \(why)", sqlState: "", connectionLost: true)
        }
        try execute("SET client_min_messages = warning")
    }

    deinit { PQfinish(handle) }

    /// Whether the connection is still usable (libpq's status is OK).
    public var isAlive: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Runs one statement with parameters `$1…$n`.
    /// - Returns: its rows (empty for statements without results).
    /// - Throws: ``PostgresFailure``.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresResult {
        guard let handle else { throw PostgresFailure(message: "not connected", sqlState: "", connectionLost: true) }
        var buffers: [[UInt8]] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for p in parameters {
            switch p {
            case .null: buffers.append([]); formats.append(0)
            case .text(let s): buffers.append(Array(s.utf8) + [0]); formats.append(0)
            case .int(let i): buffers.append(Array("\(i)".utf8) + [0]); formats.append(0)
            case .double(let d): buffers.append(Array("\(d)".utf8) + [0]); formats.append(0)
            case .bytes(let b): buffers.append(b); formats.append(1)
            }
            lengths.append(Int32(buffers.last!.count))
        }
        let result: OpaquePointer? = withPointers(buffers, nulls: parameters.map { $0 == .null }) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, lengths, formats, 1)
        }
        guard let result else { throw failure(nil) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let error = failure(result)
            PQclear(result)
            throw error
        }
        return PostgresResult(result)
    }

    /// Runs `sql` (one or more statements without parameters, such as a schema) with `PQexec`.
    /// - Throws: ``PostgresFailure``.
    public func execute(_ sql: String) throws {
        guard let handle else { throw PostgresFailure(message: "not connected", sqlState: "", connectionLost: true) }
        guard let result = PQexec(handle, sql) else { throw failure(nil) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure(result) }
    }

    /// Runs `body` in a transaction (`BEGIN` + `options`, e.g. `ISOLATION LEVEL REPEATABLE READ`),
    /// committing when it returns and rolling back when it throws.
    public func transaction<T>(_ options: String = "", _ body: () throws -> T) throws -> T {
        try execute("BEGIN " + options)
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if isAlive { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func failure(_ result: OpaquePointer?) -> PostgresFailure {
        let lost = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        var message = result.flatMap { r in PQresultErrorMessage(r).map { String(cString: $0) } } ?? ""
        if message.isEmpty, let handle { message = String(cString: PQerrorMessage(handle)) }
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) } ?? ""
        let line = oneLine(message)
        return PostgresFailure(message: line.isEmpty ? "connection to the server lost" : line, sqlState: state,
                               connectionLost: lost || state.hasPrefix("08") || state.hasPrefix("57P"))
    }
}

/// Calls `body` with C pointers to each buffer (NULL for the `nulls`), kept alive for the call.
private func withPointers<R>(_ buffers: [[UInt8]], nulls: [Bool], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = []
    defer { pointers.forEach { $0?.deallocate() } }
    for (i, b) in buffers.enumerated() {
        if nulls[i] { pointers.append(nil); continue }
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(b.count, 1))
        b.withUnsafeBufferPointer { src in
            src.baseAddress.map { UnsafeMutableRawPointer(p).copyMemory(from: $0, byteCount: b.count) }
        }
        pointers.append(p)
    }
    return body(pointers.map { $0.map { UnsafePointer($0) } })
}
