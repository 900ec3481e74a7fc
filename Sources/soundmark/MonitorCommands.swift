import Foundation
import Soundmark
#if canImport(Glibc)
import Glibc
#endif

// `soundmark monitor`: follows a live source and writes one event per line as soon as it is
// decided. A reader thread owns the `MediaDecoder` (and the reconnect loop); the main thread
// owns the fingerprinting, the `Scanner` and the output, so a read blocked on a pipe or a
// socket never delays a stop request.

/// Output formats of `monitor`, the first being the default.
let monitorFormats = ["jsonl", "setlist"]

/// Reconnect back-off of `monitor --reconnect`: the first attempt waits this long, seconds.
let reconnectFirstDelay = 0.5
/// Reconnect back-off of `monitor --reconnect`: the wait doubles up to this, seconds.
let reconnectMaxDelay = 8.0
/// Default of `--reconnect-timeout`: give up when the source has been down this long, seconds.
let reconnectDefaultTimeout = 60.0
/// How many decoded chunks (1 s each) the reader may queue ahead of the scanner.
let monitorQueueChunks = 4
/// Heartbeats lag the decoded audio by this many seconds, so that real landmarks (decided about
/// 1 s after their anchor) practically always arrive before a heartbeat that follows them.
let heartbeatLagSeconds = 2.0

/// What the reader thread tells the main thread.
enum SourceMessage {
    /// The source is open; opening started at Unix time `start` (seconds).
    case opened(start: Double)
    /// Decoded mono samples at the catalog's rate, contiguous with the previous chunk, and the
    /// Unix time when the decoder returned them.
    case chunk([Float], wall: Double)
    /// A network source stopped delivering (at Unix time `wall`); a reconnect is pending.
    case dropped(wall: Double)
    /// The source was reopened after `attempt` attempts; it went down at Unix time `down` and
    /// the successful attempt started at `start`.
    case reconnected(attempt: Int, down: Double, start: Double)
    /// Another process changed the catalog; this is its new index (from the catalog watcher).
    case catalogChanged(CatalogIndex)
    /// The source ended normally.
    case ended
    /// The source failed (cannot be opened, fails mid-stream, or reconnecting gave up).
    case failed(String)
}

/// A bounded queue from the reader thread to the main thread, plus the stop flag set by
/// SIGINT/SIGTERM. At most `capacity` chunks wait at a time, so a file read at full speed does
/// not pile up decoded audio.
final class SourceChannel {
    /// What ``next(timeout:)`` found.
    enum Next {
        /// The oldest queued message.
        case message(SourceMessage)
        /// A stop was requested (queued messages are dropped).
        case stop
        /// Nothing arrived within the timeout.
        case idle
    }

    /// Guards every member below and wakes the waiting side.
    private let condition = NSCondition()
    /// Queued messages, oldest first.
    private var messages: [SourceMessage] = []
    /// How many of `messages` are chunks.
    private var queuedChunks = 0
    /// Set by ``requestStop()``.
    private var stopped = false
    /// Set by ``markReaderDone()``.
    private var readerDone = false
    /// Most chunks queued at once.
    let capacity: Int

    /// Creates a channel holding at most `capacity` chunks.
    init(capacity: Int) { self.capacity = capacity }

    /// Queues a message, waiting while `capacity` chunks are queued. Returns false (and drops
    /// the message) once a stop was requested.
    @discardableResult
    func post(_ message: SourceMessage) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if case .chunk = message {
            while queuedChunks >= capacity && !stopped { condition.wait() }
            if stopped { return false }
            queuedChunks += 1
        }
        if stopped { return false }
        messages.append(message)
        condition.broadcast()
        return true
    }

    /// The next message, `.stop` once a stop was requested, or `.idle` after `timeout` seconds.
    func next(timeout: Double) -> Next {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while messages.isEmpty && !stopped {
            if !condition.wait(until: deadline) { break }
        }
        if stopped { return .stop }
        guard !messages.isEmpty else { return .idle }
        let message = messages.removeFirst()
        if case .chunk = message { queuedChunks -= 1 }
        condition.broadcast()
        return .message(message)
    }

    /// Asks everybody to stop (signal handler).
    func requestStop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether a stop was requested.
    var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Sleeps `seconds` unless a stop is requested first; returns false when stopped.
    func sleep(_ seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !stopped {
            if !condition.wait(until: deadline) { break }
        }
        return !stopped
    }

    /// Marks the reader thread as finished (it returned from its loop).
    func markReaderDone() {
        condition.lock()
        readerDone = true
        condition.unlock()
    }

    /// Whether the reader thread has finished.
    var isReaderDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return readerDone
    }
}

