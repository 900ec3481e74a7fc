/// A reference found in a query, with where and how it matched (ShazamKit's `SHMatchedMediaItem`).
public struct MatchedMediaItem: Equatable, Sendable {
    /// The reference's metadata.
    public var item: MediaItem
    /// Reference time in seconds at the query's first sample (negative when the query starts
    /// before the reference).
    public var matchOffset: Double
    /// Reference time in seconds at the query's last sample: `matchOffset + timeScale · query duration`.
    public var predictedCurrentMatchOffset: Double
    /// Query frequency / reference frequency − 1 (0.05: the query plays 5 % higher and faster).
    /// 0 for a tempo-only change.
    public var frequencySkew: Double
    /// 0…1; see ``Matcher/confidence(aligned:background:)``.
    public var confidence: Double
    /// Query landmarks that agree with this alignment.
    public var alignedCount: Int
    /// Where the matched stretch starts in the query, seconds from the query's first sample:
    /// the first anchor of a landmark that agrees with the alignment (see
    /// ``Matcher/matchedStretch(of:in:)``). A jingle 2 s into an 8 s clip has about 2.
    public var queryStart: Double = 0
    /// Where the matched stretch ends in the query, seconds: the last agreeing landmark's
    /// anchor plus its span (anchor-to-target time).
    public var queryEnd: Double = 0
    /// Reference time of ``queryStart``, seconds (`matchOffset + timeScale · queryStart`).
    public var referenceStart: Double = 0
    /// Reference time of ``queryEnd``, seconds.
    public var referenceEnd: Double = 0

    /// `{"reference":{…},"matchOffset":s,"predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c,
    /// "alignedLandmarks":n,"queryStart":s,"queryEnd":s,"referenceStart":s,"referenceEnd":s}`.
    public var json: JSONOutput {
        .object([("reference", item.json), ("matchOffset", .seconds(matchOffset)),
                 ("predictedCurrentMatchOffset", .seconds(predictedCurrentMatchOffset)),
                 ("frequencySkew", .number(frequencySkew, decimals: 4)), ("confidence", .number(confidence, decimals: 4)),
                 ("alignedLandmarks", .integer(alignedCount)),
                 ("queryStart", .seconds(queryStart)), ("queryEnd", .seconds(queryEnd)),
                 ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd))])
    }
}

extension Matcher {
    /// Matches a query signature and attaches each reference's metadata.
    /// - Parameters:
    ///   - signature: the query.
    ///   - reframed: optional signatures of the same audio with shifted framing, as returned
    ///     after the first by ``SignatureGenerator/signatures(ofMedia:configuration:role:framings:streamIndex:warning:)``
    ///     (see ``Matcher/match(_:reframed:)``). Default: none.
    /// - Returns: matched items, best first; empty when nothing reaches `options.threshold`.
    public func matchedItems(for signature: Signature, reframed: [Signature] = []) -> [MatchedMediaItem] {
        let hop = index.configuration.hopDuration
        return match(signature.landmarks, reframed: reframed.map(\.landmarks)).map { m in
            let offset = m.offsetFrames * hop
            var item = MatchedMediaItem(item: index.references[m.referenceIndex].item, matchOffset: offset,
                                        predictedCurrentMatchOffset: offset + m.speed.timeScale * signature.duration,
                                        frequencySkew: m.speed.frequencySkew, confidence: m.confidence,
                                        alignedCount: m.alignedCount)
            if let stretch = matchedStretch(of: m, in: signature.landmarks) {
                item.queryStart = stretch.queryStart * hop
                item.queryEnd = min(stretch.queryEnd * hop, signature.duration)
                item.referenceStart = stretch.referenceStart * hop
                item.referenceEnd = offset + m.speed.timeScale * item.queryEnd
            }
            return item
        }
    }
}
