import Foundation

/// The catalog's side of references' Shazam-format peaks: their table (`shazam_signature`,
/// created the first time one is stored) and its removal with a reference. Storing and reading
/// the peaks (which need the Shazam format) are in Formats/Shazam/CatalogShazamPeaks.swift.
extension Catalog {
    static let shazamTable = "CREATE TABLE IF NOT EXISTS shazam_signature(id TEXT PRIMARY KEY, data BLOB NOT NULL)"

    func hasShazamTable() throws -> Bool {
        let q = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'shazam_signature'")
        return try q.step() && q.int(0) > 0
    }

    /// Deletes a reference's Shazam peaks (inside the caller's transaction); nothing when the table does not exist.
    func removeShazamSignature(id: String) throws {
        guard try hasShazamTable() else { return }
        try db.prepare("DELETE FROM shazam_signature WHERE id = ?").bind(id).run()
    }
}