/// The current Unix time in seconds.
func unixNow() -> Double { Date().timeIntervalSince1970 }

/// Whether `source` is a network URL (`scheme://…`), the only kind `--reconnect` reopens.
func isNetworkURL(_ source: String) -> Bool {
    guard let range = source.range(of: "://") else { return false }
    let scheme = source[..<range.lowerBound]
    return !scheme.isEmpty && scheme.lowercased() != "file"
        && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
}

/// The reader thread: opens `source`, posts its chunks, and, when `reconnectTimeout` is set,
/// retries a failed first connection and reopens the source after it ends, with exponential
/// back-off (``reconnectFirstDelay`` doubling up to ``reconnectMaxDelay``) and a warning per
/// failed attempt, giving up once it has been down (or unreachable) for `reconnectTimeout` seconds.
func readSource(_ source: String, sampleRate: Int, stream: StreamChoice, reconnectTimeout: Double?, channel: SourceChannel) {
    defer { channel.markReaderDone() }
    /// Opens the source; with `reconnectTimeout`, retries until it opens or `down` (the Unix
    /// time the source became unreachable) lies `reconnectTimeout` seconds back. The first
    /// attempt is made at once when `immediately`, else after the first back-off. Returns the
    /// decoder, when the successful attempt started and its number; nil when it gave up (a
    /// `.failed` message was posted) or a stop was requested.
    func connect(immediately: Bool, down: Double, what: String) -> (decoder: MediaDecoder, start: Double, attempt: Int)? {
        var delay = reconnectFirstDelay
        var attempt = 0
        while true {
            if attempt > 0 || !immediately {
                let timeout = reconnectTimeout ?? 0
                let pause = min(delay, timeout - (unixNow() - down))
                if pause <= 0 {
                    channel.post(.failed(String(format: "%@: gave up %@ after %d attempt(s), %.0f s down",
                                                source, what, attempt, unixNow() - down)))
                    return nil
                }
                guard channel.sleep(pause) else { return nil }
                delay = min(delay * 2, reconnectMaxDelay)
            }
            attempt += 1
            let start = unixNow()
            do {
                return (try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: stream.index,
                                         language: stream.language) { warn($0) }, start, attempt)
            } catch {
                guard let timeout = reconnectTimeout else {
                    channel.post(.failed(describe(error)))
                    return nil
                }
                let left = timeout - (unixNow() - down)
                warn("\(describe(error)); \(what) attempt \(attempt) failed, "
                     + (left > 0 ? String(format: "retrying in %.1f s", min(delay, left)) : "giving up"))
            }
        }
    }
    guard let first = connect(immediately: true, down: unixNow(), what: "connecting") else { return }
    var decoder = first.decoder
    channel.post(.opened(start: first.start))
    while true {
        var failure: String?
        do {
            while let chunk = try decoder.nextChunk() {
                guard channel.post(.chunk(chunk.samples, wall: unixNow())) else { return }
            }
        } catch {
            failure = describe(error)
        }
        if channel.isStopped { return }
        guard reconnectTimeout != nil else {
            channel.post(failure.map { .failed($0) } ?? .ended)
            return
        }
        let down = unixNow()
        if let failure { warn(failure) }
        channel.post(.dropped(wall: down))
        guard let next = connect(immediately: false, down: down, what: "reconnecting") else { return }
        decoder = next.decoder
        channel.post(.reconnected(attempt: next.attempt, down: down, start: next.start))
    }
}

/// A Unix time as ISO 8601 UTC with milliseconds and `Z`, e.g. `2024-05-01T12:00:03.250Z`.
func isoUTC(_ unixSeconds: Double) -> String {
    var whole = unixSeconds.rounded(.down)
    var ms = Int(((unixSeconds - whole) * 1000).rounded())
    if ms >= 1000 { whole += 1; ms -= 1000 }
    var t = time_t(whole)
    var parts = tm()
    gmtime_r(&t, &parts)
    return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                  Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), ms)
}

