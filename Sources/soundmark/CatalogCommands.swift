import Foundation
import Soundmark

/// The program's version (``OutputVersion/program``).
let soundmarkVersion = OutputVersion.program

/// File extensions picked up when a folder is walked (explicit files are tried whatever their name).
let mediaExtensions: Set<String> = ["mp3", "m4a", "mp4", "m4v", "mkv", "mka", "webm", "ogg", "oga", "opus", "flac",
                                    "wav", "wave", "aif", "aiff", "aac", "ac3", "wma", "wmv", "ts", "mts", "avi", "mov", "caf", "au"]

let catalogOption = OptionSpec(name: "catalog", value: "FILE|URI", help: "the catalog: an SQLite file, or a PostgreSQL catalog postgresql://user@host:port/dbname (password from PGPASSWORD or ~/.pgpass)")
let streamOption = OptionSpec(name: "stream", value: "N", help: "decode audio stream N, 0…65535 (default: the best audio stream)")

/// A stable, readable id from a name: letters and digits of every script (NFC, lowercased;
/// combining marks kept with their letter), other runs become '-'. Empty when the name has
/// no letter or digit.
func slug(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    var dash = false
    for u in text.precomposedStringWithCanonicalMapping.lowercased().unicodeScalars {
        let p = u.properties
        let keep = p.isAlphabetic || p.numericType != nil
            || (!out.isEmpty && !dash && [.nonspacingMark, .spacingMark, .enclosingMark].contains(p.generalCategory))
        if keep {
            out.append(u)
            dash = false
        } else if !dash && !out.isEmpty {
            out.append("-")
            dash = true
        }
    }
    while out.last == "-" { out.removeLast() }
    return String(out)
}

/// One media input of `catalog add`.
/// Why `id` cannot be a reference id, or nil: empty (or only spaces), or holding a control
/// character (a tab or line break would break `catalog list`'s tab-separated lines and the
/// CSV and subtitle outputs that name references).
func referenceIDProblem(_ id: String) -> String? {
    if id.trimmingCharacters(in: .whitespaces).isEmpty { return "is empty" }
    if id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
        return "holds a control character (tab, line break…)"
    }
    return nil
}

struct MediaInput {
    /// The path as given or found by walking a folder (`-` for stdin, or a URL).
    var path: String
    /// Name parts the default id is made from, most specific last: the folders above the file
    /// (outermost first, up to the file system root for a local file) then the file name
    /// without extension. A walked folder's inner path comes first in ``idLevel`` 0.
    var nameParts: [String]
    /// How many name parts (beyond the minimum) the default id uses; raised to tell apart
    /// inputs whose shorter ids collide.
    var idLevel = 0
    /// Parts used at level 0 (1 for a file given by name, more for a file inside a walked folder).
    var baseParts: Int

    /// The default id at `level`: a slug of the last `baseParts + level` name parts joined by '-',
    /// `nil` when the level is beyond the path. A name without letters or digits gives `track`.
    func id(level: Int) -> String? {
        let n = baseParts + level
        guard n <= nameParts.count else { return level == 0 ? "track" : nil }
        let s = slug(nameParts.suffix(n).joined(separator: "/"))
        return s.isEmpty ? (level == 0 ? "track" : slug("track/" + nameParts.suffix(n).joined(separator: "/"))) : s
    }

    /// `-2`, `-3`… for inputs whose whole paths give the same id as an earlier input's.
    var suffix = ""

    /// The default id at the current ``idLevel``, without ``suffix``.
    var defaultID: String { id(level: idLevel) ?? id(level: 0) ?? "track" }

    /// The id this input gets unless one is given: ``defaultID`` and ``suffix``.
    var id: String { defaultID + suffix }
}

/// The media files (by ``mediaExtensions``) under the folder `root`, as paths through `root`:
/// symbolic links are followed as `find -L` does, to files and to folders, the folder `root`
/// itself included. A link back to a folder being walked (a loop) is not entered again and is
/// named on stderr; a dangling link is skipped silently, as `find -L` lists it but reads nothing.
func mediaFiles(under root: String) -> [String] {
    var found: [String] = []
    /// (device, inode) of the folders from `root` down to the one being read.
    var ancestors: [(dev_t, ino_t)] = []
    func walk(_ folder: String) {
        var st = stat()
        guard stat(folder, &st) == 0 else { return }
        if ancestors.contains(where: { $0.0 == st.st_dev && $0.1 == st.st_ino }) {
            printError("\(folder): skipped, a symbolic link back to a folder it is inside (a loop)")
            return
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        ancestors.append((st.st_dev, st.st_ino))
        defer { ancestors.removeLast() }
        for name in names.sorted() {
            let full = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            var entry = stat()
            guard stat(full, &entry) == 0 else { continue }  // dangling link, or vanished
            if (entry.st_mode & S_IFMT) == S_IFDIR {
                walk(full)
            } else if (entry.st_mode & S_IFMT) == S_IFREG, mediaExtensions.contains((name as NSString).pathExtension.lowercased()) {
                found.append(full)
            }
        }
    }
    walk(root)
    return found
}

/// Inputs of `catalog add`: explicit files, and media files found by walking folders, with
/// distinct default ids: where two inputs' ids collide, each of them takes more of its path
/// (`a/01 Track.ogg` and `b/01 Track.ogg` become `a-01-track` and `b-01-track`); where the
/// whole paths still collide, `-2`, `-3`… in path order.
func expandInputs(_ paths: [String]) -> [MediaInput] {
    var result: [MediaInput] = []
    let fm = FileManager.default
    func parts(_ path: String) -> [String] {
        let absolute = path.hasPrefix("/") ? path : fm.currentDirectoryPath + "/" + path
        var components = absolute.split(separator: "/").map(String.init).filter { $0 != "." }
        if let last = components.popLast() { components.append((last as NSString).deletingPathExtension) }
        return components
    }
    for path in paths {
        var isDirectory: ObjCBool = false
        if path != "-", !path.contains("://"), fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            let base = URL(fileURLWithPath: absolutePath(path)).standardizedFileURL  // no "~" expansion
            var found: [MediaInput] = []
            for full in mediaFiles(under: base.path) {
                var relative = String(full.dropFirst(base.path.count))
                while relative.hasPrefix("/") { relative.removeFirst() }
                let inner = relative.split(separator: "/").count
                found.append(MediaInput(path: full, nameParts: parts(full), baseParts: max(1, inner)))
            }
            result += found.sorted { $0.path < $1.path }
        } else if path == "-" {
            result.append(MediaInput(path: path, nameParts: ["stdin"], baseParts: 1))
        } else if path.contains("://") {
            let name = (path.split(separator: "?")[0] as NSString).lastPathComponent
            result.append(MediaInput(path: path, nameParts: [(name as NSString).deletingPathExtension], baseParts: 1))
        } else {
            result.append(MediaInput(path: path, nameParts: parts(path), baseParts: 1))
        }
    }
    // Raise the level of every input in a collision until all ids differ or no path is longer.
    while true {
        let groups = Dictionary(grouping: result.indices, by: { result[$0].defaultID })
        var raised = false
        for (_, members) in groups where members.count > 1 {
            // The same file given twice is one input, not a collision; names that differ only
            // in what a slug drops ("Track 1", "track_1") are told apart by a suffix below.
            if Set(members.map { result[$0].nameParts }).count == 1 { continue }
            if Set(members.map { result[$0].id(level: result[$0].nameParts.count - result[$0].baseParts)! }).count == 1 { continue }
            for i in members where result[i].id(level: result[i].idLevel + 1) != nil {
                result[i].idLevel += 1
                raised = true
            }
        }
        if !raised { break }
    }
    var seen: [String: [[String]]] = [:]
    for i in result.indices {
        let id = result[i].defaultID
        var paths = seen[id, default: []]
        if let k = paths.firstIndex(of: result[i].nameParts) {
            if k > 0 { result[i].suffix = "-\(k + 1)" }
        } else {
            paths.append(result[i].nameParts)
            if paths.count > 1 { result[i].suffix = "-\(paths.count)" }
        }
        seen[id] = paths
    }
    return result
}

