import Foundation
import Soundmark

/// `soundmark signature show FILE`: what a ShazamKit file (or a soundmark signature file) holds.
func runSignatureShow(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "text"
    let path = args.positional[0]
    let file = try ShazamFile(path: path, requireValidCRC: false)
    switch file {
    case .signature(let s):
        if format == "json" { print(s.summaryJSON.text) } else { print(s.summaryLines.joined(separator: "\n")) }
        return s.crcValid ? Exit.ok : Exit.none
    case .catalog(let c):
        if format == "json" {
            let entries = c.entries.map { e in
                JSONOutput.object([("id", .string(e.id)), ("signature", e.signature.summaryJSON),
                                   ("mediaItems", .array(e.mediaItems.map(\.summaryJSON)))])
            }
            print(JSONOutput.object([("format", .string("shazamcatalog")), ("name", .string(c.name)), ("version", .integer(c.version)),
                                     ("signatures", .array(entries))]).text)
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
    CommandSpec(words: ["signature", "show"], usage: "FILE", summary: "print what a signature or ShazamKit catalog file holds",
                details: """
                Reads a .shazamsignature (prefix versions 1 and 2), bare vnd.shazam.sig data (.bin), a
                data:audio/vnd.shazam.sig;base64,… URI or a .shazamcatalog, recognised by content, and prints its format,
                sample rate, duration, peaks per band and CRC status; for a catalog, each signature and its media items
                (sh_title, sh_subtitle, sh_artist, sh_timeRanges and custom keys). Exit code 1 when a CRC does not match.
                """,
                options: [OptionSpec(name: "format", value: "text|json", help: "output format (default: text)")],
                positional: 1...1, run: runSignatureShow),
]
