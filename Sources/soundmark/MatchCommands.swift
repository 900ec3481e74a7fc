import Foundation
import Soundmark

func loadMatcher(_ args: ParsedArguments) throws -> Matcher {
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    var options = MatchOptions()
    if let v = try numberOption(args, "threshold", "a confidence", in: 0...1) { options.threshold = v }
    return Matcher(index: try catalog.loadIndex(), options: options)
}

func runIdentify(_ args: ParsedArguments) throws -> Int32 {
    keepFreedMemoryForReuse()
    let format = args.value("format") ?? "text"
    guard ["text", "json"].contains(format) else { throw UsageError(message: "--format is text or json, got '\(format)'") }
    if args.has("versions") { return try runIdentifyVersions(args, format: format) }
    let matcher = try loadMatcher(args)
    let sources = args.positional
    let catalogPath = try required(args, "catalog")
    let stream = try streamChoice(args), verbose = args.has("verbose")
    // Clips are matched --jobs at a time against the one index; reports in argument order.
    let digests = try LibraryTarget.from(args, input: sources[0]) != nil
    let work = OrderedWork(count: sources.count, jobs: min(try jobCount(args), sources.count)) { i in
        try identifyClip(sources[i], matcher: matcher, stream: stream, verbose: verbose, digest: digests, catalogPath: catalogPath)
    }
    guard sources.count > 1 else {
        let result = try work.take(0)
        try recordIdentified(sources[0], result, matcher: matcher, args: args)
        return try reportIdentify(sources[0], result, matcher: matcher, format: format, several: false) ? Exit.ok : Exit.none
    }
    var failures = 0, unmatched = 0
    for (i, source) in sources.enumerated() {
        do {
            let result = try work.take(i)
            try recordIdentified(source, result, matcher: matcher, args: args)
            if try !reportIdentify(source, result, matcher: matcher, format: format, several: true) { unmatched += 1 }
        } catch {
            printError(describe(error))
            failures += 1
        }
        fflush(stdout)
    }
    if failures > 0 { printError("\(failures) of \(sources.count) clip(s) failed") }
    return failures == sources.count ? Exit.error : (failures + unmatched == 0 ? Exit.ok : Exit.none)
}

/// One identified clip: its query signature, its matches, its decoder and the digest of its
/// samples (when a library records it).
typealias IdentifiedClip = (signature: Signature, matches: [MatchedMediaItem], decoder: MediaDecoder?, digest: AudioDigest?)

/// Decodes and matches one clip (``ClipIdentification``, with the matches of imported Shazam
/// references), or reads a signature file (see SignatureCommands.swift: no decoder then); with
/// `digest`, also takes the digest of its samples (the library's recording key).
func identifyClip(_ source: String, matcher: Matcher, stream: StreamChoice, verbose: Bool, digest wanted: Bool = false,
                  catalogPath: String) throws -> IdentifiedClip {
    if let input = try signatureInput(source) {
        let (signatures, matches) = try matchSignatureInput(input, source: source, matcher: matcher, catalogPath: catalogPath)
        return (signatures[0], matches, nil, nil)
    }
    let decoder = try openMedia(source, sampleRate: matcher.index.configuration.sampleRate, stream, verbose: verbose)
    let clip = try ClipIdentification(matcher: matcher).run(decoder: decoder, digest: wanted)
    let matches = try addingShazamOnlyMatches(clip.matches, source: source, matcher: matcher, catalogPath: catalogPath)
    return (clip.signature, matches, decoder, clip.digest)
}

/// Records the best match of an identified clip (none: the recording with no airings) in the library of `--library`.
func recordIdentified(_ source: String, _ result: IdentifiedClip, matcher: Matcher, args: ParsedArguments) throws {
    guard let target = try LibraryTarget.from(args, input: source), let digest = result.digest else { return }
    let library = try target.open()
    let durations = Dictionary(matcher.index.references.map { ($0.item.id, $0.duration) }, uniquingKeysWith: { a, _ in a })
    let airings = result.matches.prefix(1).map { m in
        Airing(reference: m.item.id, title: m.item.title, artist: m.item.artist, referenceDuration: durations[m.item.id],
               start: m.queryStart, end: m.queryEnd, referenceStart: m.referenceStart, referenceEnd: m.referenceEnd,
               confidence: m.confidence, frequencySkew: m.frequencySkew, timeScale: m.timeScale)
    }
    try target.record(library, name: source, digest: digest, duration: result.decoder?.playbackDuration ?? result.signature.duration,
                      airings: airings, verbose: args.has("verbose"))
}

