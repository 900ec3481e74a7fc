import Foundation

/// One job of a ``WorkQueue``: a recording to scan.
public struct QueuedJob: Equatable, Sendable {
    /// The job id (`job.id`, bigserial).
    public var id: Int64
    /// The recording: a path on storage every worker sees, or a URL.
    public var media: String
    /// The source (station, channel) its airings are recorded under; nil: the media's name.
    public var source: String?
    /// Unix time (seconds) of the recording's time 0, when known (wall-clock airing times).
    public var startTime: Double?
    /// `pending`, `running`, `done` or `failed`.
    public var state: String
    /// How many times a worker claimed it.
    public var attempts: Int
    /// The worker holding or last holding it (`host:pid:thread`).
    public var worker: String?
    /// The last error (one line), if any.
    public var error: String?
    /// The token of the claim this value came from (a claim's proof of ownership when completing).
    public var leaseToken: String?
    /// Seconds until the lease of a running job expires (negative: expired).
    public var leaseLeft: Double?
}

/// A queue of recordings to scan, in the PostgreSQL database of a shared catalog, and the
/// recognition library the workers write their results to.
///
/// Tables (created by ``prepare()``):
/// - `job(id, media, source, start_time, state, attempts, lease_token, lease_until, worker, error,
///   enqueued_at, started_at, finished_at, report)`: `report` is the scan's JSON (what
///   `soundmark scan --format json` prints for that recording);
/// - `library_recording(id, digest, name, source, duration, wall_start, added_at, job_id, print)`
///   and `library_airing(id, recording, job_id, source, reference, title, artist,
///   reference_duration, start, end, wall_start, wall_end, reference_start, reference_end,
///   confidence, frequency_skew, time_scale, marker)` (marker: the payload decoded, bigint): the recognition library's recordings and
///   airings (see ``Library``), with the reference's title, artist and duration copied in as
///   the SQLite library does; a recording is known by its audio and source (its digest or
///   ``AudioPrint``, see ``LibraryRecording/isSameRecording(as:)``): the same audio recorded
///   again replaces its airings, the same audio from two named sources keeps both.
///
/// A worker claims the oldest pending job, or a running one whose lease expired, with
/// `FOR UPDATE SKIP LOCKED` (workers never wait for each other), under a new random lease token;
/// it renews the lease while it scans. ``complete(_:report:recording:airings:)`` writes the
/// results and marks the job done in one transaction, and only while the job is still running
/// under that token: a worker killed mid-job leaves the job to be claimed again after its lease,
/// and a worker whose lease was taken over writes nothing, so every job's results are stored
/// exactly once.
public final class WorkQueue {
    /// The database (its display form names it in errors).
    public let location: PostgresLocation
    private var connection: PostgresConnection?

    /// Connects to the database of `uri`.
    /// - Throws: ``PostgresFailure`` when the server cannot be reached.
    public init(uri: String) throws {
        location = try PostgresLocation(uri)
        connection = try PostgresConnection(location)
    }

    /// The connection, reconnected when the server dropped it.
    private func db() throws -> PostgresConnection {
        if let connection, connection.isAlive { return connection }
        connection = nil
        let c = try PostgresConnection(location)
        connection = c
        return c
    }

