import Foundation

/// Matches Shazam-format signatures against references that carry Shazam peaks.
///
/// Each query peak votes for every reference peak within ±1 FFT bin (of the 2048-point FFT at
/// 16 kHz) for the pass offset between them; a reference's alignment is the pair of adjacent
/// offsets with the most votes (a clip cut between two pass boundaries splits its peaks between
/// them). An alignment is reported when its votes are far above what chance gives at that
/// reference (a Poisson tail, corrected for every offset tried, below 10⁻⁶) and at least
/// ``minimumVotes``; its confidence is the share of the query's peaks aligned (a quarter of
/// them gives 1) or, when that is stronger, how far chance is excluded (a corrected tail
/// probability of 10⁻⁴⁰ gives 1, 10⁻²⁰ gives 0.5): noise adds query peaks that align with
/// nothing, so under noise the share falls while the aligned peaks still stand out.
public struct ShazamMatcher: Sendable {
    /// References: metadata and signature, in the order given.
    public let references: [(item: MediaItem, signature: ShazamSignature)]
    /// Fewest aligned peaks reported (default 12).
    public var minimumVotes = 12
    /// Lowest confidence reported (default 0.5).
    public var threshold = 0.5
    /// Seconds per pass (128 samples at 16 kHz).
    public static let passDuration = 128.0 / 16000

    /// Per FFT bin (0…1024): postings `reference << 32 | pass`.
    private let byBin: [[UInt64]]
    private let passCounts: [Int]

    /// Indexes the references' peaks.
    public init(references: [(item: MediaItem, signature: ShazamSignature)]) {
        self.references = references
        var bins = [[UInt64]](repeating: [], count: 1026)
        var passes: [Int] = []
        for (r, ref) in references.enumerated() {
            var last = 0
            for band in ref.signature.bands {
                for p in band {
                    let b = min(1025, Int(p.correctedBin) / 64)
                    bins[b].append(UInt64(r) << 32 | UInt64(UInt32(clamping: p.pass)))
                    last = max(last, p.pass)
                }
            }
            passes.append(max(last + 1, Int(ref.signature.duration / ShazamMatcher.passDuration)))
        }
        byBin = bins
        passCounts = passes
    }

    /// The references the query matches, best first.
    /// - Parameter query: a Shazam signature (Apple's, the Android SDK's or ``ShazamPeakGenerator``'s).
    /// - Returns: matches above ``threshold``; `matchOffset` is the reference time at the query's
    ///   first pass, `frequencySkew` 0 and `timeScale` 1 (Shazam peaks are matched as they are).
    public func matches(for query: ShazamSignature) -> [MatchedMediaItem] {
        let peaks = query.allPeaks.map(\.peak)
        guard !peaks.isEmpty, !references.isEmpty else { return [] }
        let bias = Int64(1) << 30
        var keys: [UInt64] = []
        var candidates = [Int](repeating: 0, count: references.count)   // reference peaks within ±1 bin, summed over query peaks
        for p in peaks {
            let b = Int(p.correctedBin) / 64
            for bb in max(0, b - 1)...min(1025, b + 1) {
                for e in byBin[bb] {
                    let r = Int(e >> 32), pass = Int64(e & 0xFFFF_FFFF)
                    candidates[r] += 1
                    keys.append(UInt64(r) << 32 | UInt64(pass - Int64(p.pass) + bias))
                }
            }
        }
        keys.sort()
        // Best pair of adjacent offsets per reference.
        var best = [(votes: Int, offset: Int64, split: Double)](repeating: (0, 0, 0), count: references.count)
        var i = 0
        var previous: (r: Int, offset: Int64, count: Int)? = nil
        while i < keys.count {
            var j = i
            while j < keys.count && keys[j] == keys[i] { j += 1 }
            let r = Int(keys[i] >> 32), offset = Int64(keys[i] & 0xFFFF_FFFF) - bias, count = j - i
            var votes = count, start = offset, split = 0.0
            if let prev = previous, prev.r == r, prev.offset == offset - 1 {
                votes += prev.count
                start = prev.offset
                split = Double(count) / Double(votes)
            }
            if votes > best[r].votes { best[r] = (votes, start, split) }
            if count > best[r].votes { best[r] = (count, offset, 0) }
            previous = (r, offset, count)
            i = j
        }
        let queryPasses = max(1, Int(query.duration / ShazamMatcher.passDuration))
        var out: [MatchedMediaItem] = []
        for (r, b) in best.enumerated() where b.votes >= minimumVotes {
            let offsets = Double(passCounts[r] + queryPasses)
            let lambda = 2 * Double(candidates[r]) / offsets       // chance votes on a pair of offsets
            let logTail = ShazamMatcher.logPoissonTail(b.votes, lambda) + log(offsets)
            guard logTail < log(1e-6) else { continue }
            // Share of the query's peaks aligned (a quarter: 1), or how far chance is excluded
            // (10⁻⁴⁰ after the correction for every offset tried: 1; 10⁻²⁰: 0.5), whichever is
            // stronger. Music outside the catalog reached 10⁻¹⁴ on the benchmark's negatives (the
            // Poisson model underrates how music repeats), hence the wide margin.
            let significance = -logTail / log(10)
            let confidence = min(1, max(Double(b.votes) / Double(peaks.count) / 0.25, significance / 40))
            guard confidence >= threshold else { continue }
            let offsetPasses = Double(b.offset) + b.split
            let offset = offsetPasses * ShazamMatcher.passDuration
            // The aligned stretch of the query: its first and last peak that voted for this offset.
            let ref = references[r].signature
            var refPasses: [Int: [Int]] = [:]
            for band in ref.bands { for p in band { refPasses[p.pass, default: []].append(Int(p.correctedBin)) } }
            var first = Int.max, last = Int.min
            for p in peaks {
                let shifted = [Int(b.offset), Int(b.offset) + 1].map { p.pass + $0 }
                if shifted.contains(where: { refPasses[$0]?.contains { abs($0 - Int(p.correctedBin)) <= 96 } == true }) {
                    first = min(first, p.pass); last = max(last, p.pass)
                }
            }
            if first > last { first = 0; last = 0 }
            let qs = Double(first) * ShazamMatcher.passDuration, qe = Double(last) * ShazamMatcher.passDuration
            var m = MatchedMediaItem(item: references[r].item, matchOffset: offset,
                                     predictedCurrentMatchOffset: offset + query.duration,
                                     frequencySkew: 0, confidence: confidence, alignedCount: b.votes)
            m.queryStart = qs
            m.queryEnd = qe
            m.referenceStart = offset + qs
            m.referenceEnd = offset + qe
            out.append(m)
        }
        return out.sorted { ($0.confidence, $0.alignedCount) > ($1.confidence, $1.alignedCount) }
    }

    /// ln P(X ≥ k) for X ~ Poisson(λ), k ≥ 1 (an upper bound for k > λ: the pmf at k over 1 − λ/(k+1)).
    static func logPoissonTail(_ k: Int, _ lambda: Double) -> Double {
        guard lambda > 0 else { return -.infinity }
        if Double(k) <= lambda { return 0 }
        let logPMF = Double(k) * log(lambda) - lambda - lgamma(Double(k) + 1)
        return min(0, logPMF - log(1 - lambda / Double(k + 1)))
    }
}
