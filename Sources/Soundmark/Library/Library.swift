import Foundation

/// Why a recognition library could not be opened, read or written.
public enum LibraryError: Error, LocalizedError, Equatable {
    /// The file cannot be opened as a library (path, reason).
    case unreadable(path: String, reason: String)
    /// A write failed; nothing of it was stored (path, reason).
    case writeFailed(path: String, reason: String)

    /// One line naming the file and the cause.
    public var errorDescription: String? {
        switch self {
        case .unreadable(let path, let why): return "\(path): cannot read library: \(why)"
        case .writeFailed(let path, let why): return "\(path): cannot write library: \(why)"
        }
    }
}

/// One recording in the library: a file scanned or identified, a monitor run, or an imported
/// event log. Recognised by its audio, never by its name: by ``digest`` (of its decoded audio,
/// or of the event file) or by ``audioPrint`` (which a decoder's lead and trim do not change),
/// so the same audio recorded again — from a file, a URL or a pipe — replaces its airings.
/// Within one source only: two sources that aired the same audio keep a recording each (see
/// ``isSameRecording(as:)``).
public struct LibraryRecording: Equatable, Sendable {
    /// Row id in the library file.
    public var id: Int64
    /// Content digest (hex): ``AudioDigest`` of the decoded audio, or of the imported file's bytes.
    public var digest: String
    /// The input's name as given (path, URL, `-`).
    public var name: String
    /// The source (station, channel): `--source`, default the input's name.
    public var source: String
    /// Playback duration in seconds (0 when unknown).
    public var duration: Double
    /// Unix time (seconds) of recording time 0 when known (`--start-time`, `monitor --clock wall`).
    public var wallStart: Double?
    /// Unix time when it was recorded into the library.
    public var addedAt: Double
    /// How many airings it holds.
    public var airingCount: Int
    /// The coarse print of its decoded audio (empty for an imported event log, and for
    /// recordings stored before library format 2).
    public var audioPrint: AudioPrint

    /// Whether ``source`` is only the default, the input's name (`stdin` for standard input,
    /// named `-` or `<stdin>`): no station was named.
    public var sourceIsItsName: Bool { source == name || ((name == "-" || name == "<stdin>") && source == "stdin") }

    /// Whether `other` is this recording again: the same audio (equal digests, or prints of the
    /// same audio) from the same source, or from a source that is only an input's name (so
    /// the same file scanned by path, URL and pipe is one recording, while the same audio
    /// queued under "Radio 1" and "Radio 9" is two).
    public func isSameRecording(as other: LibraryRecording) -> Bool {
        guard source == other.source || sourceIsItsName || other.sourceIsItsName else { return false }
        return digest == other.digest || audioPrint.sameAudio(as: other.audioPrint)
    }

    /// Whether `key` names this recording: its digest, a digest prefix of 6 or more hex
    /// digits, or its name.
    public func matches(_ key: String) -> Bool {
        digest == key || name == key || (key.count >= 6 && digest.hasPrefix(key.lowercased()))
    }

    /// Creates a recording description (``id``, ``addedAt`` and ``airingCount`` are set by the library).
    public init(id: Int64 = 0, digest: String, name: String, source: String, duration: Double, wallStart: Double? = nil,
                addedAt: Double = 0, airingCount: Int = 0, audioPrint: AudioPrint = AudioPrint()) {
        self.id = id
        self.digest = digest
        self.name = name
        self.source = source
        self.duration = duration
        self.wallStart = wallStart
        self.addedAt = addedAt
        self.airingCount = airingCount
        self.audioPrint = audioPrint
    }
}

