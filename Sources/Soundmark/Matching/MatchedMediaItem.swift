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
    /// 0 for a tempo-only change; for a pitch-only change (a transposition) the pitch factor − 1
    /// with ``timeScale`` 1.
    public var frequencySkew: Double
    /// Reference seconds per query second (1.05: the query plays 5 % faster than the reference,
    /// whether by a speed change, which also sets ``frequencySkew``, or a tempo-only change).
    public var timeScale: Double = 1
    /// 0…1; see ``Matcher/confidence(significance:)``.
    public var confidence: Double
    /// Query landmarks that agree with this alignment.
    public var alignedCount: Int
    /// Where the matched stretch starts in the query, seconds from the query's first sample:
    /// the first anchor of a landmark that agrees with the alignment (see
    /// ``Matcher/matchedStretch(of:in:)``). A jingle 2 s into an 8 s clip has about 2; the
    /// second part of a clip with a pause or a seek inside, where that part starts.
    public var queryStart: Double = 0
    /// Where the matched stretch ends in the query, seconds: the last agreeing landmark's
    /// anchor plus its span (anchor-to-target time).
    public var queryEnd: Double = 0
    /// Reference time of ``queryStart``, seconds (`matchOffset + timeScale · queryStart`).
    public var referenceStart: Double = 0
    /// Reference time of ``queryEnd``, seconds.
    public var referenceEnd: Double = 0

    /// The matches this one cannot be told apart from, itself included, as (reference id,
    /// `matchOffset`) in rank order; empty when it stands alone. Two references that share the
    /// clip's passage (versions of a song with the same opening), or the copies of a passage a
    /// reference repeats bit-exactly, match equally strongly: the clip cannot say which one it
    /// came from (``Matcher/indistinguishable(_:_:framings:)``).
    public var ambiguous: [(id: String, matchOffset: Double)] = []

    /// Field-by-field equality (ambiguity groups compared by id and offset).
    public static func == (a: MatchedMediaItem, b: MatchedMediaItem) -> Bool {
        a.item == b.item && a.matchOffset == b.matchOffset && a.predictedCurrentMatchOffset == b.predictedCurrentMatchOffset
            && a.frequencySkew == b.frequencySkew && a.timeScale == b.timeScale && a.confidence == b.confidence && a.alignedCount == b.alignedCount
            && a.queryStart == b.queryStart && a.queryEnd == b.queryEnd
            && a.referenceStart == b.referenceStart && a.referenceEnd == b.referenceEnd
            && a.ambiguous.map(\.id) == b.ambiguous.map(\.id) && a.ambiguous.map(\.matchOffset) == b.ambiguous.map(\.matchOffset)
    }

    /// `{"reference":{…},"matchOffset":s,"predictedCurrentMatchOffset":s,"frequencySkew":x,"confidence":c,"timeScale":t,"alignedLandmarks":n,
    /// "queryStart":s,"queryEnd":s,"referenceStart":s,"referenceEnd":s}`,
    /// plus `"ambiguous":[{"id","matchOffset"}…]` (every member of its ambiguity group, itself
    /// included) when ``ambiguous`` is not empty.
    public var json: JSONOutput {
        var fields: [(String, JSONOutput)] = [("reference", item.json), ("matchOffset", .seconds(matchOffset)),
                 ("predictedCurrentMatchOffset", .seconds(predictedCurrentMatchOffset)),
                 ("frequencySkew", .number(frequencySkew, decimals: 4)), ("confidence", .number(confidence, decimals: 4)),
                 ("timeScale", .number(timeScale, decimals: 4)), ("alignedLandmarks", .integer(alignedCount)),
                 ("queryStart", .seconds(queryStart)), ("queryEnd", .seconds(queryEnd)),
                 ("referenceStart", .seconds(referenceStart)), ("referenceEnd", .seconds(referenceEnd))]
        if !ambiguous.isEmpty {
            fields.append(("ambiguous", .array(ambiguous.map { .object([("id", .string($0.id)), ("matchOffset", .seconds($0.matchOffset))]) })))
        }
        return .object(fields)
    }
}

extension Matcher {
    /// Matches a query signature and attaches each reference's metadata.
    /// - Parameters:
    ///   - signature: the query.
    ///   - reframed: optional signatures of the same audio with shifted framing, as returned
    ///     after the first by ``SignatureGenerator/signatures(ofMedia:configuration:role:framings:streamIndex:warning:)``
    ///     (see ``Matcher/match(_:reframed:)``). Default: none.
    ///   - spectrum: optionally, the query's spectrum on `signature`'s frame grid: the candidate
    ///     alignments are then checked in it (``Matcher/match(_:reframed:spectrum:)``, see
    ///     ``SpectralCheck``). Default: none.
    /// - Returns: matched items, best first; empty when nothing reaches `options.threshold`.
    public func matchedItems(for signature: Signature, reframed: [Signature] = [], spectrum: SpectrumRing? = nil) -> [MatchedMediaItem] {
        let hop = index.configuration.hopDuration
        let matches = spectrum.map { match(signature.landmarks, reframed: reframed.map(\.landmarks), spectrum: $0) }
            ?? match(signature.landmarks, reframed: reframed.map(\.landmarks))
        return matches.map { m in
            let offset = m.offsetFrames * hop
            let group = m.ambiguityGroup.map { g in
                matches.filter { $0.ambiguityGroup == g }.map { (id: index.references[$0.referenceIndex].item.id, matchOffset: $0.offsetFrames * hop) }
            } ?? []
            var item = MatchedMediaItem(item: index.references[m.referenceIndex].item, matchOffset: offset,
                                        predictedCurrentMatchOffset: offset + m.speed.timeScale * signature.duration,
                                        frequencySkew: m.speed.frequencySkew,
                                        timeScale: m.speed.timeScale, confidence: m.confidence,
                                        alignedCount: m.alignedCount, ambiguous: group)
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
