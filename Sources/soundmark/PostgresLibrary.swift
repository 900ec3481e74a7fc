import Foundation
import Soundmark

/// The folder of this process's snapshot of a PostgreSQL library, removed at exit.
private nonisolated(unsafe) var snapshotFolder: String?

/// A read-only snapshot of the recognition library that workers wrote on the PostgreSQL server
/// at `uri` (`library_recording`, `library_airing`): every recording and its airings copied, in
/// one REPEATABLE READ snapshot, into a temporary library file that the `library list/show` and
/// `report` commands then read as they read any library (removed when the process exits).
/// - Throws: ``CommandError`` naming the server (never the password) when it cannot be reached
///   or holds no library yet.
func postgresLibrarySnapshot(_ uri: String) throws -> Library {
    let display = (try? PostgresLocation(uri).display) ?? "library"
    let contents: [(recording: LibraryRecording, airings: [Airing])]?
    do {
        contents = try WorkQueue(uri: uri).libraryContents()
    } catch let e as PostgresFailure {
        throw CommandError(message: "\(display): library: \(e.message)")
    }
    guard let contents else {
        throw CommandError(message: "\(display): holds no recognition library yet (workers write one: soundmark queue add, soundmark worker)")
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("soundmark-pglibrary-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    snapshotFolder = folder
    atexit { if let folder = snapshotFolder { try? FileManager.default.removeItem(atPath: folder) } }
    let library = try Library(path: folder + "/library.db", create: true)
    for (recording, airings) in contents { try library.record(recording, airings: airings) }
    return library
}

/// Refuses a PostgreSQL library where a library file is written (`library import`, `library
/// remove`, `--library` of identify, scan and monitor): only workers write the server's library.
/// - Throws: ``UsageError`` when `path` is a PostgreSQL URI.
func refusePostgresLibrary(_ path: String, _ what: String) throws {
    guard case .postgres = CatalogLocation(path) else { return }
    let display = (try? PostgresLocation(path).display) ?? "a PostgreSQL database"
    throw UsageError(message: "\(what) needs a library file: the library on \(display) is written only by workers (soundmark worker); library list/show and report read it")
}
