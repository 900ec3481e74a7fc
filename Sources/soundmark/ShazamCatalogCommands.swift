import Foundation
import Soundmark

/// The reference metadata and annotations that a ShazamKit entry's media items describe: the
/// first item without `sh_timeRanges` gives title, subtitle, artist and properties (other `sh_`
/// keys kept under their names); items with `sh_timeRanges` become annotations (one per range,
/// the text from `sh_title`, else `sh_subtitle`, else a `text` property).
func referenceMetadata(of entry: ShazamCatalog.Entry, id: String) -> (MediaItem, [Annotation]) {
    var item = MediaItem(id: id)
    var annotations: [Annotation] = []
    let main = entry.mediaItems.first { $0.timeRanges.isEmpty } ?? entry.mediaItems.first.map {
        ShazamMediaItem(title: $0.title, subtitle: $0.subtitle, artist: $0.artist, otherShazamKeys: $0.otherShazamKeys)
    }
    if let main {
        item.title = main.title
        item.subtitle = main.subtitle
        item.artist = main.artist
        item.properties = main.properties.merging(main.otherShazamKeys) { a, _ in a }
    }
    for m in entry.mediaItems where !m.timeRanges.isEmpty {
        let text = m.title ?? m.subtitle ?? m.properties["text"] ?? ""
        for r in m.timeRanges { annotations.append(Annotation(start: r.lowerBound, end: r.upperBound, text: text)) }
    }
    annotations.sort { ($0.start, $0.end) < ($1.start, $1.end) }
    return (item, annotations)
}

/// A catalog that could not be opened or created during `catalog import`: ends the command.
private struct CatalogOpenFailure: Error { let error: Error }

/// `soundmark catalog import FILE...`. A `.shazamcatalog` that holds no signatures is refused
/// (one line naming the file, counted as a failed file): importing it would add nothing, which
/// is almost always a wrong or failed export, and a script must see it. The catalog is created
/// only when a first reference is imported.
func runCatalogImport(_ args: ParsedArguments) throws -> Int32 {
    let catalogPath = try required(args, "catalog")
    var opened: Catalog?
    func openImportCatalog() throws -> Catalog {
        if let opened { return opened }
        do { opened = try openCatalog(catalogPath, create: true) } catch { throw CatalogOpenFailure(error: error) }
        return opened!
    }
    // An existing catalog is opened at once (a file that is not a catalog, or a server that
    // cannot be reached, ends the command before any import).
    if !CatalogLocation(catalogPath).isMissingFile {
        opened = try openCatalog(catalogPath, create: true)
    }
    if args.value("id") != nil && args.positional.count != 1 { throw UsageError(message: "--id names one reference: give one file") }
    var failed = 0, imported = 0
    for path in args.positional {
        do {
            let entries: [ShazamCatalog.Entry]
            switch try ShazamFile(path: path) {
            case .catalog(let c):
                guard !c.entries.isEmpty else {
                    throw SignatureReadError(message: "\(path): the .shazamcatalog holds no signatures (0 references): nothing imported")
                }
                entries = c.entries
            case .signature(let s):
                let base = slug(((path as NSString).lastPathComponent as NSString).deletingPathExtension)
                entries = [ShazamCatalog.Entry(id: args.value("id") ?? (base.isEmpty ? "shazam" : base), signature: s)]
            }
            if args.value("id") != nil, entries.count != 1 {
                throw SignatureReadError(message: "\(path): --id names one reference but the file holds \(entries.count)")
            }
            for entry in entries {
                try Catalog.checkImportable(entry.signature, source: path)
                let catalog = try openImportCatalog()
                let id = args.value("id") ?? entry.id
                if let problem = referenceIDProblem(id) {
                    throw SignatureReadError(message: "\(path): an entry's id \(problem) (give one with --id)")
                }
                // A reference made from audio keeps its fingerprint: Shazam peaks alone would replace it.
                if let existing = try catalog.reference(id: id), existing.postingCount > 0 {
                    throw SignatureReadError(message: "\(path): reference '\(id)' is already in \(catalog.path) with its audio fingerprint; remove it first (or import under another --id)")
                }
                var (item, annotations) = referenceMetadata(of: entry, id: id)
                if let t = args.value("title") { item.title = t }
                if let t = args.value("artist") { item.artist = t }
                let outcome = try catalog.importShazamReference(entry.signature, representing: item, annotations: annotations, source: path)
                imported += 1
                print(String(format: "%@ %@ (%.1f s, %d Shazam peaks, %d annotation(s)) from %@", outcome == .replaced ? "replaced" : "imported",
                             id, entry.signature.duration, entry.signature.peakCounts.reduce(0, +), annotations.count, path))
            }
        } catch let e as UsageError {
            throw e
        } catch let e as CatalogOpenFailure {
            throw e.error
        } catch {
            printError(describe(error))
            failed += 1
        }
    }
    return failed == 0 ? Exit.ok : (imported == 0 ? Exit.error : Exit.none)
}

