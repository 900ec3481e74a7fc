import Foundation

/// The edge decisions of ``SpectrumEdge`` (a scan's masked edges moved outwards); its
/// readings, which matching shares, are in Matching/SpectrumReadings.swift.
extension SpectrumEdge {
    /// Minimum log-likelihood ratio (nats) for an edge to move outwards: 5.
    static let minimumEvidence = 5.0

    /// Hit frames per second (distinct frames, over the 2.5 s inside an edge) under which a
    /// stretch counts as masked and its edge is looked for in the spectrum: 8. Spots 6-9 dB
    /// under speech give 2-7 near their edges; a stretch heard clearly, or under other music
    /// at 6 dB, 10-20, and its hits find its edges within a fraction of a second: there the
    /// spectrum would only add the chance of other music in the same key (its peaks stand out
    /// at the reference's steps more often than at the decoys).
    static let maskedHitsPerSecond = 8.0

    /// Farthest an edge moves outwards, seconds: 5.
    static let maximumMove = 5.0

    /// Farthest the edge of a stretch that is not masked moves outwards, seconds: 0.6.
    static let clearMove = 0.6

    /// Seconds from the frame of a stretch's last peak standing out to the end of its audio:
    /// the frame's window (1024 samples) runs 0.13 s on. 0.1.
    static let endLead = 0.1

    /// The edge moved outwards: `outward` are the readings from the edge outwards (nearest
    /// first), `inside` the readings where the stretch surely plays, `outside` (optional) the
    /// readings where it surely does not: their share standing out replaces chance (one in
    /// five) when higher, and fewer than 24 of them keep the edge. Returns the recording
    /// frame of the farthest peak of the run that the change point puts in the stretch, `nil`
    /// when the edge stays (fewer than 24 readings inside, the stretch not telling itself
    /// from its decoys or from the outside, or less than ``minimumEvidence``).
    static func outward(_ outward: [Reading], inside: [Reading], outside: [Reading]? = nil) -> Double? {
        guard inside.count >= 24, !outward.isEmpty else { return nil }
        var p0 = 1 / Double(decoys.count + 1)
        if let outside {
            // The audio beyond the edge's reach, where the stretch surely does not play: its
            // own rate of standing out (other music in the reference's key beats the decoys
            // more often than chance).
            guard outside.count >= 24 else { return nil }
            p0 = max(p0, Double(outside.filter(\.stands).count) / Double(outside.count))
        }
        guard let sums = walk(outward, inside: inside, chance: p0) else { return nil }
        var best = 0.0, bestIndex: Int?
        for k in outward.indices where outward[k].stands && sums[k] > best { (best, bestIndex) = (sums[k], k) }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        return outward[k].x
    }

    /// The change point's walk from an edge outwards: after each reading of `outward`, the
    /// log-likelihood ratio (nats) of the readings so far under the stretch's rate of standing
    /// out (the share of `inside`, at most 0.95) against `chance` (a share, 0…1). `nil` when the
    /// stretch does not tell itself from chance (its rate under 1.75 times `chance`).
    private static func walk(_ outward: [Reading], inside: [Reading], chance p0: Double) -> [Double]? {
        let p = min(Double(inside.filter(\.stands).count) / Double(inside.count), 0.95)
        guard p >= 1.75 * p0 else { return nil }
        let hit = log(p / p0), miss = log((1 - p) / (1 - p0))
        var sum = 0.0
        return outward.map { r in
            sum += r.stands ? hit : miss
            return sum
        }
    }

    /// Width (nats) of the likelihood interval of a masked start: 0.5, the interval of one
    /// standard error (a log-likelihood within 1/2 of its best, under the normal
    /// approximation). The change point of ``outward(_:inside:outside:)`` is the farthest peak
    /// where the walk's sum is largest; at a spot masked under speech its first second can
    /// stand out little more often than chance (the speech there louder than the spot's
    /// passage), so the sum stays level over it, and the point where it is largest falls
    /// anywhere on that level stretch, as late as the first hits (on the benchmark's broadcast
    /// spots 10 dB under speech, 1.4-1.9 s after the truth). Every change point within the
    /// interval is as well supported as the best; the start is the earliest of them: the
    /// earliest time the readings support, not the latest they favour. Wider intervals reach
    /// over chance readings beyond a start that the hits put right (2 nats, Royall's 1/8: 2.5 s
    /// early over speech whose peaks stood out as often as the spot's; 1 nat: 0.2-0.5 s early).
    static let startSupport = 0.5

