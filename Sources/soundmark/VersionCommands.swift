import Foundation
import Soundmark

/// `--versions` of identify and scan: match other performances of the catalogued songs.
let versionsOption = OptionSpec(name: "versions", value: nil,
                                help: "match other performances of the songs (another tempo, key, instruments) by chroma alignment, not only the recordings; needs the catalog's version features (catalog add, or catalog upgrade)")

/// The version matcher over the references of `catalogPath` that have version features, and those references.
func loadVersionMatcher(_ args: ParsedArguments) throws -> (VersionMatcher, [ReferenceInfo]) {
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    let features = try catalog.versionFeatures()
    let infos = try catalog.references().filter { features[$0.item.id] != nil }
    if infos.isEmpty {
        throw CommandError(message: "the catalog holds no version features; run 'soundmark catalog upgrade --catalog \(try required(args, "catalog"))' to compute them")
    }
    var tuning = VersionTuning()
    if let v = try numberOption(args, "threshold", "a confidence", in: 0...1) { tuning.threshold = v }
    return (VersionMatcher(references: infos.map { features[$0.item.id]! }, tuning: tuning), infos)
}

func versionMatchJSON(_ m: VersionMatch, _ info: ReferenceInfo) -> JSONOutput {
    .object([("reference", info.item.json), ("matchOffset", .seconds(m.referenceStart)),
             ("frequencySkew", .number(m.frequencySkew, decimals: 4)),
             ("confidence", .number(m.confidence, decimals: 4)), ("transposition", .integer(m.transposition)),
             ("timeScale", .number(m.timeScale, decimals: 3)), ("referenceStart", .seconds(m.referenceStart)),
             ("referenceEnd", .seconds(m.referenceEnd)), ("distance", .number(m.distance, decimals: 4)),
             ("score", .number(m.score, decimals: 3))])
}

/// Runs `body` on the chroma of every SOURCE of `identify/scan --versions` (decoded at the
/// fingerprint's rate), in order, flushing after each. A source that fails is named in a
/// one-line error and the others go on; with several sources a closing line counts the
/// failures (`noun`: "clip", "recording").
/// - Parameter body: writes the source's answer; returns whether it found anything.
/// - Returns: the exit code: ``Exit/error`` when every source failed, ``Exit/ok`` when every
///   one found something, else ``Exit/none``.
private func forEachVersionSource(_ args: ParsedArguments, noun: String,
                                  _ body: (_ source: String, _ chroma: ChromaSequence, _ several: Bool) throws -> Bool) throws -> Int32 {
    let stream = try streamChoice(args), verbose = args.has("verbose")
    let sources = args.positional
    var failures = 0, empty = 0
    for source in sources {
        do {
            let decoder = try openMedia(source, sampleRate: Configuration().sampleRate, stream, verbose: verbose)
            if try !body(source, try ChromaAccumulator.chroma(decoding: decoder), sources.count > 1) { empty += 1 }
        } catch {
            printError(describe(error))
            failures += 1
        }
        fflush(stdout)
    }
    if failures > 0 && sources.count > 1 { printError("\(failures) of \(sources.count) \(noun)(s) failed") }
    return failures == sources.count ? Exit.error : (failures + empty == 0 ? Exit.ok : Exit.none)
}

func runIdentifyVersions(_ args: ParsedArguments, format: String) throws -> Int32 {
    let (matcher, infos) = try loadVersionMatcher(args)
    return try forEachVersionSource(args, noun: "clip") { source, chroma, several in
        let match = matcher.identify(chroma)
        if format == "json" {
            print(versionedJSON([("source", .string(source)),
                                 ("matches", .array(match.map { [versionMatchJSON($0, infos[$0.referenceIndex])] } ?? []))]).text)
        } else {
            if several { print("# \(source)") }
            if let m = match {
                print(String(format: "%@  at %@  transposition %+d  timeScale %.3f  confidence %.2f", infos[m.referenceIndex].item.id,
                             formatTimestamp(m.referenceStart), m.transposition, m.timeScale, m.confidence))
            } else {
                print("no match")
            }
        }
        return match != nil
    }
}

