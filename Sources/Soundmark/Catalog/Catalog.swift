import CSQLite
import Foundation

/// Metadata of a catalogued recording, in ShazamKit's vocabulary (`SHMediaItem`).
public struct MediaItem: Codable, Equatable, Sendable {
    /// Stable identifier of the reference within its catalog.
    public var id: String
    /// Title, if known.
    public var title: String?
    /// Subtitle, if known.
    public var subtitle: String?
    /// Artist, if known.
    public var artist: String?
    /// Custom properties (`--property KEY=VALUE`).
    public var properties: [String: String]

    /// Creates a media item.
    public init(id: String, title: String? = nil, subtitle: String? = nil, artist: String? = nil,
                properties: [String: String] = [:]) {
        self.id = id
        self.title = title
        self.subtitle = subtitle
        self.artist = artist
        self.properties = properties
    }
}

/// A reference as stored: its media item and facts about its signature.
public struct ReferenceInfo: Equatable, Sendable {
    /// The reference's metadata.
    public var item: MediaItem
    /// Length of the reference audio in seconds.
    public var duration: Double
    /// Number of postings stored for it.
    public var postingCount: Int
    /// Size of its stored postings in bytes.
    public var postingBytes: Int
    /// Number of annotations attached to it.
    public var annotationCount: Int
    /// The file or URL it was made from, if recorded.
    public var source: String?
    /// Size, modification time and content digest of that file when it was added (`nil` for
    /// stdin, URLs and references stored by older versions).
    public var file: FileStamp? = nil
}

/// What ``Catalog/addReferenceSignature(_:representing:annotations:source:)`` did.
public enum AddOutcome: Equatable, Sendable {
    /// A new reference was stored.
    case added
    /// The id existed with other audio: its signature and metadata were replaced.
    case replaced
    /// The same audio under the same id: its metadata (or annotations) changed and were updated.
    case updated
    /// The same audio under the same id with the same metadata: nothing to do.
    case unchanged
    /// The same audio is already stored under another id: skipped.
    case duplicate(of: String)
}

/// A catalog of reference signatures, media items and annotations in one SQLite file.
///
/// Layout (SQLite 3, WAL journal so readers can match while a writer adds):
/// - `meta(key, value)`: `format_version` and the `configuration` JSON;
/// - `reference(id, title, subtitle, artist, properties JSON, source, sample_count,
///   posting_count, audio_digest, postings BLOB, postings_crc, file_size, file_mtime,
///   file_digest)`: one row per reference; the postings are stored with ``PostingCodec``;
///   `audio_digest` (FNV-1a 64 of the postings) finds re-added audio; `postings_crc` (zlib
///   CRC-32 of the blob) is checked on every load; the `file_` columns (a ``FileStamp``) let
///   an unchanged file be skipped without decoding. Catalogs written before these four
///   columns existed get them (and their checksums) the first time they are opened for
///   writing, and are read without them until then;
/// - `annotation(reference_id, seq, start, end, text)`: deleted with their reference.
///
/// Every change to one reference is one transaction: a process killed during an add leaves
/// exactly the references committed before it.
public final class Catalog {
    /// The catalog file.
    public let path: String
    /// The fingerprint configuration of every signature in it.
    public let configuration: Configuration
    /// The SQLite connection (internal: the marker and Shazam-peak tables in `Marker/CatalogMarkers.swift`
    /// and `CatalogShazam.swift` use it).
    var db: SQLiteDatabase!
    /// Whether the reference table has the checksum and file-stamp columns (an older catalog
    /// opened read-only may not).
    private var hasStampColumns = true

    /// The catalog file format this soundmark writes and reads: 2 since the persistent index
    /// (version 1 catalogs are upgraded by ``upgrade(path:configuration:)``, `soundmark
    /// catalog upgrade`); 3 since the version features (the `version_chroma` table, see
    /// `CatalogVersions.swift`): a version 2 catalog opened for writing gets the empty table and
    /// version 3 at once, one opened read-only is read as having no version features.
    /// Independent of ``Configuration/formatVersion`` (signature files).
    public static let formatVersion = 3
    /// The format version found in the file (1 for a catalog opened with `upgrading`).
    var storedFormatVersion = Catalog.formatVersion

    /// The persistent index file next to the catalog: the catalog path with `.index` appended.
    public var indexPath: String { path + ".index" }

