import Foundation
import Soundmark

/// `--library FILE` of identify, scan and monitor: the recognition library to record into.
let libraryRecordOption = OptionSpec(name: "library", value: "FILE",
    help: "record what was found in this recognition library (created when missing); the same audio recorded again replaces its earlier results")
/// `--source NAME` of identify, scan, monitor and library import.
let librarySourceOption = OptionSpec(name: "source", value: "NAME",
    help: "with --library: the station or channel name stored with the results (default: the input's name)")
/// `--start-time ISO-8601` of identify, scan and library import.
let startTimeOption = OptionSpec(name: "start-time", value: "ISO-8601",
    help: "with --library: the wall-clock time of the recording's start (2026-12-01T08:00:00Z or with an offset), so its airings get wall-clock times")

/// `--library FILE` of the library and report commands (the file must exist).
let libraryOption = OptionSpec(name: "library", value: "FILE", help: "the recognition library file, or a PostgreSQL catalog URI to read the library its workers wrote (required)")

/// The filter options of `library list`, `library remove` and the reports.
let libraryFilterOptions = [
    OptionSpec(name: "source", value: "NAME", help: "only this source"),
    OptionSpec(name: "reference", value: "ID", help: "only this reference id"),
    OptionSpec(name: "since", value: "TIME", help: "only airings starting (wall clock) at or after TIME: ISO-8601 or YYYY-MM-DD (UTC midnight)"),
    OptionSpec(name: "until", value: "TIME", help: "only airings starting (wall clock) before TIME: ISO-8601 or YYYY-MM-DD"),
    OptionSpec(name: "recording", value: "DIGEST", help: "only this recording: its digest (or its first 6+ hex digits) or its name as recorded"),
]

/// Reads a time argument: an ISO-8601 date-time with a zone, or a date `YYYY-MM-DD` (UTC midnight).
/// - Throws: ``UsageError`` naming the option.
func parseTimeArgument(_ text: String, option: String) throws -> Double {
    if let t = TimelinePayload.parseISO8601(text) { return t }
    if text.count == 10, let t = TimelinePayload.parseISO8601(text + "T00:00:00Z") { return t }
    throw UsageError(message: "--\(option) takes an ISO-8601 time with a zone (2026-12-01T08:00:00Z) or a date (2026-12-01), got '\(text)'")
}

/// The ``LibraryFilter`` of the filter options.
func libraryFilter(_ args: ParsedArguments) throws -> LibraryFilter {
    var filter = LibraryFilter(source: args.value("source"), reference: args.value("reference"), recording: args.value("recording"))
    if let t = args.value("since") { filter.since = try parseTimeArgument(t, option: "since") }
    if let t = args.value("until") { filter.until = try parseTimeArgument(t, option: "until") }
    if let since = filter.since, let until = filter.until, until < since {
        // An empty range listed nothing (or removed nothing) without a word: a swapped pair.
        throw UsageError(message: "--until \(args.value("until")!) is before --since \(args.value("since")!): the range holds no time")
    }
    return filter
}

/// The recording options of identify/scan: library, source and start time, parsed before any
/// decoding so that a bad value fails at once.
struct LibraryTarget {
    /// The library file.
    let path: String
    /// The source name.
    let source: String
    /// Unix time of recording time 0, when given.
    let startTime: Double?

    /// The target of `args`, nil without `--library`. `--source`/`--start-time` without it are refused.
    /// With `labelsOnly` (`scan --format html` without `--library`), `--source` and
    /// `--start-time` are accepted alone: the target then only names the source and start time.
    static func from(_ args: ParsedArguments, input: String, labelsOnly: Bool = false) throws -> LibraryTarget? {
        let path: String
        if let given = args.value("library") {
            path = given
        } else if labelsOnly {
            path = ""
        } else {
            if args.value("source") != nil { throw UsageError(message: "--source needs --library") }
            if args.value("start-time") != nil { throw UsageError(message: "--start-time needs --library") }
            return nil
        }
        guard !path.isEmpty || labelsOnly else { throw UsageError(message: "--library needs a non-empty value") }
        try refusePostgresLibrary(path, "--library")
        let startTime = try args.value("start-time").map { try parseTimeArgument($0, option: "start-time") }
        let defaultSource = input == "-" ? "stdin" : input
        return LibraryTarget(path: path, source: args.value("source") ?? defaultSource, startTime: startTime)
    }

