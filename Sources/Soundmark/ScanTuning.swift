/// The tuned values of ``RecordingScanner``'s edge and line decisions, each with its unit and
/// default, in one value (as ``Configuration`` holds the fingerprint's and ``ScanOptions`` the
/// scan's user-facing options). The defaults are the values the scanner was tuned with; a
/// scanner reads its own ``RecordingScanner/tuning``.
///
/// Frame counts are frames of the catalog's hop (16 ms at the default 128 samples at 8 kHz).
public struct ScanTuning: Equatable, Sendable {
    /// Lowest slope of a segment's line (reference frames per recording frame) for which the
    /// edge checks from the reference's peaks run: the single-peak start (``PeakEdge``), the
    /// spectrum moves (``SpectrumEdge``), the searched-speed check and the change point at a
    /// splice (``ChangeEdge``). They map the reference's peaks into the recording through the
    /// line (dividing by its slope); a line at or below it keeps the edges its hits give.
    /// Default 0.5.
    public var edgeLineSlope: Double = 0.5
    /// Whole seconds after a segment's start that its start decisions read and wait for: the
    /// single peaks' chance alignments are counted over them, and the start from single peaks,
    /// from the spectrum, from digital silence and from a change point stays undecided until
    /// the landmark history, the spectrum or the decided windows hold them (the start from
    /// hits may still move before). Default 3.
    public var edgeInsideSeconds: Int = 3
    /// Whole seconds out from an edge where the audio that a spectrum move is measured against
    /// begins or ends: for a masked stretch the audio from there out to
    /// ``SpectrumEdge/maximumMove`` (3-5 s out), for a stretch heard clearly the audio from a
    /// quarter second past ``SpectrumEdge/clearMove`` out to there (0.85-3 s out). Default 3.
    public var edgeBeyondSeconds: Int = 3
    /// Frames of silence (no landmark anchored) that count as silence next to an edge: a
    /// stretch that follows or precedes it keeps its edge from hits. Default 32 (0.51 s).
    public var silenceFrames: Int = 32
    /// Frames between an edge's hit and the silence looked for. Default 12 (0.19 s), since
    /// frames whose window (1024 samples, 8 hops) reaches the audio's first samples hold its
    /// peaks.
    public var silenceMargin: Int = 12
    /// Seconds from an edge's first hit inwards over which the median share of the recording's
    /// landmarks that hit is taken, against which a fade at the edge is measured (a crossfade
    /// is trimmed to where the segment's share reaches ``RecordingScanner/audibleFraction`` of
    /// it). Default 30.
    public var audibleMedianSeconds: Double = 30

    /// The defaults.
    public init() {}
}
