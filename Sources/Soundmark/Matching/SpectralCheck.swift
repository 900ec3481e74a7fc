import Foundation

/// Candidate alignments checked peak by peak in the query's spectrum.
///
/// Landmark votes need *pairs* of peaks to survive: under pink noise at −5 dB SNR a true 10 s
/// clip keeps 10–20 aligned landmarks, no more than the best chance alignment among 128
/// references. A single peak of the reference survives far more often than a pair. So the
/// candidate alignments of a query that nothing matches at the threshold (the matches of
/// ``Matcher/match(_:reframed:)`` at any confidence, then the best offset of each reference the
/// unchanged speed's votes rank highest, ``hypotheses`` in all) are checked against the query's spectrum with the readings of
/// ``SpectrumEdge`` (as a scan moves a masked edge): every reference peak over the query's span
/// is placed in the query's spectrum at the alignment and its *margin* is how far (dB, clipped
/// to ±15) its contrast exceeds the mean contrast of its decoys, the same frame's log-frequency
/// steps ±5 and ±9.
///
/// The chance level is measured, not assumed: other music in the reference's key, or the
/// reference's own held notes, lift the margins of any alignment near the true one, so the same
/// reference peaks are also read with the alignment moved by ``nearShifts`` and ``farShifts``
/// frames, and the highest of those two mean margins and 0 dB is the chance level. The
/// alignment's *score* is its mean margin over the chance level in standard errors, counting
/// ``dependence`` readings as one (harmonics and neighbouring peaks of one note are read
/// together) and at most ``maximumReadings`` readings (a small systematic lift of a long query's
/// margins does not grow into a large score). Measured over the 32 alignments checked for each of
/// 156 clips of 5, 10 and 30 s of Hedgewars music (not in the catalog) against the benchmark's
/// 128 references, the highest score was 3.85 (99th percentile of each clip's best 2.0); the true
/// alignment of the benchmark's clips under pink noise at −5 dB SNR scored up to 30. A score maps
/// to a confidence with a logistic curve, 0.5 at ``halfScore`` and 0.95 one point above; a match
/// of the votes adds its landmark evidence to the score first
/// (``combinedScore(spectral:landmarkConfidence:)``: highest over the same non-catalog clips
/// 3.56) and keeps the larger of that confidence and its landmark one. The score depends on the
/// query and the one reference alone, so a match scores the same in a catalog of one reference or
/// of ten thousand.
///
/// Tried and not kept: more alignments per reference. The 8 strongest vote peaks of each of the
/// 32 references the votes rank highest (every framing's votes counted together in windows of
/// ±1 frame, up to 256 alignments a query, median CPU of `identify` 230 → 305 ms) put the true
/// alignment among those checked in 4 of the benchmark's 55 pink-noise clips at 0 and −5 dB that
/// `identify` left unanswered where the matches had not, at spectral scores of 2.9–3.5 (the
/// highest over the 81,000 alignments so checked of 360 Hedgewars clips against the 128
/// references was 2.65: too close to lower ``halfScore`` for them); in 20 of the 55 the true
/// reference was not among those 32 references at all.
///
/// Tried and not kept: breaking ties between the copies of a passage that a reference repeats
/// by the copies' mean margins. Under pink noise at 0 and −5 dB it put the clip's own copy first
/// in 3 of 6 benchmark clips where the landmark counts had not (margins 0.26–0.42 dB higher,
/// none lost), but among the clips of a looped piece (SuperTux's *Airship Song Orchestral Mix*,
/// clean to 10 dB SNR) it moved 4 answers off the clip's copy: the margins of two copies differ
/// by less than one standard error (about 0.5 dB over 300 readings), no better than the counts.
public enum SpectralCheck {
    /// Most alignments checked per query: 32.
    public static let hypotheses = 32
    /// Frames of the near alignment shifts of the chance level: ±27, ±41 (0.43 and 0.66 s at
    /// the default 16 ms hop, as ``PeakEdge``'s).
    public static let nearShifts: [Double] = [-41, -27, 27, 41]
    /// Frames of the far alignment shifts of the chance level: ±125, ±250 (2 and 4 s).
    public static let farShifts: [Double] = [-250, -125, 125, 250]
    /// Readings counted as one independent trial in the score: 2.
    public static let dependence = 2.0
    /// Most readings counted in the score: 400 (about 10 s of a reference).
    public static let maximumReadings = 400
    /// Score (standard errors) at which the spectral confidence is 0.5: 5; 0.95 at 6.
    public static let halfScore = 5.0
    /// Fewest readings over the query's span for an alignment to be checked: 40.
    public static let minimumReadings = 40
    /// Lowest spectral score a match found at a searched speed (``Matcher/isSearched(_:)``) keeps
    /// its confidence with: 0.5. Below it the match's confidence is at most
    /// ``confidence(score:)`` of its spectral score (under 10⁻⁵).
    ///
    /// Other music that quotes a reference's theme in another key and tempo, or shares its
    /// instruments, lines up with it at one of the speed search's 37 candidates better than at
    /// the unchanged speed: 10 s clips of Wesnoth's *Revelation* made 5 % faster or 7 % slower
    /// (`sox speed`) aligned 26–28 landmarks with *Loyalists* by the same composer (confidence
    /// 0.58–0.88), where the unchanged clip aligns 17; their reference peaks do not stand out in
    /// the clip's spectrum (scores 0.06 and 0.24).
    ///
    /// The level is low because under noise the score of true matches falls as low: 5 s clips of
    /// catalogued Hedgewars and Wesnoth music changed in speed or tempo by 5–8 % under pink noise
    /// at 5 to −3 dB SNR and found at 0.5–1.0 scored down to 0.75 (at 2, 31 of 2,772 noisy clips
    /// found before were lost). At 2 the rule also dropped a 5 s *Revelation* clip (1.07) and 11 other references reported
    /// beside a bench clip's true one (0.15–1.9); at 0.5 it drops 3 of those 11. On the
    /// benchmark's clean speed and tempo clips every true match scored 2.96 or more. At the
    /// unchanged speed true matches under pink noise score down to 1.88 while chance rarely
    /// shares a theme so well, so the rule is kept to searched speeds.
    public static let searchedSpeedScore = 0.5