    /// The start of a masked stretch moved outwards: the earliest reading of `outward` (readings
    /// from the edge outwards, nearest first) inside the ``startSupport`` likelihood interval of
    /// the change point of ``outward(_:inside:outside:)`` (the same walk against chance, one in
    /// five): a reading that stands out, where the sum from the edge is positive (the readings
    /// from there to the edge favour the stretch over chance) and at least the best sum less
    /// ``startSupport``. The move needs no ``minimumEvidence``: the stretch is known to play
    /// from its hits on, and a start moved over chance readings stays where the sum falls under
    /// zero, at most a few readings out. That holds where `outside`, the audio 3-5 s before the
    /// edge, stands out at most as often as chance (speech, noise); audio standing out more
    /// often (other music in the reference's key) keeps the change point of
    /// ``outward(_:inside:outside:)`` with its ``minimumEvidence``. Returns the recording frame
    /// of the reading the start moves to, `nil` when it stays (fewer than 24 readings inside,
    /// the inside standing out less than 1.75 times chance, or no such reading); with fewer
    /// than 24 readings `outside`, the change point of ``outward(_:inside:outside:)``.
    static func outwardStart(_ outward: [Reading], inside: [Reading], outside: [Reading]) -> Double? {
        guard inside.count >= 24, !outward.isEmpty else { return nil }
        let p0 = 1 / Double(decoys.count + 1)
        // Audio before the stretch that stands out more often than chance (other music in the
        // reference's key) can be taken for the stretch over seconds: there only a change point
        // of ``minimumEvidence`` moves the start (a spot 9 dB under other music, whose hits put
        // its start within 0.1 s, moved 0.8 s early by the interval). So does a start with too
        // little audio 3-5 s before it to tell (one within 5 s of the recording's beginning:
        // supertux-forest at sox tempo 0.9 kept its start 0.19 s late without the change point).
        guard outside.count >= 24, Double(outside.filter(\.stands).count) <= Double(outside.count) * p0 else {
            return self.outward(outward, inside: inside)
        }
        guard let sums = walk(outward, inside: inside, chance: p0) else { return nil }
        let best = max(0, sums.max() ?? 0)
        guard let k = outward.indices.last(where: { outward[$0].stands && sums[$0] > 0 && sums[$0] >= best - startSupport })
        else { return nil }
        return outward[k].x
    }

    /// Spread (dB) of a reading's margin, inside a stretch and out of it: 8, the standard
    /// deviation measured on the benchmark's edges (7-10 dB next to speech, other music and
    /// spots under speech).
    static let marginSpread = 8.0

    /// Largest mean margin (dB) the stretch is assumed to keep up to its edge: 6. The passage
    /// just inside a masked edge often stands out less than the 2 s measured further in (the
    /// spot's last notes quieter than its middle); a test tuned to the middle's margin (20-30 dB
    /// in the benchmark's spots under speech) takes such a passage for chance.
    static let marginStep = 6.0

    /// The edge moved outwards by the readings' margins rather than by the share standing out:
    /// the same change point as ``outward(_:inside:outside:)`` with each reading weighted by its
    /// margin `z` (clipped to ±``marginClip``) in a Gaussian log-likelihood ratio of stretch
    /// (mean `m`) over the audio beyond it (mean `m0`), spread ``marginSpread``: a reading adds
    /// `(m − m0) / spread² · (z − (m + m0) / 2)`. `m0` is the mean margin of `outside` (readings
    /// where the stretch surely does not play), at least 0: the decoys are the control, so over
    /// speech the margins centre on 0, while other music in the reference's key lifts them.
    /// `m` is the inside's mean margin but at most ``marginStep`` above `m0`. A reading whose
    /// margin is a few dB beats the decoys' mean although not every decoy, and still counts for
    /// the stretch: a stretch whose last second stands out at half its inside rate is followed
    /// to its end. Returns the recording frame of the farthest reading with `z > (m + m0) / 2`
    /// where the sum from the edge is largest, when it reaches ``minimumEvidence``; `nil` with
    /// fewer than 24 readings inside or outside, `m − m0` under 2 dB, or `outside` standing out
    /// more often than chance (one in five): other music in the reference's key has passages
    /// whose margins beat the middle for a second at a time, and there the margins stretched
    /// ends 0.6-1.2 s over it (generated: battle and knolls 9 and 12 dB under chipdisko, whose
    /// audio beyond stood out at 0.25-0.32; spots under speech 0.11-0.20).
    static func outwardByMargin(_ outward: [Reading], inside: [Reading], outside: [Reading]) -> Double? {
        guard inside.count >= 24, outside.count >= 24, !outward.isEmpty else { return nil }
        guard Double(outside.filter(\.stands).count) <= Double(outside.count) / Double(decoys.count + 1) else { return nil }
        func clipped(_ r: Reading) -> Double { max(-marginClip, min(marginClip, r.margin)) }
        func mean(_ rs: [Reading]) -> Double { rs.map(clipped).reduce(0, +) / Double(rs.count) }
        let m0 = max(0, mean(outside))
        let m = min(mean(inside), m0 + marginStep)
        guard m - m0 >= 2 else { return nil }
        let a = (m - m0) / (marginSpread * marginSpread), middle = (m + m0) / 2
        var sum = 0.0, best = 0.0, bestIndex: Int?
        for (k, r) in outward.enumerated() {
            let z = clipped(r)
            sum += a * (z - middle)
            if z > middle && sum > best { best = sum; bestIndex = k }
        }
        guard let k = bestIndex, best >= minimumEvidence else { return nil }
        return outward[k].x
    }
}
