import Foundation

extension Catalog {
    /// Copies reference `id` from `source` as it is stored there (metadata, postings blob and
    /// checksum, file stamp, annotations, marker, Shazam peaks, version features: the blobs
    /// byte for byte), replacing any reference with
    /// that id here, in one transaction: no audio is decoded and no duplicate check is made.
    /// `catalog copy` uses it in both directions between SQLite and PostgreSQL (a catalog from
    /// ``PostgresCatalog/open(readOnly:)`` writes the copy through to the server).
    /// - Returns: `false` when `source` has no reference `id` (nothing is changed).
    /// - Throws: ``SoundmarkError/catalogMismatch(path:reason:)`` when the two catalogs'
    ///   fingerprint configurations differ, ``SoundmarkError/catalogWriteFailed(path:reason:)``.
    @discardableResult
    public func copyReference(id: String, from source: Catalog) throws -> Bool {
        guard source.configuration.referenceAnalysis == configuration.referenceAnalysis else {
            throw SoundmarkError.catalogMismatch(path: path, reason: "\(source.path) was built with another fingerprint configuration")
        }
        do {
            var rows: [(String, [[Any?]])] = []
            for table in PostgresCatalog.tables {
                let exists = try source.db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?").bind(table.name)
                guard try exists.step(), exists.int(0) > 0 else { continue }
                let columns = table.columns.map(\.0).joined(separator: ", ")
                let q = try source.db.prepare("SELECT \(columns) FROM \(table.name) WHERE \(table.key) = ?").bind(id)
                var list: [[Any?]] = []
                while try q.step() { list.append(table.columns.indices.map { q.value(Int32($0)) }) }
                rows.append((table.name, list))
            }
            guard let references = rows.first, references.0 == "reference", !references.1.isEmpty else { return false }
            try db.transaction {
                try db.execute("""
                    CREATE TABLE IF NOT EXISTS reference_marker(reference_id TEXT PRIMARY KEY, payload INTEGER NOT NULL);
                    CREATE TABLE IF NOT EXISTS shazam_signature(id TEXT PRIMARY KEY, data BLOB NOT NULL);
                    """)
                try db.execute(Catalog.versionTable)
                for table in PostgresCatalog.tables.reversed() {
                    try db.prepare("DELETE FROM \(table.name) WHERE \(table.key) = ?").bind(id).run()
                }
                for (name, list) in rows {
                    let table = PostgresCatalog.tables.first { $0.name == name }!
                    let insert = try db.prepare("INSERT INTO \(name)(\(table.columns.map(\.0).joined(separator: ", "))) VALUES (\(table.columns.map { _ in "?" }.joined(separator: ", ")))")
                    for values in list { try insert.bind(array: values).run() }
                }
                try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('index_token', ?)").bind("\(UInt64.random(in: 1 ... .max))").run()
            }
            return true
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }
}
