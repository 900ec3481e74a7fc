/// What a ``Session`` reports for each query (ShazamKit's `SHSession` delegate callbacks as values).
public enum SessionResult: Sendable {
    /// The query matched these references, best first.
    case match([MatchedMediaItem], query: Signature)
    /// Nothing in the catalog reached the confidence threshold.
    case noMatch(query: Signature)
    /// Matching could not be done (for example a signature made with another configuration).
    case error(SoundmarkError, query: Signature?)
}

/// Matches query signatures, or a stream of PCM, against a catalog and publishes the outcomes
/// on ``results``, an `AsyncSequence` (ShazamKit's `SHSession`).
///
/// ```swift
/// let session = Session(index: try Catalog(path: "music.db").loadIndex())
/// session.match(signature)
/// for await result in session.results { … }
/// ```
///
/// For a live stream call ``matchStreamingBuffer(_:)`` with consecutive mono samples at the
/// catalog's rate: every `hopSeconds` (default 2 s) the last `windowSeconds` (default 10 s) of
/// audio are matched; `matchOffset` is then the reference time at the window's first sample and
/// `predictedCurrentMatchOffset` the reference time at the newest sample. The stream is analysed
/// on four frame grids a quarter hop apart (``Matcher/match(_:reframed:)``).
public final class Session {
    /// The matcher used.
    public let matcher: Matcher
    /// Results, in the order the queries were made. Finishes after ``finish()``.
    public let results: AsyncStream<SessionResult>
    private let continuation: AsyncStream<SessionResult>.Continuation
    private let windowSeconds: Double
    private let hopSeconds: Double
    /// One generator per frame grid, a quarter hop apart (see ``Matcher/match(_:reframed:)``).
    private let generators: [SignatureGenerator]
    private var windows: [[Landmark]]
    private var nextMatchSample: Int64

    /// Creates a session over a catalog snapshot.
    /// - Parameters:
    ///   - windowSeconds: length of audio matched from a stream, seconds (default 10).
    ///   - hopSeconds: how often a stream is matched, seconds (default 2).
    public init(index: CatalogIndex, options: MatchOptions = MatchOptions(), windowSeconds: Double = 10, hopSeconds: Double = 2) {
        matcher = Matcher(index: index, options: options)
        (results, continuation) = AsyncStream.makeStream(of: SessionResult.self)
        self.windowSeconds = windowSeconds
        self.hopSeconds = hopSeconds
        generators = SignatureGenerator.framings(Matcher.framings, configuration: index.configuration, role: .query)
        windows = Array(repeating: [], count: generators.count)
        nextMatchSample = Int64(windowSeconds * Double(index.configuration.sampleRate))
    }

    /// Matches one query signature and publishes the result.
    /// - Parameters:
    ///   - signature: the query.
    ///   - reframed: optionally, signatures of the same audio on shifted frame grids (see
    ///     ``Matcher/match(_:reframed:)``). Default: none.
    public func match(_ signature: Signature, reframed: [Signature] = []) {
        let expected = matcher.index.configuration.referenceAnalysis
        guard ([signature] + reframed).allSatisfy({ $0.configuration.referenceAnalysis == expected }) else {
            continuation.yield(.error(.catalogMismatch(path: "session", reason: "signature made with another fingerprint configuration"),
                                      query: signature))
            return
        }
        let items = matcher.matchedItems(for: signature, reframed: reframed)
        continuation.yield(items.isEmpty ? .noMatch(query: signature) : .match(items, query: signature))
    }

    /// Appends stream samples (mono, catalog rate) and matches the latest window every hop.
    public func matchStreamingBuffer(_ samples: [Float]) {
        let configuration = matcher.index.configuration
        let windowFrames = Int32(windowSeconds / configuration.hopDuration)
        samples.withUnsafeBufferPointer { p in
            for k in generators.indices { generators[k].append(p) { windows[k].append($0) } }
        }
        while generators[0].sampleCount >= nextMatchSample {
            let endFrame = Int32(nextMatchSample / Int64(configuration.hopLength))
            let startFrame = max(0, endFrame - windowFrames)
            let signatures = windows.indices.map { k -> Signature in
                windows[k].removeAll { $0.anchorFrame < startFrame }
                let landmarks = windows[k].filter { $0.anchorFrame < endFrame }.map { l -> Landmark in
                    var l = l
                    l.anchorFrame -= startFrame
                    return l
                }
                let count = Int64(endFrame - startFrame) * Int64(configuration.hopLength) - Int64(generators[k].skippedSamples)
                return Signature(configuration: configuration, landmarks: landmarks, sampleCount: count)
            }
            match(signatures[0], reframed: Array(signatures.dropFirst()))
            nextMatchSample += Int64(hopSeconds * Double(configuration.sampleRate))
        }
    }

    /// Ends ``results``.
    public func finish() {
        continuation.finish()
    }
}
