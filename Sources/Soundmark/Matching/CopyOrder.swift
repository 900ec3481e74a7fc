import Foundation

/// The copies of a passage that a reference repeats, told apart where they differ.
///
/// A reference that repeats a passage (a loop, a chorus played again) matches a clip of it once
/// per copy (see ``Matcher/match(_:reframed:)``), ranked by their aligned landmarks. The copies
/// share most of their landmarks, so the counts differ only by the few landmarks that lie where
/// the copies differ, and under noise those few are mostly lost: the clip's own copy then ranks
/// first about as often as the other one. A single peak survives noise far more often than a
/// pair (see ``SpectralCheck``), so the copies are compared peak by peak, *paired*: only the
/// reference peaks that one copy has and the other lacks at the same place relative to the
/// clip (no peak of the other within ±1 frame and ±1 log-frequency step) are read in the
/// query's spectrum, each at its own copy's alignment, with the margins of ``SpectrumEdge``
/// (contrast over the decoys, clipped to ±15 dB). Where the clip is copy A, A's own peaks stand
/// out and B's own peaks, which A's audio does not have, read at chance; where the two copies
/// are the same audio (bit-exact), the peaks either has alone are few and read alike.
///
/// The statistic is the difference of the two mean margins over its standard error, counting
/// ``SpectralCheck/dependence`` readings as one; a copy ranked below the first moves to the
/// first place only when it wins by ``decisive`` standard errors, with at least
/// ``minimumReadings`` readings on each side. Otherwise the ranking by aligned landmarks
/// stands, and so does the ambiguity group that says the copies cannot be told apart
/// (bit-exact copies have almost no peaks alone: the benchmark's wz-track21, copies 128 s apart,
/// 0 and 1).
///
/// Measured on the benchmark's clips under pink noise (10, 0, −5 dB SNR) and babble (0 dB)
/// whose answer lists several copies of one reference (145 clips, 300 comparisons between the
/// clip's own copy and another with 8 readings or more on each side), the other copy never
/// scored more than 0.91 over the clip's own; over 204 clips of 5 and 10 s of SuperTux's
/// *Airship Song Orchestral Mix* (a loop; clean and pink noise at 10, 5 and 0 dB), 753
/// comparisons, never more than 1.01. The clip's own copy scores 0.5–4.5 over the others in clean
/// clips, but under noise the peaks the copies do not share are few and weak: of the 13
/// benchmark answers at another copy under noise, the clip's own copy scored −0.55 to 1.84, and
/// only one (stx-theme, pink noise at 0 dB, 10 s: 1.84) is decided.
///
/// Tried and not kept: the peaks a copy has alone checked against the query's *peaks*
/// (coincidence within ±1 frame and step, as ``PeakEdge``) instead of read in its spectrum. It
/// tells copies apart by 6 to 14 standard errors in clean clips, but under noise no better than
/// the margins and sometimes the wrong way (the *Airship* benchmark clip at 0 dB SNR: −2.0). A
/// stricter "alone" (±2 frames and steps), or only the half-seconds where most peaks differ,
/// changed the scores of the undecided clips by less than 0.3.
public enum CopyOrder {
    /// Standard errors by which a copy's own peaks must stand out more than the first copy's
    /// for it to be ranked first: 1.5 (half again the most the wrong copy reached in the
    /// measurements above).
    public static let decisive = 1.5
    /// Fewest readings of the peaks each copy has alone: 8.
    public static let minimumReadings = 8

    /// The paired comparison of two copies (see ``CopyOrder``).
    public struct Comparison: Sendable, Equatable {
        /// Readings of the peaks only the first copy has, and their mean margin (dB).
        public var ownReadings: Int, ownMargin: Double
        /// Readings of the peaks only the other copy has, and their mean margin (dB).
        public var otherReadings: Int, otherMargin: Double
        /// `(ownMargin − otherMargin)` in standard errors: positive when the first copy's own
        /// peaks stand out more.
        public var score: Double
    }
}

extension Matcher {
    /// Matches a query (as ``match(_:reframed:)``), checks the candidate alignments in the
    /// query's spectrum when none reaches 0.5 (see ``SpectralCheck``: weak matches whose
    /// reference peaks stand out in the spectrum far above chance are lifted), and ranks first
    /// the copy of a repeated passage whose own peaks the spectrum holds (see ``CopyOrder``).
    /// - Parameters:
    ///   - query, reframed: as for ``match(_:reframed:)``.
    ///   - spectrum: the query's spectrum on framing 0's frame grid (rows of
    ///     ``SpectrumRing/quantise(_:)``, frame 0 at the query's start; the last
    ///     ``SpectrumRing/capacity`` frames of a longer query are checked).
    /// - Returns: the matches with confidence ≥ `options.threshold`, best first.
    public func match(_ query: [Landmark], reframed: [[Landmark]] = [], spectrum: SpectrumRing) -> [MatchCandidate] {
        orderingCopies(checkedMatch(query, reframed: reframed, spectrum: spectrum), query: query, spectrum: spectrum)
    }