/// One airing: a stretch of a recording where a catalog reference played (a scan segment, an
/// identify match, a monitor activity). Times in seconds.
public struct Airing: Equatable, Sendable {
    /// Row id in the library file (0 before it is stored).
    public var id: Int64
    /// The recording's row id (0 before it is stored).
    public var recording: Int64
    /// The recording's source (station, channel).
    public var source: String
    /// The reference id.
    public var reference: String
    /// Its title and artist as the catalog had them when the airing was recorded.
    public var title: String?
    /// See ``title``.
    public var artist: String?
    /// The reference's full duration (seconds), when known: the base of ``fractionAired``.
    public var referenceDuration: Double?
    /// Start and end on the recording's playback time line (seconds from its start).
    public var start: Double
    /// See ``start``.
    public var end: Double
    /// Wall-clock start (Unix seconds, UTC) when the recording's start time is known.
    public var wallStart: Double?
    /// Wall-clock end (Unix seconds), when known.
    public var wallEnd: Double?
    /// Reference time (seconds) at ``start`` and at ``end``.
    public var referenceStart: Double
    /// See ``referenceStart``.
    public var referenceEnd: Double
    /// Match confidence 0…1.
    public var confidence: Double
    /// Pitch change as ShazamKit defines it (query pitch / reference pitch − 1).
    public var frequencySkew: Double
    /// Time scale: reference seconds per recording second (1 for a clean airing).
    public var timeScale: Double
    /// The payload of the audio marker decoded in the airing (``SegmentMarker/payload``, 32 bits);
    /// nil when none was decoded or looked for, or a recogniser reported a marker without its
    /// payload. (Libraries written before payloads were stored hold 1 for "a marker was seen".)
    public var marker: UInt32?

    /// Creates an airing.
    public init(id: Int64 = 0, recording: Int64 = 0, source: String = "", reference: String, title: String? = nil,
                artist: String? = nil, referenceDuration: Double? = nil, start: Double, end: Double,
                wallStart: Double? = nil, wallEnd: Double? = nil, referenceStart: Double, referenceEnd: Double,
                confidence: Double, frequencySkew: Double = 0, timeScale: Double = 1, marker: UInt32? = nil) {
        self.id = id
        self.recording = recording
        self.source = source
        self.reference = reference
        self.title = title
        self.artist = artist
        self.referenceDuration = referenceDuration
        self.start = start
        self.end = end
        self.wallStart = wallStart
        self.wallEnd = wallEnd
        self.referenceStart = referenceStart
        self.referenceEnd = referenceEnd
        self.confidence = confidence
        self.frequencySkew = frequencySkew
        self.timeScale = timeScale
        self.marker = marker
    }

    /// Seconds of recording the airing lasted (`end − start`).
    public var durationAired: Double { max(0, end - start) }

    /// The share 0…1 of the reference that aired (`|referenceEnd − referenceStart|` over its
    /// duration); nil when the reference's duration is unknown.
    public var fractionAired: Double? {
        guard let total = referenceDuration, total > 0 else { return nil }
        return min(1, abs(referenceEnd - referenceStart) / total)
    }
}

/// What a query selects: every given condition must hold. Time bounds compare the airing's
/// wall-clock start (Unix seconds), so an airing without a wall-clock time never matches a
/// query with ``since`` or ``until``.
public struct LibraryFilter: Equatable, Sendable {
    /// Only this source.
    public var source: String?
    /// Only this reference id.
    public var reference: String?
    /// Only airings whose wall-clock start is at or after this (Unix seconds).
    public var since: Double?
    /// Only airings whose wall-clock start is before this (Unix seconds).
    public var until: Double?
    /// Only the recording with this digest (or digest prefix of 6 or more hex digits).
    public var recording: String?

    /// Creates a filter (nothing given: everything).
    public init(source: String? = nil, reference: String? = nil, since: Double? = nil, until: Double? = nil,
                recording: String? = nil) {
        self.source = source
        self.reference = reference
        self.since = since
        self.until = until
        self.recording = recording
    }

    /// Whether no condition is set.
    public var isEmpty: Bool { source == nil && reference == nil && since == nil && until == nil && recording == nil }
}

/// How ``Library/counts(by:filter:)`` groups airings.
public enum CountGrouping: String, CaseIterable, Sendable {
    /// Per UTC day of the wall-clock start and reference (airings without a wall-clock time: no day).
    case day
    /// Per ISO-8601 week (`2026-W49`) of the wall-clock start and reference.
    case week
    /// Per source and reference.
    case source
    /// Per reference.
    case reference
}

