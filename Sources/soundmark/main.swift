import Foundation
import Soundmark

/// Exit codes: 0 success (identify: a match), 1 nothing found / part of a batch failed, 2 error.
enum Exit {
    static let ok: Int32 = 0
    static let none: Int32 = 1
    static let error: Int32 = 2
}

setvbuf(stdout, nil, _IOFBF, 1 << 16)

func printError(_ message: String) {
    FileHandle.standardError.write(Data("soundmark: \(displayingServers(message))\n".utf8))
}

func warn(_ message: String) {
    FileHandle.standardError.write(Data("soundmark: warning: \(displayingServers(message))\n".utf8))
}

extension InputWarnings {
    /// The one store of this process: each input's warnings (as printed, without the
    /// "soundmark: warning: " prefix) for its JSON report.
    static let shared = InputWarnings()
}

/// Prints a warning about the input `source` on stderr and keeps it for that input's JSON
/// report (``InputWarnings``).
func warn(_ message: String, about source: String) {
    warn(message)
    InputWarnings.shared.record(source, displayingServers(message))
}

extension MediaItem {
    /// "title – artist" for text output, on one line: control characters (newlines, tabs,
    /// escapes) become spaces. A missing or blank title is the id (``MediaItem/displayTitle``),
    /// a blank artist is left out.
    func byline() -> String {
        let text = [displayTitle, MediaItem.nonBlank(artist)].compactMap { $0 }.joined(separator: " – ")
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }
}

func describe(_ error: Error) -> String {
    if let e = error as? LocalizedError, let d = e.errorDescription { return d }
    return "\(error)"
}

// Every command with --format takes -o/--output FILE, spelt and handled the same way.
let commands: [CommandSpec] = (catalogCommands + matchCommands + [scanCommand, monitorCommand] + timelineCommands
    + libraryCommands + reportCommands + markerCommands + signatureCommands + shazamCatalogCommands
    + postgresCommands).map(withOutputOption)

/// One help line per command: its words padded to 24 columns, then its summary.
func commandRows(_ specs: [CommandSpec]) -> [String] {
    specs.map { ("  " + $0.words.joined(separator: " ")).padding(toLength: 24, withPad: " ", startingAt: 0) + $0.summary }
}

func topHelp() -> String {
    var lines = ["soundmark \(soundmarkVersion) — offline audio fingerprinting: catalog, identify, scan", "",
                 "usage: soundmark COMMAND [options] ARGS", "", "commands:"] + commandRows(commands)
    lines += ["", "Run 'soundmark COMMAND --help' (or 'soundmark help COMMAND') for a command's options.",
              "Exit codes: 0 success (identify/scan: something matched), 1 no match or some inputs failed, 2 error."]
    return lines.joined(separator: "\n")
}

/// The command `args` start with: the one whose words are the longest prefix of them, if any.
func command(startingWith args: [String]) -> CommandSpec? {
    commands.filter { args.starts(with: $0.words) }.max { $0.words.count < $1.words.count }
}

/// `args` name no command: a command group alone ("catalog"; with `helpAsked`, or followed by
/// --help or -h) lists its subcommands, anything else is an unknown command. Returns the exit code.
func notACommand(_ args: [String], helpAsked: Bool) -> Int32 {
    // A command group ("catalog", "timeline") without a known subcommand: list the group.
    let group = commands.filter { $0.words.count > 1 && $0.words[0] == args[0] }
    if !group.isEmpty {
        guard args.count == 1 || args[1] == "--help" || args[1] == "-h" else {
            printError("unknown command '\(args.prefix(2).joined(separator: " "))' (see 'soundmark \(args[0]) --help')")
            return Exit.error
        }
        let lines = ["usage: soundmark \(args[0]) SUBCOMMAND [options] ARGS", "", "subcommands:"] + commandRows(group)
            + ["\nRun 'soundmark \(args[0]) SUBCOMMAND --help' for its options."]
        print(lines.joined(separator: "\n"))
        return helpAsked || args.count > 1 ? Exit.ok : Exit.error
    }
    printError("unknown command '\(args.prefix(2).filter { $0 != "--help" }.joined(separator: " "))' (see 'soundmark --help')")
    return Exit.error
}

/// `soundmark help WORDS…` (as git and swift spell it): the help of the command WORDS start
/// with, as `WORDS --help` prints it (words after the command's are ignored), a group's
/// subcommands, or an unknown command's error. Returns the exit code.
func helpCommand(_ words: [String]) -> Int32 {
    // `help --help`, `help -h`, `help help`: help on help is the top help, which says what `help` does.
    if words.allSatisfy({ ["--help", "-h", "help"].contains($0) }) {
        print(topHelp())
        return Exit.ok
    }
    guard let spec = command(startingWith: words) else { return notACommand(words, helpAsked: true) }
    print(helpText(spec))
    return Exit.ok
}

func main() -> Int32 {
    let args = Array(CommandLine.arguments.dropFirst())
    if args.count > 1 && args[0] == "help" { return helpCommand(Array(args.dropFirst())) }
    if args.isEmpty || args == ["--help"] || args == ["-h"] || args == ["help"] {
        print(topHelp())
        return args.isEmpty ? Exit.error : Exit.ok
    }
    if args == ["--version"] {
        // Every versioned format, named: the numbers a file of another build is checked against.
        print("soundmark \(soundmarkVersion) (catalog format \(Catalog.formatVersion), fingerprint format \(Configuration.formatVersion), "
              + "library format \(Library.formatVersion), signature file \(SignatureFile.fileVersion), marker format \(MarkerFormat.current.version), "
              + "JSON output format \(jsonOutputFormat))")
        return Exit.ok
    }
    guard let spec = command(startingWith: args) else { return notACommand(args, helpAsked: false) }
    let rest = Array(args.dropFirst(spec.words.count))
    if rest.contains("--help") || rest.contains("-h") {
        print(helpText(spec))
        return Exit.ok
    }
    do {
        let parsed = try parse(rest, for: spec)
        if let path = parsed.value("output"), path != "-" {
            // Whoever writes it (standard output redirected here, or the command itself: signature,
            // catalog export, the reports): never over one of the command's inputs.
            try refuseOutputOverAnInput(path, parsed)
            if spec.options.contains(where: \.redirectsStandardOutput) {
                return try runWritingStandardOutput(to: path, streamed: spec.streamsOutput) { try spec.run(parsed) }
            }
        }
        return try spec.run(parsed)
    } catch let e as UsageError {
        printError("\(e.message) (see 'soundmark \(spec.words.joined(separator: " ")) --help')")
        return Exit.error
    } catch {
        printError(describe(error))
        return Exit.error
    }
}

var status = main()
// Output that could not be written (a full disk, /dev/full) is an error, not a silent success;
// a reader that went away (a closed pipe) is not.
let flushed = fflush(stdout) == 0, flushError = errno
if (!flushed && flushError != EPIPE) || (flushed && ferror(stdout) != 0) {
    printError("cannot write standard output" + (flushed ? "" : ": " + String(cString: strerror(flushError))))
    status = Exit.error
}
exit(status)