    /// Opens (or creates) the library; done before decoding so a bad file fails first.
    func open() throws -> Library { try Library(path: path, create: true) }

    /// Records `airings` (recording times; wall-clock times added from the start time) as the
    /// recording `name` with the digest and print of its samples, and reports it on stderr when `verbose`.
    func record(_ library: Library, name: String, digest: AudioDigest, duration: Double, airings: [Airing], verbose: Bool) throws {
        let timed = airings.map { a -> Airing in
            var a = a
            if let t = startTime { a.wallStart = t + a.start; a.wallEnd = t + a.end }
            return a
        }
        let result = try library.record(LibraryRecording(digest: digest.hex, name: name, source: source, duration: duration,
                                                         wallStart: startTime, audioPrint: digest.audioPrint), airings: timed)
        if verbose {
            printError("\(path): recorded \(airings.count) airing(s) of \(name) as \(source) (recording \(result.recording.digest.prefix(12))\(result.replaced ? ", replacing its earlier results" : ""))")
        }
    }
}

/// Records a monitor run into the library as it goes: the run is one recording, created at the
/// start under a provisional digest; each activity is appended (one transaction) when it ends,
/// so a crash keeps the activities ended so far; at the end the recording gets the digest of
/// the audio received (replacing an earlier run over the same audio), its duration and start.
final class MonitorRecorder {
    private let library: Library
    private let target: LibraryTarget
    private let name: String
    private var recordingID: Int64?
    private var digest = AudioDigest()
    /// Reference durations by id (updated when the catalog is reloaded).
    var durations: [String: Double]
    /// Unix time of recording time 0 when events carry wall-clock times (`--clock wall`).
    var wallOrigin: () -> Double?
    private var failed = false

    /// Opens (or creates) the library.
    init(target: LibraryTarget, name: String, durations: [String: Double], wallOrigin: @escaping () -> Double?) throws {
        library = try target.open()
        self.target = target
        self.durations = durations
        self.wallOrigin = wallOrigin
        self.name = name
    }

    /// The run's recording, created when first needed (a source that never opens leaves none).
    private func recording() throws -> Int64 {
        if let recordingID { return recordingID }
        let provisional = "monitor-" + UUID().uuidString.lowercased()
        let id = try library.record(LibraryRecording(digest: provisional, name: name, source: target.source, duration: 0,
                                                     wallStart: target.startTime), airings: []).recording.id
        recordingID = id
        return id
    }

    /// The wall-clock time of recording time 0, when known.
    private var origin: Double? { target.startTime ?? wallOrigin() }

    /// Adds received samples to the digest.
    func digest(_ samples: [Float]) { digest.append(samples) }

    /// Appends an ended activity, with the payload of the audio marker it saw (if any).
    func ended(_ s: Segment, marker: UInt32? = nil) {
        var a = s.airing(referenceDuration: durations[s.item.id])
        a.marker = marker
        if let o = origin { a.wallStart = o + a.start; a.wallEnd = o + a.end }
        do {
            try library.append([a], toRecording: try recording())
        } catch {
            if !failed { warn(describe(error)) }
            failed = true
        }
    }

    /// Sets the final digest, duration and start.
    func finish(duration: Double) {
        do {
            try library.finishRecording(try recording(), digest: digest.hex, audioPrint: digest.audioPrint, duration: duration,
                                        wallStart: origin)
        } catch {
            warn(describe(error))
        }
    }
}