    /// The spectral evidence for one alignment (see ``SpectralCheck``).
    public struct Evidence: Sendable, Equatable {
        /// Reference peaks read over the query's span.
        public var readings: Int
        /// Of them, those that stand out above every decoy.
        public var standing: Int
        /// Mean margin over the decoys, dB (each clipped to ±15).
        public var meanMargin: Double
        /// The chance level of the mean margin, dB (at least 0).
        public var chanceMargin: Double
        /// The mean margin over the chance level, in standard errors.
        public var score: Double
    }

    /// Weight of a match's landmark evidence added to its spectral score: 0.5 (see
    /// ``combinedScore(spectral:landmarkConfidence:)``).
    public static let landmarkWeight = 0.5

    /// Confidence in 0…1 of a ``Evidence/score``: `1 / (1 + exp(−(score − halfScore) · ln 19))`.
    public static func confidence(score: Double) -> Double {
        1 / (1 + exp(-(score - halfScore) * log(19)))
    }

    /// The score whose ``confidence(score:)`` is `confidence` (its inverse): `halfScore +
    /// ln(c / (1 − c)) / ln 19`; −∞ for 0, +∞ for 1.
    public static func score(confidence: Double) -> Double {
        guard confidence > 0 else { return -.infinity }
        guard confidence < 1 else { return .infinity }
        return halfScore + log(confidence / (1 - confidence)) / log(19)
    }

    /// The score of an alignment the landmark votes found (a match of ``Matcher/match(_:reframed:)``
    /// below the threshold) from its two independent kinds of evidence: `spectral` (its
    /// ``Evidence/score``) plus ``landmarkWeight`` times its landmark confidence as a score
    /// (``score(confidence:)``, counted from 0: a landmark confidence under `confidence(score: 0)`
    /// ≈ 4·10⁻⁷ adds nothing). A match with landmark confidence 0.2 needs a spectral score of
    /// 2.74 to reach 0.5 instead of 5.
    ///
    /// The votes pick the alignment, so its spectral score is one trial, not the best of many:
    /// over the 9,226 matches checked of 360 Hedgewars clips (5, 10 and 30 s, not in the
    /// catalog) against the benchmark's 128 references the highest spectral score was 2.40 and the
    /// highest combined score 3.56 (landmark confidences up to 0.34). On the benchmark's clips under
    /// pink noise that `identify` left unanswered, the true alignment was among the matches in 27
    /// of the 55 clips at 0 and −5 dB; the combined score reached 5 in 15 of them, the spectral
    /// score alone in none.
    public static func combinedScore(spectral: Double, landmarkConfidence: Double) -> Double {
        spectral + landmarkWeight * max(0, score(confidence: landmarkConfidence))
    }
}