/// `mm:ss` of a reference position (minutes may pass 59; negative positions get a sign).
func formatReferenceClock(_ seconds: Double) -> String {
    let s = Int(abs(seconds).rounded())
    return (seconds < -0.5 ? "-" : "") + String(format: "%02d:%02d", s / 60, s % 60)
}

/// Writes monitor events, one line each, flushing stdout after every line.
final class MonitorWriter {
    /// `jsonl` or `setlist`.
    let format: String
    /// Whether events carry `wall_time` (`--clock wall`).
    let wallClock: Bool
    /// Unix time of recording time 0 (see ``offerOrigin(_:)``), once known.
    private(set) var origin: Double?
    /// Set by the first line written: the origin no longer changes.
    private var originFixed = false

    /// Creates a writer for `format` (one of ``monitorFormats``).
    init(format: String, wallClock: Bool) {
        self.format = format
        self.wallClock = wallClock
    }

    /// Proposes an estimate of the Unix time of recording time 0; the earliest one offered
    /// before the first line is written wins, and it never changes afterwards, so
    /// `wall_time − time` is the same for every event of a run.
    func offerOrigin(_ estimate: Double) {
        guard !originFixed else { return }
        origin = min(origin ?? estimate, estimate)
    }

    /// Writes one segment event of the scanner, with `extra` JSON members (a marker) and
    /// `note` appended to its setlist line.
    func write(_ event: ScanEvent, extra: [(String, JSONOutput)] = [], note: String = "") {
        let name: String, id: Int, s: Segment, time: Double
        switch event {
        case .started(let i, let seg): (name, id, s, time) = ("started", i, seg, seg.start)
        case .refined(let i, let seg): (name, id, s, time) = ("refined", i, seg, seg.end)
        case .ended(let i, let seg): (name, id, s, time) = ("ended", i, seg, seg.end)
        }
        let position = s.referenceTime(at: time)
        if format == "setlist" {
            let who = s.item.byline(titleFallback: s.item.id)
            line(time, "\(name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(who) (\(s.item.id)) at ref \(formatReferenceClock(position))" + note)
            return
        }
        var members: [(String, JSONOutput)] = [
            ("event", .string("segment." + name)), ("activity_id", .string("a\(id)")),
            ("material_id", .string(s.item.id)), ("title", .optional(s.item.title)), ("artist", .optional(s.item.artist)),
            ("time", .seconds(time)),
        ]
        members += wallMember(time)
        members += [("start", .seconds(s.start)), ("end", .seconds(s.end)), ("position", .seconds(position)),
                    ("referenceStart", .seconds(s.referenceStart)),
                    ("frequencySkew", .number(s.frequencySkew, decimals: 4)),
                    ("confidence", .number(s.confidence, decimals: 4))]
        emit(.object(members + extra))
    }

    /// Writes a stream event (`stream.gap`, `stream.reconnected`, `stream.ended`) at recording
    /// time `time` with extra JSON members and its setlist text.
    func writeStream(_ name: String, time: Double, extra: [(String, JSONOutput)] = [], text: String) {
        if format == "setlist" {
            line(time, text)
            return
        }
        emit(.object([("event", .string("stream." + name)), ("time", .seconds(time))] + wallMember(time) + extra))
    }

    /// The `wall_time` member for recording time `time`, when `--clock wall` is on.
    private func wallMember(_ time: Double) -> [(String, JSONOutput)] {
        guard wallClock else { return [] }
        return [("wall_time", .string(isoUTC((origin ?? unixNow()) + time)))]
    }

    /// Writes a setlist line: the clock (recording or wall) of `time`, two spaces, `text`.
    private func line(_ time: Double, _ text: String) {
        let clock = wallClock ? isoUTC((origin ?? unixNow()) + time) : formatClock(time)
        put("\(clock)  \(text)")
    }

    /// Writes one JSON Lines record.
    private func emit(_ json: JSONOutput) { put(json.text) }

    /// Writes one line and flushes stdout; fixes the origin.
    private func put(_ text: String) {
        if !originFixed {
            originFixed = true
            if origin == nil { origin = unixNow() }
        }
        fputs(text + "\n", stdout)
        fflush(stdout)
    }
}

