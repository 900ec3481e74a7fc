import Foundation

/// Chroma frames prepared for comparison: each frame mean-centred over its 12 bins and scaled
/// to unit length (a silent or flat frame stays zero), so that the cost of two frames,
/// `(1 − x·y) / 2`, lies in 0…1 (0.5 for a silent frame against anything).
public struct PreparedChroma: Sendable {
    /// `12 × count` values, frame-major.
    public let values: [Float]
    /// Seconds per frame.
    public let frameDuration: Double
    /// Number of frames.
    public var count: Int { values.count / 12 }
    /// The mean of the raw frames (a key profile), mean-centred and unit length.
    public let profile: [Float]

    /// Prepares `chroma`.
    public init(_ chroma: ChromaSequence) {
        frameDuration = chroma.frameDuration
        var out = [Float](repeating: 0, count: chroma.values.count)
        var sum = [Float](repeating: 0, count: 12)
        for f in 0..<chroma.count {
            var frame = Array(chroma.values[(f * 12)..<(f * 12 + 12)])
            for k in 0..<12 { sum[k] += frame[k] }
            PreparedChroma.centre(&frame)
            for k in 0..<12 { out[f * 12 + k] = frame[k] }
        }
        PreparedChroma.centre(&sum)
        values = out
        profile = sum
    }

    private init(values: [Float], frameDuration: Double, profile: [Float]) {
        self.values = values
        self.frameDuration = frameDuration
        self.profile = profile
    }

    static func centre(_ frame: inout [Float]) {
        let mean = frame.reduce(0, +) / 12
        var norm: Float = 0
        for k in 0..<12 { frame[k] -= mean; norm += frame[k] * frame[k] }
        norm = norm.squareRoot()
        for k in 0..<12 { frame[k] = norm > 1e-6 ? frame[k] / norm : 0 }
    }

    /// The frames transposed down by `semitones` (a performance `semitones` higher, read in the
    /// reference's key): bin `k` takes bin `k + semitones` (mod 12).
    public func transposed(by semitones: Int) -> PreparedChroma {
        let s = ((semitones % 12) + 12) % 12
        guard s != 0 else { return self }
        var out = values
        for f in 0..<count {
            for k in 0..<12 { out[f * 12 + k] = values[f * 12 + (k + s) % 12] }
        }
        let p = (0..<12).map { profile[($0 + s) % 12] }
        return PreparedChroma(values: out, frameDuration: frameDuration, profile: p)
    }

    /// The frames `range` (clamped).
    public func slice(_ range: Range<Int>) -> PreparedChroma {
        let lo = max(0, min(count, range.lowerBound)), hi = max(lo, min(count, range.upperBound))
        var sum = [Float](repeating: 0, count: 12)
        for f in lo..<hi { for k in 0..<12 { sum[k] += values[f * 12 + k] } }
        PreparedChroma.centre(&sum)
        return PreparedChroma(values: Array(values[(lo * 12)..<(hi * 12)]), frameDuration: frameDuration, profile: sum)
    }
}

/// Subsequence dynamic time warping of a query inside a longer reference, with step sizes
/// (1,1), (2,1) and (1,2), i.e. local slopes between ½ and 2 (a performance between half and
/// twice the reference's tempo), and a free start and end in the reference.
///
/// From M. Müller, "Fundamentals of Music Processing" (2nd ed., Springer 2021), §7.2.3
/// (subsequence DTW) and §3.2.1 (step size conditions); FMP notebook "C7S2_SubsequenceDTW".
/// Each query frame adds exactly one cost (the (2,1) step adds the skipped query frame's cost),
/// so the accumulated cost divided by the query length is a mean frame cost in 0…1, comparable
/// across references of any length.
public enum SubsequenceDTW {
    /// The best alignment of `query` in `reference`.
    public struct Alignment: Equatable, Sendable {
        /// Mean frame cost along the path, 0…1 (0: identical, 0.5: unrelated).
        public var distance: Float
        /// First and last reference frames of the path.
        public var referenceStart: Int
        public var referenceEnd: Int
    }

    /// Aligns `query` inside `reference` (both prepared, the query already transposed).
    /// - Returns: `nil` when either is shorter than 2 frames.
    /// - Complexity: O(query frames × reference frames × 12).
    public static func align(_ query: PreparedChroma, in reference: PreparedChroma) -> Alignment? {
        let n = query.count, m = reference.count
        guard n >= 2, m >= 2 else { return nil }
        let inf = Float.greatestFiniteMagnitude / 4
        var prev2 = [Float](repeating: inf, count: m), prev1 = [Float](repeating: inf, count: m)
        var cur = [Float](repeating: inf, count: m)
        var start2 = [Int32](repeating: 0, count: m), start1 = [Int32](repeating: 0, count: m)
        var startCur = [Int32](repeating: 0, count: m)
        var costPrev = [Float](repeating: 0.5, count: m), cost = [Float](repeating: 0.5, count: m)
        query.values.withUnsafeBufferPointer { q in
            reference.values.withUnsafeBufferPointer { r in
                for i in 0..<n {
                    let qi = q.baseAddress! + i * 12
                    for j in 0..<m {
                        let rj = r.baseAddress! + j * 12
                        var dot: Float = 0
                        for k in 0..<12 { dot += qi[k] * rj[k] }
                        cost[j] = 0.5 * (1 - dot)
                    }
                    if i == 0 {
                        for j in 0..<m { cur[j] = cost[j]; startCur[j] = Int32(j) }
                    } else {
                        cur[0] = inf
                        for j in 1..<m {
                            var best = prev1[j - 1] + cost[j], s = start1[j - 1]
                            if i >= 2, prev2[j - 1] < inf {
                                let v = prev2[j - 1] + costPrev[j] + cost[j]
                                if v < best { best = v; s = start2[j - 1] }
                            }
                            if j >= 2 {
                                let v = prev1[j - 2] + cost[j]
                                if v < best { best = v; s = start1[j - 2] }
                            }
                            cur[j] = min(best, inf)
                            startCur[j] = s
                        }
                    }
                    swap(&prev2, &prev1); swap(&prev1, &cur)
                    swap(&start2, &start1); swap(&start1, &startCur)
                    swap(&costPrev, &cost)
                }
            }
        }
        var bestEnd = 0
        for j in 0..<m where prev1[j] < prev1[bestEnd] { bestEnd = j }
        guard prev1[bestEnd] < inf else { return nil }
        return Alignment(distance: prev1[bestEnd] / Float(n), referenceStart: Int(start1[bestEnd]), referenceEnd: bestEnd)
    }
}