func runScanVersions(_ args: ParsedArguments, format: String) throws -> Int32 {
    let formats = ["setlist", "json", "csv", "srt", "vtt", "ass", "audacity", "cue"]
    guard formats.contains(format) else {
        throw UsageError(message: "scan --versions writes --format \(formats.joined(separator: ", ")), not \(format)")
    }
    let (matcher, infos) = try loadVersionMatcher(args)
    return try forEachVersionSource(args, noun: "recording") { source, chroma, several in
        let segments = matcher.scan(chroma, referenceDurations: infos.map(\.duration))
        if format == "json" {
            var members: [(String, JSONOutput)] = [("source", .string(source))]
            members.append(("segments", .array(segments.map { s in
                .object([("start", .seconds(s.start)), ("end", .seconds(s.end)), ("reference", infos[s.match.referenceIndex].item.json),
                         ("referenceStart", .seconds(s.referenceStart)), ("referenceEnd", .seconds(s.referenceEnd)),
                         ("confidence", .number(s.match.confidence, decimals: 4)),
                         ("frequencySkew", .number(s.match.frequencySkew, decimals: 4)),
                         ("transposition", .integer(s.match.transposition)), ("timeScale", .number(s.timeScale, decimals: 3)),
                         ("windows", .integer(s.windows))])
            })))
            print(versionedJSON(members).text)
        } else if format == "setlist" {
            if several { print("# \(source)") }
            for s in segments {
                print(String(format: "%@  %@–%@  transposition %+d  timeScale %.3f  confidence %.2f", infos[s.match.referenceIndex].item.id,
                             formatTimestamp(s.start), formatTimestamp(s.end), s.match.transposition, s.timeScale, s.match.confidence))
            }
        } else {
            print(versionTimeline(segments, infos: infos, source: source, format: format), terminator: "")
        }
        return !segments.isEmpty
    }
}

/// The segments of `scan --versions` in a timeline format, as `scan` writes its segments: `csv`
/// (one row a segment: start, end, id, title, artist, referenceStart, referenceEnd, confidence,
/// frequencySkew, timeScale, transposition in semitones; seconds with 3 decimals), `srt`, `vtt`,
/// `ass` and `audacity` (one cue a segment, the reference's byline), `cue` (one track a segment,
/// a stretch before the first one an unidentified track).
func versionTimeline(_ segments: [VersionSegment], infos: [ReferenceInfo], source: String, format: String) -> String {
    let items = segments.map { infos[$0.match.referenceIndex].item }
    let cues = zip(segments, items).map { s, item in Cue(start: s.start, end: s.end, text: item.byline(), kind: .plain) }
    switch format {
    case "csv":
        let rows = zip(segments, items).map { s, item in
            [String(format: "%.3f", s.start), String(format: "%.3f", s.end), item.id, item.title ?? "", item.artist ?? "",
             String(format: "%.3f", s.referenceStart), String(format: "%.3f", s.referenceEnd),
             String(format: "%.4f", s.match.confidence), String(format: "%.4f", s.match.frequencySkew),
             String(format: "%.3f", s.timeScale), "\(s.match.transposition)"]
        }
        return CueWriter.csv(header: ["start", "end", "id", "title", "artist", "referenceStart", "referenceEnd", "confidence",
                                      "frequencySkew", "timeScale", "transposition"], rows: rows)
    case "srt", "vtt", "ass", "audacity": return subtitleFile(format, cues, source: source)
    default:
        let file = source == "-" ? "stdin.wav" : (source as NSString).lastPathComponent
        let tracks = zip(segments, items).map { s, item in
            CueSheetTrack(start: s.start, title: item.displayTitle, performer: MediaItem.nonBlank(item.artist), end: s.end)
        }
        return CueWriter.cueSheet(file: file, tracks: tracks, gapTitle: CueWriter.unidentifiedTitle)
    }
}

/// `catalog upgrade`'s second step: version features for the references that lack them,
/// computed from their source files where these still exist; the others are named, each
/// with why (`'ID' (source file 'PATH' is missing)`).
func computeMissingVersionFeatures(_ catalog: Catalog, path: String) throws -> (computed: Int, lacking: [String]) {
    let have = try catalog.versionFeatures()
    var computed = 0, lacking: [String] = []
    for info in try catalog.references() where have[info.item.id] == nil {
        guard let source = info.source else {
            lacking.append("'\(info.item.id)' (added from standard input: no source file)")
            continue
        }
        if let missing = missingSource(source) {
            lacking.append("'\(info.item.id)' (source file \(missing))")
            continue
        }
        do {
            let decoder = try MediaDecoder(source: source, sampleRate: catalog.configuration.sampleRate) { warn($0) }
            try catalog.setVersionFeatures(try ChromaAccumulator.chroma(decoding: decoder, configuration: catalog.configuration),
                                           forReference: info.item.id)
            computed += 1
        } catch {
            printError("\(info.item.id): version features not computed (\(describe(error)))")
            lacking.append("'\(info.item.id)' (source file '\(source)' unreadable)")
        }
    }
    return (computed, lacking)
}