/// Recording position of the monitor: which sample of the recording the current connection's
/// first sample is, and the heartbeat that keeps the scanner's clock running.
struct MonitorClock {
    /// Samples per second.
    let sampleRate: Int
    /// Samples per frame hop.
    let hop: Int
    /// Recording sample of the current connection's sample 0 (a multiple of `hop`).
    var base: Int64 = 0
    /// Recording frame of the current connection's frame 0.
    var baseFrame: Int32 { Int32(base / Int64(hop)) }
    /// Last heartbeat frame fed to the scanner.
    var lastHeartbeat: Int32 = 0

    /// Seconds of `samples`.
    func seconds(_ samples: Int64) -> Double { Double(samples) / Double(sampleRate) }

    /// `samples` rounded up to a whole number of hops.
    func roundedUp(_ samples: Int64) -> Int64 {
        (samples + Int64(hop) - 1) / Int64(hop) * Int64(hop)
    }

    /// The frame the scanner's clock may move to (``Scanner/advance(toFrame:)``) for recording
    /// sample `position`, when it moves the clock on.
    ///
    /// The scanner closes its hop blocks (and so decides `ended`) as landmarks arrive; in
    /// silence, or while a network source is down, none does, so the clock is moved on by hand.
    /// It lags `position` by ``heartbeatLagSeconds`` so that landmarks still being decided
    /// (about 1 s behind the audio) are not older than the clock.
    mutating func heartbeat(at position: Int64) -> Int? {
        let frame = (position - Int64(heartbeatLagSeconds * Double(sampleRate))) / Int64(hop)
        guard frame > Int64(lastHeartbeat), frame < Int64(Int32.max) else { return nil }
        lastHeartbeat = Int32(frame)
        return Int(frame)
    }
}

/// Default of `--catalog-poll`: how often the monitor checks the catalog for changes, seconds.
let catalogPollDefault = 5.0

/// The catalog watcher thread: every `interval` seconds reads the catalog's change stamp
/// (``Catalog/changeStamp()``, SQLite `PRAGMA data_version`) and, when another process
/// changed the catalog, loads a new index and posts it. Stops with the channel.
func watchCatalog(_ path: String, interval: Double, channel: SourceChannel) {
    guard let catalog = try? openCatalog(path, readOnly: true), var stamp = try? catalog.changeStamp() else { return }
    var failed = false
    while channel.sleep(interval) {
        do {
            try refreshIfPostgres(path)
            let now = try catalog.changeStamp()
            guard now != stamp else { continue }
            let index = try catalog.loadIndex()
            stamp = now
            failed = false
            channel.post(.catalogChanged(index))
        } catch {
            if !failed { warn("\(describe(error)); the monitor keeps the catalog it has") }
            failed = true
        }
    }
}