    /// Creates the queue and library tables when missing.
    /// - Throws: ``PostgresFailure``.
    public func prepare() throws {
        let db = try db()
        try db.transaction {
            try db.query("SELECT pg_advisory_xact_lock(7253012)")
            try db.execute("""
                CREATE TABLE IF NOT EXISTS job(
                    id bigserial PRIMARY KEY, media text NOT NULL, source text, start_time double precision,
                    state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'done', 'failed')),
                    attempts integer NOT NULL DEFAULT 0, lease_token text, lease_until timestamptz, worker text, error text,
                    enqueued_at timestamptz NOT NULL DEFAULT now(), started_at timestamptz, finished_at timestamptz, report text);
                CREATE INDEX IF NOT EXISTS job_state ON job(state, id);
                CREATE TABLE IF NOT EXISTS library_recording(
                    id bigserial PRIMARY KEY, digest text NOT NULL, name text NOT NULL, source text NOT NULL,
                    duration double precision NOT NULL, wall_start double precision, added_at double precision NOT NULL,
                    job_id bigint REFERENCES job(id), print bytea);
                ALTER TABLE library_recording DROP CONSTRAINT IF EXISTS library_recording_digest_key;
                ALTER TABLE library_recording ADD COLUMN IF NOT EXISTS print bytea;
                CREATE INDEX IF NOT EXISTS library_recording_digest ON library_recording(digest);
                CREATE TABLE IF NOT EXISTS library_airing(
                    id bigserial PRIMARY KEY, recording bigint NOT NULL REFERENCES library_recording(id) ON DELETE CASCADE,
                    job_id bigint REFERENCES job(id), source text NOT NULL, reference text NOT NULL, title text, artist text,
                    reference_duration double precision, start double precision NOT NULL, "end" double precision NOT NULL,
                    wall_start double precision, wall_end double precision,
                    reference_start double precision NOT NULL, reference_end double precision NOT NULL,
                    confidence double precision NOT NULL, frequency_skew double precision NOT NULL,
                    time_scale double precision NOT NULL, marker bigint);
                CREATE INDEX IF NOT EXISTS library_airing_recording ON library_airing(recording, start);
                CREATE INDEX IF NOT EXISTS library_airing_job ON library_airing(job_id);
                """)
            // Tables of an earlier soundmark held a boolean there: the payload was not kept.
            let old = try db.query("""
                SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
                AND table_name = 'library_airing' AND column_name = 'marker' AND data_type = 'boolean'
                """)
            if old.rowCount > 0 { try db.execute("ALTER TABLE library_airing ALTER COLUMN marker TYPE bigint USING NULL") }
        }
    }

    /// Enqueues recordings, in order, in one transaction.
    /// - Returns: their job ids.
    /// - Throws: ``PostgresFailure``.
    public func enqueue(_ media: [String], source: String? = nil, startTime: Double? = nil) throws -> [Int64] {
        let db = try db()
        return try db.transaction {
            try media.map { m in
                try db.query("INSERT INTO job(media, source, start_time) VALUES ($1, $2, $3) RETURNING id",
                             [.text(m), source.map { .text($0) } ?? .null, startTime.map { .double($0) } ?? .null]).int(0, 0)
            }
        }
    }

    /// Claims the oldest pending job, or a running job whose lease expired (`FOR UPDATE SKIP
    /// LOCKED`), for `lease` seconds under a new lease token. A job whose lease expired after
    /// `maxAttempts` claims is marked failed instead.
    /// - Returns: the job, or nil when none is claimable now.
    /// - Throws: ``PostgresFailure``.
    public func claim(worker: String, lease: Double, maxAttempts: Int) throws -> QueuedJob? {
        let db = try db()
        try db.query("""
            UPDATE job SET state = 'failed', finished_at = now(),
                error = coalesce(error || '; ', '') || 'lease expired after ' || attempts || ' attempt(s) (worker ' || coalesce(worker, '?') || ' stopped)'
            WHERE state = 'running' AND lease_until < now() AND attempts >= $1
            """, [.int(Int64(maxAttempts))])
        let token = UUID().uuidString
        let r = try db.query("""
            UPDATE job SET state = 'running', attempts = attempts + 1, lease_token = $1, worker = $2,
                lease_until = now() + make_interval(secs => $3::float8), started_at = now()
            WHERE id = (SELECT id FROM job WHERE state = 'pending' OR (state = 'running' AND lease_until < now())
                        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
            RETURNING id, media, source, start_time, attempts, error
            """, [.text(token), .text(worker), .double(lease)])
        guard r.rowCount == 1 else { return nil }
        return QueuedJob(id: r.int(0, 0), media: r.string(0, 1) ?? "", source: r.string(0, 2),
                         startTime: r.isNull(0, 3) ? nil : r.double(0, 3), state: "running", attempts: Int(r.int(0, 4)),
                         worker: worker, error: r.string(0, 5), leaseToken: token)
    }

    /// Extends a running job's lease by `lease` seconds from now.
    /// - Returns: `false` when the job is no longer running under this claim.
    /// - Throws: ``PostgresFailure``.
    public func renew(_ job: QueuedJob, lease: Double) throws -> Bool {
        try db().query("UPDATE job SET lease_until = now() + make_interval(secs => $3::float8) WHERE id = $1 AND lease_token = $2 AND state = 'running' RETURNING id",
                       [.int(job.id), .text(job.leaseToken ?? ""), .double(lease)]).rowCount == 1
    }