/// Writes the matches of one clip; with `several`, text gets a "# CLIP" line first (JSON is the
/// same object either way, naming its `source`). - Returns: whether it matched.
func reportIdentify(_ source: String, _ result: IdentifiedClip,
                    matcher: Matcher, format: String, several: Bool) throws -> Bool {
    let (signature, matches, decoder) = (result.signature, result.matches, result.decoder)
    if signature.duration < 2 && decoder?.isTruncated != true { // a truncated file's warning said how much there is
        warn(String(format: "%@: only %.1f s of audio; clips of 5 s or more match reliably", source, signature.duration), about: source)
    }
    if matcher.index.references.isEmpty { warn("the catalog holds no references", about: source) }
    if matches.isEmpty, let decoder, let note = otherStreamsNote(source, decoder) { warn(note, about: source) }
    let warnings = InputWarnings.shared.take(source)
    if format == "json" {
        // One clip or several: the same object, one per clip (several: one per line).
        print(JSONOutput.object([("version", versionJSON), ("source", .string(source)), ("matches", .array(matches.map(\.json)))],
                                warnings: warnings).text)
        return !matches.isEmpty
    }
    if several { print("# \(source)") }
    if matches.isEmpty {
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
    return !matches.isEmpty
}

let thresholdOption = OptionSpec(name: "threshold", value: "C",
    help: "minimum confidence 0…1 (default 0.5): audio that is not in the catalog (other music, speech, noise, silence) scores below 0.5, so 0.5 means 'report only real matches'; lower it to see weak candidates")

let matchCommands: [CommandSpec] = [
    CommandSpec(words: ["identify"], usage: "CLIP...", summary: "match short clips (files, URLs or -) against the catalog",
                details: """
                Prints the matching references, best first: reference time at the clip's start (matchOffset, s),
                frequency skew (0.05: the clip plays 5 % higher), time scale (reference seconds per clip second:
                1.05 with skew 0.05 is a speed change, with skew 0 a tempo-only change; skew with time scale 1 is
                a pitch-only change) and confidence (0…1). JSON:
                {"version":{"program","format"},"source":CLIP,"matches":[{"reference":{"id","title",…},"matchOffset":s,
                "predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c,"timeScale":t,"alignedLandmarks":n,
                "queryStart":s,"queryEnd":s,"referenceStart":s,"referenceEnd":s}]}: queryStart/queryEnd are
                the matched stretch of the clip, referenceStart/referenceEnd the same stretch in the reference;
                matches the clip cannot tell apart (shared material, a repeated passage) carry
                "ambiguous":[{"id","matchOffset"}…], every member of their group. A clip read with warnings (a
                truncated file, corrupt data skipped, under 2 s of audio) also has "warnings":["…"], each said on stderr too.
                Exit code 0 with a match, 1 with none, 2 on error.
                Several clips are matched in one process, --jobs at a time, reported in argument order (text: a
                "# CLIP" line before each; json: one object per line, the same object as for one clip); exit 0 when
                every clip matched, 1 when some did not or failed, 2 when all failed.
                """,
                options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)"),
                          thresholdOption, streamOption, languageOption, verboseStreamOption,
                          libraryRecordOption, librarySourceOption, startTimeOption, jobsOption, versionsOption],
                positional: 1...Int.max, run: runIdentify),
]

/// `--min-duration SECONDS` of scan and monitor.
let minimumDurationOption = OptionSpec(name: "min-duration", value: "SECONDS",
                                       help: "drop segments shorter than this, for fewer, surer segments (0…86400, default 2: a 3 s spot is kept); a complete play of a shorter reference is kept")

