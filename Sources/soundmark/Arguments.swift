import Foundation

/// One option of a command: `--name VALUE` (or `--name=VALUE`), or a flag `--name`.
/// A placeholder listing words (`text|json`) makes them the only accepted values: the
/// parser refuses anything else with a usage error (exit 2) for every command alike.
struct OptionSpec {
    let name: String
    let value: String?        // placeholder shown in help; nil for a flag
    let help: String
    var repeatable = false
    /// The one-letter spelling (`-o` for `--output`), when the option has one.
    var short: Character? = nil
    /// Whether this is the `-o/--output FILE` that main takes standard output to
    /// (``standardOutputFileOption``), rather than a file option the command writes itself.
    var redirectsStandardOutput = false

    /// The accepted values when the placeholder lists them (`text|json`), else nil.
    var choices: [String]? {
        guard let value, value.contains("|"),
              value.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "|" }) else { return nil }
        return value.split(separator: "|").map(String.init)
    }

    /// What the value of a numeric option is, by its placeholder (`SECONDS`: "a number of
    /// seconds"; `N`, `C`, `RATE`: "a number"; `DB`: "a number of dB"), else nil. The parser
    /// refuses a value that is no number at all with it; the option's range is checked where
    /// the command reads the value (``numberOption(_:_:_:in:note:)``).
    var numberKind: String? {
        switch value {
        case "SECONDS": return "a number of seconds"
        case "DB": return "a number of dB"
        case "N", "C", "RATE": return "a number"
        default: return nil
        }
    }

    /// The range a numeric option's help states as `LOW…HIGH` ("0…86400", "-40…-6", "1e-9…1000"),
    /// as " from LOW to HIGH" for the message that refuses a value that is no number; empty when
    /// the help states none.
    var statedRange: String {
        guard let m = help.firstMatch(of: #/(-?[0-9][0-9.e+-]*)…(-?[0-9][0-9.e+-]*)/#) else { return "" }
        return " from \(m.1) to \(m.2)"
    }
}

/// A command: its words, options, positional arguments and what it does.
struct CommandSpec {
    let words: [String]
    let usage: String         // positional part of the usage line
    let summary: String
    let details: String
    let options: [OptionSpec]
    let positional: ClosedRange<Int>
    let run: (ParsedArguments) throws -> Int32
    /// Whether the command writes its output as it goes (monitor): `-o FILE` is then written
    /// line by line, not whole at the end.
    var streamsOutput = false
}

/// The parsed command line of one command.
struct ParsedArguments {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positional: [String] = []

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) }
}

/// A usage error: printed with a hint to `--help`, exit code 2.
struct UsageError: Error {
    let message: String
}

/// Parses `args` (after the command words) against `spec`.
func parse(_ args: [String], for spec: CommandSpec) throws -> ParsedArguments {
    var result = ParsedArguments()
    var i = 0
    var onlyPositional = false
    while i < args.count {
        let arg = args[i]
        i += 1
        if onlyPositional || arg == "-" || !arg.hasPrefix("-") {
            result.positional.append(arg)
            continue
        }
        if arg == "--" { onlyPositional = true; continue }
        var name = arg.drop(while: { $0 == "-" }).description
        var inline: String?
        if let eq = name.firstIndex(of: "=") {
            inline = String(name[name.index(after: eq)...])
            name = String(name[..<eq])
        }
        // `-o` is a short spelling; `--name` (or `-name`) a long one.
        let short = !arg.hasPrefix("--") && name.count == 1 ? name.first : nil
        guard let option = spec.options.first(where: { short != nil ? $0.short == short : $0.name == name }) else {
            throw UsageError(message: "unknown option '\(arg)' for '\(spec.words.joined(separator: " "))'")
        }
        name = option.name
        if option.value == nil {
            guard inline == nil else { throw UsageError(message: "option --\(name) takes no value") }
            result.flags.insert(name)
            continue
        }
        let value: String
        if let inline {
            value = inline
        } else {
            guard i < args.count else { throw UsageError(message: "option --\(name) needs a value (\(option.value!))") }
            value = args[i]
            i += 1
            // `--title --id foo`: the value was left out and the next option taken for it.
            if value.hasPrefix("--") || (value.count == 2 && value.hasPrefix("-") && spec.options.contains { $0.short == value.last }) {
                throw UsageError(message: "option --\(name) needs a value (\(option.value!)), not the option '\(value)'"
                                 + " (write --\(name)=\(value) if that is its value)")
            }
        }
        if let kind = option.numberKind, Double(value.trimmingCharacters(in: .whitespaces)) == nil {
            throw UsageError(message: "--\(name) needs \(kind)\(option.statedRange), got '\(value)'")
        }
        if let choices = option.choices, !choices.contains(value) {
            let list = choices.count == 2 ? "\(choices[0]) or \(choices[1])" : "one of \(choices.joined(separator: ", "))"
            throw UsageError(message: "--\(name) is \(list), got '\(value)'")
        }
        if !option.repeatable && result.values[name] != nil {
            throw UsageError(message: "option --\(name) given twice")
        }
        result.values[name, default: []].append(value)
    }
    guard spec.positional.contains(result.positional.count) else {
        let want = spec.positional.upperBound == Int.max ? "at least \(spec.positional.lowerBound)" :
            spec.positional.lowerBound == spec.positional.upperBound ? "\(spec.positional.lowerBound)" :
            "\(spec.positional.lowerBound) to \(spec.positional.upperBound)"
        throw UsageError(message: "'\(spec.words.joined(separator: " "))' takes \(want) argument(s) (\(spec.usage)), got \(result.positional.count)")
    }
    return result
}