    /// Opens a catalog, creating it when `create` is set and the file does not exist or is empty
    /// (without `create` an empty file is refused as not a catalog).
    /// - Parameters:
    ///   - readOnly: open for reading only (matching, listing); a catalog in a folder this
    ///     process cannot write to is then read without locking.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` when the file or its folder is
    ///   missing, it is not a catalog or unreadable; ``SoundmarkError/catalogMismatch(path:reason:)``
    ///   when it was written with another configuration (``Configuration/referenceAnalysis``
    ///   is compared: query-only parameters may differ) or format version;
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when it is opened for writing and
    ///   this process may read it but not write it (``readOnlyReason``).
    ///   - upgrading: accept a catalog of an older format version (only for ``upgrade(path:configuration:)``).
    public init(path: String, create: Bool = false, readOnly: Bool = false, configuration: Configuration = Configuration(),
                upgrading: Bool = false) throws {
        self.path = path
        self.configuration = configuration
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if isDirectory.boolValue { throw SoundmarkError.catalogUnreadable(path: path, reason: "is a directory") }
        if !exists && (!create || readOnly) { throw SoundmarkError.catalogUnreadable(path: path, reason: "no such file") }
        if path.isEmpty { throw SoundmarkError.catalogUnreadable(path: path, reason: "empty file name") }
        let folder = parentDirectory(of: path)
        if !exists && !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "no such directory '\(folder)'")
        }
        do {
            db = try Catalog.open(path: path, create: create, readOnly: readOnly)
            let hasMeta = try count("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'") > 0
            if !hasMeta {
                // Tables without ours: another program's database. No tables at all: a new
                // (or just created by a concurrent process) catalog.
                if try count("SELECT count(*) FROM sqlite_master WHERE type = 'table'") > 0 || readOnly {
                    throw SoundmarkError.catalogUnreadable(path: path, reason: "not a soundmark catalog")
                }
                // An existing empty file becomes a catalog only where one is created (catalog
                // add): remove, annotate or upgrade turned any empty file into a catalog.
                guard create else { throw SoundmarkError.catalogUnreadable(path: path, reason: "not a soundmark catalog (an empty file)") }
                try createSchema()
            }
            try checkMeta(upgrading: upgrading)
            try migrate(readOnly: readOnly)
        } catch let error as SoundmarkError {
            throw error
        } catch {
            let text = "\(error)"
            // A catalog this process may read but not write (a read-only file, folder or mount,
            // another user's file): SQLite opens it read-only and the first write fails. The
            // catalog was read; what failed is the write the command needs.
            if !readOnly, (error as? SQLiteFailure)?.isReadOnly == true {
                throw SoundmarkError.catalogWriteFailed(path: path, reason: Catalog.readOnlyReason)
            }
            let reason = text.contains("file is not a database") ? "not a soundmark catalog" : text
            throw SoundmarkError.catalogUnreadable(path: path, reason: reason)
        }
    }

    /// Why a command that writes to a catalog cannot, where SQLite refuses the write
    /// (``SQLiteFailure/isReadOnly``): this process may read the file but not write it or its journal.
    static let readOnlyReason = "it is read-only for this user (the file, its folder or its file system); "
        + "this command writes to the catalog"

    /// Opens the SQLite file. A read-only open of a file this process may write is a read-write
    /// connection with `PRAGMA query_only`, so closing it removes the `-wal` and `-shm` files as
    /// a writer's close does (a `mode=ro` connection leaves them behind, with the file's
    /// permissions: a `0444` `-shm` kept the catalog unwritable after `chmod u+w`). A file it
    /// may not write is opened immutable when no writer is active (no `-wal`), else `mode=ro`;
    /// a read-only open that cannot use the WAL index (a folder the process may not write to)
    /// falls back to an immutable open.
    private static func open(path: String, create: Bool, readOnly: Bool) throws -> SQLiteDatabase {
        if readOnly && access(path, W_OK) == 0 && access(parentDirectory(of: path).isEmpty ? "." : parentDirectory(of: path), W_OK) == 0 {
            let db = try SQLiteDatabase(path: path, create: false)
            try db.execute("PRAGMA foreign_keys = ON")
            try db.execute("PRAGMA query_only = ON")
            return db
        }
        if readOnly && access(path, W_OK) != 0 && !FileManager.default.fileExists(atPath: path + "-wal") {
            return try SQLiteDatabase(path: path, create: false, readOnly: true, immutable: true)
        }
        let db = try SQLiteDatabase(path: path, create: create, readOnly: readOnly)
        try db.execute("PRAGMA foreign_keys = ON")
        guard readOnly else { return db }
        do {
            try db.execute("SELECT count(*) FROM sqlite_master")
            return db
        } catch {
            return try SQLiteDatabase(path: path, create: false, readOnly: true, immutable: true)
        }
    }

    private func count(_ sql: String) throws -> Int {
        let q = try db.prepare(sql)
        return try q.step() ? q.int(0) : 0
    }

    private func createSchema() throws {
        // A concurrent creator may hold the lock; WAL mode is then set already.
        try? db.execute("PRAGMA journal_mode = WAL")
        try db.transaction {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS reference(
                    id TEXT PRIMARY KEY, title TEXT, subtitle TEXT, artist TEXT,
                    properties TEXT NOT NULL DEFAULT '{}', source TEXT,
                    sample_count INTEGER NOT NULL, posting_count INTEGER NOT NULL,
                    audio_digest TEXT NOT NULL, postings BLOB NOT NULL,
                    postings_crc INTEGER, file_size INTEGER, file_mtime REAL, file_digest TEXT);
                CREATE INDEX IF NOT EXISTS reference_digest ON reference(audio_digest);
                CREATE INDEX IF NOT EXISTS reference_file ON reference(file_size, file_digest);
                CREATE INDEX IF NOT EXISTS reference_source ON reference(source);
                CREATE TABLE IF NOT EXISTS annotation(
                    reference_id TEXT NOT NULL REFERENCES reference(id) ON DELETE CASCADE,
                    seq INTEGER NOT NULL, start REAL NOT NULL, "end" REAL NOT NULL, text TEXT NOT NULL,
                    PRIMARY KEY(reference_id, seq));
                """)
            try db.execute(Catalog.versionTable)
            let json = String(decoding: try JSONEncoder.sorted.encode(configuration), as: UTF8.self)
            try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").bind("format_version", "\(Catalog.formatVersion)").run()
            try newIndexToken()
            try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").bind("configuration", json).run()
        }
    }

    /// Adds the checksum and file-stamp columns to a catalog written before they existed, with
    /// the checksum of every stored blob (one transaction); read-only, notes they are missing.
    private func migrate(readOnly: Bool) throws {
        try migrateToVersionFeatures(readOnly: readOnly)
        let q = try db.prepare("SELECT name FROM pragma_table_info('reference')")
        var columns: Set<String> = []
        while try q.step() { columns.insert(q.string(0) ?? "") }
        let wanted = [("postings_crc", "INTEGER"), ("file_size", "INTEGER"), ("file_mtime", "REAL"), ("file_digest", "TEXT")]
        let missing = wanted.filter { !columns.contains($0.0) }
        guard !missing.isEmpty else { return }
        if readOnly { hasStampColumns = false; return }
        try db.transaction {
            // Another writer may have migrated between the check and the lock.
            let again = try db.prepare("SELECT count(*) FROM pragma_table_info('reference') WHERE name = 'postings_crc'")
            guard try again.step(), again.int(0) == 0 else { return }
            for (name, type) in missing { try db.execute("ALTER TABLE reference ADD COLUMN \(name) \(type)") }
            try db.execute("CREATE INDEX IF NOT EXISTS reference_file ON reference(file_size, file_digest)")
            try db.execute("CREATE INDEX IF NOT EXISTS reference_source ON reference(source)")
            let rows = try db.prepare("SELECT id, postings FROM reference")
            var sums: [(String, Int64)] = []
            while try rows.step() { sums.append((rows.string(0) ?? "", postingsChecksum(rows.blob(1)))) }
            let update = try db.prepare("UPDATE reference SET postings_crc = ? WHERE id = ?")
            for (id, crc) in sums { try update.bind(crc, id).run() }
        }
    }

    private func checkMeta(upgrading: Bool) throws {
        let q = try db.prepare("SELECT key, value FROM meta")
        var meta: [String: String] = [:]
        while try q.step() { meta[q.string(0) ?? ""] = q.string(1) }
        guard let version = meta["format_version"], let json = meta["configuration"] else {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "not a soundmark catalog (no format version)")
        }
        if version == "1" && !upgrading {
            throw SoundmarkError.catalogMismatch(path: path, reason: "catalog format version 1, this soundmark reads version \(Catalog.formatVersion); upgrade it with 'soundmark catalog upgrade --catalog \(path)'")
        }
        guard version == "\(Catalog.formatVersion)" || version == "1" || version == "2" else {
            throw SoundmarkError.catalogMismatch(path: path, reason: "catalog format version \(version), this soundmark reads version \(Catalog.formatVersion); rebuild the catalog")
        }
        storedFormatVersion = Int(version) ?? Catalog.formatVersion
        guard let stored = try? JSONDecoder().decode(Configuration.self, from: Data(json.utf8)) else {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "unreadable configuration record")
        }
        guard stored.referenceAnalysis == configuration.referenceAnalysis else {
            let differences = stored.referenceAnalysis.differences(from: configuration.referenceAnalysis)
            throw SoundmarkError.catalogMismatch(path: path, reason: "catalog was built with another fingerprint configuration (\(differences)); rebuild it with this soundmark")
        }
    }

    /// Longest reference, in frames: 2^24 (74.6 h at the default 16 ms hop), the reach of
    /// identify's vote offsets. A longer signature is refused by
    /// ``addReferenceSignature(_:representing:annotations:source:replacingOtherAudio:file:allowingDuplicateAudio:)``.
    /// Recordings that are scanned or monitored have no such limit.
    public static let maximumReferenceFrames = 1 << 24

    /// Stores a reference signature representing `item`, in one transaction.
    ///
    /// - Parameters:
    ///   - signature: the reference signature; its configuration must be the catalog's.
    ///   - item: metadata; `item.id` is the key.
    ///   - annotations: when not `nil`, replace the reference's annotations.
    ///   - source: the file it came from, kept for `catalog show`.
    ///   - allowingDuplicateAudio: when `true`, audio already stored under another id is stored
    ///     again under this one (`catalog add --allow-duplicates`); default `false`: ``AddOutcome/duplicate(of:)``.
    ///   - checkingSameRecording: when given (and duplicates are not allowed), audio that is the
    ///     same recording as a reference stored under another id (as `test` decides, `.aligned`:
    ///     the same length, aligned from start to end, differing nowhere; a re-encoding, a
    ///     resampled copy) is ``AddOutcome/duplicate(of:)`` too. The check reads
    ///     only a few stored references of the signature's length, looked up by fingerprint
    ///     (``DuplicateKeys``), and runs inside the write
    ///     transaction, after what other writers committed (on PostgreSQL, after the server's
    ///     changes are pulled under its lock): two processes adding copies of one recording at
    ///     once store it once. Default `nil`: only identical postings are duplicates.
    ///   - reportingNearDuplicate: called, after the reference is stored, with the stored
    ///     reference that `test` found shares most of it but differs somewhere
    ///     (``SameRecordingVerdict/near(referenceIndex:differing:share:)``); default `nil`.
    ///   - replacingOtherAudio: when `false`, an id already holding other audio is refused with
    ///     ``SoundmarkError/idInUse(path:id:source:)`` instead of replaced (default `true`).
    ///   - file: the stamp of the source file, stored so that re-adding it unchanged can be
    ///     skipped before decoding (see ``reference(unchangedAt:)``); default `nil`.
    /// - Returns: what was done; re-adding the same audio never duplicates it.
    /// - Throws: ``SoundmarkError/catalogMismatch(path:reason:)`` for a signature of another
    ///   configuration, ``SoundmarkError/noLandmarks(path:)`` for silent audio,
    ///   ``SoundmarkError/annotationOutOfRange(path:id:index:start:end:)`` for annotation times
    ///   outside `0...Annotation.maximumTime`, ``SoundmarkError/referenceTooLong(path:duration:limit:)``
    ///   past ``maximumReferenceFrames``,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)`` when SQLite fails.
    @discardableResult
    public func addReferenceSignature(_ signature: Signature, representing item: MediaItem,
                                      annotations: [Annotation]? = nil, source: String? = nil,
                                      replacingOtherAudio: Bool = true, file: FileStamp? = nil,
                                      allowingDuplicateAudio: Bool = false, checkingSameRecording test: (any SameRecordingTest)? = nil,
                                      reportingNearDuplicate: ((NearDuplicate) -> Void)? = nil) throws -> AddOutcome {
        guard signature.configuration.referenceAnalysis == configuration.referenceAnalysis else {
            throw SoundmarkError.catalogMismatch(path: path, reason: "signature made with another fingerprint configuration")
        }
        if let annotations { try checkRange(annotations, id: item.id) }
        if let last = signature.landmarks.last, Int(last.anchorFrame) >= Catalog.maximumReferenceFrames {
            throw SoundmarkError.referenceTooLong(path: source ?? item.id, duration: signature.duration,
                                                  limit: Double(Catalog.maximumReferenceFrames) * configuration.hopDuration)
        }
        let postings = PostingCodec.postings(of: signature)
        guard !postings.isEmpty else { throw SoundmarkError.noLandmarks(path: source ?? item.id) }
        let blob = PostingCodec.encode(postings)
        let digest = String(format: "%016llx", fnv1a64(blob) ^ UInt64(bitPattern: signature.sampleCount))
        let properties = String(decoding: (try? JSONEncoder.sorted.encode(item.properties)) ?? Data("{}".utf8), as: UTF8.self)
        var near: NearDuplicate?
        do {
            let outcome: AddOutcome = try db.transaction {
                near = nil
                let same = try db.prepare("SELECT id FROM reference WHERE audio_digest = ?").bind(digest)
                var sameIDs: [String] = []
                while try same.step() { sameIDs.append(same.string(0) ?? "") }
                if !sameIDs.isEmpty && !sameIDs.contains(item.id) && !allowingDuplicateAudio { return .duplicate(of: sameIDs[0]) }
                let checked = test != nil && !allowingDuplicateAudio && !sameIDs.contains(item.id)
                if checked, let test, let found = try storedSameRecording(as: signature, excluding: item.id, test: test) {
                    guard let different = found.near else { return .duplicate(of: found.id) }
                    near = different
                }
                let existing = try reference(id: item.id)
                if let existing, sameIDs.contains(item.id) {
                    var changed = false
                    if existing.item != item || (source != nil && existing.source != source) || (file != nil && existing.file != file) {
                        try db.prepare("UPDATE reference SET title = ?, subtitle = ?, artist = ?, properties = ?, source = coalesce(?, source) WHERE id = ?")
                            .bind(item.title, item.subtitle, item.artist, properties, source, item.id).run()
                        if let file { try storeStamp(file, id: item.id) }
                        changed = existing.item != item
                    }
                    if let annotations, try self.annotations(id: item.id) != annotations {
                        try replaceAnnotations(id: item.id, annotations)
                        changed = true
                    }
                    return changed ? .updated : .unchanged
                }
                if let existing, !replacingOtherAudio {
                    throw SoundmarkError.idInUse(path: path, id: item.id, source: existing.source)
                }
                try db.prepare("""
                    INSERT OR REPLACE INTO reference(id, title, subtitle, artist, properties, source, sample_count,
                        posting_count, audio_digest, postings, postings_crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).bind(item.id, item.title, item.subtitle, item.artist, properties, source,
                              Int64(signature.sampleCount), postings.count, digest, Data(blob), postingsChecksum(blob)).run()
                if let file { try storeStamp(file, id: item.id) }
                if let annotations { try replaceAnnotations(id: item.id, annotations) }
                try newIndexToken()
                if checked {  // the keys were current before this reference: they stay so with its own
                    try storeDuplicateKeys(DuplicateKeys.keys(of: postings, count: DuplicateKeys.stored), id: item.id, digest: digest)
                    try markDuplicateKeysCurrent()
                }
                if existing != nil { // peaks and chroma of the audio replaced
                    try removeShazamSignature(id: item.id)
                    try removeVersionFeatures(id: item.id)
                }
                return existing == nil ? .added : .replaced
            }
            if let near { reportingNearDuplicate?(near) }
            return outcome
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// The id of a stored reference other than `id` that holds the same recording as `signature`
    /// (`near` `nil`), else of one that shares most of it (`near`: how they differ),
    /// as `test`, a ``SameRecordingTest``, decides: inside the caller's transaction. Candidates are looked
    /// up by fingerprint (``DuplicateKeys``): the references of its length (within
    /// `test`'s ``SameRecordingTest/lengthTolerance``) whose stored keys share most of the signature's,
    /// at most ``DuplicateKeys/candidates`` of them, are decoded and voted for. The check so
    /// reads a few references whatever the catalog holds (it decoded every reference of the
    /// same length before: 100 files of 12 s into 1,000 references of 12 s took minutes).
    private func storedSameRecording(as signature: Signature, excluding id: String,
                                     test: any SameRecordingTest) throws -> (id: String, near: NearDuplicate?)? {
        try syncDuplicateKeys()
        let tolerance = test.lengthTolerance, rate = Double(configuration.sampleRate)
        let low = Int64(((signature.duration - tolerance) * rate).rounded(.down))
        let high = Int64(((signature.duration + tolerance) * rate).rounded(.up))
        // Shared keys per reference; a key stored by more than ``DuplicateKeys/commonKey``
        // references (a shared music bed, a tone) tells none of them apart and is passed over
        // after that many rows, so no key costs more than that whatever the catalog holds.
        var shared: [String: Int] = [:]
        let lookup = try db.prepare("SELECT id FROM duplicate_key WHERE key = ? LIMIT \(DuplicateKeys.commonKey + 1)")
        for key in DuplicateKeys.keys(of: PostingCodec.postings(of: signature), count: DuplicateKeys.queried) {
            _ = lookup.bind(key)
            var ids: [String] = []
            while try lookup.step() { ids.append(lookup.string(0) ?? "") }
            guard ids.count <= DuplicateKeys.commonKey else { continue }
            for other in Set(ids) where other != id { shared[other, default: 0] += 1 }
        }
        // The references of its length (and with their current keys) sharing the most.
        let ranked = shared.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(4 * DuplicateKeys.candidates).map(\.key)
        guard !ranked.isEmpty else { return nil }
        let q = try db.prepare("""
            SELECT r.id FROM reference r WHERE r.id IN (\(Array(repeating: "?", count: ranked.count).joined(separator: ",")))
            AND r.sample_count BETWEEN ? AND ? AND EXISTS (SELECT 1 FROM duplicate_key k WHERE k.id = r.id AND k.digest = r.audio_digest)
            """).bind(array: ranked.map { $0 as Any? } + [low, high])
        var sameLength: Set<String> = []
        while try q.step() { sameLength.insert(q.string(0) ?? "") }
        let candidates: [Any?] = ranked.filter(sameLength.contains).prefix(DuplicateKeys.candidates).map { $0 }
        guard !candidates.isEmpty else { return nil }
        let list = Array(repeating: "?", count: candidates.count).joined(separator: ",")
        let index = try decodeIndex(filter: "WHERE r.id IN (\(list))", values: candidates)
        guard !index.references.isEmpty, let verdict = test.sameRecording(as: signature, in: index) else { return nil }
        switch verdict {
        case .same(let hit): return (index.references[hit].item.id, nil)
        case .near(let hit, let differing, let share):
            let id = index.references[hit].item.id
            return (id, NearDuplicate(id: id, differing: differing, share: share))
        }
    }

    static let duplicateKeyTable = """
        CREATE TABLE IF NOT EXISTS duplicate_key(key INTEGER NOT NULL, id TEXT NOT NULL, digest TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS duplicate_key_key ON duplicate_key(key);
        CREATE INDEX IF NOT EXISTS duplicate_key_id ON duplicate_key(id);
        """

    /// Brings the `duplicate_key` table up to date with the references (inside the caller's write
    /// transaction): a no-op when it was last brought up to date at the current index token;
    /// otherwise (a catalog written before the table existed, references pulled from PostgreSQL,
    /// removed or replaced by any writer) keys of references no longer there are deleted and the
    /// keys of references without them computed from their postings.
    private func syncDuplicateKeys() throws {
        try db.execute(Catalog.duplicateKeyTable)
        let token = try indexToken()
        let stored = try db.prepare("SELECT value FROM meta WHERE key = 'duplicate_key_token'")
        if token != 0, try stored.step(), UInt64(stored.string(0) ?? "") == token { return }
        try db.execute("""
            DELETE FROM duplicate_key WHERE NOT EXISTS
            (SELECT 1 FROM reference r WHERE r.id = duplicate_key.id AND r.audio_digest = duplicate_key.digest)
            """)
        let rows = try db.prepare("""
            SELECT r.id, r.audio_digest, r.postings FROM reference r WHERE r.posting_count > 0 AND NOT EXISTS
            (SELECT 1 FROM duplicate_key k WHERE k.id = r.id AND k.digest = r.audio_digest)
            """)
        var missing: [(id: String, digest: String, keys: [Int64])] = []
        while try rows.step() {
            var postings: [Posting] = []
            guard PostingCodec.decode(rows.blob(2), into: { postings.append($0) }) else { continue }
            missing.append((rows.string(0) ?? "", rows.string(1) ?? "", DuplicateKeys.keys(of: postings, count: DuplicateKeys.stored)))
        }
        for m in missing { try storeDuplicateKeys(m.keys, id: m.id, digest: m.digest) }
        try markDuplicateKeysCurrent()
    }

    /// Replaces the stored duplicate keys of `id`.
    private func storeDuplicateKeys(_ keys: [Int64], id: String, digest: String) throws {
        try db.prepare("DELETE FROM duplicate_key WHERE id = ?").bind(id).run()
        let insert = try db.prepare("INSERT INTO duplicate_key(key, id, digest) VALUES (?, ?, ?)")
        for key in keys { try insert.bind(key, id, digest).run() }
    }

    /// Records that `duplicate_key` holds every reference's keys at the current index token.
    private func markDuplicateKeysCurrent() throws {
        try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('duplicate_key_token', ?)").bind("\(try indexToken())").run()
    }

    private func storeStamp(_ file: FileStamp, id: String) throws {
        try db.prepare("UPDATE reference SET file_size = ?, file_mtime = ?, file_digest = ? WHERE id = ?")
            .bind(file.size, file.modified, file.digest, id).run()
    }

    /// The reference made from the file at `source` when that file still has the size and
    /// modification time stored with it (within a millisecond: tools that copy times keep only
    /// microseconds): re-adding it can be skipped without reading it.
    public func reference(unchangedAt source: String) throws -> ReferenceInfo? {
        guard hasStampColumns, let now = FileStamp.attributes(of: source) else { return nil }
        let q = try db.prepare("SELECT \(infoColumns) FROM reference r WHERE r.source = ? AND r.file_size = ? AND abs(r.file_mtime - ?) < 0.001")
            .bind(source, now.size, now.modified)
        return try q.step() ? info(q) : nil
    }

    /// References made from a file with this size and content digest (under any name),
    /// ordered by id: a file seen before, which need not be decoded again.
    public func references(withContentOf file: FileStamp) throws -> [ReferenceInfo] {
        guard hasStampColumns else { return [] }
        let q = try db.prepare("SELECT \(infoColumns) FROM reference r WHERE r.file_size = ? AND r.file_digest = ? ORDER BY r.id")
            .bind(file.size, file.digest)
        var result: [ReferenceInfo] = []
        while try q.step() { result.append(info(q)) }
        return result
    }

    /// Updates the metadata (and, when given, the annotations, source and file stamp) of the
    /// existing reference `item.id` without touching its postings, in one transaction.
    /// - Returns: ``AddOutcome/updated`` when the item or annotations changed, else ``AddOutcome/unchanged``.
    /// - Throws: ``SoundmarkError/unknownReference(path:id:)``, ``SoundmarkError/annotationOutOfRange(path:id:index:start:end:)``,
    ///   ``SoundmarkError/catalogWriteFailed(path:reason:)``.
    @discardableResult
    public func updateMetadata(_ item: MediaItem, annotations: [Annotation]? = nil, source: String? = nil,
                               file: FileStamp? = nil) throws -> AddOutcome {
        if let annotations { try checkRange(annotations, id: item.id) }
        let properties = String(decoding: (try? JSONEncoder.sorted.encode(item.properties)) ?? Data("{}".utf8), as: UTF8.self)
        do {
            return try db.transaction {
                guard let existing = try reference(id: item.id) else { throw SoundmarkError.unknownReference(path: path, id: item.id) }
                var changed = false
                if existing.item != item || (source != nil && existing.source != source) {
                    try db.prepare("UPDATE reference SET title = ?, subtitle = ?, artist = ?, properties = ?, source = coalesce(?, source) WHERE id = ?")
                        .bind(item.title, item.subtitle, item.artist, properties, source, item.id).run()
                    changed = existing.item != item
                }
                if let file, hasStampColumns, existing.file != file { try storeStamp(file, id: item.id) }
                if let annotations, try self.annotations(id: item.id) != annotations {
                    try replaceAnnotations(id: item.id, annotations)
                    changed = true
                }
                return changed ? .updated : .unchanged
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// Throws for the first annotation whose times are out of range (see ``Annotation/isInRange``).
    private func checkRange(_ annotations: [Annotation], id: String) throws {
        if let i = annotations.firstIndex(where: { !$0.isInRange }) {
            throw SoundmarkError.annotationOutOfRange(path: path, id: id, index: i, start: annotations[i].start, end: annotations[i].end)
        }
    }

    private func replaceAnnotations(id: String, _ annotations: [Annotation]) throws {
        try db.prepare("DELETE FROM annotation WHERE reference_id = ?").bind(id).run()
        let insert = try db.prepare("INSERT INTO annotation(reference_id, seq, start, \"end\", text) VALUES (?, ?, ?, ?, ?)")
        for (i, a) in annotations.enumerated() {
            try insert.bind(id, i, a.start, a.end, a.text).run()
        }
    }

    /// Replaces the annotations of reference `id` atomically.
    /// - Throws: ``SoundmarkError/unknownReference(path:id:)`` when there is no such reference,
    ///   ``SoundmarkError/annotationOutOfRange(path:id:index:start:end:)`` when an annotation's
    ///   times are not in `0...Annotation.maximumTime` with `end >= start` (nothing is stored).
    public func setAnnotations(_ annotations: [Annotation], forReference id: String) throws {
        try checkRange(annotations, id: id)
        do {
            try db.transaction {
                guard try reference(id: id) != nil else { throw SoundmarkError.unknownReference(path: path, id: id) }
                try replaceAnnotations(id: id, annotations)
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// The annotations of reference `id`, in stored order (empty when it has none).
    public func annotations(id: String) throws -> [Annotation] {
        do {
            let q = try db.prepare("SELECT start, \"end\", text FROM annotation WHERE reference_id = ? ORDER BY seq").bind(id)
            var result: [Annotation] = []
            while try q.step() { result.append(Annotation(start: q.double(0), end: q.double(1), text: q.string(2) ?? "")) }
            return result
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Removes reference `id` with its postings and annotations.
    /// - Returns: `false` when there was no such reference.
    @discardableResult
    public func remove(id: String) throws -> Bool {
        do {
            return try db.transaction {
                try db.prepare("DELETE FROM annotation WHERE reference_id = ?").bind(id).run()
                try removeMarker(id: id)
                try removeShazamSignature(id: id)
                try removeVersionFeatures(id: id)
                try db.prepare("DELETE FROM reference WHERE id = ?").bind(id).run()
                guard sqlite3_changes(db.handle) > 0 else { return false }
                try newIndexToken()
                return true
            }
        } catch {
            throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
        }
    }

    /// Columns read by ``info(_:)``: 0–9 metadata and counts, 10–12 the file stamp, 13 the postings checksum.
    private var infoColumns: String {
        """
        r.id, r.title, r.subtitle, r.artist, r.properties, r.sample_count, r.posting_count, length(r.postings), r.source,
        (SELECT count(*) FROM annotation a WHERE a.reference_id = r.id),
        """ + (hasStampColumns ? "r.file_size, r.file_mtime, r.file_digest, r.postings_crc" : "NULL, NULL, NULL, NULL")
    }

    private func info(_ q: SQLiteStatement) -> ReferenceInfo {
        let properties = (q.string(4)).flatMap { try? JSONDecoder().decode([String: String].self, from: Data($0.utf8)) } ?? [:]
        let item = MediaItem(id: q.string(0) ?? "", title: q.string(1), subtitle: q.string(2), artist: q.string(3), properties: properties)
        let file = q.isNull(10) || q.isNull(12) ? nil
            : FileStamp(size: Int64(q.int(10)), modified: q.double(11), digest: q.string(12) ?? "")
        return ReferenceInfo(item: item, duration: Double(q.int(5)) / Double(configuration.sampleRate),
                             postingCount: q.int(6), postingBytes: q.int(7), annotationCount: q.int(9), source: q.string(8),
                             file: file)
    }

    /// Every reference, ordered by id.
    public func references() throws -> [ReferenceInfo] {
        do {
            let q = try db.prepare("SELECT \(infoColumns) FROM reference r ORDER BY r.id")
            var result: [ReferenceInfo] = []
            while try q.step() { result.append(info(q)) }
            return result
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// The reference with this id, or `nil`.
    public func reference(id: String) throws -> ReferenceInfo? {
        let q = try db.prepare("SELECT \(infoColumns) FROM reference r WHERE r.id = ?").bind(id)
        return try q.step() ? info(q) : nil
    }

    /// A stamp that changes when another connection (another process adding or removing
    /// references) commits a change to the catalog: SQLite's `PRAGMA data_version`. Cheap (no
    /// table is read), so a long-running reader (`soundmark monitor`) can poll it and reload
    /// its index only when it changed. Changes made through this `Catalog` itself do not
    /// change it; a catalog read without locking (a folder this process cannot write to)
    /// never changes it.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)``.
    public func changeStamp() throws -> Int {
        do {
            return try count("PRAGMA data_version")
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Stores a new random index token (inside the caller's write transaction): every
    /// transaction that adds, replaces or removes postings calls it, so an index file built
    /// before it no longer matches the catalog.
    private func newIndexToken() throws {
        try db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('index_token', ?)")
            .bind("\(UInt64.random(in: 1 ... .max))").run()
    }

    /// The catalog's current index token (0 when it has none).
    private func indexToken() throws -> UInt64 {
        let q = try db.prepare("SELECT value FROM meta WHERE key = 'index_token'")
        return try q.step() ? UInt64(q.string(0) ?? "") ?? 0 : 0
    }

    /// The index snapshot: the persistent index file when it matches the catalog (mapped, no
    /// posting read from SQLite), else the postings decoded from SQLite, written to the index
    /// file when `write` is set and the folder is writable. One read transaction: a consistent
    /// snapshot even while another process adds.
    private func snapshot(write: Bool) throws -> (index: CatalogIndex, mapped: Bool) {
        try db.transaction(write: false) {
            let token = try indexToken()
            // Only the columns before the postings blob: reading a column stored after it
            // would walk the blob's overflow pages, i.e. read the whole catalog.
            let q = try db.prepare("""
                SELECT r.id, r.title, r.subtitle, r.artist, r.properties, r.sample_count, r.posting_count, length(r.postings), r.source,
                (SELECT count(*) FROM annotation a WHERE a.reference_id = r.id), NULL, NULL, NULL, NULL FROM reference r ORDER BY r.id
                """)
            var infos: [ReferenceInfo] = []
            while try q.step() { infos.append(info(q)) }
            let hasher = LandmarkHasher(configuration: configuration)
            let expected = IndexFile.Header(token: token, hashCount: hasher.hashCount, referenceCount: infos.count,
                                            postingCount: infos.reduce(0) { $0 + $1.postingCount },
                                            idsDigest: IndexFile.digest(ids: infos.map(\.item.id)))
            if token != 0, let postings = IndexFile.map(path: indexPath, expected: expected) {
                return (CatalogIndex(configuration: configuration, references: infos, postings: postings), true)
            }
            let index = try decodeIndex()
            if write && token != 0 && index.postings.count == expected.postingCount {
                try IndexFile.write(index.postings, header: expected, to: indexPath)
            }
            return (index, false)
        }
    }

    /// Decodes the postings of every reference (of those `filter`, an SQL `WHERE` clause on
    /// `reference r` with `values` bound to it, selects) from SQLite into an in-memory index
    /// (inside the caller's transaction), checking each blob's CRC-32.
    private func decodeIndex(filter: String = "", _ values: Any?...) throws -> CatalogIndex {
        try decodeIndex(filter: filter, values: values)
    }

    private func decodeIndex(filter: String, values: [Any?]) throws -> CatalogIndex {
        let q = try db.prepare("SELECT \(infoColumns), r.postings FROM reference r \(filter) ORDER BY r.id").bind(array: values)
        let blobColumn: Int32 = 14
        var infos: [ReferenceInfo] = []
        var hashes: [UInt32] = [], entries: [UInt64] = []
        let total = filter.isEmpty ? try count("SELECT coalesce(sum(posting_count), 0) FROM reference") : 0
        hashes.reserveCapacity(total)
        entries.reserveCapacity(total)
        while try q.step() {
            var info = info(q)
            let blob = q.blob(blobColumn)
            if !q.isNull(13), Int64(q.int(13)) != postingsChecksum(blob) {
                throw SoundmarkError.catalogUnreadable(path: path, reason: "postings of reference '\(info.item.id)' fail their CRC-32 check (the file is damaged); remove and re-add that reference")
            }
            guard PostingCodec.decode(blob, reference: UInt64(infos.count), hashes: &hashes, entries: &entries) else {
                throw SoundmarkError.catalogUnreadable(path: path, reason: "corrupt postings of reference '\(info.item.id)'")
            }
            info.file = nil  // as read from the index file: matching does not use it
            infos.append(info)
        }
        let hasher = LandmarkHasher(configuration: configuration)
        return CatalogIndex(configuration: configuration, references: infos,
                            postings: PostingIndex(hashCount: hasher.hashCount, hashes: hashes, entries: entries,
                                                   referenceCount: infos.count))
    }

    /// The references and their postings, ready for matching.
    ///
    /// Reads the persistent index file (``indexPath``, see ``IndexFile``) memory-mapped when
    /// it was built from exactly the committed references (its token, reference count, posting
    /// count and id digest equal the catalog's): only the metadata rows are read from SQLite and
    /// a lookup touches only the pages of the query's buckets. Otherwise (missing or stale file)
    /// the postings are decoded from SQLite, and the index file is rebuilt when the folder is
    /// writable; a stale index is never used.
    /// - Throws: ``SoundmarkError/catalogUnreadable(path:reason:)`` (damaged postings, SQLite errors).
    public func loadIndex() throws -> CatalogIndex {
        do {
            do {
                return try snapshot(write: true).index
            } catch SoundmarkError.catalogWriteFailed {
                // A folder this process may not write to: match from memory.
                return try snapshot(write: false).index
            }
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Brings the persistent index file up to date with the committed references (rebuilds it
    /// when it is missing or stale; a no-op otherwise). `catalog add`, `remove` and `upgrade`
    /// call it once after their changes; a reader that finds the file stale rebuilds it too.
    /// - Returns: `true` when the file was (re)written.
    /// - Throws: ``SoundmarkError/catalogWriteFailed(path:reason:)`` when the file cannot be
    ///   written, ``SoundmarkError/catalogUnreadable(path:reason:)``.
    @discardableResult
    public func updateIndex() throws -> Bool {
        do {
            return try !snapshot(write: true).mapped
        } catch let error as SoundmarkError {
            throw error
        } catch {
            throw SoundmarkError.catalogUnreadable(path: path, reason: "\(error)")
        }
    }

    /// Upgrades a catalog written by an older soundmark (format version 1) to
    /// ``formatVersion`` in one transaction (the index token is added) and builds its index
    /// file; a current catalog only gets its index file brought up to date.
    /// - Returns: the format version the file had.
    /// - Throws: the errors of ``init(path:create:readOnly:configuration:upgrading:)`` and
    ///   ``updateIndex()``.
    @discardableResult
    public static func upgrade(path: String, configuration: Configuration = Configuration()) throws -> Int {
        let catalog = try Catalog(path: path, configuration: configuration, upgrading: true)
        let old = catalog.storedFormatVersion
        if old != formatVersion {
            do {
                try catalog.db.transaction {
                    try catalog.db.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)").bind("format_version", "\(formatVersion)").run()
                    try catalog.db.execute(Catalog.versionTable)
                    try catalog.newIndexToken()
                }
            } catch {
                throw SoundmarkError.catalogWriteFailed(path: path, reason: "\(error)")
            }
            catalog.storedFormatVersion = formatVersion
        }
        try catalog.updateIndex()
        return old
    }
}

/// A snapshot of a catalog ready for matching: metadata plus the in-memory posting index.
public struct CatalogIndex: Sendable {
    /// The configuration of every signature.
    public let configuration: Configuration
    /// References; a posting's reference index points into this array.
    public let references: [ReferenceInfo]
    /// Hash → postings.
    public let postings: PostingIndex

    /// Builds an index from reference signatures in memory (no file), for tests and tools.
    public init(configuration: Configuration, items: [(MediaItem, Signature)]) {
        self.configuration = configuration
        var infos: [ReferenceInfo] = []
        var lists: [[Posting]] = []
        for (item, signature) in items {
            let list = PostingCodec.postings(of: signature)
            infos.append(ReferenceInfo(item: item, duration: signature.duration, postingCount: list.count,
                                       postingBytes: 0, annotationCount: 0, source: nil))
            lists.append(list)
        }
        references = infos
        postings = PostingIndex(hashCount: LandmarkHasher(configuration: configuration).hashCount, references: lists)
    }

    init(configuration: Configuration, references: [ReferenceInfo], postings: PostingIndex) {
        self.configuration = configuration
        self.references = references
        self.postings = postings
    }
}

extension JSONEncoder {
    /// An encoder with sorted keys, for stable stored JSON.
    static var sorted: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

/// FNV-1a, 64-bit (http://www.isthe.com/chongo/tech/comp/fnv/).
func fnv1a64(_ bytes: [UInt8]) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return h
}