// MARK: - Output of airings

/// Seconds with millisecond precision for CSV cells (no exponent, `-0` avoided).
func csvSeconds(_ v: Double) -> String { TimeText.fixed(v, 3) }

/// The columns of `library list --format csv` and `report airings --format csv`.
let airingColumns = ["source", "recording", "start", "end", "wall_start", "wall_end", "reference", "title", "artist",
                     "duration", "fraction_aired", "reference_start", "reference_end", "confidence", "frequency_skew",
                     "time_scale", "marker"]

/// One CSV row of an airing (see ``airingColumns``); `digests` maps recording ids to digests.
func airingRow(_ a: Airing, digests: [Int64: String]) -> [String] {
    [a.source, digests[a.recording] ?? "", csvSeconds(a.start), csvSeconds(a.end), a.wallStart.map(TimeText.iso) ?? "",
     a.wallEnd.map(TimeText.iso) ?? "", a.reference, a.title ?? "", a.artist ?? "", csvSeconds(a.durationAired),
     a.fractionAired.map { TimeText.fixed($0, 4) } ?? "", csvSeconds(a.referenceStart), csvSeconds(a.referenceEnd),
     TimeText.fixed(a.confidence, 4), TimeText.fixed(a.frequencySkew, 4), TimeText.fixed(a.timeScale, 5),
     a.marker.map { "\($0)" } ?? ""]
}

/// One airing as JSON (the fields of ``airingColumns``, times in seconds, wall-clock times ISO-8601 UTC;
/// reference, title and artist as one `reference` object `{"id","title","artist"}`).
func airingJSON(_ a: Airing, digests: [Int64: String]) -> JSONOutput {
    .object([("source", .string(a.source)), ("recording", .string(digests[a.recording] ?? "")),
             ("start", .seconds(a.start)), ("end", .seconds(a.end)),
             ("wallStart", .optional(a.wallStart.map(TimeText.iso))), ("wallEnd", .optional(a.wallEnd.map(TimeText.iso))),
             ("reference", referenceJSON(id: a.reference, title: a.title, artist: a.artist)),
             ("duration", .seconds(a.durationAired)),
             ("fractionAired", a.fractionAired.map { .number($0, decimals: 4) } ?? .null),
             ("referenceStart", .seconds(a.referenceStart)), ("referenceEnd", .seconds(a.referenceEnd)),
             ("confidence", .number(a.confidence, decimals: 4)), ("frequencySkew", .number(a.frequencySkew, decimals: 4)),
             ("timeScale", .number(a.timeScale, decimals: 5)), ("marker", a.marker.map { .integer(Int($0)) } ?? .null)])
}

/// ``airingJSON(_:digests:)`` as text, written without `String(format:)` (a year's export holds
/// hundreds of thousands of airings): numbers with at most the same decimals, trailing zeros dropped.
func airingJSONText(_ a: Airing, digests: [Int64: String]) -> String {
    func number(_ v: Double, _ d: Int) -> String {
        guard v.isFinite else { return "null" }
        var text = TimeText.fixed(v, d)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text
    }
    func string(_ s: String?) -> String { s.map { JSONOutput.string($0).text } ?? "null" }
    var t = "{\"source\":" + string(a.source) + ",\"recording\":" + string(digests[a.recording] ?? "")
    t += ",\"start\":" + number(a.start, 3) + ",\"end\":" + number(a.end, 3)
    t += ",\"wallStart\":" + string(a.wallStart.map(TimeText.iso)) + ",\"wallEnd\":" + string(a.wallEnd.map(TimeText.iso))
    t += ",\"reference\":{\"id\":" + string(a.reference) + ",\"title\":" + string(a.title) + ",\"artist\":" + string(a.artist) + "}"
    t += ",\"duration\":" + number(a.durationAired, 3) + ",\"fractionAired\":" + (a.fractionAired.map { number($0, 4) } ?? "null")
    t += ",\"referenceStart\":" + number(a.referenceStart, 3) + ",\"referenceEnd\":" + number(a.referenceEnd, 3)
    t += ",\"confidence\":" + number(a.confidence, 4) + ",\"frequencySkew\":" + number(a.frequencySkew, 4)
    t += ",\"timeScale\":" + number(a.timeScale, 5) + ",\"marker\":" + (a.marker.map { "\($0)" } ?? "null") + "}"
    return t
}