func runCatalogExport(_ args: ParsedArguments) throws -> Int32 {
    guard args.value("format") == "shazamcatalog" else { throw UsageError(message: "--format shazamcatalog is required (the only export format)") }
    guard let output = args.value("output") else { throw UsageError(message: "-o/--output FILE is required") }
    let catalog = try openCatalog(try required(args, "catalog"), readOnly: true)
    let stored = try catalog.shazamSignatures()
    var refs = try catalog.references()
    if !args.positional.isEmpty {
        let wanted = Set(args.positional)
        for id in args.positional where !refs.contains(where: { $0.item.id == id }) {
            throw SoundmarkError.unknownReference(path: catalog.path, id: id)
        }
        refs = refs.filter { wanted.contains($0.item.id) }
    }
    // Every reference that needs its source file has it, checked before any is read.
    let unreadable = refs.compactMap { ref -> String? in
        guard stored[ref.item.id] == nil else { return nil }
        guard let source = ref.source else { return "'\(ref.item.id)' (added from standard input: no source file)" }
        return missingSource(source).map { "'\(ref.item.id)' (source file \($0))" }
    }
    if !unreadable.isEmpty {
        throw SignatureReadError(message: "\(catalog.path): no Shazam peaks and no source file to compute them from for "
                                 + "\(unreadable.joined(separator: ", ")); store them with 'soundmark catalog add --catalog "
                                 + "\(args.value("catalog")!) --shazam --id ID FILE'")
    }
    var entries: [ShazamCatalog.Entry] = []
    for ref in refs {
        let signature: ShazamSignature
        if let s = stored[ref.item.id] {
            signature = s
        } else if let source = ref.source, FileManager.default.fileExists(atPath: source) {
            // No Shazam peaks stored: computed from the reference's source file, if it still holds
            // the audio the reference was made from (same size and content digest).
            guard let stamp = FileStamp.of(path: source),
                  try catalog.references(withContentOf: stamp).contains(where: { $0.item.id == ref.item.id }) else {
                throw SignatureReadError(message: "\(catalog.path): reference '\(ref.item.id)' has no Shazam peaks and its source file '\(source)' has changed since it was added (add it again with --shazam --id \(ref.item.id))")
            }
            signature = try ShazamPeakGenerator.signature(ofMedia: source, warning: { warn($0) })
        } else {
            throw SignatureReadError(message: "\(catalog.path): reference '\(ref.item.id)' has no Shazam peaks and its source file \(ref.source.map { "'\($0)' " } ?? "")is not available (add it again with --shazam --id \(ref.item.id))")
        }
        var properties = ref.item.properties
        var other: [String: String] = [:]
        for (k, v) in properties where k.hasPrefix("sh_") { other[k] = v; properties[k] = nil }
        var items = [ShazamMediaItem(title: ref.item.title, subtitle: ref.item.subtitle, artist: ref.item.artist,
                                     otherShazamKeys: other, properties: properties)]
        for a in try catalog.annotations(id: ref.item.id) {
            items.append(ShazamMediaItem(title: a.text, timeRanges: [a.start...a.end]))
        }
        entries.append(ShazamCatalog.Entry(id: ref.item.id, signature: signature, mediaItems: items))
    }
    let data = ShazamCatalog(entries: entries).dataRepresentation
    try writeOutputFile(data, to: output, what: "the catalog file")
    printError("\(output): \(entries.count) signature(s), \(data.count) bytes")
    return Exit.ok
}

let shazamCatalogCommands: [CommandSpec] = [
    CommandSpec(words: ["catalog", "import"], usage: "FILE...",
                summary: "add the signatures of .shazamcatalog / .shazamsignature files as references (no audio)",
                details: """
                Each signature becomes a reference matched through its Shazam peaks: its id is the catalog entry's id
                (a .shazamsignature's file name), title, subtitle, artist and custom keys come from its media item,
                media items with sh_timeRanges become annotations. An existing id is replaced. A .shazamcatalog that
                holds no signatures is refused (one line, counted as a failed file; no catalog is created for it).
                Exit code 0: all imported, 1: some files failed, 2: none imported.
                """,
                options: [catalogOption, OptionSpec(name: "id", value: "ID", help: "reference id (one signature only)"),
                          OptionSpec(name: "title", value: "TEXT", help: "title (overrides the media item's)"),
                          OptionSpec(name: "artist", value: "TEXT", help: "artist (overrides the media item's)")],
                positional: 1...Int.max, run: runCatalogImport),
    CommandSpec(words: ["catalog", "export"], usage: "[ID...]",
                summary: "write references (all, or the ids given) to a ShazamKit .shazamcatalog",
                details: """
                Per reference: its Shazam signature (stored by catalog add --shazam or catalog import, else computed
                from its source file) and a media item with sh_title, sh_subtitle, sh_artist and the custom properties;
                each annotation becomes a media item with sh_timeRanges and its text as sh_title. Importing the file
                gives back the same references.
                """,
                options: [catalogOption, OptionSpec(name: "format", value: "shazamcatalog", help: "export format (required)"),
                          outputOption(help: "the .shazamcatalog to write (required)")],
                positional: 0...Int.max, run: runCatalogExport),
]

/// `catalog add --shazam`: also store Shazam-format peaks.
let shazamPeaksOption = OptionSpec(name: "shazam", value: nil,
    help: "also store Shazam-format peaks (a second decode at 16 kHz, about 1 MB per hour): Shazam signatures then match these references, and catalog export needs no source files")

/// Computes and stores the Shazam peaks of a just-added reference.
func storeShazamPeaks(of path: String, id: String, in catalog: Catalog) throws {
    guard path != "-" else { throw SignatureReadError(message: "-: Shazam peaks need a file or URL (standard input is read once)") }
    let signature = try ShazamPeakGenerator.signature(ofMedia: path, warning: { warn($0) })
    try catalog.setShazamSignature(signature, forReference: id)
}

/// Why a reference's stored source `source` cannot be read now ("'PATH' is missing"), or nil
/// when the file is there (or it is a URL). A relative path was stored by a soundmark before
/// sources were stored absolute: it is relative to the folder `catalog add` ran in, and the
/// note says so.
func missingSource(_ source: String) -> String? {
    if source.contains("://") || FileManager.default.fileExists(atPath: source) { return nil }
    return source.hasPrefix("/") ? "'\(source)' is missing"
        : "'\(source)' is missing here (stored relative to the folder catalog add ran in)"
}