    /// Stores a job's results and marks it done, in one transaction, when it is still running
    /// under the claim `job` came from; the recording replaces every earlier one it is again
    /// (``LibraryRecording/isSameRecording(as:)``: the same audio from the same source).
    /// - Parameters:
    ///   - report: the scan's JSON report.
    ///   - recording: the recording (digest, name, source, duration, wall start).
    ///   - airings: its airings (recording time; wall-clock times set when known).
    /// - Returns: `false` (nothing written) when the claim was lost (the lease expired and
    ///   another worker took the job, or it finished).
    /// - Throws: ``PostgresFailure`` (nothing written).
    public func complete(_ job: QueuedJob, report: String, recording: LibraryRecording, airings: [Airing]) throws -> Bool {
        let db = try db()
        return try db.transaction {
            let owned = try db.query("SELECT 1 FROM job WHERE id = $1 AND state = 'running' AND lease_token = $2 FOR UPDATE",
                                     [.int(job.id), .text(job.leaseToken ?? "")])
            guard owned.rowCount == 1 else { return false }
            let print = recording.audioPrint.bytes
            let candidates = try db.query("""
                SELECT id, digest, name, source, print FROM library_recording
                WHERE digest = $1 OR (print IS NOT NULL AND abs(length(print) - $2) <= 4)
                """, [.text(recording.digest), .int(Int64(print.count))])
            for row in 0..<candidates.rowCount {
                let stored = LibraryRecording(id: candidates.int(row, 0), digest: candidates.string(row, 1) ?? "",
                                              name: candidates.string(row, 2) ?? "", source: candidates.string(row, 3) ?? "",
                                              duration: 0, audioPrint: AudioPrint(bytes: candidates.isNull(row, 4) ? [] : candidates.bytes(row, 4)))
                if stored.isSameRecording(as: recording) {
                    try db.query("DELETE FROM library_recording WHERE id = $1", [.int(stored.id)])
                }
            }
            let id = try db.query("""
                INSERT INTO library_recording(digest, name, source, duration, wall_start, added_at, job_id, print)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
                """, [.text(recording.digest), .text(recording.name), .text(recording.source), .double(recording.duration),
                      recording.wallStart.map { .double($0) } ?? .null, .double(Date().timeIntervalSince1970), .int(job.id),
                      print.isEmpty ? .null : .bytes(print)]).int(0, 0)
            for a in airings {
                try db.query("""
                    INSERT INTO library_airing(recording, job_id, source, reference, title, artist, reference_duration, start, "end",
                        wall_start, wall_end, reference_start, reference_end, confidence, frequency_skew, time_scale, marker)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
                    """, [.int(id), .int(job.id), .text(recording.source), .text(a.reference), a.title.map { .text($0) } ?? .null,
                          a.artist.map { .text($0) } ?? .null, a.referenceDuration.map { .double($0) } ?? .null,
                          .double(a.start), .double(a.end), a.wallStart.map { .double($0) } ?? .null,
                          a.wallEnd.map { .double($0) } ?? .null, .double(a.referenceStart), .double(a.referenceEnd),
                          .double(a.confidence), .double(a.frequencySkew), .double(a.timeScale),
                          a.marker.map { .int(Int64($0)) } ?? .null])
            }
            try db.query("""
                UPDATE job SET state = 'done', report = $2, finished_at = now(), lease_until = NULL, error = NULL WHERE id = $1
                """, [.int(job.id), .text(report)])
            return true
        }
    }

    /// Gives a job back after an error: pending again (another claim retries it) while it has
    /// had fewer than `maxAttempts` claims, else failed; the error (one line) is kept. Nothing
    /// when the claim was lost.
    /// - Throws: ``PostgresFailure``.
    public func release(_ job: QueuedJob, error: String, maxAttempts: Int) throws {
        try db().query("""
            UPDATE job SET state = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'pending' END, error = $4,
                lease_until = NULL, finished_at = CASE WHEN attempts >= $3 THEN now() END
            WHERE id = $1 AND lease_token = $2 AND state = 'running'
            """, [.int(job.id), .text(job.leaseToken ?? ""), .int(Int64(maxAttempts)), .text(oneLine(error))])
    }

