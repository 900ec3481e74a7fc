import Foundation
import Soundmark

/// Output formats of `timeline merge`, the first being the default.
let timelineFormats = ["json", "csv", "srt", "vtt"]

/// An error of a command that is not a usage error (a missing input file, a failed source):
/// printed as one `soundmark: <message>` line, exit code 2.
struct CommandError: Error, LocalizedError {
    /// The one-line message.
    let message: String
    /// The message, for ``describe(_:)``.
    var errorDescription: String? { message }
}

/// Reads a whole input as text: a file path, or `-` for standard input.
///
/// - Throws: ``CommandError`` naming the file when it is missing, a directory or unreadable.
func readTextInput(_ path: String) throws -> String {
    if path == "-" {
        return String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw CommandError(message: "cannot open \(path): no such file")
    }
    if isDirectory.boolValue { throw CommandError(message: "cannot open \(path): is a directory") }
    let data: Data
    do { data = try InputFile.contents(atPath: path) } catch let error as InputFileError {
        throw CommandError(message: "cannot open \(path): \(error.reason)")
    }
    return String(decoding: data, as: UTF8.self)
}

/// Whether a payload is one of `soundmark monitor`'s stream-level events (`stream.gap`,
/// `stream.reconnected`, `stream.ended`): they describe the input, not an observation, so
/// merging them would refine the current row with fields such as the gap's `duration`.
func isMonitorStreamEvent(_ payload: TimelinePayload) -> Bool {
    guard payload.activityID == nil, payload.materialID == nil,
          let event = payload.fields["event"]?.stringValue else { return false }
    return event.hasPrefix("stream.")
}

/// `soundmark timeline merge`: folds recogniser payloads (JSON Lines) into activity rows and
/// prints them as JSON, CSV, SubRip or WebVTT.
func runTimelineMerge(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "json"
    guard timelineFormats.contains(format) else {
        throw UsageError(message: "--format is one of \(timelineFormats.joined(separator: ", ")), got '\(format)'")
    }
    let verbose = args.has("verbose")
    let text = try readTextInput(args.positional[0])
    let parsed = TimelinePayload.parseLines(text)
    let name = args.positional[0] == "-" ? "<stdin>" : args.positional[0]
    if parsed.payloads.isEmpty && parsed.warnings.isEmpty {
        printError("\(name): no events (an empty file)")
        return Exit.error
    }
    if parsed.payloads.isEmpty && !parsed.warnings.isEmpty {
        if let usable = parsed.warnings.first(where: { !$0.hasSuffix(": not valid JSON") && !$0.hasSuffix(": not a JSON object") }) {
            // JSON objects, but none usable (an ill-typed or out-of-range field): name the first.
            printError("\(name): \(usable)\(parsed.warnings.count > 1 ? " (and \(parsed.warnings.count - 1) more unusable line(s))" : "")")
        } else {
            printError("\(name): no JSON object on any line (\(parsed.warnings.count) unreadable line(s)); is it JSON Lines?")
        }
        return Exit.error
    }
    // Every warning is said on stderr and, in JSON, kept in the output's "warnings".
    var warnings: [String] = []
    func say(_ message: String) { warn(message); warnings.append(message) }
    for w in parsed.warnings { say("\(name): \(w)") }

    var timeline = ActivityTimeline()
    var skipped = 0, ignored = 0
    for payload in parsed.payloads {
        let line = payload.line.map { "line \($0)" } ?? "payload"
        if isMonitorStreamEvent(payload) {
            skipped += 1
            if verbose { warn("\(line): ignored: monitor stream event \"\(payload.fields["event"]?.stringValue ?? "")\"") }
            continue
        }
        if case .ignored(let reason) = timeline.apply(payload) {
            ignored += 1
            if verbose { say("\(line): ignored: \(reason)") }
        }
    }
    if ignored > 0 && !verbose {
        say("\(name): \(ignored) payload(s) ignored (late for an earlier activity, or unusable; --verbose lists them)")
    }
    if verbose {
        warn("\(parsed.payloads.count) payload(s), \(parsed.warnings.count) malformed line(s), \(skipped) stream event(s) skipped, \(timeline.rows.count) row(s)")
    }

    switch format {
    case "csv": print(TimelineExport.csv(timeline.rows), terminator: "")
    case "srt", "vtt":
        // Subtitles cannot start before 0 s: a cue there is moved or left out, with a line each.
        let (cues, notes) = TimelineExport.subtitleCues(timeline.rows)
        for note in notes { say("\(name): \(note)") }
        print(format == "srt" ? CueWriter.srt(cues) : CueWriter.webVTT(cues), terminator: "")
    default:
        // {"rows":[…]} with the version first, as every JSON output that is one object.
        print("{\"version\":" + versionJSON.text + "," + TimelineExport.json(timeline.rows, warnings: warnings).dropFirst())
    }
    return Exit.ok
}

/// The `timeline …` commands.
let timelineCommands: [CommandSpec] = [
    CommandSpec(words: ["timeline", "merge"], usage: "EVENTS.jsonl",
                summary: "merge recogniser events (JSON Lines, file or -) into an activity timeline",
                details: """
                Reads one JSON object per line (the output of 'soundmark monitor', or mobile SDK callbacks) and
                folds them into rows, in order of first observation: a payload refines the current row when it
                carries the same activity_id (or, without one, the same material_id), a late payload for an
                earlier activity is ignored, anything else starts a new row. A marker (trait.marker) once seen
                stays set; display fields are merged without blanking known values; an accepted result
                (kind "activity_result") refines its activity even when closed and may set expires_at.
                A "segment.ended" payload ends its activity: it closes the row and sets the row's end to its time,
                even when it arrives after the next activity started (the monitor writes a track's end after the
                next track's start in crossfades); such a late end changes nothing else. A row closed by another
                activity without an ended payload ends where that activity began.
                Lines that are not JSON objects, or have ill-typed known keys, are skipped with a warning on
                stderr. Monitor stream events (event "stream.gap", "stream.reconnected", "stream.ended")
                are skipped. JSON: {"version":{…},"rows":[{"activity_id","material_id","marker","first_seen":{"time",
                "position"},"end","fields":{…},"closed"}]}; CSV has a header and CRLF line ends; srt/vtt have one
                cue per timed row, from its first-seen time to its end (else the next row's start); a cue that ends
                before 0 s is left out and one that starts before it starts at 0 s, each with a warning. JSON output
                also has "warnings":["…"] when any was said on stderr. Exit code 0, 2 on error.
                """,
                options: [OptionSpec(name: "format", value: "json|csv|srt|vtt", help: "output format (default: json)"),
                          OptionSpec(name: "verbose", value: nil, help: "also report every ignored payload and totals on stderr")],
                positional: 1...1, run: runTimelineMerge),
]