extension Matcher {
    /// Matches a query (as ``match(_:reframed:)``) and checks the candidate alignments in the
    /// query's spectrum when none reaches 0.5 (see ``SpectralCheck``): weak matches whose
    /// reference peaks stand out in the spectrum far above chance are lifted.
    /// - Parameters:
    ///   - query, reframed: as for ``match(_:reframed:)``.
    ///   - spectrum: the query's spectrum on framing 0's frame grid (rows of
    ///     ``SpectrumRing/quantise(_:)``, frame 0 at the query's start; the last
    ///     ``SpectrumRing/capacity`` frames of a longer query are checked).
    /// - Returns: the matches with confidence ≥ `options.threshold`, best first.
    func checkedMatch(_ query: [Landmark], reframed: [[Landmark]], spectrum: SpectrumRing) -> [MatchCandidate] {
        var unitVotes: [Int: (offset: Int, count: Int)] = [:]
        var all = match(query, reframed: reframed, threshold: 0, unitVotes: &unitVotes)
        // A reference the query matches better played backwards is the query's source played
        // backwards: its matches go (see ``Matcher/reversalRatio``), and it is not checked again.
        var reversed = Set<Int>()
        var looked = Set<Int>()
        for m in all where m.confidence >= options.threshold && looked.count < Matcher.reversalChecks && !looked.contains(m.referenceIndex) {
            looked.insert(m.referenceIndex)
            let strongest = all.filter { $0.referenceIndex == m.referenceIndex }.map(\.alignedCount).max() ?? 0
            let backwards = reversedAlignment(query, reference: m.referenceIndex)
            if backwards >= Matcher.reversalMinimum && Double(backwards) >= Matcher.reversalRatio * Double(strongest) {
                reversed.insert(m.referenceIndex)
            }
        }
        all.removeAll { reversed.contains($0.referenceIndex) }
        guard spectrum.latest > 0 else { return Matcher.keeping(all, atLeast: options.threshold) }
        let unit = SpeedCandidate(timeScale: 1, frequencyScale: 1)
        let level = max(options.threshold, MatchOptions().threshold)
        var tables: SpectrumTables? = nil
        // Matches found at a searched speed whose reference peaks the spectrum does not hold are
        // other music that shares a theme (see ``SpectralCheck/searchedSpeedScore``).
        let searched = Array(all.indices.filter { all[$0].confidence >= options.threshold && Matcher.isSearched(all[$0].speed) }
            .prefix(SpectralCheck.hypotheses))
        if !searched.isEmpty {
            let t = SpectrumTables(spectrum, framesOf: query)
            tables = t
            let evidence = concurrentMap(searched.count) { k in
                let m = all[searched[k]]
                return spectralEvidence(reference: m.referenceIndex, offsetFrames: m.offsetFrames, speed: m.speed, tables: t)
            }
            for (i, e) in zip(searched, evidence) {
                guard let e, e.score < SpectralCheck.searchedSpeedScore else { continue }
                all[i].confidence = min(all[i].confidence, SpectralCheck.confidence(score: e.score))
            }
        }
        // The alignments checked, when no match reaches the default threshold's level (0.5, or
        // the threshold asked for when higher): the matches at any confidence (best first), then
        // the unchanged speed's best alignment of the references its votes rank highest.
        let found = all.contains { $0.confidence >= level }
        var checked: [(reference: Int, offset: Double, speed: SpeedCandidate, aligned: Int, match: Int?)] = []
        for (i, m) in all.enumerated() where checked.count < SpectralCheck.hypotheses && !found {
            checked.append((m.referenceIndex, m.offsetFrames, m.speed, m.alignedCount, i))
        }
        let voted = found ? [] : unitVotes.sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }
        for (ref, v) in voted where checked.count < SpectralCheck.hypotheses && !reversed.contains(ref) {
            if checked.contains(where: { $0.reference == ref && abs($0.offset - Double(v.offset)) <= 2 }) { continue }
            checked.append((ref, Double(v.offset), unit, v.count, nil))
        }
        guard !checked.isEmpty else { return Matcher.keeping(all, atLeast: options.threshold) }
        let checkTables = tables ?? SpectrumTables(spectrum, framesOf: query)
        let evidence = concurrentMap(checked.count) { i in
            spectralEvidence(reference: checked[i].reference, offsetFrames: checked[i].offset, speed: checked[i].speed,
                             tables: checkTables)
        }
        for (c, e) in zip(checked, evidence) {
            guard let e else { continue }
            if let i = c.match {
                let score = SpectralCheck.combinedScore(spectral: e.score, landmarkConfidence: all[i].confidence)
                all[i].confidence = max(all[i].confidence, SpectralCheck.confidence(score: score))
                continue
            }
            let lifted = SpectralCheck.confidence(score: e.score)
            if lifted >= options.threshold {
                all.append(MatchCandidate(referenceIndex: c.reference, offsetFrames: c.offset, speed: c.speed,
                                          alignedCount: c.aligned, queryCount: query.count, confidence: lifted,
                                          framingTotal: c.aligned))
            }
        }
        return Matcher.keeping(all, atLeast: options.threshold)
    }

    /// `matches` whose confidence reaches `threshold`, in order, ambiguity groups renumbered in
    /// rank order of their best member (a group left with one member is none).
    static func keeping(_ matches: [MatchCandidate], atLeast threshold: Double) -> [MatchCandidate] {
        var kept = matches.filter { $0.confidence >= threshold }
        var numbers: [Int: Int] = [:]
        let sizes = Dictionary(grouping: kept.compactMap(\.ambiguityGroup), by: { $0 }).mapValues(\.count)
        for i in kept.indices {
            guard let g = kept[i].ambiguityGroup, sizes[g, default: 0] > 1 else { kept[i].ambiguityGroup = nil; continue }
            if numbers[g] == nil { numbers[g] = numbers.count }
            kept[i].ambiguityGroup = numbers[g]
        }
        return kept
    }

    /// The peaks of `reference` (see ``PeakEdge/referencePeaks(_:reference:hasher:frames:)``) that
    /// lie over `queryFrames` (query frames) when the reference is aligned with the query at
    /// `offsetFrames` (reference frame at query frame 0) and `timeScale` (reference frames per
    /// query frame); `nil` when that stretch ends before the reference's frame 0.
    func alignedPeaks(reference: Int, offsetFrames: Double, timeScale: Double, hasher: LandmarkHasher,
                      queryFrames: ClosedRange<Double>) -> [PeakEdge.Peak]? {
        let y0 = offsetFrames + timeScale * queryFrames.lowerBound, y1 = offsetFrames + timeScale * queryFrames.upperBound
        guard y1 >= 0 else { return nil }
        let lo = UInt32(max(0, y0.rounded(.down))), hi = UInt32(min(Double(UInt32.max - 1), max(0, y1.rounded(.up))))
        return PeakEdge.referencePeaks(index.postings, reference: reference, hasher: hasher, frames: lo...hi)
    }

    /// The spectral evidence (see ``SpectralCheck``) for `reference` aligned with the query at
    /// `offsetFrames` (reference frame at query frame 0) and `speed`, over query frames
    /// `0 ..< queryFrames` held by `spectrum`; `nil` when fewer than
    /// ``SpectralCheck/minimumReadings`` peaks are read.
    func spectralEvidence(reference: Int, offsetFrames: Double, speed: SpeedCandidate,
                          tables: SpectrumTables) -> SpectralCheck.Evidence? {
        let configuration = index.configuration
        let hasher = LandmarkHasher(configuration: configuration)
        let ts = speed.timeScale
        let reach = (SpectralCheck.nearShifts + SpectralCheck.farShifts).map(abs).max() ?? 0
        guard let peaks = alignedPeaks(reference: reference, offsetFrames: offsetFrames, timeScale: ts, hasher: hasher,
                                       queryFrames: Double(tables.first) - reach - 2 ... Double(tables.last) + reach + 2)
        else { return nil }
        // The bins of every step a reading may ask for (the peaks' steps and their decoys), worked
        // out once.
        let stepBins = SpectrumEdge.bins(configuration: configuration, logShift: hasher.logShift(frequencyScale: speed.frequencyScale),
                                         width: tables.width)
        let reachSteps = Int32(SpectrumEdge.decoys.map(abs).max() ?? 0)
        let lowStep = (peaks.map(\.step).min() ?? 0) - reachSteps, highStep = (peaks.map(\.step).max() ?? 0) + reachSteps
        let table = lowStep <= highStep ? (lowStep...highStep).map(stepBins) : []
        let bins = { (step: Int32) -> ClosedRange<Int>? in
            step >= lowStep && step <= highStep ? table[Int(step - lowStep)] : stepBins(step)
        }
        func read(shift: Double) -> [SpectrumEdge.Reading] {
            SpectrumEdge.readings(reference: peaks, holds: tables.holds,
                                  toRecording: { ($0 - offsetFrames) / ts + shift },
                                  toReference: { offsetFrames + ts * ($0 - shift) },
                                  from: tables.first + 1, to: tables.last, bins: bins, contrast: tables.contrast)
        }
        let main = read(shift: 0)
        guard main.count >= SpectralCheck.minimumReadings else { return nil }
        let clip = SpectrumEdge.marginClip
        func margins(_ rs: [SpectrumEdge.Reading]) -> (mean: Double, spread: Double) {
            let z = rs.map { max(-clip, min(clip, $0.margin)) }
            let mean = z.reduce(0, +) / Double(max(1, z.count))
            let variance = z.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, z.count - 1))
            return (mean, variance.squareRoot())
        }
        let own = margins(main)
        // The chance level: the same peaks read at shifted alignments, near (a held note, the
        // same bar) and far (the same key), and never below the decoys' own level (0 dB).
        let near = margins(SpectralCheck.nearShifts.flatMap { read(shift: $0) })
        let far = margins(SpectralCheck.farShifts.flatMap { read(shift: $0) })
        let chance = max(0, near.mean, far.mean)
        let n = Double(min(main.count, SpectralCheck.maximumReadings)) / SpectralCheck.dependence
        let score = (own.mean - chance) / (max(own.spread, 1) / n.squareRoot())
        return SpectralCheck.Evidence(readings: main.count, standing: main.filter(\.stands).count, meanMargin: own.mean,
                                      chanceMargin: chance, score: score)
    }
}

