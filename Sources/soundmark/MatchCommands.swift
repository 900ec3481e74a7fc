import Foundation
import Soundmark

func loadMatcher(_ args: ParsedArguments) throws -> Matcher {
    let catalog = try Catalog(path: try required(args, "catalog"))
    var options = MatchOptions()
    if let t = args.value("threshold") {
        guard let v = Double(t), v >= 0, v <= 1 else { throw UsageError(message: "--threshold takes a number in 0…1, got '\(t)'") }
        options.threshold = v
    }
    return Matcher(index: try catalog.loadIndex(), options: options)
}

func runIdentify(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "text"
    guard ["text", "json"].contains(format) else { throw UsageError(message: "--format is text or json, got '\(format)'") }
    let matcher = try loadMatcher(args)
    let source = args.positional[0]
    let (signature, _) = try SignatureGenerator.signature(ofMedia: source, configuration: matcher.index.configuration,
                                                          streamIndex: try streamIndex(args)) { warn($0) }
    let matches = matcher.matchedItems(for: signature)
    if format == "json" {
        print(JSONOutput.object([("matches", .array(matches.map(\.json)))]).text)
    } else if matches.isEmpty {
        print("no match")
    } else {
        for (i, m) in matches.enumerated() {
            let who = [m.item.title, m.item.artist].compactMap { $0 }.joined(separator: " – ")
            print(String(format: "%d. %@ (%@) at %@, skew %+.1f %%, confidence %.2f", i + 1, who, m.item.id,
                         formatTimestamp(m.matchOffset), m.frequencySkew * 100, m.confidence))
        }
    }
    return matches.isEmpty ? Exit.none : Exit.ok
}

let thresholdOption = OptionSpec(name: "threshold", value: "C",
    help: "minimum confidence 0…1 (default 0.5): audio that is not in the catalog (other music, speech, noise, silence) scores below 0.5, so 0.5 means 'report only real matches'; lower it to see weak candidates")

let matchCommands: [CommandSpec] = [
    CommandSpec(words: ["identify"], usage: "CLIP", summary: "match a short clip (file, URL or -) against the catalog",
                details: """
                Prints the matching references, best first: reference time at the clip's start (matchOffset, s),
                frequency skew (0.05: the clip plays 5 % faster/higher) and confidence (0…1). JSON:
                {"matches":[{"reference":{…},"matchOffset":s,"predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c}]}.
                Exit code 0 with a match, 1 with none, 2 on error.
                """,
                options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)"),
                          thresholdOption, streamOption],
                positional: 1...1, run: runIdentify),
]
