import Foundation

/// The audio-marker payloads references are expected to carry (`catalog add --marker N`).
///
/// Stored in their own table, `reference_marker(reference_id TEXT PRIMARY KEY, payload INTEGER)`,
/// created the first time a marker is stored (an additive migration: older catalogs read as
/// having no markers, and older soundmark versions ignore the table). Removing a reference
/// removes its marker.
extension Catalog {
    private func hasMarkerTable() throws -> Bool {
        let q = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'reference_marker'")
        return try q.step() && q.int(0) > 0
    }

    /// Records that reference `id` carries marker `payload` (replacing any earlier one), or forgets
    /// its marker when `payload` is nil. One transaction.
    /// - Throws: ``SoundmarkError/unknownReference(path:id:)`` when no reference has this id,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when SQLite fails.
    public func setMarker(_ payload: UInt32?, id: String) throws {
        guard try reference(id: id) != nil else { throw SoundmarkError.unknownReference(path: path, id: id) }
        do {
            try db.transaction {
                try db.execute("CREATE TABLE IF NOT EXISTS reference_marker(reference_id TEXT PRIMARY KEY, payload INTEGER NOT NULL)")
                if let payload {
                    try db.prepare("INSERT OR REPLACE INTO reference_marker(reference_id, payload) VALUES (?, ?)")
                        .bind(id, Int64(payload)).run()
                } else {
                    try db.prepare("DELETE FROM reference_marker WHERE reference_id = ?").bind(id).run()
                }
            }
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// Removes `id`'s marker, inside the caller's transaction (nothing when the table does not exist).
    func removeMarker(id: String) throws {
        if try hasMarkerTable() { try db.prepare("DELETE FROM reference_marker WHERE reference_id = ?").bind(id).run() }
    }

    /// The marker payload of reference `id`, or nil.
    public func marker(id: String) throws -> UInt32? {
        guard try hasMarkerTable() else { return nil }
        let q = try db.prepare("SELECT payload FROM reference_marker WHERE reference_id = ?").bind(id)
        return try q.step() ? UInt32(truncatingIfNeeded: q.int(0)) : nil
    }

    /// Every reference's marker payload, by reference id (empty when none was stored).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when SQLite fails.
    public func markers() throws -> [String: UInt32] {
        do {
            guard try hasMarkerTable() else { return [:] }
            let q = try db.prepare("SELECT m.reference_id, m.payload FROM reference_marker m JOIN reference r ON r.id = m.reference_id")
            var result: [String: UInt32] = [:]
            while try q.step() { result[q.string(0) ?? ""] = UInt32(truncatingIfNeeded: q.int(1)) }
            return result
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }
}