/// `soundmark monitor`: follows a source and writes segment and stream events as they are decided.
func runMonitor(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "jsonl"
    guard monitorFormats.contains(format) else {
        throw UsageError(message: "--format is jsonl or setlist, got '\(format)'")
    }
    let clock = args.value("clock") ?? "recording"
    guard clock == "recording" || clock == "wall" else {
        throw UsageError(message: "--clock is recording or wall, got '\(clock)'")
    }
    var reconnectTimeout: Double?
    if args.has("reconnect") {
        reconnectTimeout = reconnectDefaultTimeout
        if let t = args.value("reconnect-timeout") {
            guard let v = Double(t), v >= 0, v.isFinite else {
                throw UsageError(message: "--reconnect-timeout takes seconds (≥ 0), got '\(t)'")
            }
            reconnectTimeout = v
        }
    } else if args.value("reconnect-timeout") != nil {
        throw UsageError(message: "--reconnect-timeout needs --reconnect")
    }
    var catalogPoll = catalogPollDefault
    if let t = args.value("catalog-poll") {
        guard let v = Double(t), v >= 0, v.isFinite else {
            throw UsageError(message: "--catalog-poll takes seconds (≥ 0, 0: never), got '\(t)'")
        }
        catalogPoll = v
    }
    let source = args.positional[0]
    if reconnectTimeout != nil && !isNetworkURL(source) {
        warn("--reconnect only reopens network URLs; \(source == "-" ? "stdin" : source) is read once")
        reconnectTimeout = nil
    }
    let stream = try streamChoice(args)
    let catalogPath = try required(args, "catalog")
    let catalog = try openCatalog(catalogPath, readOnly: true)
    let index = try catalog.loadIndex()
    let configuration = index.configuration

    let writer = MonitorWriter(format: format, wallClock: clock == "wall")
    let recorder = try LibraryTarget.from(args, input: source).map { target in
        try MonitorRecorder(target: target, name: source, durations: referenceDurations(index),
                            wallOrigin: { clock == "wall" ? writer.origin : nil })
    }
    let markerTracker = try MonitorMarkers(args, catalog: catalog, index: index, writer: writer)
    let activities = MonitorActivities { event in
        if let markerTracker { markerTracker.write(event) } else { writer.write(event) }
        if let recorder, case .ended(_, let segment) = event { recorder.ended(segment) }
    }
    var scanOptions = try parseScanOptions(args)
    scanOptions.keepsSegments = false
    /// A scanner over `index` whose events go to `activities`.
    func makeScanner(_ index: CatalogIndex) -> Soundmark.Scanner {
        let scanner = Scanner(index: index, options: scanOptions)
        scanner.onEvent = { activities.handle($0) }
        return scanner
    }
    var scanner = makeScanner(index)
    var position = MonitorClock(sampleRate: configuration.sampleRate, hop: configuration.hopLength)
    var generator = SignatureGenerator(configuration: configuration, role: .reference)  // one per connection
    // The landmarks of the last window and a half, replayed into a new scanner after a catalog
    // reload so that it finds what is playing at once.
    var recent: [Landmark] = []
    var recentCapacity = 4096  // pruned when it holds more (amortised: twice what is kept)
    let recentFrames = Int32((scanOptions.windowSeconds * 1.5 + heartbeatLagSeconds) / configuration.hopDuration)
    /// Moves a landmark of the current connection to recording time and scans it.
    func feed(_ l: Landmark) {
        var moved = l
        moved.anchorFrame += position.baseFrame
        scanner.consume(moved)
        recent.append(moved)
        if recent.count > recentCapacity {
            recent.removeAll { moved.anchorFrame - $0.anchorFrame > recentFrames }
            recentCapacity = max(4096, 2 * recent.count)
        }
    }
    /// Moves the scanner's clock on (see ``MonitorClock/heartbeat(at:)``).
    func heartbeat(at sample: Int64) {
        guard let beat = position.heartbeat(at: sample) else { return }
        scanner.advance(toFrame: beat)
        activities.advance(to: Double(beat) * configuration.hopDuration)
    }

    // Signals: stop reading, close open segments, end the stream, exit 0.
    let channel = SourceChannel(capacity: monitorQueueChunks)
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let signalSources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
        let s = DispatchSource.makeSignalSource(signal: number, queue: .global())
        s.setEventHandler { channel.requestStop() }
        s.resume()
        return s
    }
    defer { signalSources.forEach { $0.cancel() } }

    let sampleRate = configuration.sampleRate
    let timeout = reconnectTimeout
    let reader = Thread {
        readSource(source, sampleRate: sampleRate, stream: stream, reconnectTimeout: timeout, channel: channel)
    }
    reader.stackSize = 1 << 22
    reader.start()
    if catalogPoll > 0 {
        let interval = catalogPoll
        let watcher = Thread { watchCatalog(catalogPath, interval: interval, channel: channel) }
        watcher.start()
    }

    var status = Exit.ok
    var outage: (since: Double, at: Int64)?  // while a network source is down: since when, at which recording sample
    var opened = false                       // whether the source opened at all
    // When did the audio at recording time 0 arrive? Not when the open returned: FFmpeg's
    // probing reads ahead (about 1.3 s of a real-time pipe) first. A chunk that ends at
    // recording time e and arrives at wall time w says "origin ≤ w − e" (audio cannot arrive
    // before it is played), so for a source delivering in real time the smallest w − e over the
    // chunks before the first event is written is a close estimate; it is never taken earlier
    // than the start of the opening, which is what a faster-than-real-time source (a file) gets.
    var firstOpening: Double?  // when the first connection's opening started, until it drops
    // After a reconnect the recording position of the new connection must be fixed before its
    // first chunk is fed.
    var awaiting: (start: Double, attempt: Int, down: Double)?
    // The smallest `wall − recording time` of any chunk's end so far: for audio delivered in
    // real time (even in bursts, as a server's output buffer sends it), the Unix time of
    // recording time 0 on the wall clock; for a faster source, far earlier.
    var liveOrigin = Double.infinity
    /// Places a reconnected source on the recording timeline and writes its `stream.gap` and
    /// `stream.reconnected` events.
    ///
    /// The new connection's first sample is the audio of the moment the successful attempt
    /// started (a live source sends what plays when it is asked, whatever FFmpeg's probing then
    /// reads ahead before the first chunk comes out). So the gap is the wall time from the drop
    /// to that moment, and, for a source that played in real time, the new connection starts
    /// at that moment's recording time on the wall clock (`wall − liveOrigin`): recording time and
    /// wall time follow the wall clock after any number of reconnects, and audio that was lost
    /// before the drop was noticed (a stalled server) counts as gap. A source delivering
    /// faster than real time (a file served over HTTP) is ahead of the wall clock, and only
    /// the outage is added.
    func connectionStarted() {
        guard let (start, attempt, down) = awaiting else { return }
        awaiting = nil
        let dropAt = outage?.at ?? position.base + generator.sampleCount
        var base = dropAt + Int64(max(0, start - down) * Double(sampleRate))
        if liveOrigin.isFinite {
            base = max(base, Int64((start - liveOrigin) * Double(sampleRate)))
        }
        position.base = position.roundedUp(base)
        generator = SignatureGenerator(configuration: configuration, role: .reference)
        outage = nil
        let gap = position.seconds(position.base - dropAt)
        writer.writeStream("gap", time: position.seconds(dropAt), extra: [("duration", .seconds(gap))],
                           text: String(format: "gap      %.1f s without input", gap))
        writer.writeStream("reconnected", time: position.seconds(position.base), extra: [("attempt", .integer(attempt))],
                           text: "reconnected (attempt \(attempt))")
    }
    loop: while true {
        switch channel.next(timeout: 0.25) {
        case .stop:
            break loop
        case .idle:
            if let outage { heartbeat(at: outage.at + Int64((unixNow() - outage.since) * Double(sampleRate))) }
        case .message(let message):
            switch message {
            case .opened(let start):
                firstOpening = start
                opened = true
            case .chunk(let samples, let wall):
                connectionStarted()
                if let start = firstOpening {
                    writer.offerOrigin(max(start, wall - position.seconds(generator.sampleCount + Int64(samples.count))))
                }
                activities.limit = position.seconds(position.base + generator.sampleCount + Int64(samples.count))
                recorder?.digest(samples)
                liveOrigin = min(liveOrigin, wall - activities.limit)
                samples.withUnsafeBufferPointer { p in generator.append(p) { feed($0) } }
                markerTracker?.consume(samples, at: position.seconds(position.base + generator.sampleCount - Int64(samples.count)))
                heartbeat(at: position.base + generator.sampleCount)
            case .dropped(let wall):
                connectionStarted()
                if let start = firstOpening { writer.offerOrigin(start) }
                firstOpening = nil
                generator.finish { feed($0) }
                outage = (wall, position.base + generator.sampleCount)
                activities.limit = position.seconds(position.base + generator.sampleCount)
            case .reconnected(let attempt, let down, let start):
                awaiting = (start, attempt, down)
            case .catalogChanged(let newIndex):
                // The old scanner's open segments are handed over to the new one, which gets
                // the recent landmarks again and continues what is playing.
                let old = scanner
                activities.handover { _ = old.finish() }
                scanner = makeScanner(newIndex)
                recorder?.durations = referenceDurations(newIndex)
                if let last = recent.last?.anchorFrame {
                    for l in recent where last - l.anchorFrame <= recentFrames { scanner.consume(l) }
                }
                if position.lastHeartbeat > 0 { scanner.advance(toFrame: Int(position.lastHeartbeat)) }
                markerTracker?.reload(newIndex)
                warn("\(catalogPath) changed: monitoring \(newIndex.references.count) reference(s) from now on")
            case .ended:
                break loop
            case .failed(let text):
                printError(text)
                if !opened { return Exit.error }
                status = Exit.error
                break loop
            }
        }
    }

    connectionStarted()
    if let start = firstOpening { writer.offerOrigin(start) }
    if outage == nil { generator.finish { feed($0) } }
    let end = outage?.at ?? position.base + generator.sampleCount
    activities.limit = position.seconds(end)
    markerTracker?.finish()
    activities.finish()
    _ = scanner.finish()
    writer.writeStream("ended", time: position.seconds(end), text: "stream ended")
    recorder?.finish(duration: position.seconds(end))
    fflush(stdout)
    // The reader may be blocked in a read that only the process's end interrupts.
    if !channel.isReaderDone { _exit(status) }
    return status
}