/// One row of ``Library/counts(by:filter:)``.
public struct PlayCount: Equatable, Sendable {
    /// The group: a day (`2026-12-01`), a week (`2026-W49`), a source, or nil for per-reference
    /// counts and for airings without a wall-clock time when grouping by day or week.
    public var group: String?
    /// The reference id.
    public var reference: String
    /// Its title and artist.
    public var title: String?
    /// See ``title``.
    public var artist: String?
    /// Number of airings.
    public var plays: Int
    /// Total seconds aired.
    public var airtime: Double

    /// Creates a count row.
    public init(group: String?, reference: String, title: String? = nil, artist: String? = nil, plays: Int, airtime: Double) {
        self.group = group
        self.reference = reference
        self.title = title
        self.artist = artist
        self.plays = plays
        self.airtime = airtime
    }
}

/// The recognition library: the history of what `identify`, `scan` and `monitor` recognised,
/// across sources and days, in its own SQLite file (tables `recording`, `item`, `airing`).
///
/// Every write is one transaction: ``record(_:airings:)`` replaces a recording's earlier
/// airings (same digest) and stores the new ones together, so a crash leaves the library as it
/// was before that recording. Airings are indexed by source and day, by reference and time, by
/// wall-clock time and by recording, so reports over a year of airings stay fast.
public final class Library {
    /// The library file.
    public let path: String
    private let db: SQLiteDatabase
    /// Version of the library's tables: 2 since a recording is known by its audio and source
    /// (`recording.digest` no longer unique; `recording.print` added). A version 1 library is
    /// upgraded when opened; its recordings have no print, so only an equal digest replaces them.
    public static let formatVersion = 2

