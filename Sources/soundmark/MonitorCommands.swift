import Foundation
import Soundmark
#if canImport(Glibc)
import Glibc
#endif

// `soundmark monitor`: follows a live source and writes one event per line as soon as it is
// decided. The library's `ManagedSession` does the work (a reader thread with reconnects, the
// recording clock, the scanner and the activities); this file parses the options and prints.

/// Output formats of `monitor`, the first being the default.
let monitorFormats = ["jsonl", "setlist"]

/// Default of `--reconnect-timeout`: give up when the source has been down this long, seconds.
let reconnectDefaultTimeout = 60.0

/// The current Unix time in seconds.
func unixNow() -> Double { LiveSource.now() }

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
            let who = s.item.byline()
            line(time, "\(name.padding(toLength: 8, withPad: " ", startingAt: 0)) \(who) (\(s.item.id)) at ref \(formatReferenceClock(position))" + note)
            return
        }
        var members: [(String, JSONOutput)] = [
            ("event", .string("segment." + name)), ("activity_id", .string("a\(id)")),
            ("material_id", .string(s.item.id)), ("title", .optional(s.item.title)), ("artist", .optional(s.item.artist)),
            // The reference object of every JSON output; material_id, title and artist stay for
            // the payload readers ('timeline merge', the recogniser SDKs' vocabulary).
            ("reference", s.item.json), ("time", .seconds(time)),
        ]
        members += wallMember(time)
        members += [("start", .seconds(s.start)), ("end", .seconds(s.end)), ("position", .seconds(position)),
                    ("referenceStart", .seconds(s.referenceStart)),
                    ("frequencySkew", .number(s.frequencySkew, decimals: 4)),
                    ("confidence", .number(s.confidence, decimals: 4))]
        if !s.alternatives.isEmpty {
            members.append(("alternatives", .array(s.alternatives.map { .string($0.item.id) })))
        }
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

/// Default of `--catalog-poll`: how often the monitor checks the catalog for changes, seconds.
let catalogPollDefault = 5.0

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
        if let v = try numberOption(args, "reconnect-timeout", "seconds", in: 0...longestOptionSeconds) { reconnectTimeout = v }
    } else if args.value("reconnect-timeout") != nil {
        throw UsageError(message: "--reconnect-timeout needs --reconnect")
    }
    let catalogPoll = try numberOption(args, "catalog-poll", "seconds", in: 0...longestOptionSeconds, note: "0: never")
        ?? catalogPollDefault
    let openTimeout = try numberOption(args, "open-timeout", "seconds", in: 0...longestOptionSeconds, note: "0: wait without end")
    let source = args.positional[0]
    if reconnectTimeout != nil && !LiveSource.isNetworkURL(source) {
        warn("--reconnect only reopens network URLs; \(source == "-" ? "stdin" : source) is read once")
        reconnectTimeout = nil
    }
    let stream = try streamChoice(args)
    let catalogPath = try required(args, "catalog")
    let catalog = try openCatalog(catalogPath, readOnly: true)
    let index = try catalog.loadIndex()

    let writer = MonitorWriter(format: format, wallClock: clock == "wall")
    let recorder = try LibraryTarget.from(args, input: source).map { target in
        try MonitorRecorder(target: target, name: source, durations: referenceDurations(index),
                            wallOrigin: { clock == "wall" ? writer.origin : nil })
    }
    let scanOptions = try parseScanOptions(args)
    let markerTracker = try MonitorMarkers(args, catalog: catalog, index: index, writer: writer, scanOptions: scanOptions)
    var sourceOptions = LiveSourceOptions(streamIndex: stream.index, language: stream.language, reconnectTimeout: reconnectTimeout)
    if let openTimeout { sourceOptions.openTimeout = openTimeout }
    let session = ManagedSession(index: index, scanOptions: scanOptions, sourceOptions: sourceOptions,
                                 watch: catalogPoll > 0 ? (try catalogFilePath(catalogPath), catalogPoll) : nil)
    if catalogPoll > 0, case .postgres = CatalogLocation(catalogPath) {
        // The session watches the local cache; this pulls the server's changes into it.
        let interval = catalogPoll
        let poller = Thread {
            var failed = false
            while true {
                Thread.sleep(forTimeInterval: interval)
                do { try catalogStore(catalogPath).refresh(); failed = false } catch {
                    if !failed { warn("\(describe(error)); the monitor keeps the catalog it has") }
                    failed = true
                }
            }
        }
        poller.start()
    }
    // The session's warnings (skipped corrupt data, gaps, reconnects) are said as they come and
    // listed again in stream.ended, the run's summary.
    let said = InputWarnings()
    session.onWarning = { warn($0); said.record(source, displayingServers($0)) }
    session.onOrigin = { writer.offerOrigin($0) }
    session.onAudio = { samples, time in
        recorder?.digest(samples)
        markerTracker?.consume(samples, at: time)
    }
    session.onCatalogChange = { newIndex in
        recorder?.durations = referenceDurations(newIndex)
        markerTracker?.reload(newIndex)
    }
    session.onFinishing = { markerTracker?.finish() }
    var end = 0.0
    session.onEvent = { event in
        switch event {
        case .segment(let event):
            // The library records an ended activity as written: refined by its marker, with the payload.
            if let markerTracker {
                if let (segment, marker) = markerTracker.write(event) { recorder?.ended(segment, marker: marker) }
            } else {
                writer.write(event)
                if let recorder, case .ended(_, let segment) = event { recorder.ended(segment) }
            }
        case .gap(let time, let duration):
            writer.writeStream("gap", time: time, extra: [("duration", .seconds(duration))],
                               text: String(format: "gap      %.1f s without input", duration))
        case .reconnected(let time, let attempt):
            writer.writeStream("reconnected", time: time, extra: [("attempt", .integer(attempt))],
                               text: "reconnected (attempt \(attempt))")
        case .catalogReloaded(let count):
            warn("\(catalogPath) changed: monitoring \(count) reference(s) from now on")
        case .ended(let time):
            end = time
            let warnings = said.take(source)
            writer.writeStream("ended", time: time,
                               extra: warnings.isEmpty ? [] : [("warnings", .array(warnings.map { .string($0) }))],
                               text: "stream ended")
        }
    }

    // Signals: stop reading, close open segments, end the stream, exit 0.
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let signalSources = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
        let s = DispatchSource.makeSignalSource(signal: number, queue: .global())
        s.setEventHandler { session.stop() }
        s.resume()
        return s
    }
    defer { signalSources.forEach { $0.cancel() } }

    var status = Exit.ok
    do {
        if case .failed(let text) = try session.run(source: source) {
            printError(text)
            status = Exit.error
        }
    } catch {
        printError(describe(error))
        return Exit.error
    }
    recorder?.finish(duration: end)
    fflush(stdout)
    // The reader may be blocked in a read that only the process's end interrupts.
    if !session.isReaderDone { _exit(status) }
    return status
}