/// The `monitor` command.
let monitorCommand = CommandSpec(words: ["monitor"], usage: "SOURCE",
    summary: "follow a live source (URL, file or -) and write events as catalog audio starts and ends",
    details: """
    Reads SOURCE until it ends or the process gets SIGINT/SIGTERM, scanning it like 'scan', and writes one
    line per event as soon as it is decided, flushing after each line. JSON Lines (default):
      {"event":"segment.started","activity_id":"a1","material_id":ID,"title","artist","time":s,
       ["wall_time":ISO,] "start":s,"end":s,"position":s,"referenceStart":s,"frequencySkew":x,"confidence":c}
    then "segment.refined" (alignment moved by > 50 ms or 0.2 %) and "segment.ended" with the same activity_id.
    time is recording seconds since the source opened: the segment's start for started, its end so far for
    refined and ended; position is the reference time at that time. activity_id is unique per play within
    the run: one continuous play is one activity (the window finding the same line again just after its end
    is not a new play), also across a catalog reload. No time lies past the audio received; every
    segment.ended comes before stream.ended. Stream events: "stream.gap" {time, duration} and
    "stream.reconnected" {time, attempt} after a reconnect, "stream.ended" {time} last. The gap is the
    audio lost: the new connection starts with the audio of the moment it was opened, so for a source
    that plays in real time recording time keeps following the wall clock through any number of
    reconnects (a faster source, e.g. a file over HTTP, just gets the outage added).
    The catalog is checked every --catalog-poll seconds (SQLite data_version); when another process
    added or removed references the index is reloaded (a warning says so) and the new references are
    matched from then on; the activity playing continues under its activity_id. Lines come in the order events are decided: a segment's ended can
    follow the next one's started (crossfades). These lines are input for 'soundmark timeline merge'.
    Latency from the audio to its event: started as soon as the segment reaches the confidence threshold
    inside the sliding matcher window (6 s, moved every 1.5 s): ~3 s of clean catalog audio, at most the
    full 6 s window + 1.5 s hop for a weak match, plus ~0.9 s until landmarks are decided and up to 1 s of
    decoder chunk; measured on samples/recording.mp3 played in real time: 3.0–4.2 s after the segment's
    start. ended: ScanOptions.closeAfterSeconds (4 s) after the last matching landmark, plus the same hop,
    landmark and chunk delays; measured 6–8.5 s after the segment's end (whose last hits trail its
    audible end in a crossfade), at once when the stream ends. Heartbeats keep this clock running through
    silence and outages.
    SIGINT/SIGTERM: stop reading, end the open segments, write stream.ended, exit 0. Exit code 0 when the
    source ends (or on a signal), 2 on error (cannot open the catalog or the source, (re)connecting gave up).
    """,
    options: [catalogOption,
              OptionSpec(name: "format", value: "jsonl|setlist",
                         help: "jsonl (default): one JSON object per line; setlist: 'hh:mm:ss  started  Title – Artist (id) at ref mm:ss'"),
              OptionSpec(name: "clock", value: "recording|wall",
                         help: "wall: add wall_time, the UTC ISO-8601 time of that audio, to every event: the time the source's first audio arrived (from the first chunks of a real-time source; the opening time of a faster one, e.g. a file) + recording time; setlist lines start with it (default: recording)"),
              OptionSpec(name: "reconnect", value: nil,
                         help: "retry a network URL that cannot be opened, and reopen it when it drops or ends (for live streams), waiting 0.5 s, 1 s, 2 s … up to 8 s between attempts, with a warning per failed attempt; recording time keeps running through the gap; gives up (exit 2) after 60 s down"),
              OptionSpec(name: "reconnect-timeout", value: "SECONDS", help: "with --reconnect: give up after the source has been down (or, at the start, unreachable) this long (default 60)"),
              minimumDurationOption,
              OptionSpec(name: "catalog-poll", value: "SECONDS",
                         help: "check the catalog this often for references added or removed by another process (SQLite data_version, no table read) and reload it when it changed; 0: never (default 5)"),
              streamOption, languageOption, libraryRecordOption, librarySourceOption, startTimeOption, markerScanOption],
    positional: 1...1, run: runMonitor)