/// A query's spectrum prepared for many ``SpectrumEdge`` readings: per stored frame, the
/// highest level of each bin over that frame and its neighbours and the running sums of the
/// levels along the row, so a contrast costs a few bins instead of 60. The contrasts are those
/// of ``SpectrumEdge/contrast(_:_:_:)`` exactly (levels are half-dB steps: their sums are exact).
struct SpectrumTables {
    let first: Int, last: Int, width: Int
    private var top: [UInt8]
    private var sums: [Int32]

    /// Tables of the frames of `ring` a query's landmarks span: up to the query's last anchor
    /// frame (frame 0 at the query's start), as far back as the ring holds.
    init(_ ring: SpectrumRing, framesOf query: [Landmark]) {
        let queryFrames = Int(query.map(\.anchorFrame).max() ?? 0) + 1
        let first = max(0, ring.latest - SpectrumRing.capacity + 1)
        var last = min(queryFrames, ring.latest)
        while last > first && !ring.holds(last) { last -= 1 }
        self.init(ring, first: first, last: last)
    }

    /// Tables of `ring`'s frames `first ... last` (every one stored).
    init(_ ring: SpectrumRing, first: Int, last: Int) {
        self.first = first
        self.last = max(first, last)
        width = ring.width
        let frames = self.last - first + 1
        top = [UInt8](repeating: 0, count: frames * width)
        sums = [Int32](repeating: 0, count: frames * (width + 1))
        for f in first...self.last {
            let row = f - first
            var sum: Int32 = 0
            for b in 0..<width {
                let v = ring.rawLevel(f, b)
                sum += Int32(v)
                sums[row * (width + 1) + b + 1] = sum
                var t = v
                if f > first { t = max(t, ring.rawLevel(f - 1, b)) }
                if f < self.last { t = max(t, ring.rawLevel(f + 1, b)) }
                top[row * width + b] = t
            }
        }
    }

    /// Whether frame `f` is in the tables.
    func holds(_ f: Int) -> Bool { f >= first && f <= last }

    /// ``SpectrumEdge/contrast(_:_:_:)`` of bins `range` in frame `f` (frames `f ± 1` held).
    func contrast(_ f: Int, _ range: ClosedRange<Int>) -> Double? {
        let side = SpectrumEdge.sideBins
        let b0 = max(0, range.lowerBound - 1), b1 = min(width - 1, range.upperBound + 1)
        let row = f - first
        var t: UInt8 = 0
        for b in b0...b1 { t = max(t, top[row * width + b]) }
        let base = row * (width + 1)
        let l0 = max(0, b0 - side), r1 = min(width, b1 + 1 + side)
        let n = (b0 - l0) + max(0, r1 - (b1 + 1))
        guard n > 0 else { return nil }
        let sum = Int(sums[base + b0] - sums[base + l0]) + (r1 > b1 + 1 ? Int(sums[base + r1] - sums[base + b1 + 1]) : 0)
        return (Double(t) / 2 - 120) - (Double(sum) / Double(n) / 2 - 120)
    }
}