let languageOption = OptionSpec(name: "language", value: "LANG",
    help: "decode the audio stream in this language, an ISO 639 code: eng (or en), ger/deu (or de)… (default: the best, usually the default-flagged, audio stream)")
let verboseStreamOption = OptionSpec(name: "verbose", value: nil, help: "name the audio stream used (index, language, codec) on stderr")

func streamIndex(_ args: ParsedArguments) throws -> Int? {
    try wholeNumberOption(args, "stream", in: 0...65_535, note: "a stream index")
}

/// Which audio stream to decode: `--stream N` or `--language LANG` (not both), else the best one.
struct StreamChoice {
    var index: Int?
    var language: String?
}

func streamChoice(_ args: ParsedArguments) throws -> StreamChoice {
    let index = try streamIndex(args)
    guard let language = args.value("language") else { return StreamChoice(index: index) }
    guard LanguageCode.equivalents(of: language) != nil else {
        throw UsageError(message: "--language takes an ISO 639 code such as eng or en, got '\(language)'")
    }
    if index != nil { throw UsageError(message: "--stream and --language both choose the audio stream: give one") }
    return StreamChoice(index: nil, language: language)
}

/// Opens `source` on the chosen audio stream; with `verbose`, names that stream on stderr.
func openMedia(_ source: String, sampleRate: Int, _ choice: StreamChoice, verbose: Bool) throws -> MediaDecoder {
    let decoder = try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: choice.index,
                                   language: choice.language) { warn($0, about: source) }
    if verbose {
        let count = decoder.audioStreams.count
        printError("\(source == "-" ? "<stdin>" : source): audio stream \(decoder.chosenStream.details)"
                   + (count > 1 ? " of \(count) audio streams" : ""))
    }
    return decoder
}

/// When nothing matched: the input's other audio streams, if it has any, as one line.
func otherStreamsNote(_ source: String, _ decoder: MediaDecoder) -> String? {
    let others = decoder.audioStreams.filter { $0.index != decoder.streamIndex }
    guard !others.isEmpty else { return nil }
    return "\(source == "-" ? "<stdin>" : source): nothing matched in audio stream \(decoder.chosenStream.label); "
        + "it has other audio streams: \(others.map(\.label).joined(separator: ", ")) (choose with --stream N or --language LANG)"
}

func readAnnotations(_ path: String, encoding: String?) throws -> [Annotation] {
    guard FileManager.default.fileExists(atPath: path) else {
        throw UsageError(message: "\(path): no such annotation file")
    }
    var enc: String.Encoding?
    var legacy: String?
    switch encoding?.lowercased() {
    case nil: enc = nil
    case "utf-8", "utf8": enc = .utf8
    case "utf-16", "utf16": enc = .utf16
    case "utf-16le": enc = .utf16LittleEndian
    case "utf-16be": enc = .utf16BigEndian
    case "latin1", "iso-8859-1": enc = .isoLatin1
    case "cp1252", "windows-1252": enc = .windowsCP1252
    case let other?:
        // Every other legacy encoding through iconv (cp1250, cp1256, cp949, shift_jis, gbk, koi8-r, …).
        guard let name = LegacyEncoding.iconvName(other) else {
            throw UsageError(message: "unknown --encoding '\(other)' (utf-8, utf-16, utf-16le, utf-16be, latin1, cp1250…cp1258, koi8-r, cp949/euc-kr, shift_jis, gbk, big5 or any iconv name)")
        }
        legacy = name
    }
    // absolutePath: URL(fileURLWithPath:) would expand a file named "~" to the home folder.
    let result = try AnnotationReader.read(contentsOf: URL(fileURLWithPath: absolutePath(path)), format: nil, encoding: enc, legacyEncoding: legacy)
    for w in result.warnings { warn(w) }
    return result.annotations
}

