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
    /// 0…1; see ``Matcher/confidence(significance:)``.
    public var confidence: Double
    /// Query landmarks that agree with this alignment.
    public var alignedCount: Int

    /// `{"reference":{…},"matchOffset":s,"predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c}`.
    public var json: JSONOutput {
        .object([("reference", item.json), ("matchOffset", .seconds(matchOffset)),
                 ("predictedCurrentMatchOffset", .seconds(predictedCurrentMatchOffset)),
                 ("frequencySkew", .number(frequencySkew, decimals: 4)), ("confidence", .number(confidence, decimals: 4)),
                 ("alignedLandmarks", .integer(alignedCount))])
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
            return MatchedMediaItem(item: index.references[m.referenceIndex].item, matchOffset: offset,
                                    predictedCurrentMatchOffset: offset + m.speed.timeScale * signature.duration,
                                    frequencySkew: m.speed.frequencySkew, confidence: m.confidence,
                                    alignedCount: m.alignedCount)
        }
    }
}
