import Foundation

/// The catalog's side of references' version features: their table (`version_chroma`, one row
/// per reference, deleted with it), the format 2 → 3 migration that adds it, and its removal
/// with a reference. Storing and reading the chroma are in Versions/CatalogVersionFeatures.swift.
extension Catalog {
    static let versionTable = """
        CREATE TABLE IF NOT EXISTS version_chroma(
            reference_id TEXT PRIMARY KEY REFERENCES reference(id) ON DELETE CASCADE, data BLOB NOT NULL)
        """

    func hasVersionTable() throws -> Bool {
        let q = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'version_chroma'")
        return try q.step() && q.int(0) > 0
    }

    /// Format 2 → 3: the empty `version_chroma` table, in one transaction (writable opens only).
    func migrateToVersionFeatures(readOnly: Bool) throws {
        guard storedFormatVersion == 2, !readOnly else { return }
        try db.transaction {
            try db.execute(Catalog.versionTable)
            try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").bind("format_version", "\(Catalog.formatVersion)").run()
        }
        storedFormatVersion = Catalog.formatVersion
    }

    /// Deletes a reference's version features (inside the caller's transaction).
    func removeVersionFeatures(id: String) throws {
        guard try hasVersionTable() else { return }
        try db.prepare("DELETE FROM version_chroma WHERE reference_id = ?").bind(id).run()
    }
}
