import Foundation

/// The start-edge checks of ``PeakEdge`` (a scan's starts moved past chance hits); the
/// reference peaks it reads, which matching shares, are in Matching/ReferencePeaks.swift.
extension PeakEdge {
    /// One reference peak checked against the recording: where it falls in the recording
    /// (frame) and whether a recording peak coincides with it.
    struct Check {
        var x: Double
        var matched: Bool
    }

    /// Minimum log-likelihood ratio (nats) for an edge to move: 4 (odds of about 55 to 1).
    static let minimumEvidence = 4.0

    /// Frames of the alignment shifts at which chance coincidences are counted.
    static let chanceShifts: [Double] = [-41, -27, 27, 41]

    /// The recording's anchor peaks among `landmarks`, on the reference's scale for a query
    /// `logShift` steps higher (see ``LandmarkHasher/logShift(frequencyScale:)``), as keys of
    /// ``key(frame:step:)``.
    static func recordingPeaks(_ landmarks: [LandmarkHasher.Prepared], logShift: Double) -> Set<Int64> {
        var keys = Set<Int64>()
        for l in landmarks {
            let s = (l.anchorStep - logShift).rounded(.down)
            guard s.isFinite, s >= 0, s < 65_536 else { continue }
            keys.insert(key(frame: l.anchorFrame, step: Int32(s)))
        }
        return keys
    }

    @inline(__always)
    static func key(frame: Int32, step: Int32) -> Int64 { Int64(frame) << 16 | Int64(step) }

    /// Each reference peak that `toRecording` places in recording frames `from ..< to`, checked
    /// against `recording` with the alignment moved by `shift` frames.
    static func checks(reference: [Peak], recording: Set<Int64>, toRecording: (Double) -> Double,
                       toReference: (Double) -> Double, from: Int, to: Int, shift: Double = 0) -> [Check] {
        guard to > from else { return [] }
        let y0 = toReference(Double(from) - shift), y1 = toReference(Double(to) - shift)
        let lo = min(y0, y1), hi = max(y0, y1)
        var out: [Check] = []
        var i = firstIndex(reference, atOrAfter: lo)
        while i < reference.count && Double(reference[i].frame) < hi {
            let p = reference[i]
            i += 1
            let x = toRecording(Double(p.frame)) + shift
            guard x >= Double(from) && x < Double(to) else { continue }
            let f = Int32(x.rounded())
            var matched = false
            search: for df in Int32(-1)...1 {
                for ds in Int32(-1)...1 where recording.contains(key(frame: f + df, step: p.step + ds)) {
                    matched = true
                    break search
                }
            }
            out.append(Check(x: x, matched: matched))
        }
        return out.sorted { $0.x < $1.x }
    }

    /// The start of a stretch moved later: the change point, within `checks` (the reference
    /// peaks from the start found from hits onwards, in order), after which the coincidences
    /// are the stretch's (rate measured on `inside`) rather than chance, when the checks before
    /// it are at least ``minimumEvidence`` more likely chance than stretch. `nil` when the
    /// start stays.
    static func later(_ checks: [Check], inside: [Check], chance: (matched: Int, total: Int)) -> Double? {
        let n = inside.count, m = inside.filter(\.matched).count
        guard n >= 24, chance.total >= 24, checks.count >= 2 else { return nil }
        let p0 = max(Double(chance.matched) / Double(chance.total), 0.005)
        let p = min(Double(m) / Double(n), 0.95)
        guard p >= 0.2, p >= 4 * p0 else { return nil }
        let hit = log(p / p0), miss = log((1 - p) / (1 - p0))
        // Evidence for chance over the checks before index k: −Σ llr.
        var sum = 0.0, best = 0.0, bestIndex: Int?
        for k in 1..<checks.count {
            sum -= checks[k - 1].matched ? hit : miss
            if sum > best && checks[k].matched { best = sum; bestIndex = k }
        }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        // The checks skipped must also look like chance on their own: a fade-in or a masked
        // first second coincides less than the stretch but clearly more than chance.
        let skipped = checks[..<k].filter(\.matched).count
        guard binomialTail(atLeast: skipped, of: k, rate: p0) >= chanceTail else { return nil }
        return checks[k].x
    }

    /// Least probability under chance of the coincidences skipped at a start (at least that
    /// many of that many checks): 0.1.
    static let chanceTail = 0.1

    /// P(X ≥ `m`) for X binomial with `n` trials of probability `rate`.
    static func binomialTail(atLeast m: Int, of n: Int, rate: Double) -> Double {
        guard m > 0 else { return 1 }
        guard m <= n else { return 0 }
        var below = 0.0, term = pow(1 - rate, Double(n))   // P(X = 0)
        for i in 0..<m {
            below += term
            term *= Double(n - i) / Double(i + 1) * rate / (1 - rate)
        }
        return max(0, 1 - below)
    }
}