/// The `monitor` command.
let monitorCommand = CommandSpec(words: ["monitor"], usage: "SOURCE",
    summary: "follow a live source (URL, file or -) and write events as catalog audio starts and ends",
    details: """
    Reads SOURCE until it ends or the process gets SIGINT/SIGTERM, scanning it like 'scan', and writes one
    line per event as soon as it is decided, flushing after each line. JSON Lines (default):
      {"event":"segment.started","activity_id":"a1","material_id":ID,"title","artist","reference":{"id","title",…},
       "time":s, ["wall_time":ISO,] "start":s,"end":s,"position":s,"referenceStart":s,"frequencySkew":x,"confidence":c}
    then "segment.refined" (alignment moved by > 50 ms or 0.2 %) and "segment.ended" with the same activity_id.
    "alternatives":[ID...] lists other references holding the same audio (the same recording catalogued twice,
    or shared material of two versions): one play of it is one activity, as 'scan' gives one segment.
    time is recording seconds since the source opened: the segment's start for started, its end so far for
    refined and ended; position is the reference time at that time. activity_id is unique per play within
    the run: one continuous play is one activity (the window finding the same line again just after its end
    is not a new play), also across a catalog reload. No time lies past the audio received; every
    segment.ended comes before stream.ended. Stream events: "stream.gap" {time, duration} and
    "stream.reconnected" {time, attempt} after a reconnect, "stream.ended" {time} last, with "warnings":["…"]
    (every warning of the run) when there were any. The gap is the audio lost: the new connection starts with the audio of the moment it was opened, so for a source
    that plays in real time recording time keeps following the wall clock through any number of
    reconnects (a faster source, e.g. a file over HTTP, just gets the outage added).
    The catalog is checked every --catalog-poll seconds (SQLite data_version); when another process
    added or removed references the index is reloaded (a warning says so) and the new references are
    matched from then on; the activity playing continues under its activity_id. Lines come in the order events are decided: a segment's ended can
    follow the next one's started (crossfades). These lines are input for 'soundmark timeline merge'.
    The plays are the ones 'scan' gives for the same audio: every hop the monitor makes scan's decision over the
    audio so far, and an activity is a play of that decision. Latency from the audio to its event: started once
    the decision has held the play for 3 s (20 s next to another play of the same reference), after the segment
    reached the confidence threshold inside the sliding matcher window (6 s, moved every 1.5 s; ~3 s of clean
    catalog audio) plus ~0.9 s until landmarks are decided and up to 1 s of decoder chunk. ended: once no later
    part can join the play on its line any more, about 28 s after its end (20 s within which 'scan' joins the
    parts of a play, plus a window and a hop), at once when the stream ends. Heartbeats keep this clock running through
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
              OptionSpec(name: "reconnect-timeout", value: "SECONDS", help: "with --reconnect: give up after the source has been down (or, at the start, unreachable) this long, 0…86400 s (default 60)"),
              OptionSpec(name: "open-timeout", value: "SECONDS",
                         help: "a named pipe (FIFO) source: give up (exit 2) when nothing was written to it this long, 0…86400 s; 0: wait without end (default 60)"),
              minimumDurationOption, falseAlarmsOption,
              OptionSpec(name: "catalog-poll", value: "SECONDS",
                         help: "check the catalog this often for references added or removed by another process (SQLite data_version, no table read) and reload it when it changed, 0…86400 s; 0: never (default 5)"),
              streamOption, languageOption, libraryRecordOption, librarySourceOption, startTimeOption, markerScanOption],
    positional: 1...1, run: runMonitor, streamsOutput: true)
