import Foundation
import Soundmark

/// The catalog stores this process opened, by `--catalog` argument: one connection and cache
/// each for a PostgreSQL catalog.
private nonisolated(unsafe) var catalogStores: [String: CatalogStore] = [:]
private let catalogStoresLock = NSLock()

/// Cache file paths and the server location each stands for, so that messages name the
/// server (without password), never the local cache.
private nonisolated(unsafe) var displayNames: [(String, String)] = []

/// `message` with every local cache path replaced by the server location it caches.
func displayingServers(_ message: String) -> String {
    catalogStoresLock.lock(); defer { catalogStoresLock.unlock() }
    var text = message
    for (path, display) in displayNames where text.contains(path) {
        // A cache that cannot be read is this machine's fault, not the server's: say which
        // file it is (deleting it fetches the catalog again).
        let unreadable = text.contains("cannot read catalog") || text.contains("not a soundmark catalog")
        let name = unreadable && !path.contains("://") ? "\(display) (local cache \(path): delete it to fetch the catalog again)" : display
        text = text.replacingOccurrences(of: path + ".index", with: name)
            .replacingOccurrences(of: path, with: name)
    }
    return text
}

/// The store of the catalog named by `--catalog` (an SQLite file, or a PostgreSQL catalog:
/// `postgresql://…`, `postgres://…`), opened once per process: the one place the command line
/// turns a catalog argument into storage. `create` creates a server's catalog tables when it
/// is first connected to.
func catalogStore(_ location: String, create: Bool = false) throws -> CatalogStore {
    catalogStoresLock.lock()
    if let known = catalogStores[location] {
        catalogStoresLock.unlock()
        return known
    }
    catalogStoresLock.unlock()
    let store = try CatalogStore(CatalogLocation(location), create: create)
    catalogStoresLock.lock()
    catalogStores[location] = store
    if let server = store.server {
        displayNames.append((server.cachePath, server.location.display))
        displayNames.append((location, server.location.display))
    }
    catalogStoresLock.unlock()
    return store
}

/// Opens the catalog named by `--catalog`: an SQLite file, or a PostgreSQL catalog
/// (`postgresql://…`, `postgres://…`) through its local cache, brought up to date first unless
/// `fresh` is false (a per-file check of a batch the writer keeps up to date).
func openCatalog(_ location: String, create: Bool = false, readOnly: Bool = false, fresh: Bool = true) throws -> Catalog {
    try catalogStore(location, create: create).open(create: create, readOnly: readOnly, fresh: fresh)
}

/// The path the `Catalog` for `location` reads (the local cache for PostgreSQL).
func catalogFilePath(_ location: String) throws -> String {
    try catalogStore(location).filePath
}

/// `soundmark catalog copy SRC DST`: every reference of SRC stored into DST as it is (SQLite or
/// PostgreSQL either side), one transaction per reference; DST's other references are kept.
func runCatalogCopy(_ args: ParsedArguments) throws -> Int32 {
    let (from, to) = (args.positional[0], args.positional[1])
    if from == to { throw UsageError(message: "source and destination are the same catalog") }
    let source = try openCatalog(from, readOnly: true)
    let destination = try openCatalog(to, create: true)
    // The same file however it is spelled (./a.db, a link to it): the same device and inode.
    var a = stat(), b = stat()
    let sameFile = stat(source.path, &a) == 0 && stat(destination.path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
    if sameFile || (try? catalogFilePath(from)) == destination.path {
        throw UsageError(message: "source and destination are the same catalog")
    }
    let references = try source.references()
    for r in references {
        try destination.copyReference(id: r.item.id, from: source)
    }
    refreshIndex(destination)
    FileHandle.standardError.write(Data(displayingServers("\(references.count) reference(s) copied from \(from) to \(to)\n").utf8))
    return Exit.ok
}

/// The `--catalog` of a queue command: a PostgreSQL URI (the queue lives in that database).
func queueLocation(_ args: ParsedArguments) throws -> String {
    let uri = try required(args, "catalog")
    guard case .postgres = CatalogLocation(uri) else {
        throw UsageError(message: "the work queue lives in a PostgreSQL catalog: give --catalog postgresql://…")
    }
    return uri
}

/// Opens the work queue of `uri` (creating its tables), with errors naming the server without password.
func openQueue(_ uri: String) throws -> WorkQueue {
    do {
        let queue = try WorkQueue(uri: uri)
        try queue.prepare()
        return queue
    } catch let e as PostgresFailure {
        throw CommandError(message: "\((try? PostgresLocation(uri).display) ?? "catalog"): work queue: \(e.message)")
    }
}

/// `soundmark queue add`: enqueues recordings (files are stored as absolute paths, a folder's media
/// files as `catalog add` finds them, URLs as given).
func runQueueAdd(_ args: ParsedArguments) throws -> Int32 {
    let uri = try queueLocation(args)
    let startTime = try args.value("start-time").map { try parseTimeArgument($0, option: "start-time") }
    var media: [String] = []
    for m in args.positional {
        if m.contains("://") { media.append(m); continue }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: m, isDirectory: &isDirectory) else { throw CommandError(message: "\(m): no such file") }
        guard isDirectory.boolValue else { media.append(absolutePath(m)); continue }
        // A folder: its media files, walked as `catalog add` walks one.
        let found = expandInputs([m]).map { absolutePath($0.path) }
        guard !found.isEmpty else { throw CommandError(message: "\(m): a folder with no media files") }
        media += found
    }
    _ = try catalogStore(uri)  // the catalog must exist
    let ids = try openQueue(uri).enqueue(media, source: args.value("source"), startTime: startTime)
    for (id, m) in zip(ids, media) { print("\(id)\t\(m)") }
    FileHandle.standardError.write(Data("\(ids.count) job(s) queued\n".utf8))
    return Exit.ok
}