/// `--false-alarms-per-hour RATE` of scan and monitor.
let falseAlarmsOption = OptionSpec(name: "false-alarms-per-hour", value: "RATE",
                                   help: "report a play only when chance would give a line as strong at most this often per hour of audio holding none of the catalog (1e-9…1000, default 0.001: one false play in 1,000 hours; raise it to find weaker plays)")

/// Scan options from the command line (`--min-duration`, `--false-alarms-per-hour`).
func parseScanOptions(_ args: ParsedArguments) throws -> ScanOptions {
    var options = ScanOptions()
    if let v = try numberOption(args, "min-duration", "seconds", in: 0...longestOptionSeconds) { options.minimumDuration = v }
    if let v = try numberOption(args, "false-alarms-per-hour", "a rate per hour", in: 1e-9...1000) { options.falseAlarmsPerHour = v }
    return options
}

let scanFormats = ["setlist", "json", "csv", "srt", "vtt", "ass", "cue", "audacity", "html"]

/// Decodes and scans a recording (``RecordingScan``, or a signature file); returns the segments
/// (with the plays of imported Shazam references), the partial material, the recording's
/// playback duration in seconds and the decoder (for its streams). `onSamples` and `onAudio`
/// see every decoded chunk (mono, the fingerprint's rate), e.g. for the library's digest and a
/// marker detector.
func scanInput(_ source: String, index: CatalogIndex, stream: StreamChoice, options: ScanOptions = ScanOptions(),
                   verbose: Bool, onSamples: ((UnsafeBufferPointer<Float>) -> Void)? = nil,
                   onAudio: (([Float]) -> Void)? = nil,
                   shazam: ShazamScanReferences? = nil) throws -> (segments: [Segment], partial: [PartialMaterial], duration: Double,
                                                                   decoder: MediaDecoder?) {
    if let input = try signatureInput(source) {
        // A signature file as the recording (see SignatureCommands.swift).
        let (segments, duration) = try scanSignatureInput(input, source: source, index: index, options: options, shazam: shazam)
        return (segments, [], duration, nil)
    }
    let decoder = try openMedia(source, sampleRate: index.configuration.sampleRate, stream, verbose: verbose)
    let scanned = try RecordingScan(index: index, options: options).run(decoder: decoder, onSamples: onSamples, onAudio: onAudio)
    var segments = scanned.segments
    // Imported Shazam references (no postings) through the recording's Shazam peaks.
    if let shazam { segments = try shazam.adding(to: segments, source: source, stream: stream) }
    return (segments, scanned.partial, scanned.duration, decoder)
}

