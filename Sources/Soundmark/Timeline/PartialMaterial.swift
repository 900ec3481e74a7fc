import Foundation

/// A stretch of a recording that holds only part of a reference's content: one layer (a loop,
/// a sample, a quoted theme) that the reference shares with the play the stretch belongs to.
///
/// It is not an airing of the reference, so it is never a play: not in ``Scanner``'s segments,
/// a set-list, subtitles, the library or play counts. It is told apart from an *alternative*
/// (the same recording catalogued twice, a marked and a plain copy, a shared intro: the whole
/// content indistinguishable) from the references' own side: over the stretch, fewer than
/// ``Matcher/duplicateCoverage`` of the reference's posting slots are held by the play's
/// reference at the same recording time (``sharedSlots``), the share `catalog add` uses to
/// call two files one recording. Its line is beyond chance (the play rule,
/// ``PlayEvidence``), lies at least 60 % inside the play and gathers at most a quarter of the
/// play's hits (``Scanner/resolve(_:threshold:postings:sameRecording:)``).
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
    /// reference also holds at the same recording time (``Scanner/sameRecordingShare(_:_:hop:postings:)``):
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

    /// The stretches of `fragments` (lines of one scan) as partial material: the lines of one
    /// reference inside plays of one other reference that overlap or lie within
    /// ``Scanner/joinGap`` of each other are one stretch (from the first start to the last end;
    /// reference times, confidence and hits of its strongest line), its ``sharedSlots`` the
    /// hits-weighted mean of theirs; stretches at ``versionShare`` or more are left out. In
    /// recording order.
    static func merged(_ fragments: [PartialMaterial]) -> [PartialMaterial] {
        var groups: [[PartialMaterial]] = []
        for f in fragments.sorted(by: { $0.segment.start < $1.segment.start }) {
            if let g = groups.lastIndex(where: { g in
                g[0].segment.item.id == f.segment.item.id && g[0].within.id == f.within.id
                    && f.segment.start - (g.map(\.segment.end).max() ?? 0) < Scanner.joinGap
            }) {
                groups[g].append(f)
            } else {
                groups.append([f])
            }
        }
        return groups.compactMap { g in
            let hits = g.reduce(0.0) { $0 + Double($1.segment.hits) }
            let share = g.reduce(0.0) { $0 + $1.sharedSlots * Double($1.segment.hits) } / max(1, hits)
            guard share < versionShare, var strongest = g.max(by: { $0.segment.hits < $1.segment.hits }) else { return nil }
            let start = g.map(\.segment.start).min() ?? strongest.segment.start
            let end = g.map(\.segment.end).max() ?? strongest.segment.end
            strongest.segment.referenceStart = strongest.segment.referenceTime(at: start)
            strongest.segment.referenceEnd = strongest.segment.referenceTime(at: end)
            strongest.segment.start = start
            strongest.segment.end = end
            strongest.sharedSlots = share
            return strongest
        }.sorted { ($0.segment.start, $0.segment.item.id) < ($1.segment.start, $1.segment.item.id) }
    }
}