func parseProperties(_ list: [String]) throws -> [String: String] {
    var properties: [String: String] = [:]
    for p in list {
        guard let eq = p.firstIndex(of: "="), eq != p.startIndex else {
            throw UsageError(message: "--property takes KEY=VALUE, got '\(p)'")
        }
        properties[String(p[..<eq])] = String(p[p.index(after: eq)...])
    }
    return properties
}

/// Progress of a batch on stderr: files done of all, and an estimate of the time left from the
/// bytes fingerprinted so far (files skipped unchanged cost nearly nothing and are not
/// counted in the rate). On a terminal one line is redrawn in place; with `--progress` on
/// anything else a line is written per file. Off by default when stderr is not a terminal.
final class Progress {
    let total: Int
    let totalBytes: Int64
    let enabled: Bool
    let terminal = isatty(2) != 0
    private let start = Date()
    private var doneBytes: Int64 = 0, workedBytes: Int64 = 0, workedSeconds = 0.0

    init(total: Int, totalBytes: Int64, forced: Bool) {
        self.total = total
        self.totalBytes = totalBytes
        enabled = (terminal || forced) && total > 0
    }

    /// Records a finished file of `bytes` bytes that took `seconds`; `worked` when it was
    /// decoded and fingerprinted (not skipped).
    func record(bytes: Int64, seconds: Double, worked: Bool) {
        doneBytes += bytes
        if worked { workedBytes += bytes; workedSeconds += seconds }
    }

    /// "about 1 min 20 s left", or "" before anything was fingerprinted.
    func estimate() -> String {
        guard workedBytes > 0, workedSeconds > 0 else { return "" }
        let left = Double(max(0, totalBytes - doneBytes)) * workedSeconds / Double(workedBytes)
        let s = Int(min(left, 1e9).rounded())
        let text = s >= 3600 ? "\(s / 3600) h \(s / 60 % 60) min" : s >= 60 ? "\(s / 60) min \(s % 60) s" : "\(s) s"
        return ", about \(text) left"
    }

    func show(_ done: Int, _ name: String) {
        guard enabled else { return }
        let percent = totalBytes > 0 ? Int(Double(doneBytes) * 100 / Double(totalBytes)) : done * 100 / total
        if terminal {
            let width = 20
            let filled = width * done / total
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let label = name.count > 40 ? "…" + name.suffix(39) : name
            FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) \(percent) %\(estimate())  \(label)\u{1B}[K".utf8))
        } else {
            FileHandle.standardError.write(Data("progress: \(done)/\(total) files, \(percent) %\(estimate()): \(name)\n".utf8))
        }
    }