/// Writes airings as text, CSV or JSON to standard output.
func printAirings(_ airings: [Airing], format: String, library: Library) throws {
    try writeAirings(airings, format: format, library: library) { fputs($0, stdout) }
}

/// Airings as text, CSV or JSON, handed to `emit` in pieces of about 64 KB.
func writeAirings(_ airings: [Airing], format: String, library: Library, emit: (String) -> Void) throws {
    let digests = try library.recordingDigests()
    switch format {
    case "csv":
        emit(CueWriter.csv(header: airingColumns, rows: []))
        var out = ""
        for a in airings {
            out += CueWriter.csv(header: [], rows: [airingRow(a, digests: digests)])
            if out.utf8.count > 1 << 16 { emit(out); out.removeAll(keepingCapacity: true) }
        }
        emit(out)
    case "json":
        var out = "{\"version\":" + versionJSON.text + ",\"airings\":["
        for (i, a) in airings.enumerated() {
            if i > 0 { out += "," }
            out += airingJSONText(a, digests: digests)
            if out.utf8.count > 1 << 16 { emit(out); out.removeAll(keepingCapacity: true) }
        }
        emit(out + "]}\n")
    default:
        // One buffer written in 64 KB pieces: print() per line costs more than the line's text.
        var out = ""
        out.reserveCapacity(1 << 17)
        for a in airings {
            let who = [MediaItem.displayTitle(a.title, id: a.reference), MediaItem.nonBlank(a.artist)].compactMap { $0 }.joined(separator: " – ")
            let oneLine = who.contains(where: { $0.isNewline || $0 == "\t" })
                ? MediaItem(id: a.reference, title: a.title, artist: a.artist).byline() : who
            out += a.wallStart.map(TimeText.iso) ?? "-"
            out += "  "; out += a.source; out += "  "
            out += TimeText.clock(a.start, milliseconds: true); out += " – "; out += TimeText.clock(a.end, milliseconds: true)
            out += "  "; out += oneLine; out += " ("; out += a.reference; out += ") from "
            out += TimeText.clock(a.referenceStart, milliseconds: true); out += ", confidence "; out += TimeText.fixed(a.confidence, 2)
            if let m = a.marker { out += ", marker "; out += "\(m)" }
            out += "\n"
            if out.utf8.count > 1 << 16 { emit(out); out.removeAll(keepingCapacity: true) }
        }
        emit(out)
        if airings.isEmpty { emit("no airings\n") }
    }
}

// MARK: - library commands

/// The library of `--library` for reading: a file, or a snapshot of the library workers wrote
/// on a PostgreSQL server (``postgresLibrarySnapshot(_:)``).
func openLibrary(_ args: ParsedArguments) throws -> Library {
    switch CatalogLocation(try required(args, "library")) {
    case .sqlite(let path): return try Library(path: path)
    case .postgres(let uri): return try postgresLibrarySnapshot(uri)
    }
}

func runLibraryList(_ args: ParsedArguments) throws -> Int32 {
    let library = try openLibrary(args)
    let filter = try libraryFilter(args)
    try printAirings(try library.airings(filter), format: args.value("format") ?? "text", library: library)
    return Exit.ok
}

