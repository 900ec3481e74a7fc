import Foundation
import Soundmark

let soundmarkVersion = "0.1.0"

/// File extensions picked up when a folder is walked (explicit files are tried whatever their name).
let mediaExtensions: Set<String> = ["mp3", "m4a", "mp4", "m4v", "mkv", "mka", "webm", "ogg", "oga", "opus", "flac",
                                    "wav", "wave", "aif", "aiff", "aac", "ac3", "wma", "wmv", "ts", "mts", "avi", "mov", "caf", "au"]

let catalogOption = OptionSpec(name: "catalog", value: "FILE", help: "the catalog (an SQLite file)")
let streamOption = OptionSpec(name: "stream", value: "N", help: "decode audio stream N (default: the best audio stream)")

/// A stable id from a path: lowercase ASCII letters and digits, other runs become '-'.
func slug(_ text: String) -> String {
    var out = ""
    var dash = false
    for u in text.lowercased().unicodeScalars {
        if (u >= "a" && u <= "z") || (u >= "0" && u <= "9") {
            out.unicodeScalars.append(u)
            dash = false
        } else if !dash && !out.isEmpty {
            out += "-"
            dash = true
        }
    }
    while out.hasSuffix("-") { out.removeLast() }
    return out.isEmpty ? "reference" : out
}

func streamIndex(_ args: ParsedArguments) throws -> Int? {
    guard let s = args.value("stream") else { return nil }
    guard let n = Int(s), n >= 0 else { throw UsageError(message: "--stream takes a stream index (0, 1, …), got '\(s)'") }
    return n
}

/// Inputs of `catalog add`: explicit files, and media files found by walking folders
/// (with the id slug taken from the path relative to the folder).
func expandInputs(_ paths: [String]) -> [(path: String, idStem: String)] {
    var result: [(String, String)] = []
    let fm = FileManager.default
    for path in paths {
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            let base = URL(fileURLWithPath: path).standardizedFileURL
            var found: [(String, String)] = []
            if let walker = fm.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]) {
                for case let url as URL in walker where mediaExtensions.contains(url.pathExtension.lowercased()) {
                    let full = url.standardizedFileURL.path
                    var relative = String(full.dropFirst(base.path.count))
                    while relative.hasPrefix("/") { relative.removeFirst() }
                    found.append((full, (relative as NSString).deletingPathExtension))
                }
            }
            result += found.sorted { $0.0 < $1.0 }
        } else {
            let stem = path == "-" ? "stdin" : ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            result.append((path, stem))
        }
    }
    return result
}

