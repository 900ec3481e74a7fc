/// When another line of the same reference explains a stretch of a line: the rule a clip's
/// matched stretch (``Matcher/undominated(_:by:)``) and a scan's lines (segmenting's
/// `afterDominated` and `dominatedEnd` of a line) share, so it lives with matching, below the
/// segmenting that uses it.
extension Matcher {
    /// Frames of one stretch compared for dominance (``undominated(_:by:)``, a scan's
    /// `afterDominated`): 16 (0.26 s at the default hop).
    static let dominanceBlock = 16
    /// How many times another line's hits must outnumber a line's in a stretch to explain it
    /// (a scan's `afterDominated`): 3, and at least ``dominanceMinimum`` hits.
    static let dominance = 3
    /// Fewest hits of the other line in a stretch it dominates: 6 (about a third of a clean
    /// play's hits in 0.26 s; under noise no stretch is dominated and the line keeps its hits).
    static let dominanceMinimum = 6

    /// How many of `frames` (ascending) lie in `lo ..< hi`.
    static func hits(_ frames: [Int32], _ lo: Int32, _ hi: Int32) -> Int {
        var a = 0, b = frames.count
        while a < b { let m = (a + b) / 2; if frames[m] < lo { a = m + 1 } else { b = m } }
        var c = a
        b = frames.count
        while c < b { let m = (c + b) / 2; if frames[m] < hi { c = m + 1 } else { b = m } }
        return c - a
    }
}