/// `soundmark queue status`: counts per state, running and failed jobs with their errors.
func runQueueStatus(_ args: ParsedArguments) throws -> Int32 {
    let uri = try queueLocation(args)
    let jobs = try openQueue(uri).jobs()
    let states = ["pending", "running", "done", "failed"]
    let counts = states.map { s in (s, jobs.filter { $0.state == s }.count) }
    if args.value("format") == "json" {
        let list = jobs.map { j in
            JSONOutput.object([("id", .integer(Int(j.id))), ("source", .string(j.media)), ("state", .string(j.state)),
                               ("attempts", .integer(j.attempts)), ("worker", .optional(j.worker)), ("error", .optional(j.error))])
        }
        print(versionedJSON([("counts", .object(counts.map { ($0.0, .integer($0.1)) })), ("jobs", .array(list))]).text)
        return Exit.ok
    }
    print(counts.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
    for j in jobs where j.state == "running" || j.state == "failed" || (j.state == "pending" && j.error != nil) {
        var line = "\(j.id)\t\(j.state)\t\(j.media)\tattempts \(j.attempts)"
        if j.state == "running", let w = j.worker { line += "\t\(w)" + (j.leaseLeft.map { String(format: ", lease %.0f s", $0) } ?? "") }
        if let e = j.error { line += "\t" + e }
        print(line)
    }
    return Exit.ok
}

/// `soundmark queue results`: the scan report of every done job, one JSON object per line in job order.
func runQueueResults(_ args: ParsedArguments) throws -> Int32 {
    for r in try openQueue(try queueLocation(args)).reports() { print(r.report) }
    return Exit.ok
}

/// `soundmark worker`: claims jobs and scans them until the queue is drained (or, with --wait, until
/// SIGINT/SIGTERM); a signal always lets the job in hand finish first.
func runWorker(_ args: ParsedArguments) throws -> Int32 {
    let uri = try queueLocation(args)
    let threads = args.value("jobs") == nil ? 1 : try jobCount(args)
    let lease = try numberOption(args, "lease", "seconds", in: 1...longestOptionSeconds) ?? 60
    let maxAttempts = try wholeNumberOption(args, "max-attempts", in: 1...1000) ?? 3
    let wait = args.has("wait")
    let store = try catalogStore(uri)
    _ = try openQueue(uri)
    let scanArgs = try parse(["--catalog", uri, "--format", "json", "-"], for: scanCommand)  // scan's defaults
    let stream = try streamChoice(scanArgs), options = try parseScanOptions(scanArgs)
    let state = WorkerState(catalog: try store.open(readOnly: true))
    let host = ProcessInfo.processInfo.hostName
    let tally = WorkerTally()
    // SIGINT/SIGTERM: finish the job in hand (its results are written once), then stop,
    // instead of leaving it claimed until its lease runs out.
    signal(SIGINT) { _ in stopRequested = 1 }
    signal(SIGTERM) { _ in stopRequested = 1 }
    let group = DispatchGroup()
    for t in 0..<threads {
        group.enter()
        let thread = Thread {
            defer { group.leave() }
            let name = "\(host):\(getpid()):\(t)"
            var queue: WorkQueue?
            var idle = 0.2, lastError = ""
            while !workerStopping() {
                do {
                    let q = try queue ?? WorkQueue(uri: uri)
                    queue = q
                    guard let job = try q.claim(worker: name, lease: lease, maxAttempts: maxAttempts) else {
                        if !wait, try q.unfinishedCount() == 0 { return }
                        Thread.sleep(forTimeInterval: 0.5)
                        continue
                    }
                    lastError = ""
                    idle = 0.2
                    let ok = workOn(job, queue: q, uri: uri, state: state, store: store, scanArgs: scanArgs, stream: stream, options: options,
                                    lease: lease, maxAttempts: maxAttempts)
                    tally.count(ok)
                } catch {
                    // The server refused or dropped the connection: retry with a growing pause.
                    let text = describe(error)
                    if text != lastError { warn("worker: \(text); retrying") }
                    lastError = text
                    queue = nil
                    Thread.sleep(forTimeInterval: idle)
                    idle = min(idle * 2, 5)
                }
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
    group.wait()
    let (done, failed) = tally.totals
    FileHandle.standardError.write(Data("worker: \(done) job(s) done, \(failed) given back or failed\n".utf8))
    return failed == 0 ? Exit.ok : Exit.none
}

/// Jobs done and given back by a worker's threads.
final class WorkerTally: @unchecked Sendable {
    private let lock = NSLock()
    private var done = 0, failed = 0
    func count(_ ok: Bool) { lock.lock(); if ok { done += 1 } else { failed += 1 }; lock.unlock() }
    var totals: (Int, Int) { lock.lock(); defer { lock.unlock() }; return (done, failed) }
}

/// Whether SIGINT or SIGTERM asked the worker to stop (after the job in hand).
private nonisolated(unsafe) var stopRequested: Int32 = 0
private func workerStopping() -> Bool { stopRequested != 0 }

/// The matcher state shared by a worker's threads: the local cache catalog and its index,
/// reloaded when the shared catalog changed.
final class WorkerState: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var catalog: Catalog
    private(set) var index: CatalogIndex?
    init(catalog: Catalog) { self.catalog = catalog }

    /// The current catalog and index, after pulling the server's changes.
    func current(_ store: CatalogStore) throws -> (Catalog, CatalogIndex) {
        lock.lock(); defer { lock.unlock() }
        if try store.refresh() || index == nil {
            catalog = try store.open(readOnly: true)
            index = try catalog.loadIndex()
        }
        return (catalog, index!)
    }
}

/// Scans one claimed job and stores its results (renewing the lease meanwhile); on an error
/// the job is given back with it. - Returns: whether the job was done by this worker.
func workOn(_ job: QueuedJob, queue: WorkQueue, uri: String, state: WorkerState, store: CatalogStore, scanArgs: ParsedArguments,
            stream: StreamChoice, options: ScanOptions, lease: Double, maxAttempts: Int) -> Bool {
    // The lease is renewed on a connection of its own every third of the lease.
    let beat = DispatchSemaphore(value: 0)
    let renewer = Thread {
        var renewing: WorkQueue?
        while beat.wait(timeout: .now() + lease / 3) == .timedOut {
            do {
                let q = try renewing ?? WorkQueue(uri: uri)
                renewing = q
                if try !q.renew(job, lease: lease) { return }
            } catch {
                renewing = nil
            }
        }
    }
    renewer.start()
    defer { beat.signal() }
    let result: (report: String, recording: LibraryRecording, airings: [Airing])
    do {
        // The shared index, and a connection of this thread's own to the cache for markers and
        // annotations (an SQLite connection is not shared between threads).
        let index = try state.current(store).1
        let catalog = try Catalog(path: store.filePath, readOnly: true)
        var digest = AudioDigest()
        let reader = try MarkerReader(scanArgs, catalog: catalog, sampleRate: index.configuration.sampleRate)
        let (fingerprinted, partial, duration, decoder) = try scanInput(job.media, index: index, stream: stream, options: options, verbose: false,
                                                                   onSamples: { digest.append($0) },
                                                                   onAudio: reader.map { r in { r.consume($0) } })
        let marked = reader?.finish(fingerprinted, index: index)
        let scanned = ScannedRecording(segments: marked?.map(\.segment) ?? fingerprinted, partial: partial, duration: duration,
                                       decoder: decoder, digest: digest, marked: marked)
        let mapped = try ScanReport.mappedAnnotations(scanned.segments, duration: duration, catalog: catalog, index: index)
        var airings = scanned.segments.map { $0.airing(referenceDuration: index.references[$0.referenceIndex].duration) }
        for (i, m) in (marked ?? []).enumerated() { airings[i].marker = m.marker?.payload }
        if let t = job.startTime {
            for i in airings.indices { airings[i].wallStart = t + airings[i].start; airings[i].wallEnd = t + airings[i].end }
        }
        let source = job.source ?? job.media
        for i in airings.indices { airings[i].source = source }
        result = (scanReportJSON(job.media, scanned, mapped: mapped, warnings: InputWarnings.shared.take(job.media)).text,
                  LibraryRecording(digest: digest.hex, name: job.media, source: source, duration: duration, wallStart: job.startTime,
                                   audioPrint: digest.audioPrint),
                  airings)
    } catch {
        let text = describe(error)
        printError("job \(job.id): \(text)")
        try? queue.release(job, error: displayingServers(text), maxAttempts: maxAttempts)
        return false
    }
    // Storing: retried through dropped connections and server restarts while the claim holds.
    var pause = 0.2
    for attempt in 1...30 {
        do {
            let target = attempt == 1 ? queue : try WorkQueue(uri: uri)
            if try target.complete(job, report: result.report, recording: result.recording, airings: result.airings) {
                FileHandle.standardError.write(Data("job \(job.id): done, \(result.airings.count) airing(s), \(job.media)\n".utf8))
                return true
            }
            printError("job \(job.id): its lease expired and another worker took it; results of this run dropped")
            return false
        } catch {
            if attempt == 1 || attempt % 5 == 0 { warn("job \(job.id): cannot store results (\(describe(error))); retrying") }
            Thread.sleep(forTimeInterval: pause)
            pause = min(pause * 2, 5)
        }
    }
    printError("job \(job.id): results not stored; the job will be claimed again when its lease expires")
    return false
}

/// The PostgreSQL commands: `catalog copy`, `queue add`, `queue status`, `worker`.
let postgresCommands: [CommandSpec] = [
    CommandSpec(words: ["catalog", "copy"], usage: "SRC DST",
                summary: "copy every reference between catalogs (SQLite file or postgresql:// URI, either way)",
                details: """
                References are copied as stored (metadata, postings, annotations, markers, Shazam peaks, version
                features, file stamps), one transaction each; a reference of DST with the same id is replaced, DST's other
                references are kept. DST is created when missing. Both must have the same fingerprint configuration.
                """,
                options: [], positional: 2...2, run: runCatalogCopy),
    CommandSpec(words: ["queue", "add"], usage: "MEDIA_OR_URL...",
                summary: "enqueue recordings for the workers of a PostgreSQL catalog",
                details: """
                Files are stored as absolute paths (they must be on storage every worker sees), URLs as given.
                Prints one line per job: its id and the recording.
                """,
                options: [catalogOption,
                          OptionSpec(name: "source", value: "NAME", help: "the station or channel name stored with the results (default: each recording's name)"),
                          OptionSpec(name: "start-time", value: "ISO-8601", help: "wall-clock time of the recordings' start (airings get wall-clock times)")],
                positional: 1...Int.max, run: runQueueAdd),
    CommandSpec(words: ["queue", "status"], usage: "", summary: "show pending, running, done and failed jobs with their errors",
                details: """
                Text: the counts per state, then one line per running, failed or retried job (id, state, recording,
                attempts, worker and lease, error). JSON: {"version":{…},"counts":{"pending","running","done","failed"},
                "jobs":[{"id","source","state","attempts","worker","error"}]} (docs/schemas/queue-status.schema.json).
                """, options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 0...0, run: runQueueStatus),
    CommandSpec(words: ["queue", "results"], usage: "",
                summary: "print the scan report of every done job (JSON Lines, job order: what scan --format json prints)",
                details: "", options: [catalogOption], positional: 0...0, run: runQueueResults),
    CommandSpec(words: ["worker"], usage: "",
                summary: "claim queued recordings, scan them and record the results in the catalog's database",
                details: """
                Claims the oldest pending job (or one whose lease expired) with FOR UPDATE SKIP LOCKED, scans it
                against the catalog's local cache (refreshed before each job when the catalog changed), and writes
                the scan report, the recording and its airings and the job's state in one transaction, only while it
                still holds the job: a worker killed mid-job loses nothing (the job is claimed again when its lease
                expires) and every job is recorded exactly once. A job whose scan fails is given back with its error
                and retried up to --max-attempts claims, then marked failed. Connection losses and server restarts
                are retried. Without --wait the worker exits when no job is pending or running.
                """,
                options: [catalogOption, OptionSpec(name: "jobs", value: "N", help: "jobs scanned at once by this worker, 1…1024 (default: 1)"),
                          OptionSpec(name: "lease", value: "SECONDS", help: "lease of a claimed job, renewed every third of it while scanning, 1…86400 s (default: 60)"),
                          OptionSpec(name: "max-attempts", value: "N", help: "claims before a failing job is marked failed, 1…1000 (default: 3)"),
                          OptionSpec(name: "wait", value: nil, help: "keep waiting for new jobs until SIGINT or SIGTERM")],
                positional: 0...0, run: runWorker),
]
