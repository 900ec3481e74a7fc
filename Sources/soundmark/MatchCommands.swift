import Foundation
import Soundmark

func loadMatcher(_ args: ParsedArguments) throws -> Matcher {
    let catalog = try Catalog(path: try required(args, "catalog"), readOnly: true)
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
    var decoder: MediaDecoder? = nil
    let signatures: [Signature]
    var matches: [MatchedMediaItem]
    if let input = try signatureInput(source) {
        // A signature file as the query (see SignatureCommands.swift).
        (signatures, matches) = try matchSignatureInput(input, source: source, matcher: matcher, catalogPath: try required(args, "catalog"))
    } else {
        let media = try openMedia(source, sampleRate: matcher.index.configuration.sampleRate, try streamChoice(args),
                                  verbose: args.has("verbose"))
        decoder = media
        signatures = try SignatureGenerator.signatures(decoding: media, configuration: matcher.index.configuration, role: .query,
                                                       framings: Matcher.framings)
        matches = matcher.matchedItems(for: signatures[0], reframed: Array(signatures.dropFirst()))
        matches = try addingShazamOnlyMatches(matches, source: source, matcher: matcher, catalogPath: try required(args, "catalog"))
    }
    let signature = signatures[0]
    if signature.duration < 2 {
        warn(String(format: "%@: only %.1f s of audio; clips of 5 s or more match reliably", source, signature.duration))
    }
    if matcher.index.references.isEmpty { warn("the catalog holds no references") }
    if matches.isEmpty, let decoder, let note = otherStreamsNote(source, decoder) { warn(note) }
    if format == "json" {
        print(JSONOutput.object([("matches", .array(matches.map(\.json)))]).text)
    } else if matches.isEmpty {
        print("no match")
    } else {
        for (i, m) in matches.enumerated() {
            let who = m.item.byline()
            var line = String(format: "%d. %@ (%@) at %@, skew %+.1f %%, confidence %.2f", i + 1, who, m.item.id,
                              formatTimestamp(m.matchOffset), m.frequencySkew * 100, m.confidence)
            if abs(m.timeScale - (1 + m.frequencySkew)) > 1e-9 {
                line += String(format: " (%@), time scale %.3f", m.frequencySkew == 0 ? "tempo only" : "pitch only", m.timeScale)
            }
            let others = m.ambiguous.filter { $0.id != m.item.id || $0.matchOffset != m.matchOffset }
            if !others.isEmpty {
                line += ", indistinguishable from " + others.map { "\($0.id) at \(formatTimestamp($0.matchOffset))" }.joined(separator: ", ")
            }
            print(line)
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
                frequency skew (0.05: the clip plays 5 % higher), time scale (reference seconds per clip second:
                1.05 with skew 0.05 is a speed change, with skew 0 a tempo-only change; skew with time scale 1 is
                a pitch-only change) and confidence (0…1). JSON:
                {"matches":[{"reference":{…},"matchOffset":s,"predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c,"timeScale":t,
                "alignedLandmarks":n,"queryStart":s,"queryEnd":s,"referenceStart":s,"referenceEnd":s}]}: queryStart/queryEnd are
                the matched stretch of the clip, referenceStart/referenceEnd the same stretch in the reference;
                matches the clip cannot tell apart (shared material, a repeated passage) carry
                "ambiguous":[{"id","matchOffset"}…], every member of their group.
                Exit code 0 with a match, 1 with none, 2 on error.
                """,
                options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)"),
                          thresholdOption, streamOption, languageOption, verboseStreamOption],
                positional: 1...1, run: runIdentify),
]

/// Cue text without markup tags (`<i>…</i>`, `<font …>`) and on one line, for formats that have no markup.
func plainText(_ text: String) -> String {
    var out = ""
    var inTag = false
    for c in text {
        if c == "<" { inTag = true; continue }
        if c == ">" && inTag { inTag = false; continue }
        if !inTag { out.append(c == "\n" ? " " : c) }
    }
    return out
}

/// `--min-duration SECONDS` of scan and monitor.
let minimumDurationOption = OptionSpec(name: "min-duration", value: "SECONDS",
                                       help: "drop segments shorter than this, for fewer, surer segments (default 2: a 3 s spot is kept)")

/// Scan options from the command line (`--min-duration`).
func parseScanOptions(_ args: ParsedArguments) throws -> ScanOptions {
    var options = ScanOptions()
    if let t = args.value("min-duration") {
        guard let v = Double(t), v >= 0, v.isFinite, v < 1e9 else {
            throw UsageError(message: "--min-duration takes seconds (≥ 0), got '\(t)'")
        }
        options.minimumDuration = v
    }
    return options
}

let scanFormats = ["setlist", "json", "csv", "srt", "vtt", "ass", "cue", "audacity"]

/// Decodes and scans a recording; returns the segments, the recording's playback duration in
/// seconds and the decoder (for its streams).
func scanRecording(_ source: String, index: CatalogIndex, stream: StreamChoice, options: ScanOptions = ScanOptions(),
                   verbose: Bool) throws -> (segments: [Segment], duration: Double, decoder: MediaDecoder?) {
    if let input = try signatureInput(source) {
        // A signature file as the recording (see SignatureCommands.swift).
        let (segments, duration) = try scanSignatureInput(input, source: source, index: index, options: options)
        return (segments, duration, nil)
    }
    let decoder = try openMedia(source, sampleRate: index.configuration.sampleRate, stream, verbose: verbose)
    let scanner = Scanner(index: index, options: options)
    let generator = SignatureGenerator(configuration: index.configuration, role: .reference)
    while let chunk = try decoder.nextChunk() {
        chunk.samples.withUnsafeBufferPointer { p in generator.append(p) { scanner.consume($0) } }
    }
    generator.finish { scanner.consume($0) }
    // Times are on the media's playback time line (see MediaDecoder); so is the duration.
    // Segments end with the audio (the samples analysed, silence for a late start included).
    let duration = decoder.playbackDuration ?? Double(generator.sampleCount) / Double(index.configuration.sampleRate)
    let seconds = Double(generator.sampleCount) / Double(index.configuration.sampleRate)
    let segments = scanner.finish(recordingDuration: seconds)
    return (segments, duration, decoder)
}

func runScan(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "setlist"
    guard scanFormats.contains(format) else {
        throw UsageError(message: "--format is one of \(scanFormats.joined(separator: ", ")), got '\(format)'")
    }
    let cuesMode = args.value("cues")
    guard cuesMode == nil || cuesMode == "annotations" || cuesMode == "segments" else {
        throw UsageError(message: "--cues is annotations or segments, got '\(cuesMode!)'")
    }
    let catalog = try Catalog(path: try required(args, "catalog"), readOnly: true)
    let index = try catalog.loadIndex()
    let source = args.positional[0]
    let (segments, duration, decoder) = try scanRecording(source, index: index, stream: try streamChoice(args),
                                                          options: try parseScanOptions(args), verbose: args.has("verbose"))
    if segments.isEmpty, let decoder, let note = otherStreamsNote(source, decoder) { warn(note) }
    let map = AlignmentMap(segments: segments, recordingDuration: duration)

    // Annotations of every reference found, mapped through the alignment map.
    var mapped: [(id: String, cue: Cue)] = []
    for ref in Set(segments.map(\.referenceIndex)).sorted() {
        let id = index.references[ref].item.id
        let annotations = try catalog.annotations(id: id)
        guard !annotations.isEmpty else { continue }
        let result = map.cues(for: annotations, referenceIndex: ref)
        mapped += result.cues.map { (id, $0) }
        if args.has("verbose") {
            for a in result.dropped {
                warn(String(format: "%@: annotation %.3f–%.3f s not aired, dropped: %@", id, a.start, a.end,
                            a.text.replacingOccurrences(of: "\n", with: " / ")))
            }
        }
    }
    mapped.sort { ($0.cue.start, $0.cue.end) < ($1.cue.start, $1.cue.end) }
    let useAnnotations = cuesMode.map { $0 == "annotations" } ?? !mapped.isEmpty
    let cues = useAnnotations ? mapped.map(\.cue)
        : segments.map { Cue(start: $0.start, end: $0.end, text: $0.item.byline(titleFallback: $0.item.id)) }
    if args.has("verbose") {
        printError(String(format: "%@: %.1f s, %d segment(s), %d mapped annotation(s)", source, duration, segments.count, mapped.count))
    }

    switch format {
    case "json":
        let recording = JSONOutput.object([("source", .string(source)), ("duration", .seconds(duration))])
        let cueJSON = mapped.map { m in
            JSONOutput.object([("reference", .string(m.id)), ("start", .seconds(m.cue.start)), ("end", .seconds(m.cue.end)),
                               ("text", .string(m.cue.text))])
        }
        print(JSONOutput.object([("recording", recording), ("segments", .array(segments.map(\.json))),
                                 ("cues", .array(cueJSON))]).text)
    case "csv":
        let rows = segments.map { s in
            [String(format: "%.3f", s.start), String(format: "%.3f", s.end), s.item.id, s.item.title ?? "", s.item.artist ?? "",
             String(format: "%.3f", s.referenceStart), String(format: "%.3f", s.referenceEnd),
             String(format: "%.4f", s.confidence), String(format: "%.4f", (s.frequencySkew * 10000).rounded() / 10000 + 0)]
        }
        print(CueWriter.csv(header: ["start", "end", "id", "title", "artist", "referenceStart", "referenceEnd", "confidence", "frequencySkew"], rows: rows), terminator: "")
    case "srt": print(CueWriter.srt(cues), terminator: "")
    case "vtt": print(CueWriter.webVTT(cues), terminator: "")
    case "ass": print(CueWriter.ass(cues), terminator: "")
    case "audacity": print(CueWriter.audacityLabels(cues.map { Cue(start: $0.start, end: $0.end, text: plainText($0.text)) }), terminator: "")
    case "cue":
        let file = source == "-" ? "stdin.wav" : (source as NSString).lastPathComponent
        // An unidentified lead-in gets a track of its own and a stretch between segments is the
        // next segment's pregap, so that split tools break at every segment start.
        let tracks = useAnnotations ? cues.map { CueSheetTrack(start: $0.start, title: plainText($0.text), performer: nil) }
            : segments.map { CueSheetTrack(start: $0.start, title: $0.item.title ?? $0.item.id, performer: $0.item.artist, end: $0.end) }
        print(CueWriter.cueSheet(file: file, tracks: tracks, gapTitle: useAnnotations ? "(no cue)" : CueWriter.unidentifiedTitle),
              terminator: "")
    default:
        for (i, s) in segments.enumerated() {
            let who = s.item.byline()
            let skew = abs(s.frequencySkew) >= 0.005 ? String(format: "  [%+.1f %%]", s.frequencySkew * 100) : ""
            let speed = abs(s.timeScale - 1 - s.frequencySkew) >= 0.005 ? String(format: "  [tempo %+.1f %%]", (s.timeScale - 1) * 100) : ""
            print(String(format: "%2d. %@ – %@  %@ (%@ from %@)%@%@", i + 1, formatClock(s.start), formatClock(s.end), who, s.item.id,
                         formatClock(s.referenceStart), skew, speed))
            for a in s.alternatives {
                print("      \(formatClock(a.start)) – \(formatClock(a.end)) is also \(a.item.id) (shared material)")
            }
        }
        if segments.isEmpty { print("no catalog audio found") }
    }
    return segments.isEmpty ? Exit.none : Exit.ok
}

extension Segment {
    /// The segment as JSON (bench contract: start, end, reference, referenceStart, referenceEnd, confidence, frequencySkew).
    var json: JSONOutput {
        .object([("start", .seconds(start)), ("end", .seconds(end)), ("reference", item.json),
                 ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd)),
                 ("confidence", .number(confidence, decimals: 4)), ("frequencySkew", .number(frequencySkew, decimals: 4)),
                 ("hits", .integer(hits)),
                 ("alternatives", .array(alternatives.map { .object([("reference", $0.item.json), ("start", .seconds($0.start)),
                                                                     ("end", .seconds($0.end))]) })),
                 ("pieces", .array([.object([("start", .seconds(start)), ("end", .seconds(end)),
                                             ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd)),
                                             ("speed", .number(timeScale, decimals: 5))])]))])
    }
}

let scanCommand = CommandSpec(words: ["scan"], usage: "RECORDING",
    summary: "find catalog audio in a long recording and write its set-list",
    details: """
    Slides the matcher over the whole recording (file, URL or -) and writes one segment per stretch of catalog
    audio: start and end in the recording, the reference, referenceStart/referenceEnd in the reference (s),
    confidence, frequencySkew (pitch) and speed (time scale). Crossfades, repeats and seeks start new
    segments; a key-lock tempo change or a pause the reference shares does not. Recordings have no
    length limit.
    Annotations of the references found are mapped into recording time through the segments: a cue cut
    by a jump is clipped to the part that aired, a cue whose stretch was removed is dropped, a replayed
    stretch replays its cues. Exit code 0 when something was found, 1 when nothing was, 2 on error.
    """,
    options: [catalogOption,
              OptionSpec(name: "format", value: scanFormats.joined(separator: "|"), help: "output format (default: setlist)"),
              minimumDurationOption,
              OptionSpec(name: "cues", value: "annotations|segments",
                         help: "cues of srt/vtt/ass/cue/audacity: the references' annotations mapped into recording time, or one per segment (default: annotations when any matched reference has them)"),
              OptionSpec(name: "verbose", value: nil, help: "name the audio stream used, report dropped annotations and totals on stderr"),
              streamOption, languageOption],
    positional: 1...1, run: runScan)
