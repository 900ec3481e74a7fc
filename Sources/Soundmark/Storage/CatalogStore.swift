import Foundation

/// Where a catalog or a recognition library lives, as a `--catalog` or `--library` argument
/// names it: an SQLite file, or a database on a PostgreSQL server.
///
/// The one place that tells the two apart: an argument that starts with `postgresql://` or
/// `postgres://` is a server (see ``PostgresLocation/isPostgres(_:)``), anything else a file path.
public enum CatalogLocation: Sendable, Equatable {
    /// An SQLite file at this path (it may not exist yet).
    case sqlite(path: String)
    /// A PostgreSQL database, by its libpq connection URI as given (it may hold a password:
    /// print ``PostgresLocation/display`` instead).
    case postgres(uri: String)

    /// The location an argument names; parses nothing and never fails (a URI that libpq cannot
    /// parse fails when a ``CatalogStore`` connects to it).
    /// - Parameter argument: a file path, or a URI starting with `postgresql://` or `postgres://`.
    public init(_ argument: String) {
        self = PostgresLocation.isPostgres(argument) ? .postgres(uri: argument) : .sqlite(path: argument)
    }

    /// Whether this is an SQLite file that does not exist yet (so opening it with `create`
    /// makes a new one); `false` for a PostgreSQL database, whatever the server holds.
    public var isMissingFile: Bool {
        guard case .sqlite(let path) = self else { return false }
        return !FileManager.default.fileExists(atPath: path)
    }
}

/// A catalog's storage, opened once per location: an SQLite file read and written as it is, or
/// a ``PostgresCatalog`` on a server, read and written through its local SQLite cache.
///
/// Either way, ``open(create:readOnly:fresh:)`` returns a ``Catalog`` on an SQLite file
/// (``filePath``), so matching runs the same on both.
public final class CatalogStore {
    /// The location this store was opened from.
    public let location: CatalogLocation
    /// The server catalog behind a `.postgres` location (its connection and local cache); `nil`
    /// for an SQLite file.
    public let server: PostgresCatalog?
    /// The SQLite file the returned catalogs read: the file itself, or the server catalog's
    /// local cache (``PostgresCatalog/cachePath``).
    public let filePath: String

    /// Opens the storage of `location`: nothing is read for an SQLite file; a PostgreSQL
    /// database is connected to and its catalog tables checked.
    /// - Parameters:
    ///   - location: the file or server.
    ///   - create: create the catalog tables on a server whose database has none (`catalog add`,
    ///     `catalog copy`); an SQLite file is created, or not, by ``open(create:readOnly:fresh:)``.
    /// - Throws: what ``PostgresCatalog/init(uri:create:configuration:cacheDirectory:)`` throws
    ///   (``SoundmarkError/catalogUnreadable(path:reason:)`` when the server cannot be reached or
    ///   holds no catalog, ``SoundmarkError/catalogMismatch(path:reason:)``); never for a file.
    public init(_ location: CatalogLocation, create: Bool = false) throws {
        self.location = location
        switch location {
        case .sqlite(let path):
            server = nil
            filePath = path
        case .postgres(let uri):
            let catalog = try PostgresCatalog(uri: uri, create: create)
            server = catalog
            filePath = catalog.cachePath
        }
    }

    /// Opens the catalog.
    /// - Parameters:
    ///   - create: create a missing SQLite file (ignored for a server: see ``init(_:create:)``).
    ///   - readOnly: open for reading only; otherwise a server catalog's writes are also
    ///     committed on the server (see ``PostgresCatalog``).
    ///   - fresh: bring a server catalog's local cache up to date first (one query when it is);
    ///     `false` reads an existing cache as it is, read-only (a per-file check of a batch that
    ///     the writer keeps up to date). Ignored for an SQLite file.
    /// - Returns: a ``Catalog`` on ``filePath``.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` or
    ///   ``SoundmarkError/catalogMismatch(path:reason:)``, as ``Catalog/init(path:create:readOnly:configuration:upgrading:)``
    ///   and ``PostgresCatalog/open(readOnly:)`` throw them.
    public func open(create: Bool = false, readOnly: Bool = false, fresh: Bool = true) throws -> Catalog {
        guard let server else { return try Catalog(path: filePath, create: create, readOnly: readOnly) }
        if !fresh && FileManager.default.fileExists(atPath: server.cachePath) { return try Catalog(path: server.cachePath, readOnly: true) }
        return try server.open(readOnly: readOnly)
    }

    /// Pulls a server catalog's committed changes into its local cache (whose SQLite change
    /// stamp then moves); nothing for an SQLite file, whose writers change it in place.
    /// - Returns: `true` when the cache changed (always `false` for an SQLite file).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when the server or the cache
    ///   cannot be read.
    @discardableResult
    public func refresh() throws -> Bool {
        try server?.refresh() ?? false
    }
}