func runScan(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "setlist"
    guard scanFormats.contains(format) else {
        throw UsageError(message: "--format is one of \(scanFormats.joined(separator: ", ")), got '\(format)'")
    }
    if args.has("versions") { return try runScanVersions(args, format: format) }
    let cuesMode = args.value("cues")
    guard cuesMode == nil || cuesMode == "annotations" || cuesMode == "segments" else {
        throw UsageError(message: "--cues is annotations or segments, got '\(cuesMode!)'")
    }
    let cueFormats = ["srt", "vtt", "ass", "cue", "audacity", "json"]
    if cuesMode != nil && !cueFormats.contains(format) {
        // It changed nothing there: say so rather than ignore it.
        throw UsageError(message: "--cues chooses the cues of --format \(cueFormats.joined(separator: ", ")), not of \(format)")
    }
    let sources = args.positional
    if sources.count > 1 && !["setlist", "json"].contains(format) {
        throw UsageError(message: "--format \(format) writes one recording; scan several recordings with --format setlist or json (or one call per recording)")
    }
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    let index = try catalog.loadIndex()
    let stream = try streamChoice(args), options = try parseScanOptions(args), verbose = args.has("verbose")
    // The library (when one records the scans) knows a recording by the digest of its samples;
    // markers are read alongside the fingerprint when the catalog records some (or --marker).
    let digests = try LibraryTarget.from(args, input: sources[0], labelsOnly: format == "html").map { !$0.path.isEmpty } ?? false
    let markerReaders = try sources.map { _ in try MarkerReader(args, catalog: catalog, sampleRate: index.configuration.sampleRate) }
    let shazam = try ShazamScanReferences(catalog: catalog, index: index, options: options)
    // Recordings are scanned --jobs at a time; their reports are written in argument order.
    let scans = OrderedWork(count: sources.count, jobs: min(try jobCount(args), sources.count)) { i -> ScannedRecording in
        var digest = AudioDigest()
        let reader = markerReaders[i]
        let (fingerprinted, partial, duration, decoder) = try scanInput(sources[i], index: index, stream: stream, options: options, verbose: verbose,
                                                                   onSamples: digests ? { digest.append($0) } : nil,
                                                                   onAudio: reader.map { r in { r.consume($0) } }, shazam: shazam)
        let marked = reader?.finish(fingerprinted, index: index)
        return ScannedRecording(segments: marked?.map(\.segment) ?? fingerprinted, partial: partial, duration: duration,
                                decoder: decoder, digest: digests ? digest : nil, marked: marked)
    }
    guard sources.count > 1 else {
        let result = try scans.take(0)
        return try reportScan(sources[0], result, catalog: catalog, index: index, args: args, format: format, cuesMode: cuesMode)
            ? Exit.ok : Exit.none
    }
    var failures = 0, found = false
    for (i, source) in sources.enumerated() {
        do {
            let result = try scans.take(i)
            if format == "setlist" { print("# \(source)") }
            found = try reportScan(source, result, catalog: catalog, index: index, args: args, format: format, cuesMode: cuesMode) || found
        } catch {
            printError(describe(error))
            failures += 1
        }
        fflush(stdout)
    }
    if failures > 0 { printError("\(failures) of \(sources.count) recording(s) failed") }
    return failures == sources.count ? Exit.error : (failures == 0 && found ? Exit.ok : Exit.none)
}

/// One scanned recording: its segments (refined by audio markers when they were read), its
/// playback duration in seconds, its decoder, the digest of its samples (when a library records
/// it) and each segment's marker (when markers were read).
struct ScannedRecording {
    var segments: [Segment]
    /// Stretches of partial material (never plays; see ``PartialMaterial``).
    var partial: [PartialMaterial] = []
    var duration: Double
    var decoder: MediaDecoder?
    var digest: AudioDigest?
    var marked: [(segment: Segment, marker: SegmentMarker?)]?
}

