import Foundation
import Soundmark

/// The catalogs on PostgreSQL this process opened, by URI: one connection and cache each.
private nonisolated(unsafe) var postgresCatalogs: [String: PostgresCatalog] = [:]
private let postgresCatalogsLock = NSLock()

/// Cache file paths and the server location each stands for, so that messages name the
/// server (without password), never the local cache.
private nonisolated(unsafe) var displayNames: [(String, String)] = []

/// `message` with every local cache path replaced by the server location it caches.
func displayingServers(_ message: String) -> String {
    postgresCatalogsLock.lock(); defer { postgresCatalogsLock.unlock() }
    var text = message
    for (path, display) in displayNames where text.contains(path) {
        text = text.replacingOccurrences(of: path + ".index", with: display)
            .replacingOccurrences(of: path, with: display)
    }
    return text
}

/// The PostgreSQL catalog at `uri` (connected once per process).
func postgresCatalog(_ uri: String, create: Bool) throws -> PostgresCatalog {
    postgresCatalogsLock.lock()
    if let known = postgresCatalogs[uri] {
        postgresCatalogsLock.unlock()
        return known
    }
    postgresCatalogsLock.unlock()
    let catalog = try PostgresCatalog(uri: uri, create: create)
    postgresCatalogsLock.lock()
    postgresCatalogs[uri] = catalog
    displayNames.append((catalog.cachePath, catalog.location.display))
    displayNames.append((uri, catalog.location.display))
    postgresCatalogsLock.unlock()
    return catalog
}

/// Opens the catalog named by `--catalog`: an SQLite file, or a PostgreSQL catalog
/// (`postgresql://…`, `postgres://…`) through its local cache, brought up to date first unless
/// `fresh` is false (a per-file check of a batch the writer keeps up to date).
func openCatalog(_ location: String, create: Bool = false, readOnly: Bool = false, fresh: Bool = true) throws -> Catalog {
    guard PostgresLocation.isPostgres(location) else { return try Catalog(path: location, create: create, readOnly: readOnly) }
    let pg = try postgresCatalog(location, create: create)
    if !fresh && FileManager.default.fileExists(atPath: pg.cachePath) { return try Catalog(path: pg.cachePath, readOnly: true) }
    return try pg.open(readOnly: readOnly)
}

/// For `monitor`'s catalog watcher: pulls a PostgreSQL catalog's changes into its cache (whose
/// SQLite change stamp then moves); nothing for an SQLite catalog.
func refreshIfPostgres(_ location: String) throws {
    guard PostgresLocation.isPostgres(location) else { return }
    try postgresCatalog(location, create: false).refresh()
}

/// The path the `Catalog` for `location` reads (the local cache for PostgreSQL).
func catalogFilePath(_ location: String) throws -> String {
    guard PostgresLocation.isPostgres(location) else { return location }
    return try postgresCatalog(location, create: false).cachePath
}

/// `soundmark catalog copy SRC DST`: every reference of SRC stored into DST as it is (SQLite or
/// PostgreSQL either side), one transaction per reference; DST's other references are kept.
func runCatalogCopy(_ args: ParsedArguments) throws -> Int32 {
    let (from, to) = (args.positional[0], args.positional[1])
    if from == to { throw UsageError(message: "source and destination are the same catalog") }
    let source = try openCatalog(from, readOnly: true)
    let destination = try openCatalog(to, create: true)
    if (try? catalogFilePath(from)) == destination.path { throw UsageError(message: "source and destination are the same catalog") }
    let references = try source.references()
    for r in references {
        try destination.copyReference(id: r.item.id, from: source)
    }
    refreshIndex(destination)
    FileHandle.standardError.write(Data(displayingServers("\(references.count) reference(s) copied from \(from) to \(to)\n").utf8))
    return Exit.ok
}

/// The PostgreSQL commands: `catalog copy`, `queue add`, `queue status`, `worker`.
let postgresCommands: [CommandSpec] = [
    CommandSpec(words: ["catalog", "copy"], usage: "SRC DST",
                summary: "copy every reference between catalogs (SQLite file or postgresql:// URI, either way)",
                details: """
                References are copied as stored (metadata, postings, annotations, markers, Shazam peaks, file
                stamps), one transaction each; a reference of DST with the same id is replaced, DST's other
                references are kept. DST is created when missing. Both must have the same fingerprint configuration.
                """,
                options: [], positional: 2...2, run: runCatalogCopy),
]