func runLibraryShow(_ args: ParsedArguments) throws -> Int32 {
    let library = try openLibrary(args)
    let json = args.value("format") == "json"
    let recordings: [LibraryRecording]
    if let key = args.positional.first {
        recordings = try library.recordings(matching: key)
        guard !recordings.isEmpty else { throw CommandError(message: "\(library.path): no recording '\(key)'") }
    } else {
        recordings = try library.recordings(source: args.value("source"))
    }
    func recordingJSON(_ r: LibraryRecording) -> JSONOutput {
        .object([("digest", .string(r.digest)), ("name", .string(r.name)), ("source", .string(r.source)),
                 ("duration", .seconds(r.duration)), ("wallStart", .optional(r.wallStart.map(isoUTC))),
                 ("added", .string(isoUTC(r.addedAt))), ("airingCount", .integer(r.airingCount))])
    }
    if args.positional.isEmpty {
        if json {
            print(versionedJSON([("recordings", .array(recordings.map(recordingJSON)))]).text)
        } else {
            for r in recordings {
                print("\(r.digest.prefix(12))  \(r.source)  \(r.wallStart.map(isoUTC) ?? "-")  \(formatClock(r.duration))  \(r.airingCount) airing(s)  \(r.name)")
            }
            print("\(recordings.count) recording(s), \(recordings.reduce(0) { $0 + $1.airingCount }) airing(s)")
        }
        return Exit.ok
    }
    for r in recordings {
        if json {
            let digests = [r.id: r.digest]
            let airings = try library.airings(LibraryFilter(recording: r.digest))
            print(versionedJSON([("recording", recordingJSON(r)),
                                 ("airings", .array(airings.map { airingJSON($0, digests: digests) }))]).text)
        } else {
            print("recording \(r.digest)\n  name:     \(r.name)\n  source:   \(r.source)\n  duration: \(formatTimestamp(r.duration))")
            print("  start:    \(r.wallStart.map(isoUTC) ?? "unknown")\n  added:    \(isoUTC(r.addedAt))\n  airings:  \(r.airingCount)")
            try printAirings(try library.airings(LibraryFilter(recording: r.digest)), format: "text", library: library)
        }
    }
    return Exit.ok
}

func runLibraryRemove(_ args: ParsedArguments) throws -> Int32 {
    try refusePostgresLibrary(try required(args, "library"), "library remove")
    let library = try openLibrary(args)
    let filter = try libraryFilter(args)
    guard !filter.isEmpty else {
        throw UsageError(message: "say what to remove: --recording, --source, --reference and/or --since/--until")
    }
    if let key = filter.recording, try library.recordings(matching: key).isEmpty {
        throw CommandError(message: "\(library.path): no recording '\(key)'")
    }
    let removed = try library.remove(filter)
    print("removed \(removed.airings) airing(s), \(removed.recordings) recording(s)")
    return Exit.ok
}

func runLibraryImport(_ args: ParsedArguments) throws -> Int32 {
    try refusePostgresLibrary(try required(args, "library"), "library import")
    let input = args.positional[0]
    let startTime = try args.value("start-time").map { try parseTimeArgument($0, option: "start-time") }
    let text = try readTextInput(input)
    let name = input == "-" ? "<stdin>" : input
    let parsed = TimelinePayload.parseLines(text)
    if parsed.payloads.isEmpty && !parsed.warnings.isEmpty {
        throw CommandError(message: "\(name): no usable event on any line (\(parsed.warnings[0]))")
    }
    // Every empty file has one digest: importing one replaced the last empty import, whatever its name.
    if parsed.payloads.isEmpty { throw CommandError(message: "\(name): no events (an empty file); nothing imported") }
    for w in parsed.warnings { warn("\(name): \(w)") }
    var timeline = ActivityTimeline()
    var duration = 0.0
    for payload in parsed.payloads {
        if let t = payload.time, payload.timestamp == nil { duration = max(duration, t) }
        if isMonitorStreamEvent(payload) { continue }
        timeline.apply(payload)
    }
    let airings = TimelineImport.airings(from: timeline.rows, startTime: startTime).filter { a in
        guard let problem = TimelineImport.problem(a) else { return true }
        warn("\(name): activity of \(a.reference) skipped: \(problem)")
        return false
    }
    let library = try Library(path: try required(args, "library"), create: true)
    var digest = AudioDigest()
    digest.append(bytes: Array(text.utf8))
    let source = args.value("source") ?? (input == "-" ? "stdin" : input)
    let result = try library.record(LibraryRecording(digest: digest.hex, name: name, source: source, duration: duration,
                                                     wallStart: startTime ?? airings.compactMap { a in a.wallStart.map { $0 - a.start } }.first),
                                    airings: airings)
    print("imported \(airings.count) airing(s) from \(timeline.rows.count) row(s) as \(source) (recording \(result.recording.digest.prefix(12))\(result.replaced ? ", replacing its earlier import" : ""))")
    return Exit.ok
}