/// Writes the report of one scanned recording in `format` (and records it in the library of `--library`).
/// - Returns: whether any segment was found.
func reportScan(_ source: String, _ result: ScannedRecording,
                catalog: Catalog, index: CatalogIndex, args: ParsedArguments, format: String, cuesMode: String?) throws -> Bool {
    let (segments, duration, decoder, marked) = (result.segments, result.duration, result.decoder, result.marked)
    if segments.isEmpty, let decoder, let note = otherStreamsNote(source, decoder) { warn(note, about: source) }
    let target = try LibraryTarget.from(args, input: source, labelsOnly: format == "html")
    let library = try target.flatMap { $0.path.isEmpty ? nil : try $0.open() }
    var airings = segments.map { $0.airing(referenceDuration: index.references[$0.referenceIndex].duration) }
    // A segment whose audio marker was read: the library's marker trait.
    for (i, m) in (marked ?? []).enumerated() { airings[i].marker = m.marker?.payload }
    if let target, let library, let digest = result.digest {
        try target.record(library, name: source, digest: digest, duration: duration, airings: airings, verbose: args.has("verbose"))
    }
    // Annotations of every reference found, mapped through the alignment map.
    var droppedCount: [String: Int] = [:]
    let annotations = try ScanReport.referenceAnnotations(segments, catalog: catalog, index: index)
    let mapped = ScanReport.mappedAnnotations(segments, duration: duration, annotations: annotations, index: index) { id, a in
        droppedCount[id, default: 0] += 1
        guard args.has("verbose") else { return }
        warn(String(format: "%@: annotation %.3f–%.3f s not aired, dropped: %@", id, a.start, a.end,
                    a.text.replacingOccurrences(of: "\n", with: " / ")))
    }
    // With annotations, every segment still has cues: its aired annotations, else one cue of
    // its own; so no cue (nor CUE track) spans another play.
    let useAnnotations = cuesMode.map { $0 == "annotations" } ?? !mapped.isEmpty
    let map = AlignmentMap(segments: segments, recordingDuration: duration)
    let play = map.playCues(annotations: annotations, segmentText: { $0.item.byline() })
    let cues = useAnnotations ? play.cues : segments.map { Cue(start: $0.start, end: $0.end, text: $0.item.byline(), kind: .plain) }
    if useAnnotations && ["srt", "vtt", "ass", "cue", "audacity"].contains(format) {
        for note in annotationCueNotes(source, play: play, map: map, dropped: droppedCount, verbose: args.has("verbose")) { printError(note) }
    } else if format == "json" && !args.has("verbose") {
        // The JSON's cues leave them out too: said on stderr and in the report's warnings.
        for (id, n) in droppedCount.sorted(by: { $0.key < $1.key }) {
            warn("\(source): \(n) annotation(s) of \(id) not aired, left out of the cues (--verbose lists them)", about: source)
        }
    }
    if args.has("verbose") {
        printError(String(format: "%@: %.1f s, %d segment(s), %d mapped annotation(s)", source, duration, segments.count, mapped.count))
    }

    switch format {
    case "json":
        print(scanReportJSON(source, result, mapped: mapped, warnings: InputWarnings.shared.take(source)).text)
    case "csv":
        print(ScanReport.csv(segments), terminator: "")
    case "html":
        // The report page of this one recording (segments as airings, wall-clock times from --start-time).
        let shown = airings.map { a -> Airing in
            var a = a
            a.source = target?.source ?? (source == "-" ? "stdin" : source)
            if let t = target?.startTime { a.wallStart = t + a.start; a.wallEnd = t + a.end }
            return a
        }
        print(ReportHTML.page(shown, title: "soundmark scan: \((source as NSString).lastPathComponent)"), terminator: "")
    case "srt", "vtt", "ass", "audacity": print(subtitleFile(format, cues, source: source), terminator: "")
    case "cue":
        let file = source == "-" ? "stdin.wav" : (source as NSString).lastPathComponent
        // An unidentified lead-in gets a track of its own and a stretch between segments is the
        // next segment's pregap, so that split tools break at every segment start.
        // Every track ends where its cue ends: what follows up to the next track is that track's
        // pregap, never a stretch of the previous one.
        func segmentTrack(_ s: Segment, _ start: Double, _ end: Double) -> CueSheetTrack {
            CueSheetTrack(start: start, title: s.item.displayTitle, performer: MediaItem.nonBlank(s.item.artist), end: end)
        }
        let tracks = useAnnotations
            ? zip(play.cues, play.segmentIndices).map { cue, n in
                play.segmentCues.contains(n) ? segmentTrack(map.segments[n], cue.start, cue.end)
                    : CueSheetTrack(start: cue.start, title: CueMarkup.plainText(cue.text), performer: nil, end: cue.end)
            }
            : segments.map { segmentTrack($0, $0.start, $0.end) }
        // A lead-in is "(no cue)" when part of a play is in it, else unidentified audio.
        let firstStart = tracks.map(\.start).min()
        let leadInPlays = useAnnotations && firstStart.map { f in map.segments.contains { $0.start < f } } ?? false
        print(CueWriter.cueSheet(file: file, tracks: tracks, gapTitle: leadInPlays ? "(no cue)" : CueWriter.unidentifiedTitle),
              terminator: "")
    default:
        for (i, s) in segments.enumerated() {
            let who = s.item.byline()
            let skew = abs(s.frequencySkew) >= 0.005 ? String(format: "  [%+.1f %%]", s.frequencySkew * 100) : ""
            let speed = abs(s.timeScale - 1 - s.frequencySkew) >= 0.005 ? String(format: "  [tempo %+.1f %%]", (s.timeScale - 1) * 100) : ""
            let mark = marked?[i].marker.map { "  " + markerNote($0) } ?? ""
            print(String(format: "%2d. %@ – %@  %@ (%@ from %@)%@%@%@", i + 1, formatClock(s.start), formatClock(s.end), who, s.item.id,
                         formatClock(s.referenceStart), skew, speed, mark))
            for a in s.alternatives {
                print("      \(formatClock(a.start)) – \(formatClock(a.end)) also matches \(a.item.id) (an alternative: the same audio)")
            }
        }
        if segments.isEmpty { print("no catalog audio found") }
    }
    return !segments.isEmpty
}

