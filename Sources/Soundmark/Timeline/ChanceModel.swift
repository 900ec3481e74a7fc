import Foundation

/// Tail probabilities of the chance models behind the play rule (see ``PlayEvidence``).
public enum ChanceModel {
    /// Natural log of P(X ≥ `k`) for X ~ Poisson(`mean`): 0 for `k` ≤ 0; −∞ for `mean` = 0 and
    /// `k` > 0. Summed in log space from the k-th term (`k` > `mean`) or as 1 − P(X < k)
    /// otherwise, so it stays exact far into the tail (k = 200, mean = 2 gives about −800).
    /// - Parameters:
    ///   - k: the observed count.
    ///   - mean: the expected count under chance, ≥ 0.
    public static func logPoissonTail(_ k: Int, mean: Double) -> Double {
        guard k > 0 else { return 0 }
        guard mean > 0 else { return -.infinity }
        func logTerm(_ j: Int) -> Double { Double(j) * log(mean) - mean - lgamma(Double(j) + 1) }
        if Double(k) > mean {
            // Terms fall from the k-th on; sum until they no longer count.
            var sum = 0.0, term = 1.0, j = k
            while term > 1e-17 * sum || sum == 0 {
                sum += term
                j += 1
                term *= mean / Double(j)
                if j > k + 100_000 { break }
            }
            return logTerm(k) + log(sum)
        }
        var below = 0.0
        for j in 0..<k { below += exp(logTerm(j)) }
        return log(max(1e-300, 1 - below))
    }
}

/// The a-contrario rule that a line of landmark hits is a play: its evidence must be beyond
/// what chance gives over the whole search (Desolneux, Moisan & Morel, *Gestalt Theory and
/// Image Analysis*, 2008: the "number of false alarms"). See docs/play-rule.md.
///
/// - **Evidence**: the line's occupied slots, ``slotFrames`` frames of the recording each that
///   hold at least one of its hits. Hits of one sound come together (a chord gives several
///   landmarks at once, a held note the same one frame after frame), so slots, not hits, are
///   the independent events.
/// - **Chance rate**: measured on the same recording stretch, for the same reference and
///   speed, on ``shifts`` lines moved off the claimed one in the reference: music in the same
///   key, with the same instruments, or the reference's own held notes give every alignment
///   near-coincidences, and those lines get them too. The ``trimmed`` highest of them are left
///   out (a looped reference lines up with itself a loop away). Their mean occupied-slot rate,
///   with one slot of prior over the lines, times the line's span is the chance mean μ.
/// - **Tail**: P(Poisson(μ) ≥ k) for the line's k occupied slots.
/// - **Tests**: the lines the scan could have drawn in an hour of recording: every reference
///   offset at the line tolerance (``offsetFrames``), every speed candidate at its two time
///   scales (with and without a tempo change), every window hop.
/// - **Rule**: the expected number of lines at least this strong in an hour of non-catalog
///   audio, NFA = tests × tail, must be at most the user's false-alarm rate
///   (``ScanOptions/falseAlarmsPerHour``, default 0.001: one false play in 1,000 hours).
public struct PlayEvidence: Sendable, Equatable {
    /// Frames of one slot: ``Matcher/slotFrames`` (16, 0.256 s at the default 16 ms hop), the slot of identify's line check.
    public static let slotFrames = Matcher.slotFrames
    /// Reference offsets (seconds) of the chance lines: 12, irregular so that a loop's period
    /// hits at most a few of them.
    public static let shifts: [Double] = [-11.1, -8.3, -5.9, -3.7, -2.3, -1.1, 1.1, 2.3, 3.7, 5.9, 8.3, 11.1]
    /// Chance lines left out as the highest: 2 (a loop two periods away on each side).
    public static let trimmed = 2
    /// Offset tolerance of a line, frames: 13 (a hit lies within ±6 frames of its line).
    public static let offsetFrames = 13.0

    /// Ratio of a line's expected false plays an hour to the rate set under which its evidence is
    /// settled and no longer measured: 10⁻³ (its confidence cap 0.999). Measured only until it
    /// first passed the rate, a clean 30 s play of Battle Music in an MP3 of a user's mix kept
    /// confidence 0.51 (0.99 in the WAV of the same mix): its first measurement had passed barely.
    public static let settledRatio = 1e-3

    /// Occupied slots of the claimed line.
    public var slots: Int
    /// The chance mean of occupied slots over the line's span.
    public var chanceSlots: Double
    /// log10 of P(Poisson(``chanceSlots``) ≥ ``slots``).
    public var log10Tail: Double
    /// log10 of the tests per hour of recording.
    public var log10Tests: Double

    /// log10 of the expected false plays per hour at least this strong.
    public var log10FalseAlarmsPerHour: Double { log10Tail + log10Tests }

    /// The evidence of a line.
    /// - Parameters:
    ///   - hitFrames: recording frames of the line's hits (any order).
    ///   - shiftedSlots: occupied slots of each chance line (``shifts``) over `measuredSlots`
    ///     slots of the line's span.
    ///   - measuredSlots: slots over which `shiftedSlots` were counted (≥ 1).
    ///   - tests: tests per hour (see ``tests(catalogFrames:speeds:hopSeconds:)``).
    public init(hitFrames: [Int32], shiftedSlots: [Int], measuredSlots: Int, tests: Double) {
        let occupied = Set(hitFrames.map { Int($0) / PlayEvidence.slotFrames })
        slots = occupied.count
        let span = ((occupied.max() ?? 0) - (occupied.min() ?? 0)) + 1
        let kept = shiftedSlots.sorted().dropLast(min(PlayEvidence.trimmed, max(0, shiftedSlots.count - 1)))
        let perLine = (Double(kept.reduce(0, +)) + 1) / Double(kept.count + 1)
        chanceSlots = perLine * Double(span) / Double(max(1, measuredSlots))
        log10Tail = ChanceModel.logPoissonTail(slots, mean: chanceSlots) / log(10)
        log10Tests = log10(max(1, tests))
    }

    /// Tests per hour of recording: `catalogFrames / offsetFrames` reference offsets ×
    /// `speeds` × 2 time scales × `3600 / hopSeconds` window hops.
    /// - Parameters:
    ///   - catalogFrames: frames of all references together.
    ///   - speeds: speed candidates searched.
    ///   - hopSeconds: the scan's window hop, seconds.
    public static func tests(catalogFrames: Double, speeds: Int, hopSeconds: Double) -> Double {
        catalogFrames / offsetFrames * Double(speeds) * 2 * 3600 / hopSeconds
    }

    /// Confidence 0…1 of a line under the rule: `1 / (1 + NFA / falseAlarmsPerHour)`, so 0.5
    /// exactly where NFA equals the rate the user accepts, and close to 1 far beyond it.
    public func confidence(falseAlarmsPerHour: Double) -> Double {
        let ratio = pow(10, min(300, log10FalseAlarmsPerHour - log10(max(1e-300, falseAlarmsPerHour))))
        return 1 / (1 + ratio)
    }
}
