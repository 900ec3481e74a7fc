import Foundation
import Soundmark

/// `soundmark report airings`: one row per airing (CSV, JSON or HTML).
func runReportAirings(_ args: ParsedArguments) throws -> Int32 {
    let library = try openLibrary(args)
    let airings = try library.airings(try libraryFilter(args))
    let format = args.value("format") ?? "csv"
    if format == "html" {
        try writeReport(ReportHTML.page(airings, title: "soundmark airings", recordingNames: try recordingNames(library)), args)
    } else if args.value("output") ?? "-" == "-" {
        try printAirings(airings, format: format, library: library)
    } else {
        var text = ""
        try writeAirings(airings, format: format, library: library) { text += $0 }
        try writeReport(text, args)
    }
    return Exit.ok
}

/// `soundmark report html`: the HTML page of the selected airings.
func runReportHTML(_ args: ParsedArguments) throws -> Int32 {
    let library = try openLibrary(args)
    let airings = try library.airings(try libraryFilter(args))
    try writeReport(ReportHTML.page(airings, title: args.value("title") ?? "soundmark airings",
                                    recordingNames: try recordingNames(library)), args)
    return Exit.ok
}

/// Recording names by row id.
func recordingNames(_ library: Library) throws -> [Int64: String] {
    Dictionary(try library.recordings().map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
}

/// Writes a report to `--output FILE` (``writeOutputFile(_:to:what:)``: a temporary file renamed) or stdout.
func writeReport(_ text: String, _ args: ParsedArguments) throws {
    guard let path = args.value("output"), path != "-" else {
        print(text, terminator: "")
        return
    }
    try writeOutputFile(Data(text.utf8), to: path, what: "the report")
}

/// `soundmark report counts [--by day|week|source|reference]` (default: reference).
func runReportCounts(_ args: ParsedArguments) throws -> Int32 {
    // Without --by: per reference over the whole library (the option's choices were checked by the parser).
    let by = args.value("by").flatMap(CountGrouping.init(rawValue:)) ?? .reference
    let library = try openLibrary(args)
    let counts = try library.counts(by: by, filter: try libraryFilter(args))
    let groupName = by == .reference ? nil : by.rawValue
    if args.value("format") == "json" {
        let rows = counts.map { c -> JSONOutput in
            var members: [(String, JSONOutput)] = []
            if let g = groupName { members.append((g, .optional(c.group))) }
            members += [("reference", referenceJSON(id: c.reference, title: c.title, artist: c.artist)),
                        ("plays", .integer(c.plays)), ("airtime", .seconds(c.airtime))]
            return .object(members)
        }
        try writeReport(versionedJSON([("by", .string(by.rawValue)), ("counts", .array(rows))]).text + "\n", args)
    } else {
        let header = (groupName.map { [$0] } ?? []) + ["reference", "title", "artist", "plays", "airtime"]
        let rows = counts.map { c in
            (groupName == nil ? [] : [c.group ?? ""]) + [c.reference, c.title ?? "", c.artist ?? "", "\(c.plays)", csvSeconds(c.airtime)]
        }
        try writeReport(CueWriter.csv(header: header, rows: rows), args)
    }
    return Exit.ok
}

let reportOutputOption = outputOption(help: "write the report to FILE instead of standard output (-: standard output)")

/// The `report …` commands.
let reportCommands: [CommandSpec] = [
    CommandSpec(words: ["report", "airings"], usage: "", summary: "proof-of-airing log: one row per airing (CSV, JSON or HTML)",
                details: """
                One row per airing of the library (filters as in 'library list'): source, recording (digest), start and end
                in recording seconds, wall_start/wall_end (ISO-8601 UTC, when the recording's start time is known),
                reference id, title, artist, duration aired (s), fraction of the reference aired (0…1), reference_start/
                reference_end (s), confidence, frequency skew, time scale, marker (the payload decoded, empty when none).
                CSV is RFC 4180 (header row, CRLF, quoted fields where needed); JSON is {"version":{…},"airings":[…]} with
                the same fields (camelCase; reference, title and artist as "reference":{"id","title","artist"}); html is the
                page of 'report html'.
                """,
                options: [libraryOption] + libraryFilterOptions
                    + [OptionSpec(name: "format", value: "csv|json|html", help: "output format (default: csv)"), reportOutputOption],
                positional: 0...0, run: runReportAirings),
    CommandSpec(words: ["report", "counts"], usage: "", summary: "play counts and total airtime per reference, by day, week, source or reference",
                details: """
                One row per group and reference, groups in order, most plays first: day (YYYY-MM-DD, UTC) or week (ISO 8601,
                YYYY-Www) of the wall-clock start (airings without a wall-clock time form an empty group, last), source,
                or only the reference. Columns: the group, reference, title, artist, plays, airtime (seconds); JSON:
                {"version":{…},"by":…,"counts":[{GROUP,"reference":{"id","title","artist"},"plays","airtime"}]}.
                """,
                options: [libraryOption, OptionSpec(name: "by", value: "day|week|source|reference", help: "grouping: per reference and day, week or source, or per reference over the whole library (default: reference)")]
                    + libraryFilterOptions + [OptionSpec(name: "format", value: "csv|json", help: "output format (default: csv)"), reportOutputOption],
                positional: 0...0, run: runReportCounts),
    CommandSpec(words: ["report", "html"], usage: "", summary: "one self-contained HTML page: timelines, summary table, alignment plots",
                details: """
                Writes one HTML file (inline SVG and CSS, no network access when opened): a timeline lane per source on a
                UTC axis for the airings with a wall-clock time, and one per recording on recording time for those without
                (under a note naming them), with a block per airing (overlapping airings in rows of their own; hover, or
                focus with Tab, shows its details; buttons and the mouse wheel zoom, one button per day shows that day's
                airings), a summary table per reference, and per reference an alignment plot of reference time against
                recording time, one line per airing (straight for a clean airing, sloped for a speed change, steps for
                jumps and edits, gaps for cuts; each recording's lines in a colour and dash of their own, numbered in a
                legend). Axes in hh:mm:ss.
                """,
                options: [libraryOption] + libraryFilterOptions
                    + [OptionSpec(name: "title", value: "TEXT", help: "the page's heading (default: soundmark airings)"), reportOutputOption],
                positional: 0...0, run: runReportHTML),
]