/// The JSON report of one scanned recording (`scan --format json`; also a worker's job report):
/// ``ScanReport/json(source:duration:segments:markers:cues:partial:warnings:)`` of `result`.
func scanReportJSON(_ source: String, _ result: ScannedRecording, mapped: [(id: String, cue: Cue)],
                    warnings: [String] = []) -> JSONOutput {
    ScanReport.json(source: source, duration: result.duration, segments: result.segments, markers: result.marked?.map(\.marker),
                    cues: mapped, partial: result.partial, warnings: warnings)
}

/// The stderr lines of `scan`'s annotation cues: which segments are one cue each (no
/// annotation of theirs aired) and, without `verbose` (which lists them one by one), how many
/// annotations of each reference were left out because their stretch did not air.
func annotationCueNotes(_ source: String, play: AlignmentMap.PlayCues, map: AlignmentMap,
                        dropped: [String: Int], verbose: Bool) -> [String] {
    var notes: [String] = []
    if !play.segmentCues.isEmpty {
        let who = play.segmentCues.map { String(format: "%@ at %@", map.segments[$0].item.id, formatClock(map.segments[$0].start)) }
        notes.append("\(source): \(who.count) segment(s) without annotations are one cue each: \(who.joined(separator: ", "))")
    }
    if !verbose {
        for (id, n) in dropped.sorted(by: { $0.key < $1.key }) {
            notes.append("\(source): \(n) annotation(s) of \(id) not aired, left out (--verbose lists them)")
        }
    }
    return notes
}

let scanCommand = CommandSpec(words: ["scan"], usage: "RECORDING...",
    summary: "find catalog audio in a long recording and write its set-list",
    details: """
    Slides the matcher over the whole recording (file, URL or -) and writes one segment per stretch of catalog
    audio: start and end in the recording, the reference, referenceStart/referenceEnd in the reference (s),
    confidence, frequencySkew (pitch) and timeScale (tempo). Crossfades, repeats and seeks start new
    segments; a key-lock tempo change or a pause the reference shares does not. Recordings have no
    length limit.
    Annotations of the references found are mapped into recording time through the segments: a cue cut
    by a jump is clipped to the part that aired, a cue whose stretch was removed is dropped, a replayed
    stretch replays its cues; a segment in which no annotation aired is one cue of its own, so no
    play is hidden (stderr names those segments and counts the annotations left out).
    JSON: {"recording":{"source","duration"},"segments":[…],"cues":[…]}, and "warnings":["…"] when anything was said
    on stderr about the recording (a truncated file, corrupt data skipped, annotations left out).
    Exit code 0 when something was found, 1 when nothing was, 2 on error.
    Each recording is decoded on one thread, fingerprinted on another and matched on a third. Several recordings are scanned
    --jobs at a time and reported in argument order (setlist: a "# RECORDING" line before each; json: one
    object per line); a recording that fails is reported and the others go on (exit 1 when some failed or
    nothing was found anywhere, 2 when all failed).
    """,
    options: [catalogOption,
              OptionSpec(name: "format", value: scanFormats.joined(separator: "|"), help: "output format (default: setlist)"),
              minimumDurationOption, falseAlarmsOption,
              OptionSpec(name: "cues", value: "annotations|segments",
                         help: "cues of srt/vtt/ass/cue/audacity: the references' annotations mapped into recording time (a segment without any: one cue of its own), or one per segment (default: annotations when any matched reference has them)"),
              OptionSpec(name: "verbose", value: nil, help: "name the audio stream used, report dropped annotations and totals on stderr"),
              streamOption, languageOption, libraryRecordOption, librarySourceOption, startTimeOption, markerScanOption, jobsOption,
              versionsOption],
    positional: 1...Int.max, run: runScan)
