import Foundation

/// Shazam-format peaks of references, in a table of their own (`shazam_signature`, created the
/// first time one is stored: older catalogs and readers are unaffected).
///
/// A reference carries Shazam peaks *on request*: `catalog add --shazam` stores them next to
/// soundmark's postings, `catalog import` stores them as the only fingerprint of a reference
/// that has no audio (a ShazamKit signature). Queries that are Shazam signatures are matched
/// against them, audio queries against the references that have nothing else.
extension Catalog {
    /// Stores (or replaces) the Shazam signature of an existing reference.
    /// - Throws: ``SoundmarkError/unknownReference(path:id:)`` when no reference has this id,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when SQLite fails.
    public func setShazamSignature(_ signature: ShazamSignature, forReference id: String) throws {
        do {
            try db.transaction {
                guard try reference(id: id) != nil else { throw SoundmarkError.unknownReference(path: path, id: id) }
                try db.execute(Catalog.shazamTable)
                try db.prepare("INSERT OR REPLACE INTO shazam_signature(id, data) VALUES (?, ?)")
                    .bind(id, signature.dataRepresentation(prefixed: true)).run()
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// Whether reference `id` has Shazam peaks stored (`catalog add --shazam` or `catalog import`).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when SQLite fails.
    public func hasShazamSignature(id: String) throws -> Bool {
        do {
            guard try hasShazamTable() else { return false }
            let q = try db.prepare("SELECT count(*) FROM shazam_signature WHERE id = ?").bind(id)
            return try q.step() && q.int(0) > 0
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Every stored Shazam signature by reference id (empty when there are none).
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when one does not read
    ///   (its CRC-32 fails: the file is damaged).
    public func shazamSignatures() throws -> [String: ShazamSignature] {
        do {
            guard try hasShazamTable() else { return [:] }
            let q = try db.prepare("SELECT id, data FROM shazam_signature")
            var out: [String: ShazamSignature] = [:]
            while try q.step() {
                let id = q.string(0) ?? ""
                do { out[id] = try ShazamSignature(data: Data(q.blob(1))) } catch let e as ShazamFormatError {
                    throw SoundmarkError.catalogUnreadable(path: path, reason: "Shazam peaks of reference '\(id)': \(e.reason)")
                }
            }
            return out
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Throws when `signature` holds no audio to import: a header that records 0 samples (its
    /// peaks, if any, lie outside it). What ``importShazamReference(_:representing:annotations:source:)``
    /// checks first; callable before a catalog is created.
    /// - Throws: ``SoundmarkError/emptySignature(path:reason:)`` naming `source`.
    public static func checkImportable(_ signature: ShazamSignature, source: String) throws {
        guard signature.sampleCountIsKnown && signature.sampleCount == 0 else { return }
        let peaks = signature.peakCounts.reduce(0, +)
        throw SoundmarkError.emptySignature(path: source,
            reason: "the Shazam signature's header records 0 samples (no audio\(peaks > 0 ? ", yet \(peaks) peaks" : "")): not imported")
    }

    /// Adds a reference that has no audio, only a Shazam signature (an imported ShazamKit
    /// reference): no postings, its duration from the signature, its annotations as given. An
    /// existing reference with this id is replaced.
    /// - Returns: ``AddOutcome/added`` or ``AddOutcome/replaced``.
    /// - Throws: ``SoundmarkError/annotationOutOfRange(path:id:index:start:end:)``,
    ///   ``SoundmarkError/emptySignature(path:reason:)`` for a header that records 0 samples,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)``.
    @discardableResult
    public func importShazamReference(_ signature: ShazamSignature, representing item: MediaItem,
                                      annotations: [Annotation] = [], source: String? = nil) throws -> AddOutcome {
        for (i, a) in annotations.enumerated() where !a.isInRange {
            throw SoundmarkError.annotationOutOfRange(path: path, id: item.id, index: i, start: a.start, end: a.end)
        }
        try Catalog.checkImportable(signature, source: source ?? item.id)
        let blob = PostingCodec.encode([])
        let bytes = Array(signature.dataRepresentation(prefixed: true))
        let digest = String(format: "shazam:%016llx", fnv1a64(bytes))
        let properties = String(decoding: (try? JSONEncoder.sorted.encode(item.properties)) ?? Data("{}".utf8), as: UTF8.self)
        let samples = Int64((signature.duration * Double(configuration.sampleRate)).rounded())
        do {
            return try db.transaction {
                let existed = try reference(id: item.id) != nil
                try db.prepare("""
                    INSERT OR REPLACE INTO reference(id, title, subtitle, artist, properties, source, sample_count,
                        posting_count, audio_digest, postings, postings_crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).bind(item.id, item.title, item.subtitle, item.artist, properties, source,
                              samples, 0, digest, Data(blob), postingsChecksum(blob)).run()
                try db.execute(Catalog.shazamTable)
                try db.prepare("INSERT OR REPLACE INTO shazam_signature(id, data) VALUES (?, ?)").bind(item.id, Data(bytes)).run()
                try db.prepare("DELETE FROM annotation WHERE reference_id = ?").bind(item.id).run()
                let insert = try db.prepare("INSERT INTO annotation(reference_id, seq, start, \"end\", text) VALUES (?, ?, ?, ?, ?)")
                for (i, a) in annotations.enumerated() { try insert.bind(item.id, i, a.start, a.end, a.text).run() }
                return existed ? .replaced : .added
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }
}
