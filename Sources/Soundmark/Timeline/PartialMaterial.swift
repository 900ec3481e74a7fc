import Foundation

/// A stretch of a recording that holds only part of a reference's content: one layer (a loop,
/// a sample, a quoted theme) that the reference shares with the play the stretch belongs to.
///
/// It is not an airing of the reference, so it is never a play: not in ``RecordingScanner``'s segments,
/// a set-list, subtitles, the library or play counts. It is told apart from an *alternative*
/// (the same recording catalogued twice, a marked and a plain copy, a shared intro: the whole
/// content indistinguishable) from the references' own side: over the stretch, fewer than
/// ``Matcher/duplicateCoverage`` of the reference's posting slots are held by the play's
/// reference at the same recording time (``sharedSlots``), the share `catalog add` uses to
/// call two files one recording. Its line is beyond chance (the play rule,
/// ``PlayEvidence``), lies at least 60 % inside the play and gathers at most a quarter of the
/// play's hits (``RecordingScanner/resolve(_:threshold:postings:sameRecording:nearDuplicate:)``).
///
/// Reported only inside a play of another reference: material a catalogued reference shares
/// with music that is not catalogued is found as a segment of its own (see docs/play-rule.md,
/// "Partial material").
public struct PartialMaterial: Equatable, Sendable {
    /// The reference's line over the stretch: recording and reference times, confidence, hits
    /// (its `alternatives` are empty).
    public var segment: Segment
    /// The reference of the play the stretch lies in.
    public var within: MediaItem
    /// Share (0…1) of `segment`'s reference's posting slots over the stretch that the play's
    /// reference also holds at the same recording time (``RecordingScanner/sameRecordingShare(_:_:hop:postings:)``):
    /// under ``Matcher/duplicateCoverage`` (0.8).
    public var sharedSlots: Double

    /// A stretch of partial material.
    public init(segment: Segment, within: MediaItem, sharedSlots: Double) {
        self.segment = segment
        self.within = within
        self.sharedSlots = sharedSlots
    }
}

extension PartialMaterial {
    /// Share of slots (``sharedSlots``, weighted by hits over a reference's stretches in one play)
    /// from which the reference is a *version* of the play's reference rather than a layer of it:
    /// 0.5, most of its content the play's own. Measured: a remaster of a Warzone 2100 track
    /// inside plays of the original 0.70–0.80 (fragments 0.34–0.80), Warzone tracks sharing
    /// stems 0.17–0.37. A version is the play's (as the same recording is), not partial material.
    public static let versionShare = 0.5

    /// Reference seconds within which two lines of one reference are one line: 0.5 (the most
    /// that ``RecordingScanner`` joins two parts of a play across).
    public static let sameLineSeconds = 0.5

    /// `s` (a line over recording seconds `s.start…s.end`) over `from…to` only, and not before
    /// its reference's start; reference times mapped along its line, alternatives dropped.
    /// `nil` when nothing of it is left.
    static func clipped(_ s: Segment, from: Double, to: Double) -> Segment? {
        var start = max(from, s.start)
        let end = min(to, s.end)
        if s.timeScale > 0 {
            let r = s.referenceTime(at: start)
            if r < 0 { start -= r / s.timeScale }
        }
        guard end > start else { return nil }
        var c = s
        c.referenceStart = max(0, s.referenceTime(at: start))
        c.referenceEnd = s.referenceTime(at: end)
        c.start = start
        c.end = end
        c.alternatives = []
        return c
    }

    /// The stretches of `fragments` (lines of one scan, each inside the play it names) as
    /// partial material. A reference whose lines inside plays of one other reference share
    /// ``versionShare`` or more of their slots with it (``sharedSlots`` weighted by hits, over
    /// all of them) is a version of it and left out. Of the others, lines on one line
    /// (``sameLineSeconds``) within ``RecordingScanner/joinGap`` of each other are one stretch: from the
    /// first start to the last end, reference times along its strongest line, its confidence and
    /// hits, ``sharedSlots`` the hits-weighted mean of theirs; of stretches that overlap
    /// (``overlapShare``), the one with the most hits. In recording order.
    static func merged(_ fragments: [PartialMaterial]) -> [PartialMaterial] {
        func pair(_ f: PartialMaterial) -> String { f.segment.item.id + "\u{0}" + f.within.id }
        var totals: [String: (hits: Double, shared: Double)] = [:]
        for f in fragments {
            let h = Double(f.segment.hits)
            totals[pair(f), default: (0, 0)].hits += h
            totals[pair(f), default: (0, 0)].shared += h * f.sharedSlots
        }
        let layers = fragments.filter { f in
            let t = totals[pair(f)] ?? (0, 0)
            return t.shared < versionShare * max(t.hits, 1)
        }
        var groups: [[PartialMaterial]] = []
        for f in layers.sorted(by: { $0.segment.start < $1.segment.start }) {
            if let g = groups.lastIndex(where: { g in
                pair(g[0]) == pair(f) && f.segment.start - (g.map(\.segment.end).max() ?? 0) < RecordingScanner.joinGap
                    && abs(g[0].segment.referenceTime(at: f.segment.start) - f.segment.referenceStart) <= sameLineSeconds
            }) {
                groups[g].append(f)
            } else {
                groups.append([f])
            }
        }
        let stretches = groups.compactMap { g -> PartialMaterial? in
            let hits = g.reduce(0.0) { $0 + Double($1.segment.hits) }
            guard var strongest = g.max(by: { $0.segment.hits < $1.segment.hits }) else { return nil }
            // The stretch along the strongest line (the others lie within ``sameLineSeconds`` of it).
            var line = strongest.segment
            line.start = g.map(\.segment.start).min() ?? line.start
            line.referenceStart = strongest.segment.referenceTime(at: line.start)
            line.end = g.map(\.segment.end).max() ?? line.end
            guard let s = clipped(line, from: line.start, to: line.end) else { return nil }
            strongest.segment = s
            strongest.sharedSlots = g.reduce(0.0) { $0 + $1.sharedSlots * Double($1.segment.hits) } / max(1, hits)
            return strongest
        }
        // A loop lines up at each of its repeats: of the stretches of one reference in one play's
        // reference that overlap (30 % of the shorter), the one with the most hits stands for them.
        var kept: [PartialMaterial] = []
        for p in stretches.sorted(by: { ($0.segment.hits, $1.segment.start) > ($1.segment.hits, $0.segment.start) }) {
            let length = max(p.segment.end - p.segment.start, 1e-3)
            let covered = kept.contains { k in
                pair(k) == pair(p) && (min(k.segment.end, p.segment.end) - max(k.segment.start, p.segment.start)) >= overlapShare * length
            }
            if !covered { kept.append(p) }
        }
        return kept.sorted { ($0.segment.start, $0.segment.item.id) < ($1.segment.start, $1.segment.item.id) }
    }

    /// Share of a stretch another stretch of the same reference in the same play's reference
    /// must overlap to stand for it: 0.3 (as ``RecordingScanner`` covers a weaker line of one reference).
    public static let overlapShare = 0.3
}