    /// Every job, oldest first (without reports).
    /// - Throws: ``PostgresFailure``.
    public func jobs() throws -> [QueuedJob] {
        let r = try db().query("""
            SELECT id, media, source, start_time, state, attempts, worker, error,
                   extract(epoch FROM lease_until - now())::float8 FROM job ORDER BY id
            """)
        return (0..<r.rowCount).map { i in
            QueuedJob(id: r.int(i, 0), media: r.string(i, 1) ?? "", source: r.string(i, 2),
                      startTime: r.isNull(i, 3) ? nil : r.double(i, 3), state: r.string(i, 4) ?? "", attempts: Int(r.int(i, 5)),
                      worker: r.string(i, 6), error: r.string(i, 7), leaseToken: nil, leaseLeft: r.isNull(i, 8) ? nil : r.double(i, 8))
        }
    }

    /// Number of jobs pending or running (what a draining worker waits for).
    /// - Throws: ``PostgresFailure``.
    public func unfinishedCount() throws -> Int {
        Int(try db().query("SELECT count(*) FROM job WHERE state IN ('pending', 'running')").int(0, 0))
    }

    /// The scan reports of the done jobs, by job id in id order.
    /// - Throws: ``PostgresFailure``.
    public func reports() throws -> [(id: Int64, media: String, report: String)] {
        let r = try db().query("SELECT id, media, report FROM job WHERE state = 'done' ORDER BY id")
        return (0..<r.rowCount).map { (r.int($0, 0), r.string($0, 1) ?? "", r.string($0, 2) ?? "") }
    }

    /// Number of library recordings and airings written for job `id` (for checks: 1 and the
    /// segment count once done, 0 before).
    /// - Throws: ``PostgresFailure``.
    public func resultCounts(job id: Int64) throws -> (recordings: Int, airings: Int) {
        let r = try db().query("SELECT (SELECT count(*) FROM library_recording WHERE job_id = $1), (SELECT count(*) FROM library_airing WHERE job_id = $1)",
                               [.int(id)])
        return (Int(r.int(0, 0)), Int(r.int(0, 1)))
    }

    /// Every recording the workers stored (`library_recording`, ordered by id) with its airings
    /// (`library_airing`, by recording time), read in one REPEATABLE READ snapshot: what
    /// `library` and `report` commands read from a PostgreSQL library.
    /// - Returns: nil when the database holds no library tables (no worker has run there).
    /// - Throws: ``PostgresFailure``.
    public func libraryContents() throws -> [(recording: LibraryRecording, airings: [Airing])]? {
        let db = try db()
        return try db.transaction("ISOLATION LEVEL REPEATABLE READ READ ONLY") {
            let tables = try db.query("""
                SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()
                AND table_name IN ('library_recording', 'library_airing')
                """)
            guard tables.int(0, 0) == 2 else { return nil }
            let r = try db.query("SELECT id, digest, name, source, duration, wall_start, added_at FROM library_recording ORDER BY id")
            var out: [(recording: LibraryRecording, airings: [Airing])] = []
            var position: [Int64: Int] = [:]
            for row in 0..<r.rowCount {
                position[r.int(row, 0)] = out.count
                out.append((LibraryRecording(id: r.int(row, 0), digest: r.string(row, 1) ?? "", name: r.string(row, 2) ?? "",
                                             source: r.string(row, 3) ?? "", duration: r.double(row, 4),
                                             wallStart: r.isNull(row, 5) ? nil : r.double(row, 5), addedAt: r.double(row, 6)), []))
            }
            let a = try db.query("""
                SELECT recording, source, reference, title, artist, reference_duration, start, "end", wall_start, wall_end,
                       reference_start, reference_end, confidence, frequency_skew, time_scale, marker
                FROM library_airing ORDER BY recording, start, id
                """)
            for row in 0..<a.rowCount {
                guard let n = position[a.int(row, 0)] else { continue }
                func optional(_ c: Int) -> Double? { a.isNull(row, c) ? nil : a.double(row, c) }
                out[n].airings.append(Airing(source: a.string(row, 1) ?? "", reference: a.string(row, 2) ?? "",
                                             title: a.string(row, 3), artist: a.string(row, 4), referenceDuration: optional(5),
                                             start: a.double(row, 6), end: a.double(row, 7), wallStart: optional(8),
                                             wallEnd: optional(9), referenceStart: a.double(row, 10), referenceEnd: a.double(row, 11),
                                             confidence: a.double(row, 12), frequencySkew: a.double(row, 13),
                                             timeScale: a.double(row, 14),
                                             marker: a.isNull(row, 15) ? nil : UInt32(truncatingIfNeeded: a.int(row, 15))))
            }
            return out
        }
    }
}
