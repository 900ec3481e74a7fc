import Foundation
import Soundmark

/// The JSON of `signature show`: `version`, `source` (the file as given), then `members`.
private func shownJSON(_ path: String, _ members: [(String, JSONOutput)]) -> JSONOutput {
    versionedJSON([("source", .string(path))] + members)
}

/// ``shownJSON(_:_:)`` of an object's members.
private func shownJSON(_ path: String, _ object: JSONOutput) -> JSONOutput {
    guard case .object(let members) = object else { return object }
    return shownJSON(path, members)
}

/// `soundmark signature show FILE`: what a ShazamKit file (or a soundmark signature file) holds.
func runSignatureShow(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "text"
    let path = args.positional[0]
    let data: Data
    do { data = path == "-" ? StandardInputPeek.readAll() : try InputFile.contents(atPath: path) } catch let error as InputFileError {
        throw SignatureReadError(message: "\(path): \(error.reason)")
    }
    if SignatureFile.looksLike(data) {
        let own: SignatureFile
        do { own = try SignatureFile(data: data) } catch { throw SignatureReadError(message: "\(path): \(describe(error))") }
        let sets = own.sets.map { set in
            JSONOutput.object([("role", .string(set.role == .query ? "query" : "reference")), ("skippedSamples", .integer(set.skippedSamples)),
                               ("peaks", .integer(set.peaks.count))])
        }
        if format == "json" {
            print(shownJSON(path, [("format", .string("soundmark signature v\(SignatureFile.fileVersion)")),
                                   ("sampleRate", .integer(own.configuration.sampleRate)), ("duration", .seconds(own.duration)),
                                   ("crc", .string("ok")), ("peakSets", .array(sets))]).text)
        } else {
            print("format: soundmark signature v\(SignatureFile.fileVersion) (fingerprint format \(Configuration.formatVersion))")
            print(String(format: "sample rate: %d Hz, duration %.3f s", own.configuration.sampleRate, own.duration))
            print("CRC-32: ok")
            for set in own.sets {
                print("peaks (\(set.role == .query ? "query" : "reference") analysis, frame grid +\(set.skippedSamples) samples): \(set.peaks.count)")
            }
        }
        return Exit.ok
    }
    let file: ShazamFile
    do { file = try ShazamFile(data: data, requireValidCRC: false) } catch let e as ShazamFormatError {
        throw ShazamFormatError("\(signatureName(path)): \(e.reason)")
    }
    switch file {
    case .signature(let s):
        if format == "json" { print(shownJSON(path, s.summaryJSON).text) } else { print(s.summaryLines.joined(separator: "\n")) }
        return s.crcValid ? Exit.ok : Exit.none
    case .catalog(let c):
        if format == "json" {
            let entries = c.entries.map { e in
                JSONOutput.object([("id", .string(e.id)), ("signature", e.signature.summaryJSON),
                                   ("mediaItems", .array(e.mediaItems.map(\.summaryJSON)))])
            }
            print(shownJSON(path, [("format", .string("shazamcatalog")), ("name", .string(c.name)),
                                   ("catalogVersion", .integer(c.version)), ("signatures", .array(entries))]).text)
        } else {
            print("format: shazamcatalog \"\(c.name)\" version \(c.version), \(c.entries.count) signature(s)")
            for e in c.entries {
                print("signature \(e.id):")
                for line in e.signature.summaryLines { print("  " + line) }
                for (i, m) in e.mediaItems.enumerated() {
                    print("  media item \(i + 1):")
                    if let t = m.title { print("    title: \(t)") }
                    if let t = m.subtitle { print("    subtitle: \(t)") }
                    if let t = m.artist { print("    artist: \(t)") }
                    if !m.timeRanges.isEmpty {
                        print("    time ranges: " + m.timeRanges.map { String(format: "%.3f–%.3f s", $0.lowerBound, $0.upperBound) }.joined(separator: ", "))
                    }
                    for (k, v) in m.otherShazamKeys.sorted(by: { $0.key < $1.key }) { print("    \(k): \(v)") }
                    for (k, v) in m.properties.sorted(by: { $0.key < $1.key }) { print("    \(k) (custom): \(v)") }
                }
            }
        }
        return Exit.ok
    }
}

