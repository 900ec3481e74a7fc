import Foundation

/// Starts put where the recording's spectrum changes from other audio to the stretch.
///
/// A stretch that follows other audio (music, speech, the previous play at a butt splice) gets
/// its first landmark hits only where the reference's peaks begin: a note held across the cut
/// has its peak before the cut in the reference, and the first frames' peaks are suppressed by
/// the audio before them. Starts from hits came out up to 0.17 s late after other music, 0.11 s
/// after speech, and a splice in an Opus copy 0.19 s late (the first play's last hits reach
/// 0.4 s into the second). The recording's spectrum shows the cut itself: each row's *detail*
/// (its levels minus their mean over ±``sideBins`` bins, which removes the spectral envelope
/// that speech and music share and keeps the lines of notes and harmonics) is correlated with
/// the mean detail of the rows ``template`` after the start from hits, where the stretch
/// surely plays; a row of digital silence scores 0. A least-squares change point in the mean
/// over the rows from ``reachBefore`` before to ``reachAfter`` after the start from hits gives
/// the first row that belongs to the stretch: first to the template rows' own level from the
/// change on (the mean before it fitted), so that other music in the stretch's key, which
/// scores half way, stays before the change; else, when the rows just after the cut score
/// lower than the template (a new note), with both means fitted (Hawkins 1977). A change
/// counts only when it explains at least ``minimumFit`` of the scores' variance and the
/// levels differ by ``minimumStep``: a stretch whose spectrum changes as much inside it as at
/// its start keeps its start from hits.
///
/// Rows `k`, `k + 1`, … cover samples from `k · hop` on, 1024 samples each: the first row
/// counted in the stretch holds it over most of its Hann window's weight, so the cut lies
/// ``lagFrames`` after that row's start (measured on the benchmark's cuts after music and
/// speech: median error 0.00 s, all within 0.05 s where the fit counts).
enum ChangeEdge {
    /// Bins on either side over which a row's mean level is taken for its detail: 25 (195 Hz).
    static let sideBins = 25
    /// Seconds before the start from hits that the change is looked for: 0.6 (the farthest a
    /// clear stretch's start moves outwards, ``SpectrumEdge/clearMove``).
    static let reachBefore = 0.6
    /// Seconds after the start from hits that the change is looked for: 0.15.
    static let reachAfter = 0.15
    /// Seconds after the start from hits whose rows are the stretch's template: 0.15–0.45.
    static let template = (0.15, 0.45)
    /// Least share of the scores' variance that the change point explains: 0.6.
    static let minimumFit = 0.6
    /// Least difference of mean correlation after and before the change: 0.2.
    static let minimumStep = 0.2
    /// Frames from the first row counted in the stretch to the cut: 3 (48 ms).
    static let lagFrames = 3.0
    /// Longest overlap, seconds, between one play's end from hits and the next play's start at
    /// the spectrum's change for the boundary to be that start (a butt splice): 1. The first
    /// play's last landmarks reach into the next one by chance coincidences of their targets;
    /// a DJ crossfade (seconds of overlap) keeps the middle of the overlap.
    static let spliceOverlap = 1.0
    /// Longest gap, seconds, from one play's end at the spectrum's change to the next play's
    /// first hits over which the next play starts there: 0.5.
    static let spliceGap = 0.5
    /// Longest gap, seconds, from one play's end from hits to the next play's start at the
    /// spectrum's change over which the first play ends there: 0.25 (the end from hits of a
    /// play cut short comes up to 0.2 s early: its last peaks are lost at the cut).
    static let endGap = 0.25

    /// Row `f`'s detail (levels in dB minus their mean over ±``sideBins`` bins), `nil` when the
    /// row is not stored.
    static func detail(_ ring: SpectrumRing, _ f: Int) -> [Double]? {
        guard ring.holds(f) else { return nil }
        let width = ring.width
        var levels = [Double](repeating: 0, count: width)
        for b in 0..<width { levels[b] = ring.level(f, b) }
        var prefix = [Double](repeating: 0, count: width + 1)
        for b in 0..<width { prefix[b + 1] = prefix[b] + levels[b] }
        var out = [Double](repeating: 0, count: width)
        for b in 0..<width {
            let lo = max(0, b - sideBins), hi = min(width, b + sideBins + 1)
            out[b] = levels[b] - (prefix[hi] - prefix[lo]) / Double(hi - lo)
        }
        return out
    }

