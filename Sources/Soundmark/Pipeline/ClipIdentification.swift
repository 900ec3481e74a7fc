import Foundation

/// Identifies one short clip against a catalog: what `soundmark identify` does to a clip
/// before it writes its matches.
///
/// The clip is decoded at the catalog's sample rate and fingerprinted as a query on
/// ``Matcher/framings`` frame grids (the plain one and the reframings, `hopLength / framings`
/// samples apart, so that the match does not depend on where the clip was cut), with the
/// spectrogram rows of the plain one kept for the matcher's spectral check (``SpectrumRing``);
/// the matches are ``Matcher/matchedItems(for:reframed:spectrum:)``, best first.
///
/// ```swift
/// let index = try Catalog(path: "music.db", readOnly: true).loadIndex()
/// let clip = try ClipIdentification(matcher: Matcher(index: index)).run("clip.m4a")
/// if let best = clip.matches.first { print(best.item.id, best.matchOffset, best.confidence) }
/// ```
public struct ClipIdentification {
    /// What identifying a clip found.
    public struct Result {
        /// The clip's query signature (the standard framing).
        public var signature: Signature
        /// The references that match, best first; empty when none reaches the matcher's
        /// threshold (``MatchOptions/threshold``).
        public var matches: [MatchedMediaItem]
        /// The decoder that read the clip (its audio streams, whether it was truncated, its
        /// playback duration).
        public var decoder: MediaDecoder
        /// The digest of the clip's decoded samples (a library's recording key), when asked for.
        public var digest: AudioDigest?
        /// The decoder's warnings (a truncated file, corrupt data skipped), in the order they
        /// were said: the first ``InputWarnings/keptPerSource``, then a line counting the rest
        /// (``InputWarnings/take(_:)``); empty when the caller opened the decoder
        /// (``run(decoder:digest:)``).
        public var warnings: [String]
    }

    /// The matcher (with its catalog index and options) the clips are matched with.
    public let matcher: Matcher

    /// Identification of clips with `matcher`.
    public init(matcher: Matcher) {
        self.matcher = matcher
    }

    /// Opens `source` (a file, URL or `-`) at the catalog's sample rate and identifies it
    /// (``run(decoder:digest:)``).
    /// - Parameters:
    ///   - streamIndex: the audio stream to decode (default nil: the best one).
    ///   - language: an ISO 639 code choosing the audio stream by its language (default nil).
    ///   - digest: whether to take the digest of the decoded samples (default false).
    ///   - onWarning: receives each of the decoder's one-line warnings as it is said; they are
    ///     in ``Result/warnings`` too.
    /// - Throws: ``MediaDecodingError`` when the source cannot be opened or decoded.
    public func run(_ source: String, streamIndex: Int? = nil, language: String? = nil, digest: Bool = false,
                    onWarning: ((String) -> Void)? = nil) throws -> Result {
        let (decoder, warnings) = try InputWarnings.open(source, sampleRate: matcher.index.configuration.sampleRate,
                                                         streamIndex: streamIndex, language: language, onWarning: onWarning)
        var result = try run(decoder: decoder, digest: digest)
        result.warnings = warnings.take(source)
        return result
    }

    /// Identifies the audio of `decoder` (opened at the catalog's sample rate), read to its end.
    /// - Parameter wanted: whether to take the digest of the decoded samples (default false).
    /// - Returns: the signature, the matches and the digest; ``Result/warnings`` is empty (the
    ///   decoder's warnings went to the handler it was opened with).
    /// - Throws: ``MediaDecodingError`` when decoding fails.
    public func run(decoder: MediaDecoder, digest wanted: Bool = false) throws -> Result {
        var digest = AudioDigest()
        let configuration = matcher.index.configuration
        var spectrum = SpectrumRing(width: configuration.maxBin - configuration.minBin + 1)
        let signatures = try SignatureGenerator.signatures(decoding: decoder, configuration: configuration, role: .query,
                                                           framings: Matcher.framings, onChunk: wanted ? { digest.append($0) } : nil,
                                                           spectrum: { spectrum.append(frame: $0, levels: SpectrumRing.quantise($1)) })
        let signature = signatures[0]
        let matches = matcher.matchedItems(for: signature, reframed: Array(signatures.dropFirst()), spectrum: spectrum)
        return Result(signature: signature, matches: matches, decoder: decoder, digest: wanted ? digest : nil, warnings: [])
    }
}