let signatureCommands: [CommandSpec] = [
    CommandSpec(words: ["signature"], usage: "MEDIA...", summary: "write the signature of media (files, URLs or -) to a signature file",
                details: """
                Writes one signature file per input: soundmark's own (.smsig, the default: the peaks identify and scan
                need, with the configuration, a format version and a CRC-32; no audio) or ShazamKit's (--format shazam:
                a .shazamsignature of Shazam-format peaks, 16 kHz, four bands). identify and scan take a signature file
                wherever they take media (recognised by content). Without -o the files go to the current directory,
                named after the input; -o FILE for one input, -o DIR/ for several, -o - for standard output.
                """,
                options: [OptionSpec(name: "format", value: "soundmark|shazam", help: "signature format (default: soundmark)"),
                          outputOption("FILE_OR_DIR", help: "output file, directory (ending in /) or - (default: the current directory)"),
                          OptionSpec(name: "catalog", value: "FILE", help: "use this catalog's fingerprint configuration (default: the built-in one)"),
                          streamOption, languageOption, verboseStreamOption],
                positional: 1...Int.max, run: runSignature),
    CommandSpec(words: ["signature", "show"], usage: "FILE", summary: "print what a signature or ShazamKit catalog file holds",
                details: """
                Reads a .shazamsignature (prefix versions 1 and 2), bare vnd.shazam.sig data (.bin), a
                data:audio/vnd.shazam.sig;base64,… URI, a .shazamcatalog or a soundmark .smsig file (FILE or - for
                standard input), recognised by content, and prints its format,
                sample rate, duration, peaks per band and CRC status; for a catalog, each signature and its media items
                (sh_title, sh_subtitle, sh_artist, sh_timeRanges and custom keys). JSON: {"version":{…},"source":FILE,
                "format",…}, a catalog's own version as "catalogVersion". Exit code 1 when a CRC does not match.
                """,
                options: [OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 1...1, run: runSignatureShow),
]

/// What a query or recording argument holds when it is a signature file rather than media,
/// recognised by the file's first bytes (not its extension).
enum SignatureInput {
    case soundmark(SignatureFile)
    case shazam(ShazamSignature)
}

/// Reads `source` as a signature file when it is a regular file, or standard input (`-`), that
/// starts like one (by its first bytes, not its name); nil for media and URLs (standard input
/// that is media is left whole for its decoder).
/// - Throws: an error naming the file when it looks like a signature file but cannot be read.
func signatureInput(_ source: String) throws -> SignatureInput? {
    let head: Data
    if source == "-" {
        head = StandardInputPeek.peek(64)
    } else {
        guard !source.contains("://"), InputFile.isRegularFile(source), let handle = FileHandle(forReadingAtPath: source) else { return nil }
        head = (try? handle.read(upToCount: 64)) ?? Data()
        try? handle.close()
    }
    let own = SignatureFile.looksLike(head), shazam = ShazamSignature.looksLike(head)
    guard own || shazam else { return nil }
    let name = signatureName(source)
    guard let data = source == "-" ? StandardInputPeek.readAll() : FileManager.default.contents(atPath: source) else {
        throw UsageError(message: "\(source): cannot read the file")
    }
    do {
        return own ? .soundmark(try SignatureFile(data: data)) : .shazam(try ShazamSignature(data: data))
    } catch {
        throw SignatureReadError(message: "\(name): \(describe(error))")
    }
}

/// How errors name a signature input: `stdin` for `-`, else the path.
func signatureName(_ source: String) -> String { source == "-" ? "stdin" : source }

/// A signature file that cannot be used: one line naming the file.
struct SignatureReadError: Error, LocalizedError {
    let message: String
    var errorDescription: String? { message }
}

/// Checks that a soundmark signature file was made with the catalog's reference-side configuration.
func checkConfiguration(_ file: SignatureFile, _ source: String, against configuration: Configuration) throws {
    let diff = file.configuration.referenceAnalysis.differences(from: configuration.referenceAnalysis)
    guard diff.isEmpty else {
        throw SignatureReadError(message: "\(signatureName(source)): signature made with another fingerprint configuration than the catalog's: \(diff)")
    }
}

/// Output path for one input's signature: `-o FILE` (one input), `-o DIR/` or an existing
/// directory (the input's base name plus `ext`), else the current directory.
func signatureOutputPath(for source: String, output: String?, inputs: Int, ext: String) throws -> String {
    var base = source == "-" ? "stdin" : (source as NSString).lastPathComponent
    if source.contains("://") {
        base = URL(string: source)?.lastPathComponent ?? "stream"
        if base.isEmpty || base == "/" { base = URL(string: source)?.host ?? "stream" }
    }
    let name = base + ext
    guard let output else { return name }
    var isDir: ObjCBool = false
    if output.hasSuffix("/") || (FileManager.default.fileExists(atPath: output, isDirectory: &isDir) && isDir.boolValue) {
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        return (output as NSString).appendingPathComponent(name)
    }
    guard inputs == 1 else { throw UsageError(message: "-o names a file but there are \(inputs) inputs; give a directory (ending in /)") }
    return output
}

func runSignature(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "soundmark"
    let output = args.value("output")
    var configuration = Configuration()
    if let path = args.value("catalog") { configuration = try openCatalog(path, readOnly: true).configuration }
    var failed = 0
    for source in args.positional {
        do {
            let ext = format == "shazam" ? ".shazamsignature" : ".smsig"
            let path = try signatureOutputPath(for: source, output: output, inputs: args.positional.count, ext: ext)
            let data: Data
            let summary: String
            if format == "shazam" {
                let s = try ShazamPeakGenerator.signature(ofMedia: source, streamIndex: try streamIndex(args), warning: { warn($0) })
                guard s.peakCounts.reduce(0, +) > 0 else { throw SoundmarkError.noLandmarks(path: source) }
                data = s.dataRepresentation(prefixed: true)
                summary = String(format: "%.1f s, %d peaks", s.duration, s.peakCounts.reduce(0, +))
            } else {
                let decoder = try openMedia(source, sampleRate: configuration.sampleRate, try streamChoice(args), verbose: args.has("verbose"))
                let file = try SignatureFile.make(decoding: decoder, configuration: configuration)
                // A signature without landmarks matches nothing and cannot be catalogued.
                guard file.sets.contains(where: { !file.signature(of: $0).landmarks.isEmpty }) else {
                    throw SoundmarkError.noLandmarks(path: source)
                }
                data = file.dataRepresentation
                summary = String(format: "%.1f s, %d peaks", file.duration, file.sets.reduce(0) { $0 + $1.peaks.count })
            }
            if path == "-" {
                try writeStandardOutput(data)
            } else {
                try writeOutputFile(data, to: path, what: "the signature file")
                printError("\(source) → \(path) (\(data.count) bytes, \(summary))")
            }
        } catch let e as UsageError {
            throw e
        } catch {
            printError(describe(error))
            failed += 1
        }
    }
    return failed == 0 ? Exit.ok : (failed == args.positional.count ? Exit.error : Exit.none)
}

/// Matches a signature file given as identify's query: a soundmark file through its query
/// framings; a Shazam signature through the Shazam peaks of the catalog's references.
/// - Returns: the query signatures (the first gives the duration) and the matches, best first.
func matchSignatureInput(_ input: SignatureInput, source: String, matcher: Matcher, catalogPath: String) throws -> ([Signature], [MatchedMediaItem]) {
    switch input {
    case .soundmark(let file):
        try checkConfiguration(file, source, against: matcher.index.configuration)
        let queries = file.querySignatures
        guard let first = queries.first else { throw SignatureReadError(message: "\(signatureName(source)): the signature file holds no query analysis") }
        return (queries, matcher.matchedItems(for: first, reframed: Array(queries.dropFirst())))
    case .shazam(let query):
        guard let shazam = try shazamMatcher(catalogPath: catalogPath, index: matcher.index, onlyWithoutPostings: false,
                                             threshold: matcher.options.threshold) else {
            throw SignatureReadError(message: "\(signatureName(source)): the catalog holds no Shazam peaks to match a Shazam signature against (add references with 'catalog add --shazam' or 'catalog import')")
        }
        // Only the duration of this placeholder is used (the clip-length warning).
        let placeholder = Signature(configuration: matcher.index.configuration, landmarks: [],
                                    sampleCount: Int64(query.duration * Double(matcher.index.configuration.sampleRate)))
        return ([placeholder], shazam.matches(for: query))
    }
}

/// A matcher over the Shazam peaks of the catalog's references (of those without postings only,
/// for audio queries, which soundmark's own fingerprint matches elsewhere), or nil when there are none.
func shazamMatcher(catalogPath: String, index: CatalogIndex, onlyWithoutPostings: Bool, threshold: Double) throws -> ShazamMatcher? {
    let stored = try openCatalog(catalogPath, readOnly: true, fresh: false).shazamSignatures()
    guard !stored.isEmpty else { return nil }
    let refs = index.references.filter { !onlyWithoutPostings || $0.postingCount == 0 }
        .compactMap { ref in stored[ref.item.id].map { (item: ref.item, signature: $0) } }
    guard !refs.isEmpty else { return nil }
    var m = ShazamMatcher(references: refs)
    m.threshold = threshold
    return m
}

/// Audio queries against imported Shazam references (those with Shazam peaks and no postings):
/// the clip's Shazam-format peaks are matched and the matches merged with `matches`, best first.
func addingShazamOnlyMatches(_ matches: [MatchedMediaItem], source: String, matcher: Matcher, catalogPath: String) throws -> [MatchedMediaItem] {
    guard matcher.index.references.contains(where: { $0.postingCount == 0 }),
          let shazam = try shazamMatcher(catalogPath: catalogPath, index: matcher.index, onlyWithoutPostings: true,
                                         threshold: matcher.options.threshold) else { return matches }
    guard source != "-" else {
        warn("-: the catalog's imported Shazam references are not matched from standard input (it is read once); give a file")
        return matches
    }
    let query = try ShazamPeakGenerator.signature(ofMedia: source, warning: { warn($0) })
    return (matches + shazam.matches(for: query)).sorted { $0.confidence > $1.confidence }
}

/// The Shazam side of `scan`: the catalog's references that carry Shazam peaks.
struct ShazamScanReferences {
    /// Every reference with Shazam peaks: a Shazam signature given as the recording is scanned against them.
    let all: ShazamScanner?
    /// The references with Shazam peaks and no postings (imported ShazamKit signatures): an
    /// audio recording is scanned against them through its own Shazam peaks, next to soundmark's fingerprint.
    let withoutPostings: ShazamScanner?

    /// Loads the stored Shazam peaks of `catalog` (nothing when it has none).
    init(catalog: Catalog, index: CatalogIndex, options: ScanOptions) throws {
        let stored = try catalog.shazamSignatures()
        func scanner(_ onlyWithoutPostings: Bool) -> ShazamScanner? {
            let refs = index.references.filter { !onlyWithoutPostings || $0.postingCount == 0 }
                .compactMap { ref in stored[ref.item.id].map { (item: ref.item, signature: $0) } }
            return refs.isEmpty ? nil : ShazamScanner(references: refs, index: index, options: options)
        }
        all = stored.isEmpty ? nil : scanner(false)
        withoutPostings = stored.isEmpty ? nil : scanner(true)
    }

    /// Segments of an audio recording against the imported references (its Shazam peaks from a
    /// second decode at 16 kHz), merged with `segments` by start; `segments` as they are when
    /// there are no imported references, and for standard input (read once) with a warning.
    func adding(to segments: [Segment], source: String, stream: StreamChoice) throws -> [Segment] {
        guard let withoutPostings else { return segments }
        guard source != "-" else {
            warn("-: the catalog's imported Shazam references are not scanned from standard input (it is read once); give a file")
            return segments
        }
        let peaks = try ShazamPeakGenerator.signature(ofMedia: source, streamIndex: stream.index, warning: { warn($0) })
        return (segments + withoutPostings.segments(of: peaks)).sorted { ($0.start, $0.end) < ($1.start, $1.end) }
    }
}

/// Scans a signature file given as scan's recording: the reference analysis of a soundmark
/// file, fed to the scanner as the audio's landmarks would be; a Shazam signature through the
/// Shazam peaks of the catalog's references (``ShazamScanner``).
/// - Returns: the segments and the recording's duration in seconds.
func scanSignatureInput(_ input: SignatureInput, source: String, index: CatalogIndex, options: ScanOptions,
                        shazam: ShazamScanReferences? = nil) throws -> ([Segment], Double) {
    switch input {
    case .soundmark(let file):
        try checkConfiguration(file, source, against: index.configuration)
        guard let signature = file.referenceSignature else {
            throw SignatureReadError(message: "\(signatureName(source)): the signature file holds no reference analysis")
        }
        let scanner = RecordingScanner(index: index, options: options)
        for landmark in signature.landmarks { scanner.consume(landmark) }
        return (scanner.finish(recordingDuration: signature.duration), signature.duration)
    case .shazam(let recording):
        guard let scanner = shazam?.all else {
            throw SignatureReadError(message: "\(signatureName(source)): the catalog holds no Shazam peaks to scan a Shazam signature against (add references with 'catalog add --shazam' or 'catalog import')")
        }
        return (scanner.segments(of: recording), recording.duration)
    }
}