    func finish() {
        if enabled && terminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// The options of `catalog add` that name one reference, refused for a batch.
let singleReferenceOptions = ["id", "title", "annotations", "marker"]

/// A file fingerprinted ahead of `catalog add`'s writing loop.
enum Fingerprinted {
    /// Its reference signature, tags, version features and the decoder's warnings about it
    /// (damaged data skipped, a truncated file; stored as ``decodeProblemsProperty``).
    case done(Signature, [String: String], ChromaSequence, [String])
    /// Decoding or fingerprinting failed (reported when the loop reaches the file).
    case failed(Error)
    /// Not fingerprinted: the catalog already held the file (unchanged, or its content), or that
    /// could not be checked.
    case skipped
}

/// Decodes and fingerprints `path` for `catalog add` unless the catalog (opened read-only on
/// this thread) already holds that file unchanged or its content, which the writing loop then
/// skips without decoding.
func fingerprint(_ path: String, catalogPath: String, configuration: Configuration, stream: StreamChoice,
                 verbose: Bool, catalogSeconds: Double) -> Fingerprinted {
    if path != "-" {
        guard let catalog = try? openCatalog(catalogPath, readOnly: true, fresh: false) else { return .skipped }
        do {
            if try catalog.reference(unchangedAt: path) != nil { return .skipped }
            if let stamp = FileStamp.of(path: path), try !catalog.references(withContentOf: stamp).isEmpty { return .skipped }
        } catch {
            return .skipped
        }
    }
    do {
        let decoder = try openMedia(path, sampleRate: configuration.sampleRate, stream, verbose: verbose)
        let (signature, chroma) = try referenceAnalysis(decoder, configuration: configuration, path: path, catalogSeconds: catalogSeconds)
        return .done(signature, decoder.tags, chroma, InputWarnings.shared.take(path))
    } catch {
        _ = InputWarnings.shared.take(path)
        return .failed(error)
    }
}

/// The segments scan finds in `samples` with 1 s of silence either side, against `index` (one
/// reference of `signature`'s length) standing for a catalog of `catalogSeconds` more (see
/// ``findabilityProblem(_:samples:configuration:catalogSeconds:path:)``).
private func scannedSegments(_ signature: Signature, samples: [Float], index: CatalogIndex, catalogSeconds: Double) -> [Segment] {
    let configuration = index.configuration
    var options = ScanOptions()
    options.minimumDuration = 0
    options.falseAlarmsPerHour *= signature.duration / max(signature.duration, catalogSeconds + signature.duration)
    let scanner = RecordingScanner(index: index, options: options)
    let generator = SignatureGenerator(configuration: configuration, role: .reference)
    let silence = [Float](repeating: 0, count: configuration.sampleRate)
    for part in [silence, samples, silence] {
        var landmarks: [Landmark] = []
        part.withUnsafeBufferPointer {
            generator.append($0, emit: { landmarks.append($0) },
                             spectrum: { scanner.consumeSpectrum(frame: $0, levels: SpectrumRing.quantise($1)) })
        }
        scanner.consume(landmarks)
    }
    var last: [Landmark] = []
    generator.finish { last.append($0) }
    scanner.consume(last)
    return scanner.finish(recordingDuration: Double(generator.sampleCount) / Double(configuration.sampleRate))
}

/// The reference property that records what was wrong with the audio a reference was made from
/// (the decoder's warnings while `catalog add` read it: corrupt data skipped, a truncated file,
/// a gap filled with silence), joined by " | "; `catalog show` lists it. Absent for clean media.
let decodeProblemsProperty = "decode-problems"

/// The reference signature and the version features (chroma from the same spectrogram rows) of
/// a decoder's audio, read from `path` (named in errors), for a catalog whose references hold
/// `catalogSeconds` of audio.
/// - Throws: ``CommandError`` when the audio is under ``findabilityCheckSeconds`` long and
///   identify would not find it even in itself
///   (``findabilityProblem(_:samples:configuration:catalogSeconds:path:)``).
func referenceAnalysis(_ decoder: MediaDecoder, configuration: Configuration, path: String,
                       catalogSeconds: Double) throws -> (Signature, ChromaSequence) {
    let chroma = ChromaAccumulator(configuration: configuration)
    // A short reference's samples are kept for the check that it can be found at all.
    let keep = Int(findabilityCheckSeconds * Double(configuration.sampleRate))
    var samples: [Float] = [], short = true
    let signature = try SignatureGenerator.signatures(decoding: decoder, configuration: configuration, onChunk: { chunk in
        guard short else { return }
        if samples.count + chunk.count > keep { short = false; samples = [] } else { samples += chunk }
    }, spectrum: { chroma.consume(frame: $0, row: $1) })[0]
    if short, let problem = findabilityProblem(signature, samples: samples, configuration: configuration, catalogSeconds: catalogSeconds,
                                               path: path) {
        throw CommandError(message: "\(path == "-" ? "<stdin>" : path): \(problem)")
    }
    return (signature, chroma.finish())
}

/// References shorter than this, seconds, are checked at `catalog add` for being findable at all
/// (``findabilityProblem(_:samples:configuration:catalogSeconds:path:)``): 10. Identify finds every longer reference of
/// music in its own audio (a 10 s clip is the length the match rule is tuned for), and the check's
/// cost (a query analysis of the samples) stays under a second.
let findabilityCheckSeconds = 10.0

/// Why a reference of `signature` (made from `samples`, mono at the configuration's rate, read
/// from `path`) could never be found by identify, or `nil`; when identify finds it but scan would
/// not, a warning says so (the reference is still added: identify finds it).
/// - identify: its own audio, matched as identify matches a clip (framings and spectrum) against
///   it alone, is not found at the default threshold. The match rule scores a clip against its
///   reference alone, so this minimum does not grow with the catalog; the reason states the
///   measured minimum, ``shortestFindable``.
/// - scan: its own audio, between 1 s of silence either side, scanned with the default options
///   but no minimum duration, gives no segment. The play rule's chance tests grow with the
///   catalog's frames (``PlayEvidence/tests(catalogFrames:speeds:hopSeconds:)``), so the scan
///   runs against this reference alone with the false-alarm rate scaled by its share of a catalog
///   of `catalogSeconds` plus itself: the evidence a play needs, hence the length, grows with
///   the catalog.
func findabilityProblem(_ signature: Signature, samples: [Float], configuration: Configuration,
                        catalogSeconds: Double, path: String) -> String? {
    // The query as identify makes it (ClipIdentification): framings, and framing 0's spectrum.
    let generators = SignatureGenerator.framings(Matcher.framings, configuration: configuration, role: .query)
    var spectrum = SpectrumRing(width: configuration.maxBin - configuration.minBin + 1)
    var first: [Landmark] = []
    samples.withUnsafeBufferPointer {
        generators[0].append($0, emit: { first.append($0) },
                             spectrum: { spectrum.append(frame: $0, levels: SpectrumRing.quantise($1)) })
    }
    generators[0].finish { first.append($0) }
    let query = Signature(configuration: configuration, landmarks: first, sampleCount: Int64(samples.count))
    let reframed = generators.dropFirst().map { g -> Signature in g.append(samples); return g.signature() }
    let index = CatalogIndex(configuration: configuration, items: [(MediaItem(id: "self"), signature)])
    let found = Matcher(index: index).matchedItems(for: query, reframed: reframed, spectrum: spectrum)
    let seconds = signature.duration
    guard found.isEmpty else {
        if scannedSegments(signature, samples: samples, index: index, catalogSeconds: catalogSeconds).isEmpty {
            warn(String(format: "%@: scan would not find its %.2f s even in itself at this catalog's size (%.0f s of "
                        + "references: scan asks more evidence of a play the more audio the catalog holds, so the shortest "
                        + "reference it finds grows with the catalog); identify finds it", path == "-" ? "<stdin>" : path,
                        seconds, catalogSeconds))
        }
        return nil
    }
    return String(format: "too short to be found: identify does not find its %.2f s even in itself; a reference needs %@ "
                  + "(its landmarks must line up beyond chance over enough of it; the rule scores a clip against its "
                  + "reference alone, so this does not change with the catalog's size); not added", seconds, shortestFindable)
}

/// The shortest references identify finds in their own audio, as `catalog add` states it when it
/// refuses a shorter one: "1.5-2.5 s of music". Measured on 0.5-2 s excerpts of the five sample
/// references (samples/references): every one of 1.25 s or less was not found, 1.5 s was found in
/// 3 of 5, 2 s in 4 of 5 (a steady pad, supertux-forest, needs more).
let shortestFindable = "1.5-2.5 s of music"

func runCatalogAdd(_ args: ParsedArguments) throws -> Int32 {
    let catalogPath = try required(args, "catalog")
    // A catalog file this command creates is removed again when nothing could be added to it
    // (every input failed): a failed first `catalog add` leaves no empty catalog behind.
    let creates = CatalogLocation(catalogPath).isMissingFile
    func removeIfEmpty() {
        guard creates, FileManager.default.fileExists(atPath: catalogPath),
              let refs = try? Catalog(path: catalogPath, readOnly: true).references(), refs.isEmpty else { return }
        for suffix in ["", "-wal", "-shm", "-journal", ".index"] { try? FileManager.default.removeItem(atPath: catalogPath + suffix) }
    }
    do {
        let status = try addToCatalog(args, catalogPath: catalogPath)
        if status == Exit.error { removeIfEmpty() }
        return status
    } catch {
        removeIfEmpty()
        throw error
    }
}

/// `catalog add` into the catalog at `catalogPath` (see ``runCatalogAdd(_:)``); the catalog is
/// closed when this returns.
private func addToCatalog(_ args: ParsedArguments, catalogPath: String) throws -> Int32 {
    let metadata = try args.value("metadata").map(readMetadata) ?? []
    if args.positional.isEmpty && args.value("metadata") == nil {
        throw UsageError(message: "give media files or folders, or --metadata FILE")
    }
    if args.positional.contains("") { throw UsageError(message: "an empty file name was given") }
    let inputs = expandInputs(args.positional.isEmpty ? metadata.map(\.path) : args.positional)
    if inputs.isEmpty {
        throw UsageError(message: "no media files found in \((args.positional.isEmpty ? metadata.map(\.path) : args.positional).joined(separator: ", "))")
    }
    if inputs.count > 1, let option = singleReferenceOptions.first(where: { args.value($0) != nil }) {
        throw UsageError(message: "--\(option) is for one reference but \(inputs.count) files were given; give per-file values with --metadata FILE (CSV or JSON)")
    }
    var rows: [String: MetadataRow] = [:]
    for row in metadata { rows[absolutePath(row.path)] = row }
    let inputPaths = Set(inputs.map { absolutePath($0.path) })
    for row in metadata where !inputPaths.contains(absolutePath(row.path)) {
        warn("\(row.location): \(row.path) is not among the files to add; row ignored")
    }
    let properties = try parseProperties(args.all("property"))
    let sharedAnnotations = try args.value("annotations").map { try readAnnotations($0, encoding: args.value("encoding")) }
    let stream = try streamChoice(args)
    let markerPayload = try args.value("marker").map { try parsePayload($0, option: "marker") }
    let catalog = try openCatalog(catalogPath, create: true)
    var failures = 0
    let sizes = inputs.map { FileStamp.attributes(of: $0.path)?.size ?? 0 }
    let progress = Progress(total: inputs.count, totalBytes: sizes.reduce(0, +), forced: args.has("progress"))
    let batchIDs = Set(inputs.map(\.id))
    var markerFailed = false
    func report(_ id: String, _ outcome: AddOutcome, _ duration: Double, _ path: String) {
        let what: String
        switch outcome {
        case .added: what = "added"
        case .replaced: what = "replaced (new audio)"
        case .updated: what = "updated"
        case .unchanged: what = "skipped (already in the catalog, unchanged)"
        case .duplicate(let other): what = "skipped (same audio as '\(other)')"
        }
        FileHandle.standardError.write(Data(String(format: "%@: %@ %.1f s, %@\n", id, what, duration, path).utf8))
        var isDuplicate = false
        if case .duplicate = outcome { isDuplicate = true }
        if let markerPayload, !isDuplicate {
            do {
                if try catalog.marker(id: id) != markerPayload {
                    try catalog.setMarker(markerPayload, id: id)
                    FileHandle.standardError.write(Data("\(id): marker \(describePayload(markerPayload))\n".utf8))
                }
            } catch {
                printError(describe(error))
                markerFailed = true
            }
        }
    }
    // Files are decoded and fingerprinted on --jobs threads ahead of this loop, which stores
    // them one transaction each in input order: the catalog is the same whatever --jobs is.
    let configuration = catalog.configuration, verbose = args.has("verbose")
    // The audio the catalog holds: the shortest reference scan can find grows with it.
    let catalogSeconds = try catalog.references().reduce(0) { $0 + $1.duration }
    // A result is one signature (about 11 MB per hour of audio): workers may run 8 files ahead
    // of the writer, so a long file does not leave the other threads idle while it is decoded.
    let fingerprints = OrderedWork<Fingerprinted>(count: inputs.count, jobs: try jobCount(args), lookahead: 8) { n in
        fingerprint(inputs[n].path, catalogPath: catalogPath, configuration: configuration, stream: stream, verbose: verbose,
                    catalogSeconds: catalogSeconds)
    }
    for (n, input) in inputs.enumerated() {
        progress.show(n, input.path)
        let began = Date()
        var worked = false
        let prepared = try fingerprints.take(n)
        do {
            let row = rows[absolutePath(input.path)]
            let explicitID = args.value("id") ?? row?.id
            if let id = explicitID, let problem = referenceIDProblem(id) {
                throw CommandError(message: "\(input.path): the reference id \(problem)")
            }
            var rowProperties = properties
            for (k, v) in row?.properties ?? [:] { rowProperties[k] = v }
            let annotations = try sharedAnnotations ?? row?.annotations.map { try readAnnotations($0, encoding: args.value("encoding")) }
            let given = (title: args.value("title") ?? row?.title, subtitle: args.value("subtitle") ?? row?.subtitle,
                         artist: args.value("artist") ?? row?.artist)
            // Stored absolute: the catalog is read from other folders (catalog export needs the file).
            let source = input.path == "-" ? nil : absolutePath(input.path)
            /// A file already in the catalog gets the version features it lacks (what `catalog
            /// upgrade` asks for when their source is gone) and, with --shazam, the Shazam peaks.
            func addMissingShazamPeaks(_ id: String) throws {
                if try !catalog.hasVersionFeatures(id: id) {
                    let decoder = try openMedia(input.path, sampleRate: catalog.configuration.sampleRate, stream, verbose: verbose)
                    try catalog.setVersionFeatures(try ChromaAccumulator.chroma(decoding: decoder, configuration: catalog.configuration),
                                                   forReference: id)
                    FileHandle.standardError.write(Data("\(id): version features stored\n".utf8))
                }
                guard args.has("shazam"), try !catalog.hasShazamSignature(id: id) else { return }
                try storeShazamPeaks(of: input.path, id: id, in: catalog)
                FileHandle.standardError.write(Data("\(id): Shazam peaks stored\n".utf8))
            }
            /// The stored item with the explicitly given fields on top (the file, hence its tags, did not change).
            func refreshed(_ stored: MediaItem) -> MediaItem {
                var item = stored
                if let t = MediaItem.nonBlank(given.title) { item.title = t }
                if let t = given.subtitle { item.subtitle = t }
                if let t = given.artist { item.artist = t }
                if !properties.isEmpty || row?.properties != nil {
                    // The audio did not change: what was wrong with it stays recorded.
                    let problems = item.properties[decodeProblemsProperty]
                    item.properties = rowProperties
                    if let problems { item.properties[decodeProblemsProperty] = problems }
                }
                return item
            }
            // Cheap paths: the same file unchanged (size and time), or the same content (digest).
            if let source, let known = try catalog.reference(unchangedAt: source), explicitID == nil || explicitID == known.item.id {
                let outcome = try catalog.updateMetadata(refreshed(known.item), annotations: annotations)
                try addMissingShazamPeaks(known.item.id)
                progress.finish()
                report(known.item.id, outcome, known.duration, input.path)
                progress.record(bytes: sizes[n], seconds: Date().timeIntervalSince(began), worked: false)
                continue
            }
            let stamp = source.flatMap { FileStamp.of(path: $0) }
            if let stamp {
                let same = try catalog.references(withContentOf: stamp)
                let mine = same.first { $0.item.id == (explicitID ?? input.id) } ?? (explicitID == nil ? same.first { $0.source == source } : nil)
                if let mine {
                    let outcome = try catalog.updateMetadata(refreshed(mine.item), annotations: annotations, source: source, file: stamp)
                    try addMissingShazamPeaks(mine.item.id)
                    progress.finish()
                    report(mine.item.id, outcome, mine.duration, input.path)
                    progress.record(bytes: sizes[n], seconds: Date().timeIntervalSince(began), worked: false)
                    continue
                } else if let other = same.first, !args.has("allow-duplicates") {
                    progress.finish()
                    report(explicitID ?? input.id, .duplicate(of: other.item.id), other.duration, input.path)
                    progress.record(bytes: sizes[n], seconds: Date().timeIntervalSince(began), worked: false)
                    continue
                }
            }
            worked = true
            let signature: Signature, tags: [String: String], chroma: ChromaSequence, problems: [String]
            switch prepared {
            case .done(let s, let t, let c, let p): (signature, tags, chroma, problems) = (s, t, c, p)
            case .failed(let error): throw error
            case .skipped:
                // Skipped by the worker (known then), needed now: fingerprint it here.
                let decoder = try openMedia(input.path, sampleRate: catalog.configuration.sampleRate, stream, verbose: verbose)
                (signature, chroma) = try referenceAnalysis(decoder, configuration: catalog.configuration, path: input.path,
                                                      catalogSeconds: catalogSeconds)
                tags = decoder.tags
                problems = InputWarnings.shared.take(input.path)
            }
            // Damaged but decodable media is stored, with what was wrong recorded beside it.
            if !problems.isEmpty { rowProperties[decodeProblemsProperty] = problems.joined(separator: " | ") }
            let fileName = input.nameParts.last ?? input.path
            var item = MediaItem(id: explicitID ?? input.id,
                                 title: MediaItem.nonBlank(given.title) ?? MediaItem.nonBlank(tags["title"]) ?? fileName,
                                 subtitle: given.subtitle ?? tags["album"],
                                 artist: given.artist ?? tags["artist"] ?? tags["album_artist"],
                                 properties: rowProperties)
            var outcome: AddOutcome?
            var near: NearDuplicate?
            var level = input.idLevel
            // Another reference's audio is replaced only on --replace: an explicit id that
            // happens to name other audio is refused (it was replaced silently).
            var replacing = explicitID != nil && args.has(replaceOption.name)
            while outcome == nil {
                do {
                    outcome = try catalog.addReferenceSignature(signature, representing: item, annotations: annotations,
                                                                source: source, replacingOtherAudio: replacing, file: stamp,
                                                                allowingDuplicateAudio: args.has("allow-duplicates"),
                                                                checkingSameRecording: .aligned, reportingNearDuplicate: { near = $0 })
                } catch SoundmarkError.idInUse(_, let id, let other) {
                    // The same file with new content (edited since it was added): replace it.
                    if let other, let source, absolutePath(other) == absolutePath(source) {
                        replacing = true
                        continue
                    }
                    // A default id taken by another file's audio: take more of this file's path.
                    level += 1
                    while let next = input.id(level: level), batchIDs.contains(next) { level += 1 }
                    if explicitID != nil {
                        throw CommandError(message: "\(input.path): id '\(id)' already names other audio\(other.map { " (\($0))" } ?? ""); choose another id, or pass --replace to replace that reference")
                    }
                    guard let next = input.id(level: level) else {
                        throw CommandError(message: "\(input.path): id '\(id)' already names other audio\(other.map { " (\($0))" } ?? ""); pass --id (or an id column in --metadata) to choose another id, with --replace to replace it")
                    }
                    item.id = next
                }
            }
            if case .duplicate(let other) = outcome {
                // Checked under the catalog's write lock: a copy another process stored meanwhile counts.
                progress.finish()
                printError("\(input.path): skipped, the same recording as '\(other)' (use --allow-duplicates to add it as '\(item.id)')")
                progress.record(bytes: sizes[n], seconds: Date().timeIntervalSince(began), worked: worked)
                continue
            }
            if outcome == .added || outcome == .replaced { try catalog.setVersionFeatures(chroma, forReference: item.id) }
            if args.has("shazam"), outcome != .unchanged { try storeShazamPeaks(of: input.path, id: item.id, in: catalog) }
            progress.finish()
            report(item.id, outcome!, signature.duration, input.path)
            if let near { FileHandle.standardError.write(Data((describe(near, id: item.id) + "\n").utf8)) }
        } catch {
            progress.finish()
            printError(describe(error))
            failures += 1
        }
        progress.record(bytes: sizes[n], seconds: Date().timeIntervalSince(began), worked: worked)
    }
    progress.finish()
    if markerFailed { failures = max(failures, 1) }
    refreshIndex(catalog)
    if failures > 0 {
        if inputs.count > 1 { printError("\(failures) of \(inputs.count) file(s) failed") }
        return inputs.count == failures ? Exit.error : Exit.none
    }
    return Exit.ok
}

/// Brings the catalog's persistent index file up to date after changes (once per command); a
/// failure is a warning only: the catalog is intact and the next reader rebuilds the index.
func refreshIndex(_ catalog: Catalog) {
    do {
        try catalog.updateIndex()
    } catch {
        warn("index file not updated (\(describe(error))); the next identify or scan rebuilds it")
    }
}

func runCatalogUpgrade(_ args: ParsedArguments) throws -> Int32 {
    let path = try required(args, "catalog")
    if case .postgres = CatalogLocation(path) {
        let found = try catalogStore(path).server?.storedFormatVersion ?? PostgresCatalog.serverFormatVersion
        // A writable open raises the server's format (the version features' table).
        let catalog = try openCatalog(path)
        try catalog.updateIndex()
        let current = PostgresCatalog.serverFormatVersion
        let what = found == current ? "format version \(current)" : "upgraded from format version \(found) to \(current)"
        FileHandle.standardError.write(Data(displayingServers("\(path): \(what); local cache and index up to date\n").utf8))
        try upgradeVersionFeatures(catalog, path: path)
        return Exit.ok
    }
    let old = try Catalog.upgrade(path: path)
    let what = old == Catalog.formatVersion ? "already format version \(old); index up to date"
        : "upgraded from format version \(old) to \(Catalog.formatVersion); index built"
    FileHandle.standardError.write(Data("\(path): \(what)\n".utf8))
    try upgradeVersionFeatures(try Catalog(path: path), path: path)
    return Exit.ok
}

/// `catalog upgrade`'s last step: computes the version features the references of `catalog`
/// (named `path` in messages) lack and names those it cannot compute.
private func upgradeVersionFeatures(_ catalog: Catalog, path: String) throws {
    let (computed, lacking) = try computeMissingVersionFeatures(catalog, path: path)
    if computed > 0 { FileHandle.standardError.write(Data(displayingServers("\(path): version features computed for \(computed) reference(s)\n").utf8)) }
    if !lacking.isEmpty {
        // Each with its missing file; the hint's command stores them also for a file already in the catalog.
        FileHandle.standardError.write(Data(displayingServers("\(path): \(lacking.count) reference(s) lack version features: \(lacking.joined(separator: ", ")); compute them with 'soundmark catalog add --catalog \(path) --id ID FILE'\n").utf8))
    }
}

func required(_ args: ParsedArguments, _ name: String) throws -> String {
    guard let v = args.value(name) else { throw UsageError(message: "--\(name) is required") }
    guard !v.isEmpty else { throw UsageError(message: "--\(name) needs a non-empty value") }
    return v
}

func runCatalogList(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    let refs = try catalog.references()
    if args.value("format") == "json" {
        print(versionedJSON([("references", .array(refs.map(referenceJSON)))]).text)
        return Exit.ok
    }
    for r in refs {
        let who = r.item.byline()
        print("\(r.item.id)\t\(formatClock(r.duration))\t\(who)")
    }
    let hours = refs.reduce(0) { $0 + $1.duration } / 3600
    let bytes = refs.reduce(0) { $0 + $1.postingBytes }
    FileHandle.standardError.write(Data(String(format: "%d reference(s), %.2f h, %.2f MB of postings\n",
                                               refs.count, hours, Double(bytes) / 1e6).utf8))
    return Exit.ok
}

func referenceJSON(_ r: ReferenceInfo) -> JSONOutput {
    guard case .object(var members) = r.item.json else { return r.item.json }
    members += [("duration", .seconds(r.duration)), ("postings", .integer(r.postingCount)),
                ("annotations", .integer(r.annotationCount)), ("source", .optional(r.source))]
    return .object(members)
}

func runCatalogShow(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    let id = args.positional[0]
    guard let r = try catalog.reference(id: id) else { throw SoundmarkError.unknownReference(path: catalog.path, id: id) }
    let annotations = try catalog.annotations(id: id)
    if args.value("format") == "json" {
        guard case .object(var members) = referenceJSON(r) else { return Exit.error }
        if let m = try catalog.marker(id: id) { members.append(("marker", .integer(Int(m)))) }
        members.append(("annotationList", .array(annotations.map {
            .object([("start", .seconds($0.start)), ("end", .seconds($0.end)), ("text", .string($0.text))])
        })))
        print(versionedJSON(members).text)
        return Exit.ok
    }
    print("id:        \(r.item.id)")
    print("title:     \(r.item.title ?? "")")
    if let s = r.item.subtitle { print("subtitle:  \(s)") }
    print("artist:    \(r.item.artist ?? "")")
    print("duration:  \(formatClock(r.duration)) (\(String(format: "%.3f", r.duration)) s)")
    print("postings:  \(r.postingCount) (\(r.postingBytes) bytes)")
    if let s = r.source { print("source:    \(s)" + (missingSource(s) == nil ? "" : "  (missing)")) }
    if let m = try catalog.marker(id: id) { print("marker:    \(describePayload(m))") }
    for (k, v) in r.item.properties.sorted(by: { $0.key < $1.key }) { print("property:  \(k)=\(v)") }
    print("annotations: \(annotations.count)")
    for a in annotations {
        print("  \(formatTimestamp(a.start)) --> \(formatTimestamp(a.end))  \(a.text.replacingOccurrences(of: "\n", with: " / "))")
    }
    return Exit.ok
}

func runCatalogRemove(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try openCatalog(try required(args, "catalog"))
    var missing = 0
    for id in args.positional {
        if try catalog.remove(id: id) {
            FileHandle.standardError.write(Data("\(id): removed\n".utf8))
        } else {
            printError(SoundmarkError.unknownReference(path: catalog.path, id: id).errorDescription ?? id)
            missing += 1
        }
    }
    refreshIndex(catalog)
    return missing == 0 ? Exit.ok : Exit.none
}

func runCatalogAnnotate(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try openCatalog(try required(args, "catalog"))
    if (try? FileManager.default.attributesOfItem(atPath: args.positional[1])[.size] as? Int) == 0 {
        // One line (the reader's "file is empty" warning and this error said it twice).
        printError("\(args.positional[1]): an empty file, no annotations found; the stored ones are kept")
        return Exit.error
    }
    let annotations = try readAnnotations(args.positional[1], encoding: args.value("encoding"))
    if annotations.isEmpty {
        printError("\(args.positional[1]): no annotations found; the stored ones are kept")
        return Exit.error
    }
    try catalog.setAnnotations(annotations, forReference: args.positional[0])
    FileHandle.standardError.write(Data("\(args.positional[0]): \(annotations.count) annotation(s) stored\n".utf8))
    return Exit.ok
}

/// `h:mm:ss` (or `m:ss`).
func formatClock(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds <= Annotation.maximumTime else { return seconds > 0 ? "\(seconds) s" : "00:00:00" }
    let s = max(0, Int(seconds.rounded()))
    return String(format: "%02d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
}

/// `hh:mm:ss.mmm`, with a leading `-` for negative times (a clip that starts before the reference).
/// A value that is not finite or beyond ``Annotation/maximumTime`` (an old catalog may hold one)
/// is written as plain seconds instead of being converted to an integer.
func formatTimestamp(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) <= Annotation.maximumTime else { return "\(seconds) s" }
    let signed = Int((seconds * 1000).rounded()), ms = abs(signed)
    return String(format: "%@%02d:%02d:%02d.%03d", signed < 0 ? "-" : "", ms / 3_600_000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000)
}

let encodingOption = OptionSpec(name: "encoding", value: "NAME",
                                help: "text encoding of annotation files (default: detected; utf-8, utf-16le/be, latin1, cp1250…cp1258, koi8-r, cp949, shift_jis, gbk, big5 or any iconv name)")

let catalogCommands: [CommandSpec] = [
    CommandSpec(words: ["catalog", "add"], usage: "FILE_OR_FOLDER...",
                summary: "fingerprint media files (folders are walked) and store them as references",
                details: """
                Title and artist default to the file's tags, then its name; the id defaults to a slug of the
                file name (of the path inside a walked folder; letters of every script are kept). Files of a
                batch whose ids would collide take more of their path (a/01.ogg, b/01.ogg: a-01, b-01), as does
                a file whose id already names another file's audio. Per-file ids, titles, artists, properties
                and annotations come from --metadata. A file unchanged since it was added (same size and
                modification time, or same content digest) is skipped without decoding; re-adding the same audio
                is skipped; re-adding an id with changed metadata updates it. One bad file is reported and the
                batch goes on (exit code 1 when some failed, 2 when all failed). A reference may be up to 74.6 h
                long (2^24 frames); longer audio is refused with a message. A reference under 10 s that identify
                would not find even in its own audio is refused, the minimum stated (about 1.5-2.5 s of music);
                one that scan would not find is added with a warning (scan needs more evidence of a play the
                more audio the catalog holds).
                Damaged but decodable media is stored with the decoder's warnings in its "decode-problems"
                property (catalog show lists it).
                """,
                options: [catalogOption,
                          OptionSpec(name: "metadata", value: "FILE",
                                     help: "per-file metadata, CSV (header: path,id,title,subtitle,artist,properties,annotations; properties as key=value;key=value) or JSON [{\"path\":…}]; relative paths are from the file's folder; without FILE arguments its files are added"),
                          OptionSpec(name: "id", value: "ID", help: "reference id (one file only)"),
                          OptionSpec(name: "title", value: "TEXT", help: "title (one file only; default: tag, else file name)"),
                          OptionSpec(name: "subtitle", value: "TEXT", help: "subtitle (default: album tag)"),
                          OptionSpec(name: "artist", value: "TEXT", help: "artist (default: tag)"),
                          OptionSpec(name: "property", value: "KEY=VALUE", help: "custom property (repeatable)", repeatable: true),
                          OptionSpec(name: "annotations", value: "FILE", help: "timed annotations (SRT, WebVTT, ASS/SSA or JSON) in reference time (one file only)"),
                          OptionSpec(name: "marker", value: "N", help: "the audio-marker payload this reference carries (one file only; 0…4294967295 or 0x…): scan and monitor then read markers and report them per segment"),
                          OptionSpec(name: "progress", value: nil, help: "show progress (count, time left) on stderr even when it is not a terminal"),
                          encodingOption, streamOption, languageOption, verboseStreamOption, allowDuplicatesOption, replaceOption, jobsOption,
                          shazamPeaksOption],
                positional: 0...Int.max, run: runCatalogAdd),
    CommandSpec(words: ["catalog", "list"], usage: "", summary: "list the references (id, duration, title – artist)",
                details: "", options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 0...0, run: runCatalogList),
    CommandSpec(words: ["catalog", "show"], usage: "ID", summary: "show one reference with its annotations",
                details: "", options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 1...1, run: runCatalogShow),
    CommandSpec(words: ["catalog", "remove"], usage: "ID...", summary: "remove references with their postings and annotations",
                details: "", options: [catalogOption], positional: 1...Int.max, run: runCatalogRemove),
    CommandSpec(words: ["catalog", "annotate"], usage: "ID FILE",
                summary: "replace a reference's annotations from an SRT, WebVTT, ASS/SSA or JSON file",
                details: "JSON is [{\"start\":s,\"end\":s,\"text\":\"…\"}]. Skipped entries are reported with their line number.",
                options: [catalogOption, encodingOption], positional: 2...2, run: runCatalogAnnotate),
    CommandSpec(words: ["catalog", "upgrade"], usage: "",
                summary: "upgrade a catalog written by an older soundmark and (re)build its index file",
                details: """
                A catalog of an older format version gets the current format's records (one transaction; the
                current version is the "catalog format" of 'soundmark --version'), its persistent index
                (CATALOG.index, next to the catalog) and the version features of 'identify/scan --versions',
                computed from each reference's source file; references whose source is gone are named, with
                the command that stores them. On a current catalog it only rebuilds a missing or stale index
                file and computes missing version features. A PostgreSQL catalog gets the server's current
                format (its version-features table), then the same version features, stored on the server.
                """,
                options: [catalogOption], positional: 0...0, run: runCatalogUpgrade),
]