    /// Pearson correlation of `a` and `b` (equal lengths); 0 when either is constant.
    static func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let n = Double(a.count)
        guard n > 1 else { return 0 }
        let ma = a.reduce(0, +) / n, mb = b.reduce(0, +) / n
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in a.indices {
            let x = a[i] - ma, y = b[i] - mb
            sab += x * y; saa += x * x; sbb += y * y
        }
        return saa > 0 && sbb > 0 ? sab / (saa * sbb).squareRoot() : 0
    }

    /// Prefix sums of `scores` and of their squares (`n + 1` values each, the first 0), so the
    /// sum of squares about the mean of any stretch costs O(1).
    private static func sums(_ scores: [Double]) -> (prefix: [Double], squares: [Double]) {
        var prefix = [Double](repeating: 0, count: scores.count + 1), squares = prefix
        for (i, x) in scores.enumerated() { prefix[i + 1] = prefix[i] + x; squares[i + 1] = squares[i] + x * x }
        return (prefix, squares)
    }

    /// The least-squares change point in the mean of `scores`: the index `k` (2 ≤ k ≤ n − 2) that
    /// splits them into a lower mean before and a higher one from `k` on with the least sum of
    /// squares, the share of the variance explained and the difference of the means. `nil`
    /// for fewer than 4 scores or no split with a higher mean after.
    static func step(_ scores: [Double]) -> (index: Int, fit: Double, step: Double)? {
        let n = scores.count
        guard n >= 4 else { return nil }
        let (prefix, squares) = sums(scores)
        func sse(_ lo: Int, _ hi: Int) -> Double {
            let m = Double(hi - lo), s = prefix[hi] - prefix[lo]
            return squares[hi] - squares[lo] - s * s / m
        }
        let total = sse(0, n)
        var best: (index: Int, sse: Double, step: Double)?
        for k in 2...(n - 2) {
            let before = (prefix[k] - prefix[0]) / Double(k), after = (prefix[n] - prefix[k]) / Double(n - k)
            guard after > before else { continue }
            let e = sse(0, k) + sse(k, n)
            if best == nil || e < best!.sse { best = (k, e, after - before) }
        }
        guard let b = best else { return nil }
        return (b.index, total > 0 ? 1 - b.sse / total : 0, b.step)
    }

    /// The start (recording frame, fractional) of a stretch whose start from hits is frame
    /// `edge`, at the change of `ring`'s rows (see the type's description); `nil` when a row
    /// needed is not stored or the change is not clear. `hop` is the frame hop in seconds.
    static func start(ring: SpectrumRing, edge: Int, hop: Double) -> Double? {
        let lo = edge - Int(reachBefore / hop), hi = edge + Int(reachAfter / hop)
        let t0 = edge + Int(template.0 / hop), t1 = edge + Int(template.1 / hop)
        guard lo >= 0 else { return nil }
        return change(ring: ring, rows: Array(lo..<hi), template: Array(t0..<t1)).map { Double($0) + lagFrames }
    }

    /// Seconds on either side of a play's end from hits that its change to the next play is
    /// looked for at a butt splice: 0.6 (chance coincidences of its last landmarks' targets in
    /// the next play put the end late; its last peaks lost at the cut, early).
    static let endReach = 0.6
    /// Seconds before a play's end from hits whose rows are its template at a splice: 0.6–0.9.
    static let endTemplate = (0.6, 0.9)

    /// The end (recording frame, fractional) of a play whose end from hits is frame `edge`, where
    /// the rows change from its own audio (the template ``endTemplate`` before `edge`) to other
    /// audio, looked for over ``endReach`` on either side; `window` is the frame window in
    /// frames. The last row counted in the play holds it over most of its window: the cut lies
    /// ``lagFrames`` before that window's end. `nil` as for ``start(ring:edge:hop:)``.
    static func end(ring: SpectrumRing, edge: Int, hop: Double, window: Int) -> Double? {
        let reach = Int(endReach / hop)
        let t0 = edge - Int(endTemplate.1 / hop), t1 = edge - Int(endTemplate.0 / hop)
        guard t0 >= 0 else { return nil }
        let rows = Array(((edge - reach)..<(edge + reach)).reversed())
        return change(ring: ring, rows: rows, template: Array((t0..<t1).reversed()))
            .map { Double($0 + window) - lagFrames }
    }

    /// The first of `rows` (recording frames, from the outside of an edge inwards) that belongs
    /// to the stretch whose rows `template` surely are, by the change points described for the
    /// type; `nil` when a row is not stored or the change is not clear.
    static func change(ring: SpectrumRing, rows: [Int], template: [Int]) -> Int? {
        guard !template.isEmpty, !rows.isEmpty else { return nil }
        var mean = [Double](repeating: 0, count: ring.width)
        for f in template {
            guard let d = detail(ring, f) else { return nil }
            for b in d.indices { mean[b] += d[b] / Double(template.count) }
        }
        func score(_ f: Int) -> Double? {
            guard let silent = ring.isSilent(f), let d = detail(ring, f) else { return nil }
            return silent ? 0 : correlation(d, mean)
        }
        var searched: [Double] = [], level = 0.0
        for f in rows { guard let c = score(f) else { return nil }; searched.append(c) }
        for f in template { guard let c = score(f) else { return nil }; level += c / Double(template.count) }
        if let s = step(searched, after: level), s.fit >= minimumFit, s.step >= minimumStep { return rows[s.index] }
        guard let s = step(searched), s.fit >= minimumFit, s.step >= minimumStep else { return nil }
        return rows[s.index]
    }

    /// The least-squares change point of `scores` to the known level `after` from the change
    /// on (the mean before it fitted): index, share of the variance explained (negative when
    /// the level explains the scores worse than their mean) and `after` minus the mean before.
    /// `nil` for fewer than 4 scores.
    static func step(_ scores: [Double], after: Double) -> (index: Int, fit: Double, step: Double)? {
        let n = scores.count
        guard n >= 4 else { return nil }
        let (prefix, squares) = sums(scores)
        let total = squares[n] - prefix[n] * prefix[n] / Double(n)
        var best: (index: Int, sse: Double, step: Double)?
        for k in 2...(n - 2) {
            let s = prefix[k], m = Double(k)
            let before = squares[k] - s * s / m
            // Σ (x − after)² over k ..< n.
            let rest = squares[n] - squares[k] - 2 * after * (prefix[n] - prefix[k]) + Double(n - k) * after * after
            let e = before + rest
            if best == nil || e < best!.sse { best = (k, e, after - s / m) }
        }
        guard let b = best else { return nil }
        return (b.index, total > 0 ? 1 - b.sse / total : 0, b.step)
    }
}