let libraryFormatOption = OptionSpec(name: "format", value: "text|json|csv", help: "output format (default: text)")

/// The `library …` commands.
let libraryCommands: [CommandSpec] = [
    CommandSpec(words: ["library", "list"], usage: "", summary: "list the airings of a recognition library",
                details: """
                One line (row, object) per airing, ordered by wall-clock time (airings without one last), then source and
                recording time. --since/--until compare the airing's wall-clock start, so airings of recordings without
                a known start time (no --start-time, no monitor --clock wall) are left out when they are given.
                CSV (RFC 4180, CRLF) columns: \(airingColumns.joined(separator: ",")).
                JSON: {"version":{…},"airings":[{"source","recording","start","end","wallStart","wallEnd",
                "reference":{"id","title","artist"},"duration","fractionAired","referenceStart","referenceEnd","confidence",
                "frequencySkew","timeScale","marker"}]}.
                """,
                options: [libraryOption] + libraryFilterOptions + [libraryFormatOption],
                positional: 0...0, run: runLibraryList),
    CommandSpec(words: ["library", "show"], usage: "[RECORDING]", summary: "list the recordings of a library, or show one with its airings",
                details: """
                Without RECORDING: every recording (digest, source, start time, duration, airings, name). With RECORDING
                (a digest, its first 6+ hex digits, or the name it was recorded under): that recording and its airings.
                """,
                options: [libraryOption, OptionSpec(name: "source", value: "NAME", help: "without RECORDING: only this source's recordings"),
                          OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 0...1, run: runLibraryShow),
    CommandSpec(words: ["library", "remove"], usage: "", summary: "remove airings by recording, source, reference or time range",
                details: """
                Removes the airings the options select (all must hold; at least one is required), in one transaction,
                and the recordings left without airings (--recording alone removes the recording even when it has none).
                """,
                options: [libraryOption] + libraryFilterOptions,
                positional: 0...0, run: runLibraryRemove),
    CommandSpec(words: ["library", "import"], usage: "EVENTS.jsonl",
                summary: "record recogniser events (monitor JSON Lines or SDK callbacks) into a library",
                details: """
                Folds the events with the activity-timeline rules ('soundmark timeline merge') and records one airing per
                row with a material_id (the reference id): recording start/end from the monitor's start field and
                the row's end, reference start from referenceStart (else position), wall-clock times from --start-time,
                ISO-8601 event times or the monitor's wall_time. The file is one recording, known by a digest of its
                content: importing it again replaces its airings. Monitor stream events are skipped.
                """,
                options: [OptionSpec(name: "library", value: "FILE", help: "the recognition library (created when missing; required)"),
                          OptionSpec(name: "source", value: "NAME", help: "the station or channel name (default: the file's name)"),
                          startTimeOption],
                positional: 1...1, run: runLibraryImport),
]

/// Reference durations (seconds) by id, for the library's fraction aired.
func referenceDurations(_ index: CatalogIndex) -> [String: Double] {
    Dictionary(index.references.map { ($0.item.id, $0.duration) }, uniquingKeysWith: { a, _ in a })
}
