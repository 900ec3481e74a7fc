import Foundation

/// Version features of references (chroma, see `Versions/`), in a table of their own,
/// `version_chroma`: one row per reference holding ``ChromaSequence/encoded()`` (30 bytes per
/// second of audio), deleted with its reference. Catalog format 3 has the table; a format 2
/// catalog gets it, empty, when opened for writing (`catalog upgrade` then computes the
/// features from the references' source files).
extension Catalog {
    /// Stores (or replaces) the version features of an existing reference.
    /// - Throws: ``SoundmarkError/unknownReference(path:id:)`` when no reference has this id,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when SQLite fails.
    public func setVersionFeatures(_ chroma: ChromaSequence, forReference id: String) throws {
        do {
            try db.transaction {
                guard try reference(id: id) != nil else { throw SoundmarkError.unknownReference(path: path, id: id) }
                try db.execute(Catalog.versionTable)
                try db.prepare("INSERT OR REPLACE INTO version_chroma(reference_id, data) VALUES (?, ?)")
                    .bind(id, Data(chroma.encoded())).run()
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// Whether the reference `id` has version features.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)``.
    public func hasVersionFeatures(id: String) throws -> Bool {
        do {
            guard try hasVersionTable() else { return false }
            let q = try db.prepare("SELECT count(*) FROM version_chroma WHERE reference_id = ?").bind(id)
            return try q.step() && q.int(0) > 0
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// The version features of every reference that has them, by id (empty for a catalog
    /// without the table).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)``.
    public func versionFeatures() throws -> [String: ChromaSequence] {
        do {
            guard try hasVersionTable() else { return [:] }
            let q = try db.prepare("SELECT reference_id, data FROM version_chroma")
            var result: [String: ChromaSequence] = [:]
            while try q.step() {
                guard let chroma = ChromaSequence(encoded: q.blob(1)) else {
                    throw SoundmarkError.catalogUnreadable(path: path, reason: "corrupt version features of reference '\(q.string(0) ?? "")'")
                }
                result[q.string(0) ?? ""] = chroma
            }
            return result
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }
}