    /// Opens a library file, creating it (and its tables) when `create` is set.
    /// - Throws: ``LibraryError/unreadable(path:reason:)`` when the file (or, to create it, its
    ///   folder) is missing, is a directory, is another SQLite database (a catalog) or, without
    ///   `create`, an empty file.
    public init(path: String, create: Bool = false) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if path.isEmpty { throw LibraryError.unreadable(path: path, reason: "empty file name") }
        if isDirectory.boolValue { throw LibraryError.unreadable(path: path, reason: "is a directory") }
        if !exists && !create { throw LibraryError.unreadable(path: path, reason: "no such file") }
        let folder = parentDirectory(of: path)
        if !exists && !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            throw LibraryError.unreadable(path: path, reason: "no such directory '\(folder)'")
        }
        do {
            db = try SQLiteDatabase(path: path, create: create)
            try db.execute("PRAGMA foreign_keys = ON")
            // Statements in closures: finalised before an upgrade drops a table they read.
            let hasMeta = try { () throws -> Bool in
                let meta = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'library_meta'")
                return try meta.step() && meta.int(0) > 0
            }()
            if !hasMeta {
                let any = try db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'")
                if try any.step(), any.int(0) > 0 {
                    throw LibraryError.unreadable(path: path, reason: "not a soundmark library (another SQLite database, a catalog?)")
                }
                // An existing empty file becomes a library only where one is written (scan,
                // identify, monitor, library import): library list/remove made any empty file one.
                guard create else { throw LibraryError.unreadable(path: path, reason: "not a soundmark library (an empty file)") }
                try createSchema()
            }
            let found = try { () throws -> String? in
                let version = try db.prepare("SELECT value FROM library_meta WHERE key = 'format_version'")
                return try version.step() ? version.string(0) : nil
            }()
            if found == "1" {
                do {
                    try upgradeFromVersion1()
                } catch {
                    throw LibraryError.unreadable(path: path, reason: "cannot upgrade library format 1 to \(Self.formatVersion): \(error)")
                }
            } else if found != "\(Self.formatVersion)" {
                throw LibraryError.unreadable(path: path, reason: "library format version \(found ?? "(none)") is not \(Self.formatVersion)")
            }
        } catch let error as LibraryError {
            throw error
        } catch SoundmarkError.catalogUnreadable(_, let why) {
            // The SQLite file itself would not open (the same opener serves catalogs): its reason, said of the library.
            throw LibraryError.unreadable(path: path, reason: why)
        } catch {
            let text = "\(error)"
            throw LibraryError.unreadable(path: path, reason: text.contains("not a database") ? "not a soundmark library" : text)
        }
    }

    private func createSchema() throws {
        try? db.execute("PRAGMA journal_mode = WAL")
        try db.transaction {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS library_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS recording(
                    id INTEGER PRIMARY KEY, digest TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
                    duration REAL NOT NULL, wall_start REAL, added_at REAL NOT NULL, print BLOB);
                CREATE INDEX IF NOT EXISTS recording_source ON recording(source);
                CREATE INDEX IF NOT EXISTS recording_digest ON recording(digest);
                CREATE TABLE IF NOT EXISTS item(
                    id INTEGER PRIMARY KEY, reference TEXT NOT NULL UNIQUE, title TEXT, artist TEXT, duration REAL);
                CREATE TABLE IF NOT EXISTS airing(
                    id INTEGER PRIMARY KEY,
                    recording INTEGER NOT NULL REFERENCES recording(id) ON DELETE CASCADE,
                    source TEXT NOT NULL, item INTEGER NOT NULL REFERENCES item(id),
                    start REAL NOT NULL, "end" REAL NOT NULL, wall_start REAL, wall_end REAL, day INTEGER,
                    reference_start REAL NOT NULL, reference_end REAL NOT NULL,
                    confidence REAL NOT NULL, skew REAL NOT NULL, time_scale REAL NOT NULL, marker INTEGER);
                CREATE INDEX IF NOT EXISTS airing_source_day ON airing(source, day, item, start, "end");
                CREATE INDEX IF NOT EXISTS airing_item ON airing(item, wall_start);
                CREATE INDEX IF NOT EXISTS airing_wall ON airing(wall_start);
                CREATE INDEX IF NOT EXISTS airing_recording ON airing(recording, start);
                """)
            try db.prepare("INSERT OR REPLACE INTO library_meta(key, value) VALUES ('format_version', ?)").bind("\(Self.formatVersion)").run()
        }
    }

    /// Format 1 to 2: the recording table again without `UNIQUE` on its digest and with a
    /// print column (SQLite cannot drop a constraint), airings kept; one transaction, with
    /// foreign keys off meanwhile so that dropping the old table deletes no airing.
    private func upgradeFromVersion1() throws {
        try db.execute("PRAGMA foreign_keys = OFF")
        defer { try? db.execute("PRAGMA foreign_keys = ON") }
        try db.transaction {
            try db.execute("""
                CREATE TABLE recording_v2(
                    id INTEGER PRIMARY KEY, digest TEXT NOT NULL, name TEXT NOT NULL, source TEXT NOT NULL,
                    duration REAL NOT NULL, wall_start REAL, added_at REAL NOT NULL, print BLOB);
                INSERT INTO recording_v2(id, digest, name, source, duration, wall_start, added_at)
                    SELECT id, digest, name, source, duration, wall_start, added_at FROM recording;
                DROP TABLE recording;
                ALTER TABLE recording_v2 RENAME TO recording;
                CREATE INDEX IF NOT EXISTS recording_source ON recording(source);
                CREATE INDEX IF NOT EXISTS recording_digest ON recording(digest);
                """)
            try db.prepare("UPDATE library_meta SET value = ? WHERE key = 'format_version'").bind("\(Self.formatVersion)").run()
        }
    }

    /// The ids of the stored recordings that `recording` is again (``LibraryRecording/isSameRecording(as:)``),
    /// other than `except`: equal digests, or prints of about the same length.
    private func sameRecordings(as recording: LibraryRecording, except: Int64? = nil) throws -> [Int64] {
        let q = try db.prepare("""
            SELECT id, digest, name, source, print FROM recording
            WHERE (digest = ?1 OR (print IS NOT NULL AND abs(length(print) - ?2) <= 4)) AND id IS NOT ?3
            """).bind(recording.digest, recording.audioPrint.bytes.count, except)
        var out: [Int64] = []
        while try q.step() {
            let stored = LibraryRecording(id: Int64(q.int(0)), digest: q.string(1) ?? "", name: q.string(2) ?? "",
                                          source: q.string(3) ?? "", duration: 0,
                                          audioPrint: AudioPrint(bytes: q.isNull(4) ? [] : q.blob(4)))
            if stored.isSameRecording(as: recording) { out.append(stored.id) }
        }
        return out
    }

    /// Deletes recordings and their airings.
    private func delete(recordings ids: [Int64]) throws {
        for id in ids {
            try db.prepare("DELETE FROM airing WHERE recording = ?").bind(id).run()
            try db.prepare("DELETE FROM recording WHERE id = ?").bind(id).run()
        }
    }

    /// Stores `recording` with `airings` (their `recording`, `id` and `source` fields are set
    /// here), replacing every earlier recording it is again (the same audio from the same
    /// source, see ``LibraryRecording/isSameRecording(as:)``) with its airings. One
    /// transaction: on any error nothing changes.
    /// - Returns: the stored recording (with its id) and whether an earlier one was replaced.
    /// - Throws: ``LibraryError/writeFailed(path:reason:)``.
    @discardableResult
    public func record(_ recording: LibraryRecording, airings: [Airing]) throws -> (recording: LibraryRecording, replaced: Bool) {
        do {
            return try db.transaction {
                let old = try sameRecordings(as: recording)
                try delete(recordings: old)
                let replaced = !old.isEmpty
                var stored = recording
                stored.addedAt = Date().timeIntervalSince1970
                try db.prepare("INSERT INTO recording(digest, name, source, duration, wall_start, added_at, print) VALUES (?, ?, ?, ?, ?, ?, ?)")
                    .bind(recording.digest, recording.name, recording.source, recording.duration, recording.wallStart, stored.addedAt,
                          recording.audioPrint.bytes.isEmpty ? nil : Data(recording.audioPrint.bytes)).run()
                stored.id = sqlite3LastRowID()
                stored.airingCount = airings.count
                try insert(airings, recording: stored.id, source: stored.source)
                return (stored, replaced)
            }
        } catch let error as LibraryError {
            throw error
        } catch {
            throw LibraryError.writeFailed(path: path, reason: "\(error)")
        }
    }

    /// Adds airings to an existing recording (a monitor run writing each activity as it
    /// ends), in one transaction.
    /// - Throws: ``LibraryError/writeFailed(path:reason:)``, also when no recording has that id.
    public func append(_ airings: [Airing], toRecording id: Int64) throws {
        do {
            try db.transaction {
                let q = try db.prepare("SELECT source FROM recording WHERE id = ?").bind(id)
                guard try q.step(), let source = q.string(0) else { throw SQLiteFailure(message: "no recording with id \(id)") }
                try insert(airings, recording: id, source: source)
            }
        } catch {
            throw LibraryError.writeFailed(path: path, reason: "\(error)")
        }
    }

    /// Completes a recording written piece by piece (a monitor run: created with a provisional
    /// digest, airings appended as they end): sets its digest and print — replacing any other
    /// recording it is again, as ``record(_:airings:)`` does —, its duration and its wall-clock
    /// start. One transaction.
    /// - Throws: ``LibraryError/writeFailed(path:reason:)``.
    public func finishRecording(_ id: Int64, digest: String, audioPrint: AudioPrint = AudioPrint(), duration: Double,
                                wallStart: Double?) throws {
        do {
            try db.transaction {
                let q = try db.prepare("SELECT name, source FROM recording WHERE id = ?").bind(id)
                guard try q.step() else { throw SQLiteFailure(message: "no recording with id \(id)") }
                let finished = LibraryRecording(id: id, digest: digest, name: q.string(0) ?? "", source: q.string(1) ?? "",
                                                duration: duration, audioPrint: audioPrint)
                try delete(recordings: try sameRecordings(as: finished, except: id))
                try db.prepare("UPDATE recording SET digest = ?, duration = ?, wall_start = coalesce(?, wall_start), print = ? WHERE id = ?")
                    .bind(digest, duration, wallStart, audioPrint.bytes.isEmpty ? nil : Data(audioPrint.bytes), id).run()
            }
        } catch {
            throw LibraryError.writeFailed(path: path, reason: "\(error)")
        }
    }

    private func sqlite3LastRowID() -> Int64 {
        (try? { () throws -> Int64 in
            let q = try db.prepare("SELECT last_insert_rowid()")
            return try q.step() ? Int64(q.int(0)) : 0
        }()) ?? 0
    }

    /// The item row of a reference, created or updated with the airing's metadata.
    private func itemID(for a: Airing) throws -> Int {
        let q = try db.prepare("SELECT id, title, artist, duration FROM item WHERE reference = ?").bind(a.reference)
        if try q.step() {
            let id = q.int(0)
            let title = q.string(1), artist = q.string(2), duration: Double? = q.isNull(3) ? nil : q.double(3)
            if (a.title != nil && a.title != title) || (a.artist != nil && a.artist != artist)
                || (a.referenceDuration != nil && a.referenceDuration != duration) {
                try db.prepare("UPDATE item SET title = ?, artist = ?, duration = ? WHERE id = ?")
                    .bind(a.title ?? title, a.artist ?? artist, a.referenceDuration ?? duration, id).run()
            }
            return id
        }
        try db.prepare("INSERT INTO item(reference, title, artist, duration) VALUES (?, ?, ?, ?)")
            .bind(a.reference, a.title, a.artist, a.referenceDuration).run()
        return Int(sqlite3LastRowID())
    }

    private func insert(_ airings: [Airing], recording: Int64, source: String) throws {
        let statement = try db.prepare("""
            INSERT INTO airing(recording, source, item, start, "end", wall_start, wall_end, day, reference_start, reference_end,
                               confidence, skew, time_scale, marker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        var items: [String: Int] = [:]
        for a in airings {
            guard a.start.isFinite, a.end.isFinite, a.referenceStart.isFinite, a.referenceEnd.isFinite, a.end >= a.start else {
                throw SQLiteFailure(message: "airing of \(a.reference) has invalid times \(a.start)–\(a.end)")
            }
            let item: Int
            if let known = items[a.reference] { item = known } else { item = try itemID(for: a); items[a.reference] = item }
            let day: Int? = a.wallStart.map { Int(($0 / 86_400).rounded(.down)) }
            try statement.bind(recording, source, item, a.start, a.end, a.wallStart, a.wallEnd, day, a.referenceStart,
                               a.referenceEnd, a.confidence, a.frequencySkew, a.timeScale, a.marker.map { Int64($0) }).run()
        }
    }

    /// The SQL condition and its values for `filter` (over `airing a` joined with `item i`).
    private func condition(_ filter: LibraryFilter) throws -> (sql: String, values: [Any?]) {
        var parts: [String] = []
        var values: [Any?] = []
        if let s = filter.source { parts.append("a.source = ?"); values.append(s) }
        if let r = filter.reference { parts.append("a.item = (SELECT id FROM item WHERE reference = ?)"); values.append(r) }
        if let t = filter.since { parts.append("a.wall_start >= ?"); values.append(t) }
        if let t = filter.until { parts.append("a.wall_start < ?"); values.append(t) }
        if let d = filter.recording {
            let ids = try recordingRows(source: nil).filter { $0.matches(d) }.map(\.id)
            parts.append("a.recording IN (\(ids.isEmpty ? "-1" : ids.map { "\($0)" }.joined(separator: ",")))")
        }
        return (parts.isEmpty ? "1" : parts.joined(separator: " AND "), values)
    }

    /// Prepares `sql` and binds `values` (up to the filter's five).
    private func query(_ sql: String, _ values: [Any?]) throws -> SQLiteStatement {
        let q = try db.prepare(sql)
        switch values.count {
        case 0: q.bind()
        case 1: q.bind(values[0])
        case 2: q.bind(values[0], values[1])
        case 3: q.bind(values[0], values[1], values[2])
        case 4: q.bind(values[0], values[1], values[2], values[3])
        default: q.bind(values[0], values[1], values[2], values[3], values[4])
        }
        return q
    }

    private func read<T>(_ body: () throws -> T) throws -> T {
        do {
            return try db.transaction(write: false, body)
        } catch let error as LibraryError {
            throw error
        } catch {
            throw LibraryError.unreadable(path: path, reason: "\(error)")
        }
    }

    /// The airings `filter` selects, ordered by wall-clock start (airings without one last),
    /// then source, recording and recording time.
    public func airings(_ filter: LibraryFilter = LibraryFilter()) throws -> [Airing] {
        try read {
            let (cond, values) = try condition(filter)
            let order = filter.reference != nil && filter.source == nil
                ? "a.item, a.wall_start IS NULL, a.wall_start, a.recording, a.start"
                : "a.wall_start IS NULL, a.wall_start, a.source, a.recording, a.start"
            let q = try query("""
                SELECT a.id, a.recording, a.source, i.reference, i.title, i.artist, i.duration, a.start, a."end", a.wall_start,
                       a.wall_end, a.reference_start, a.reference_end, a.confidence, a.skew, a.time_scale, a.marker
                FROM airing a JOIN item i ON i.id = a.item WHERE \(cond) ORDER BY \(order)
                """, values)
            var out: [Airing] = []
            while try q.step() {
                out.append(Airing(id: Int64(q.int(0)), recording: Int64(q.int(1)), source: q.string(2) ?? "",
                                  reference: q.string(3) ?? "", title: q.string(4), artist: q.string(5),
                                  referenceDuration: q.isNull(6) ? nil : q.double(6), start: q.double(7), end: q.double(8),
                                  wallStart: q.isNull(9) ? nil : q.double(9), wallEnd: q.isNull(10) ? nil : q.double(10),
                                  referenceStart: q.double(11), referenceEnd: q.double(12), confidence: q.double(13),
                                  frequencySkew: q.double(14), timeScale: q.double(15),
                                  marker: q.isNull(16) ? nil : UInt32(truncatingIfNeeded: q.int(16))))
            }
            return out
        }
    }

    /// The recordings whose digest starts with `digest` (6 or more hex digits; a full digest
    /// matches itself only) or whose name equals it.
    public func recordings(matching digest: String) throws -> [LibraryRecording] {
        try read { try recordingRows(source: nil).filter { $0.matches(digest) } }
    }

    /// Every recording (optionally of one source), oldest first, with its airing count.
    public func recordings(source: String? = nil) throws -> [LibraryRecording] {
        try read { try recordingRows(source: source) }
    }

    private func recordingRows(source: String?) throws -> [LibraryRecording] {
        do {
            let q = try db.prepare("""
                SELECT r.id, r.digest, r.name, r.source, r.duration, r.wall_start, r.added_at,
                       (SELECT count(*) FROM airing a WHERE a.recording = r.id)
                FROM recording r WHERE ?1 IS NULL OR r.source = ?1 ORDER BY r.wall_start IS NULL, r.wall_start, r.id
                """).bind(source)
            var out: [LibraryRecording] = []
            while try q.step() {
                out.append(LibraryRecording(id: Int64(q.int(0)), digest: q.string(1) ?? "", name: q.string(2) ?? "",
                                            source: q.string(3) ?? "", duration: q.double(4),
                                            wallStart: q.isNull(5) ? nil : q.double(5), addedAt: q.double(6),
                                            airingCount: q.int(7)))
            }
            return out
        }
    }

    /// Every recording's digest by row id (cheaper than ``recordings(source:)``: no airing counts).
    public func recordingDigests() throws -> [Int64: String] {
        try read {
            let q = try db.prepare("SELECT id, digest FROM recording")
            var out: [Int64: String] = [:]
            while try q.step() { out[Int64(q.int(0))] = q.string(1) ?? "" }
            return out
        }
    }

    /// Removes the airings `filter` selects (one transaction) and the recordings left with
    /// none; with ``LibraryFilter/recording`` alone, that recording goes even when empty.
    /// - Returns: how many airings and recordings were removed.
    /// - Throws: ``LibraryError/writeFailed(path:reason:)``; an empty filter is refused (it
    ///   would remove everything: delete the file instead).
    @discardableResult
    public func remove(_ filter: LibraryFilter) throws -> (airings: Int, recordings: Int) {
        guard !filter.isEmpty else { throw LibraryError.writeFailed(path: path, reason: "nothing selected to remove") }
        do {
            return try db.transaction {
                let (cond, values) = try condition(filter)
                var touched: Set<Int64> = []
                let ids = try query("SELECT DISTINCT a.recording FROM airing a JOIN item i ON i.id = a.item WHERE \(cond)", values)
                while try ids.step() { touched.insert(Int64(ids.int(0))) }
                try query("DELETE FROM airing WHERE id IN (SELECT a.id FROM airing a JOIN item i ON i.id = a.item WHERE \(cond))", values).run()
                let removed = try changes()
                let onlyRecording = filter.source == nil && filter.reference == nil && filter.since == nil && filter.until == nil
                if onlyRecording, let d = filter.recording { touched.formUnion(try recordingRows(source: nil).filter { $0.matches(d) }.map(\.id)) }
                var gone = 0
                let drop = try db.prepare("DELETE FROM recording WHERE id = ? AND NOT EXISTS (SELECT 1 FROM airing WHERE recording = ?)")
                for id in touched.sorted() {
                    try drop.bind(id, id).run()
                    gone += try changes()
                }
                return (removed, gone)
            }
        } catch let error as LibraryError {
            throw error
        } catch {
            throw LibraryError.writeFailed(path: path, reason: "\(error)")
        }
    }

    private func changes() throws -> Int {
        let q = try db.prepare("SELECT changes()")
        return try q.step() ? q.int(0) : 0
    }

    /// Play counts and total airtime per reference, grouped as `grouping` says, of the
    /// airings `filter` selects; ordered by group, then most plays first.
    public func counts(by grouping: CountGrouping, filter: LibraryFilter = LibraryFilter()) throws -> [PlayCount] {
        try read {
            let (cond, values) = try condition(filter)
            let key: String
            switch grouping {
            case .day, .week: key = "a.day"
            case .source: key = "a.source"
            case .reference: key = "NULL"
            }
            var items: [Int: (String, String?, String?)] = [:]
            let iq = try db.prepare("SELECT id, reference, title, artist FROM item")
            while try iq.step() { items[iq.int(0)] = (iq.string(1) ?? "", iq.string(2), iq.string(3)) }
            let q = try query("""
                SELECT \(key), a.item, count(*), total(a."end" - a.start) FROM airing a WHERE \(cond) GROUP BY 1, 2
                """, values)
            // Group names: one string per distinct day, week or source.
            var names: [Int: String] = [:]
            var rows: [PlayCount] = []
            var index: [String: Int] = [:]  // week groups merge several days
            while try q.step() {
                let group: String?
                switch grouping {
                case .day, .week:
                    if q.isNull(0) {
                        group = nil
                    } else {
                        let day = q.int(0)
                        if let known = names[day] { group = known } else {
                            let name = grouping == .day ? Self.dayName(day) : Self.isoWeek(day)
                            names[day] = name
                            group = name
                        }
                    }
                case .source: group = q.string(0)
                case .reference: group = nil
                }
                let info = items[q.int(1)] ?? ("", nil, nil)
                let plays = q.int(2), airtime = q.double(3)
                if grouping == .week {
                    let k = (group ?? "") + "\u{0}" + info.0
                    if let i = index[k] {
                        rows[i].plays += plays
                        rows[i].airtime += airtime
                        continue
                    }
                    index[k] = rows.count
                }
                rows.append(PlayCount(group: group, reference: info.0, title: info.1, artist: info.2, plays: plays, airtime: airtime))
            }
            // Groups in order (none last), most plays first, then by reference id.
            return rows.sorted { a, b in
                if a.group != b.group {
                    guard let ga = a.group else { return false }
                    guard let gb = b.group else { return true }
                    return ga < gb
                }
                if a.plays != b.plays { return a.plays > b.plays }
                return a.reference < b.reference
            }
        }
    }

    /// `YYYY-MM-DD` of a day number (days since 1970-01-01, UTC).
    public static func dayName(_ day: Int) -> String {
        let c = civil(day)
        return String(format: "%04d-%02d-%02d", c.year, c.month, c.day)
    }

    /// The ISO-8601 week (`YYYY-Www`, weeks start on Monday, week 1 holds the year's first
    /// Thursday) of a day number (days since 1970-01-01, UTC).
    public static func isoWeek(_ day: Int) -> String {
        let weekday = ((day % 7) + 7 + 3) % 7  // 0 = Monday (1970-01-01 was a Thursday)
        let thursday = day - weekday + 3
        let year = civil(thursday).year
        let jan1 = daysFromCivil(year: year, month: 1, day: 1)
        return String(format: "%04d-W%02d", year, (thursday - jan1) / 7 + 1)
    }

    /// The proleptic Gregorian date of a day number.
    static func civil(_ day: Int) -> (year: Int, month: Int, day: Int) {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// The day number of a proleptic Gregorian date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
