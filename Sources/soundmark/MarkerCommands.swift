import Foundation
import Soundmark

/// A 32-bit payload from decimal (`12345`) or hexadecimal (`0x3039`) text.
func parsePayload(_ text: String, option: String = "payload") throws -> UInt32 {
    let value: UInt32?
    if text.lowercased().hasPrefix("0x") { value = UInt32(text.dropFirst(2), radix: 16) } else { value = UInt32(text) }
    guard let value else { throw UsageError(message: "--\(option) takes a number 0…4294967295 (or 0x0…0xFFFFFFFF), got '\(text)'") }
    return value
}

/// `payload 12345 (0x00003039)`.
func describePayload(_ payload: UInt32) -> String {
    "payload \(payload) (0x\(String(format: "%08X", payload)))"
}

func runMarkerEmbed(_ args: ParsedArguments) throws -> Int32 {
    guard let text = args.value("payload") else { throw UsageError(message: "--payload is required") }
    let payload = try parsePayload(text)
    let strength = try numberOption(args, "strength", "dB", in: MarkerEmbedder.strengthRange) ?? MarkerEmbedder.defaultStrength
    let (input, output) = (args.positional[0], args.positional[1])
    let summary = try MarkerWriter.embed(input: input, output: output, embedder: MarkerEmbedder(payload: payload, strength: strength),
                                         streamIndex: try streamIndex(args)) { warn($0) }
    if args.has("verbose") {
        FileHandle.standardError.write(Data(String(format: "soundmark: %@: %.1f s marked with %@ at %.0f dB, %@ %d Hz %d ch\n",
                                                   output, summary.duration, describePayload(payload), strength, summary.encoder,
                                                   summary.sampleRate, summary.channels).utf8))
    }
    return Exit.ok
}

func runMarkerDetect(_ args: ParsedArguments) throws -> Int32 {
    let format = args.value("format") ?? "text"
    let source = args.positional[0]
    let decoder = try openMedia(source, sampleRate: MarkerLayout.sampleRate, try streamChoice(args), verbose: args.has("verbose"))
    let found = try MarkerDetector(speedSearch: args.has("speed-search")).detect(decoding: decoder)
    if format == "json" {
        let markers = found.map { d -> JSONOutput in
            .object([("payload", .integer(Int(d.payload))), ("start", .seconds(d.start)), ("end", .seconds(d.end)),
                     ("confidence", .number(d.confidence, decimals: 3)), ("windows", .integer(d.windows))])
        }
        print(versionedJSON([("source", .string(source)), ("markers", .array(markers))]).text)
    } else {
        for d in found {
            print(String(format: "%@ from %@ to %@, confidence %.2f", describePayload(d.payload), formatTimestamp(d.start),
                         formatTimestamp(d.end), d.confidence))
        }
    }
    return found.isEmpty ? Exit.none : Exit.ok
}

let markerCommands: [CommandSpec] = [
    CommandSpec(words: ["marker", "embed"], usage: "INPUT OUTPUT", summary: "write a copy of INPUT carrying an inaudible 32-bit payload",
                details: """
                The payload (with a CRC-24 and a convolutional code) is repeated every 5.12 s through the whole file, as
                patchwork in the 62.5–4000 Hz band at --strength dB under the audio (8 dB less under 500 Hz); it is decodable from any 10 s of it.
                OUTPUT's extension picks the format and encoder (.wav, .flac, .mp3, .m4a, .ogg, .opus, .mkv, .mp4…);
                sample rate and channels are kept where the encoder allows, video streams copied when the container
                can hold them. INPUT is read twice (not standard input).
                """,
                options: [OptionSpec(name: "payload", value: "N", help: "the 32-bit payload: 0…4294967295 or 0x0…0xFFFFFFFF (required)"),
                          OptionSpec(name: "strength", value: "DB",
                                     help: "mark level relative to the audio, dB, \(Int(MarkerEmbedder.strengthRange.lowerBound))…\(Int(MarkerEmbedder.strengthRange.upperBound)) (default \(Int(MarkerEmbedder.defaultStrength))): higher is more robust and more audible"),
                          streamOption, OptionSpec(name: "verbose", value: nil, help: "report what was written on stderr")],
                positional: 2...2, run: runMarkerEmbed),
    CommandSpec(words: ["marker", "detect"], usage: "MEDIA", summary: "print the audio-marker payloads found in MEDIA (file, URL or -)",
                details: """
                Every payload found, with the stretch of the media (playback time) whose 10 s windows decoded it and a
                confidence (share of coded bits agreeing: 0.5 chance, 1 all). Nothing is printed for unmarked audio:
                a window reports a false payload with probability at most 2^-24 (CRC-24 of the one candidate decoded).
                Speed changes up to ±2.5 % (pitch and tempo together) are searched in every window (±5 % with --speed-search).
                JSON: {"version":{…},"source":…,"markers":[{"payload":n,"start":s,"end":s,"confidence":c,"windows":n}]}.
                Exit code 0 when a payload was found, 1 when none, 2 on error.
                """,
                options: [OptionSpec(name: "format", value: "text|json", help: "output format (default: text)"),
                          OptionSpec(name: "speed-search", value: nil,
                                     help: "search speed changes up to ±5 % (pitch and tempo together) instead of the default ±2.5 %: slower, same false-payload bound"),
                          streamOption, languageOption, verboseStreamOption],
                positional: 1...1, run: runMarkerDetect),
]

let markerScanOption = OptionSpec(name: "marker", value: nil,
    help: "read audio markers even when no reference of the catalog records one (default: read them when some does)")

/// Reads audio markers alongside a scan or monitor: on when the catalog records markers
/// (`catalog add --marker`) or `--marker` is given; the detector runs on the fingerprint's
/// decoded audio (8 kHz).
final class MarkerReader {
    let markers: [String: UInt32]
    let detector: MarkerDetector
    private(set) var windows: [MarkerDetection] = []

    /// nil when markers are not to be read.
    init?(_ args: ParsedArguments, catalog: Catalog, sampleRate: Int) throws {
        let markers = try catalog.markers()
        guard args.has("marker") || !markers.isEmpty else { return nil }
        guard sampleRate == 8_000 || sampleRate == 16_000 else {
            warn("audio markers are read at 8 or 16 kHz, not at the catalog's \(sampleRate) Hz: markers ignored")
            return nil
        }
        self.markers = markers
        detector = MarkerDetector(sampleRate: sampleRate)
    }

    /// Feeds decoded audio; returns the windows it completed that decoded a payload.
    @discardableResult
    func consume(_ samples: [Float]) -> [MarkerDetection] {
        let found = detector.consume(samples)
        windows += found
        return found
    }

    /// Ends the audio and joins the windows to `segments`.
    func finish(_ segments: [Segment], index: CatalogIndex) -> [(segment: Segment, marker: SegmentMarker?)] {
        windows += detector.finish()
        return MarkerRefinement.apply(to: segments, windows: windows, markers: markers, index: index)
    }
}

/// `[marker 222 (0x000000DE) = spot-b, seen 00:00:50, refined]` for the set-list.
func markerNote(_ m: SegmentMarker) -> String {
    var text = "[marker \(m.payload)"
    if let id = m.referenceID { text += " = \(id)" }
    text += ", seen \(formatClock(m.firstSeen))"
    if m.refined { text += ", refined" }
    return text + "]"
}
