import Foundation

/// Scans a whole recording for catalog audio: what `soundmark scan` does to one recording
/// before it writes its report (``ScanReport``).
///
/// Decoding (``MediaDecoder``) runs on a thread of its own, fingerprinting
/// (``SignatureGenerator``, with the spectrogram rows a ``RecordingScanner`` checks searched speeds
/// in) on another, each up to 8 chunks of 1 s ahead of the next stage, and matching
/// (``RecordingScanner``) on the calling thread: three stages in a pipeline that see the same landmarks
/// in the same order as one thread would, so the result does not depend on it. Memory stays
/// flat however long the recording is; the pages of a mapped index read during the scan leave
/// the resident set when they exceed 24 MB (``PostingIndex/releaseResidentPages()``).
///
/// ```swift
/// let index = try Catalog(path: "music.db", readOnly: true).loadIndex()
/// let scanned = try RecordingScan(index: index).run("mix.mp3")
/// for play in scanned.segments { print(play.start, play.end, play.item.id) }
/// ```
public struct RecordingScan {
    /// What a scan found in a recording.
    public struct Result {
        /// The plays found, by start (recording seconds on the media's playback time line,
        /// see ``MediaDecoder``), as ``RecordingScanner/finish(recordingDuration:)`` resolves them.
        public var segments: [Segment]
        /// Stretches of partial material (never plays; see ``PartialMaterial``).
        public var partial: [PartialMaterial]
        /// The recording's playback duration in seconds (``MediaDecoder/playbackDuration``, else
        /// the samples decoded at the catalog's rate).
        public var duration: Double
        /// The decoder that read the recording (its audio streams, whether it was truncated).
        public var decoder: MediaDecoder
        /// The decoder's warnings (a truncated file, corrupt data skipped), in the order they
        /// were said: the first ``InputWarnings/keptPerSource``, then a line counting the rest
        /// (``InputWarnings/take(_:)``); empty when the caller opened the decoder
        /// (``run(decoder:onSamples:onAudio:)``).
        public var warnings: [String]
    }

    /// The catalog snapshot the recording is matched against.
    public let index: CatalogIndex
    /// The scanner's options (default ``ScanOptions``: what `scan` uses without options).
    public let options: ScanOptions

    /// A scan of recordings against `index` with `options`.
    public init(index: CatalogIndex, options: ScanOptions = ScanOptions()) {
        self.index = index
        self.options = options
    }

    /// Opens `source` (a file, URL or `-`) at the catalog's sample rate and scans it
    /// (``run(decoder:onSamples:onAudio:)``).
    /// - Parameters:
    ///   - streamIndex: the audio stream to decode (default nil: the best one).
    ///   - language: an ISO 639 code choosing the audio stream by its language (default nil).
    ///   - onWarning: receives each of the decoder's one-line warnings as it is said (on the
    ///     decoding thread); they are in ``Result/warnings`` too.
    ///   - onSamples, onAudio: as for ``run(decoder:onSamples:onAudio:)``.
    /// - Throws: ``MediaDecodingError`` when the source cannot be opened or decoded.
    public func run(_ source: String, streamIndex: Int? = nil, language: String? = nil,
                    onWarning: ((String) -> Void)? = nil,
                    onSamples: ((UnsafeBufferPointer<Float>) -> Void)? = nil,
                    onAudio: (([Float]) -> Void)? = nil) throws -> Result {
        let (decoder, warnings) = try InputWarnings.open(source, sampleRate: index.configuration.sampleRate, streamIndex: streamIndex,
                                                         language: language, onWarning: onWarning)
        var result = try run(decoder: decoder, onSamples: onSamples, onAudio: onAudio)
        result.warnings = warnings.take(source)
        return result
    }

    /// Scans the audio of `decoder` (opened at the catalog's sample rate) to its end.
    /// - Parameters:
    ///   - onSamples: sees every decoded chunk (mono, the catalog's rate), e.g. for an
    ///     ``AudioDigest``; called on the calling thread, in order.
    ///   - onAudio: sees the same chunks as arrays, e.g. for a ``MarkerDetector``.
    /// - Returns: the plays, partial material and duration; ``Result/warnings`` is empty (the
    ///   decoder's warnings went to the handler it was opened with).
    /// - Throws: ``MediaDecodingError`` when decoding fails mid-stream.
    public func run(decoder: MediaDecoder, onSamples: ((UnsafeBufferPointer<Float>) -> Void)? = nil,
                    onAudio: (([Float]) -> Void)? = nil) throws -> Result {
        let scanner = RecordingScanner(index: index, options: options)
        let generator = SignatureGenerator(configuration: index.configuration, role: .reference)
        // Decoding alone costs about what FFmpeg's own decode-only command does, so the scan's
        // wall time follows it when the other two stages keep up.
        let decoded = ChunkPipe<AudioChunk> { try decoder.nextChunk() }
        var ended = false
        let chunks = ChunkPipe<FingerprintedChunk> {
            guard !ended else { return nil }
            var landmarks: [Landmark] = []
            guard let chunk = try decoded.next() else {
                ended = true
                generator.finish { landmarks.append($0) }
                return FingerprintedChunk(samples: nil, landmarks: landmarks)
            }
            var rows: [(frame: Int, levels: [UInt8])] = []
            chunk.samples.withUnsafeBufferPointer {
                generator.append($0, emit: { landmarks.append($0) }, spectrum: { rows.append(($0, SpectrumRing.quantise($1))) })
            }
            return FingerprintedChunk(samples: chunk.samples, landmarks: landmarks, rows: rows)
        }
        var budget = ResidentIndexBudget(index: index.postings, sampleRate: index.configuration.sampleRate)
        while let chunk = try chunks.next() {
            for row in chunk.rows { scanner.consumeSpectrum(frame: row.frame, levels: row.levels) }
            scanner.consume(chunk.landmarks)
            guard let samples = chunk.samples else { continue }
            samples.withUnsafeBufferPointer { onSamples?($0) }
            onAudio?(samples)
            // The index pages read so far leave the resident set when they pile up: scan memory
            // stays bounded whatever the catalog's size (see ResidentIndexBudget).
            budget.check(samples.count)
        }
        // Times are on the media's playback time line (see MediaDecoder); so is the duration.
        // Segments end with the audio (the samples analysed, silence for a late start included).
        let duration = decoder.playbackDuration ?? Double(generator.sampleCount) / Double(index.configuration.sampleRate)
        let seconds = Double(generator.sampleCount) / Double(index.configuration.sampleRate)
        let segments = scanner.finish(recordingDuration: seconds)
        return Result(segments: segments, partial: scanner.partialMaterial, duration: duration, decoder: decoder, warnings: [])
    }
}