/// Help text of one command.
func helpText(_ spec: CommandSpec) -> String {
    let usage = ["usage: soundmark", spec.words.joined(separator: " "), "[options]", spec.usage].filter { !$0.isEmpty }
    var lines = [usage.joined(separator: " "), "", spec.summary]
    if !spec.details.isEmpty { lines += ["", spec.details] }
    // Every command has an options section, if only --help: a reader looks for it in the same place.
    lines += ["", "options:"]
    for o in spec.options {
        let head = "  " + (o.short.map { "-\($0), " } ?? "") + "--\(o.name)" + (o.value.map { " \($0)" } ?? "")
        lines.append(head.padding(toLength: max(head.count + 2, 28), withPad: " ", startingAt: 0) + o.help)
    }
    lines.append("  --help                    show this help")
    return lines.map { $0.replacingOccurrences(of: " +$", with: "", options: .regularExpression) }.joined(separator: "\n")
}

/// A bound of a numeric option's range as the user types it: `86400`, `0.5`, `-40`.
private func boundText(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
}

/// The value of numeric option `--name` (nil when not given), which must be a finite number in
/// `range`; anything else (not a number, NaN, infinity, out of range) is a ``UsageError`` naming
/// the option and its range on one line: "--catalog-poll takes seconds from 0 to 86400 (0: never),
/// got '1e10'". `what` names the unit ("seconds", "a number", "dB"); `note` explains a special value.
func numberOption(_ args: ParsedArguments, _ name: String, _ what: String, in range: ClosedRange<Double>,
                  note: String? = nil) throws -> Double? {
    guard let text = args.value(name) else { return nil }
    guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, range.contains(value) else {
        throw UsageError(message: "--\(name) takes \(what) from \(boundText(range.lowerBound)) to \(boundText(range.upperBound))"
                         + (note.map { " (\($0))" } ?? "") + ", got '\(text)'")
    }
    return value
}

/// The value of whole-number option `--name` (nil when not given), which must lie in `range`;
/// anything else is a ``UsageError`` naming the option and its range on one line: "--jobs takes
/// a whole number from 1 to 1024, got '0'".
func wholeNumberOption(_ args: ParsedArguments, _ name: String, in range: ClosedRange<Int>, note: String? = nil) throws -> Int? {
    guard let text = args.value(name) else { return nil }
    guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
        throw UsageError(message: "--\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound)"
                         + (note.map { " (\($0))" } ?? "") + ", got '\(text)'")
    }
    return value
}

/// The longest duration any seconds option accepts (a day): longer waits, polls or minimum
/// durations are mistakes, and far larger ones overflow the time arithmetic they feed.
let longestOptionSeconds = 86_400.0

/// `-o/--output PLACEHOLDER`: the file a command writes (every command that writes a file
/// takes it, spelt the same way; `-` is standard output).
func outputOption(_ placeholder: String = "FILE", help: String) -> OptionSpec {
    OptionSpec(name: "output", value: placeholder, help: help, short: "o")
}