    /// `matches` (best first, as ``match(_:reframed:spectrum:)`` returns them) with the copy of
    /// the first match's passage that the query's spectrum holds ranked first (see
    /// ``CopyOrder``): each other match of the same reference at the same speed is compared with
    /// the first, and one that wins by ``CopyOrder/decisive`` standard errors takes its place
    /// (and leaves the ambiguity group it shared with the copy it displaced).
    /// - Parameters:
    ///   - matches: matches of one query, best first.
    ///   - query: the query's landmarks (its frames: up to the last anchor).
    ///   - spectrum: the query's spectrum on framing 0's frame grid.
    /// - Returns: the same matches, reordered when a copy wins.
    func orderingCopies(_ matches: [MatchCandidate], query: [Landmark], spectrum: SpectrumRing) -> [MatchCandidate] {
        guard matches.count > 1, spectrum.latest > 0 else { return matches }
        let first = matches[0]
        let copies = matches.indices.dropFirst().filter {
            matches[$0].referenceIndex == first.referenceIndex && matches[$0].speed == first.speed
        }
        guard !copies.isEmpty else { return matches }
        let tables = SpectrumTables(spectrum, framesOf: query)
        guard tables.last > tables.first + 2 else { return matches }
        var best = 0
        for j in copies {
            guard let c = compareCopies(reference: first.referenceIndex, speed: first.speed, offsets: (matches[j].offsetFrames, matches[best].offsetFrames),
                                        tables: tables) else { continue }
            if c.ownReadings >= CopyOrder.minimumReadings, c.otherReadings >= CopyOrder.minimumReadings, c.score >= CopyOrder.decisive {
                best = j
            }
        }
        guard best != 0 else { return matches }
        var result = matches
        var winner = result.remove(at: best)
        winner.ambiguityGroup = nil
        result.insert(winner, at: 0)
        return Matcher.keeping(result, atLeast: -.infinity)
    }

    /// The paired comparison (see ``CopyOrder``) of the copies of `reference` at `offsets.own`
    /// and `offsets.other` (reference frames at query frame 0) at `speed`, over the frames of
    /// `tables`; `nil` when either alignment lies outside the reference.
    func compareCopies(reference: Int, speed: SpeedCandidate, offsets: (own: Double, other: Double),
                       tables: SpectrumTables) -> CopyOrder.Comparison? {
        let configuration = index.configuration
        let hasher = LandmarkHasher(configuration: configuration)
        let ts = speed.timeScale
        // Query frames read, and the peaks of each copy over them (in query frames).
        let from = tables.first + 1, to = tables.last
        func peaks(_ offset: Double) -> [PeakEdge.Peak] {
            alignedPeaks(reference: reference, offsetFrames: offset, timeScale: ts, hasher: hasher,
                         queryFrames: Double(from) - 2 ... Double(to) + 2) ?? []
        }
        let own = peaks(offsets.own), other = peaks(offsets.other)
        guard !own.isEmpty || !other.isEmpty else { return nil }
        // Each copy's peaks lacking a counterpart (±1 frame, ±1 step) in the other copy.
        func alone(_ a: [PeakEdge.Peak], _ aOffset: Double, besides b: [PeakEdge.Peak], _ bOffset: Double) -> [PeakEdge.Peak] {
            var places = Set<Int64>()
            for p in b {
                let q = Int64(((Double(p.frame) - bOffset) / ts).rounded())
                places.insert(q << 20 | Int64(p.step + (1 << 19)))
            }
            return a.filter { p in
                let q = Int64(((Double(p.frame) - aOffset) / ts).rounded())
                for dq in -1...1 as ClosedRange<Int64> {
                    for ds in -1...1 as ClosedRange<Int64> where places.contains((q + dq) << 20 | (Int64(p.step) + ds + (1 << 19))) {
                        return false
                    }
                }
                return true
            }
        }
        let ownAlone = alone(own, offsets.own, besides: other, offsets.other)
        let otherAlone = alone(other, offsets.other, besides: own, offsets.own)
        let stepBins = SpectrumEdge.bins(configuration: configuration, logShift: hasher.logShift(frequencyScale: speed.frequencyScale),
                                         width: tables.width)
        func margins(_ peaks: [PeakEdge.Peak], _ offset: Double) -> [Double] {
            SpectrumEdge.readings(reference: peaks, holds: tables.holds,
                                  toRecording: { ($0 - offset) / ts }, toReference: { offset + ts * $0 },
                                  from: from, to: to, bins: stepBins, contrast: tables.contrast)
                .map { max(-SpectrumEdge.marginClip, min(SpectrumEdge.marginClip, $0.margin)) }
        }
        let a = margins(ownAlone, offsets.own), b = margins(otherAlone, offsets.other)
        func stats(_ z: [Double]) -> (mean: Double, variance: Double) {
            let mean = z.reduce(0, +) / Double(max(1, z.count))
            let variance = z.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, z.count - 1))
            return (mean, max(variance, 1))
        }
        let sa = stats(a), sb = stats(b)
        let d = SpectralCheck.dependence
        let error = (sa.variance / max(1, Double(a.count) / d) + sb.variance / max(1, Double(b.count) / d)).squareRoot()
        return CopyOrder.Comparison(ownReadings: a.count, ownMargin: sa.mean, otherReadings: b.count, otherMargin: sb.mean,
                                    score: (sa.mean - sb.mean) / error)
    }
}