func readAnnotations(_ path: String, encoding: String?) throws -> [Annotation] {
    guard FileManager.default.fileExists(atPath: path) else {
        throw UsageError(message: "\(path): no such annotation file")
    }
    let enc: String.Encoding?
    switch encoding?.lowercased() {
    case nil: enc = nil
    case "utf-8", "utf8": enc = .utf8
    case "utf-16", "utf16": enc = .utf16
    case "utf-16le": enc = .utf16LittleEndian
    case "utf-16be": enc = .utf16BigEndian
    case "latin1", "iso-8859-1": enc = .isoLatin1
    case "cp1252", "windows-1252": enc = .windowsCP1252
    case "cp1250", "windows-1250": enc = .windowsCP1250
    case let other?: throw UsageError(message: "unknown --encoding '\(other)' (utf-8, utf-16, utf-16le, utf-16be, latin1, cp1252, cp1250)")
    }
    let result = try AnnotationReader.read(contentsOf: URL(fileURLWithPath: path), format: nil, encoding: enc)
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

/// Prints a progress bar on stderr when it is a terminal.
struct Progress {
    let total: Int
    let enabled = isatty(2) != 0

    func show(_ done: Int, _ name: String) {
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let label = name.count > 40 ? "…" + name.suffix(39) : name
        FileHandle.standardError.write(Data("\r[\(bar)] \(done)/\(total) \(label)\u{1B}[K".utf8))
    }

    func finish() {
        if enabled && total > 0 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

func runCatalogAdd(_ args: ParsedArguments) throws -> Int32 {
    let catalogPath = try required(args, "catalog")
    let inputs = expandInputs(args.positional)
    if inputs.isEmpty { throw UsageError(message: "no media files found in \(args.positional.joined(separator: ", "))") }
    if args.value("id") != nil && inputs.count > 1 {
        throw UsageError(message: "--id names one reference but \(inputs.count) files were given")
    }
    let properties = try parseProperties(args.all("property"))
    let annotations = try args.value("annotations").map { try readAnnotations($0, encoding: args.value("encoding")) }
    let stream = try streamIndex(args)
    let catalog = try Catalog(path: catalogPath, create: true)
    var failures = 0
    let duplicates = args.has("allow-duplicates") ? nil : DuplicateCheck(catalog: catalog)
    let progress = Progress(total: inputs.count)
    for (n, input) in inputs.enumerated() {
        progress.show(n, input.path)
        do {
            let (signature, tags) = try SignatureGenerator.signature(ofMedia: input.path, configuration: catalog.configuration,
                                                                       streamIndex: stream) { warn($0) }
            let fileName = ((input.path as NSString).lastPathComponent as NSString).deletingPathExtension
            let item = MediaItem(id: args.value("id") ?? slug(input.idStem),
                                 title: args.value("title") ?? tags["title"] ?? fileName,
                                 subtitle: args.value("subtitle") ?? tags["album"],
                                 artist: args.value("artist") ?? tags["artist"] ?? tags["album_artist"],
                                 properties: properties)
            if let other = try duplicates?.duplicate(of: signature, id: item.id) {
                progress.finish()
                printError("\(input.path): skipped, the same recording as '\(other)' (use --allow-duplicates to add it as '\(item.id)')")
                continue
            }
            let outcome = try catalog.addReferenceSignature(signature, representing: item, annotations: annotations,
                                                            source: input.path == "-" ? nil : input.path,
                                                            replacingOtherAudio: args.value("id") != nil)
            if outcome == .added || outcome == .replaced { duplicates?.didAdd(signature, as: item) }
            progress.finish()
            let what: String
            switch outcome {
            case .added: what = "added"
            case .replaced: what = "replaced (new audio)"
            case .updated: what = "updated"
            case .unchanged: what = "skipped (already in the catalog, unchanged)"
            case .duplicate(let other): what = "skipped (same audio as '\(other)')"
            }
            FileHandle.standardError.write(Data(String(format: "%@: %@ %.1f s, %@\n", item.id, what, signature.duration, input.path).utf8))
        } catch {
            progress.finish()
            printError(describe(error))
            failures += 1
        }
    }
    progress.finish()
    if failures > 0 {
        if inputs.count > 1 { printError("\(failures) of \(inputs.count) file(s) failed") }
        return inputs.count == failures ? Exit.error : Exit.none
    }
    return Exit.ok
}

func required(_ args: ParsedArguments, _ name: String) throws -> String {
    guard let v = args.value(name) else { throw UsageError(message: "--\(name) is required") }
    return v
}

func runCatalogList(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try Catalog(path: try required(args, "catalog"), readOnly: true)
    let refs = try catalog.references()
    if args.value("format") == "json" {
        print(JSONOutput.object([("references", .array(refs.map(referenceJSON)))]).text)
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
    let catalog = try Catalog(path: try required(args, "catalog"), readOnly: true)
    let id = args.positional[0]
    guard let r = try catalog.reference(id: id) else { throw SoundmarkError.unknownReference(path: catalog.path, id: id) }
    let annotations = try catalog.annotations(id: id)
    if args.value("format") == "json" {
        guard case .object(var members) = referenceJSON(r) else { return Exit.error }
        members.append(("annotationList", .array(annotations.map {
            .object([("start", .seconds($0.start)), ("end", .seconds($0.end)), ("text", .string($0.text))])
        })))
        print(JSONOutput.object(members).text)
        return Exit.ok
    }
    print("id:        \(r.item.id)")
    print("title:     \(r.item.title ?? "")")
    if let s = r.item.subtitle { print("subtitle:  \(s)") }
    print("artist:    \(r.item.artist ?? "")")
    print("duration:  \(formatClock(r.duration)) (\(String(format: "%.3f", r.duration)) s)")
    print("postings:  \(r.postingCount) (\(r.postingBytes) bytes)")
    if let s = r.source { print("source:    \(s)") }
    for (k, v) in r.item.properties.sorted(by: { $0.key < $1.key }) { print("property:  \(k)=\(v)") }
    print("annotations: \(annotations.count)")
    for a in annotations {
        print("  \(formatTimestamp(a.start)) --> \(formatTimestamp(a.end))  \(a.text.replacingOccurrences(of: "\n", with: " / "))")
    }
    return Exit.ok
}

func runCatalogRemove(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try Catalog(path: try required(args, "catalog"))
    var missing = 0
    for id in args.positional {
        if try catalog.remove(id: id) {
            FileHandle.standardError.write(Data("\(id): removed\n".utf8))
        } else {
            printError(SoundmarkError.unknownReference(path: catalog.path, id: id).errorDescription ?? id)
            missing += 1
        }
    }
    return missing == 0 ? Exit.ok : Exit.none
}

func runCatalogAnnotate(_ args: ParsedArguments) throws -> Int32 {
    let catalog = try Catalog(path: try required(args, "catalog"))
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
    let s = max(0, Int(seconds.rounded()))
    return String(format: "%02d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
}

/// `hh:mm:ss.mmm`, with a leading `-` for negative times (a clip that starts before the reference).
func formatTimestamp(_ seconds: Double) -> String {
    let signed = Int((seconds * 1000).rounded()), ms = abs(signed)
    return String(format: "%@%02d:%02d:%02d.%03d", signed < 0 ? "-" : "", ms / 3_600_000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000)
}

let encodingOption = OptionSpec(name: "encoding", value: "NAME",
                                help: "text encoding of annotation files (default: detected; utf-8, utf-16le/be, cp1252, latin1, cp1250)")

let catalogCommands: [CommandSpec] = [
    CommandSpec(words: ["catalog", "add"], usage: "FILE_OR_FOLDER...",
                summary: "fingerprint media files (folders are walked) and store them as references",
                details: """
                Title and artist default to the file's tags, then its name; the id defaults to a slug of the
                file name (of the path inside a walked folder). Re-adding the same audio is skipped; re-adding
                an id with changed metadata updates it. One bad file is reported and the batch goes on
                (exit code 1 when some failed, 2 when all failed).
                """,
                options: [catalogOption,
                          OptionSpec(name: "id", value: "ID", help: "reference id (one file only)"),
                          OptionSpec(name: "title", value: "TEXT", help: "title (default: tag, else file name)"),
                          OptionSpec(name: "subtitle", value: "TEXT", help: "subtitle (default: album tag)"),
                          OptionSpec(name: "artist", value: "TEXT", help: "artist (default: tag)"),
                          OptionSpec(name: "property", value: "KEY=VALUE", help: "custom property (repeatable)", repeatable: true),
                          OptionSpec(name: "annotations", value: "FILE", help: "timed annotations (SRT, WebVTT or JSON) in reference time"),
                          encodingOption, streamOption, allowDuplicatesOption],
                positional: 1...Int.max, run: runCatalogAdd),
    CommandSpec(words: ["catalog", "list"], usage: "", summary: "list the references (id, duration, title – artist)",
                details: "", options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 0...0, run: runCatalogList),
    CommandSpec(words: ["catalog", "show"], usage: "ID", summary: "show one reference with its annotations",
                details: "", options: [catalogOption, OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 1...1, run: runCatalogShow),
    CommandSpec(words: ["catalog", "remove"], usage: "ID...", summary: "remove references with their postings and annotations",
                details: "", options: [catalogOption], positional: 1...Int.max, run: runCatalogRemove),
    CommandSpec(words: ["catalog", "annotate"], usage: "ID FILE",
                summary: "replace a reference's annotations from an SRT, WebVTT or JSON file",
                details: "JSON is [{\"start\":s,\"end\":s,\"text\":\"…\"}]. Skipped entries are reported with their line number.",
                options: [catalogOption, encodingOption], positional: 2...2, run: runCatalogAnnotate),
]
