/// The tuned values of ``RecordingScanner``'s edge and line decisions, each with its unit and
/// default, in one value (as ``Configuration`` holds the fingerprint's and ``ScanOptions`` the
/// scan's user-facing options). The defaults are the values the scanner was tuned with; a
/// scanner reads its own ``RecordingScanner/tuning``, its static helpers (the set-list decision
/// of ``RecordingScanner/finish(recordingDuration:)``) read ``default``.
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
    /// How far the landmark history reaches before the matching window, seconds: a line found
    /// in a window is traced back through it, so a weak stretch that took a whole window to
    /// reach ``ScanOptions/minWindowHits`` still starts where its first hit is. Default 20:
    /// under pink noise at 0 dB SNR a play can take 15 s to give a window enough hits.
    public var historySeconds: Double = 20
    /// Seconds within which a window's line continues an open line of its reference (their
    /// reference times at the window's middle), and within which an open line explains a
    /// window's vote. Default 0.4, which a line under noise or one just opened needs (a line
    /// heard clearly on both sides is followed within ``RecordingScanner/clearLineTolerance``).
    public var lineToleranceSeconds: Double = 0.4
    /// A clear stretch's edge moves outwards (by the spectrum, up to
    /// ``SpectrumEdge/clearMove``) only when the recording's own peaks agree over the span
    /// moved: at least this many of the reference's peaks fall there. Default 6.
    public var clearMovePeaks: Int = 6
    /// Reference peaks the inside of the stretch must hold for that comparison. Default 24.
    public var clearMoveInsidePeaks: Int = 24
    /// Over the span moved, the reference's peaks must coincide with the recording's at least
    /// this fraction as often as inside the stretch. Default 0.5 (half as often): where the
    /// stretch is heard clearly the peak picker finds its peaks; chance standing-out over speech
    /// or other music has no such peaks.
    public var clearMoveInsideShare: Double = 0.5
    /// Over the span moved, the reference's peaks must coincide with the recording's at least
    /// this many times as often as at shifted alignments (``PeakEdge/chanceShifts``). Default 2.
    public var clearMoveChanceFactor: Double = 2
    /// Lowest rate of coincidence at shifted alignments that the span moved is compared with
    /// (fraction of peaks). Default 0.02.
    public var clearMoveChanceFloor: Double = 0.02
    /// A window's vote for a reference below its best vote opens another line (another copy of
    /// a passage the reference repeats) only when it lies more than this many seconds from
    /// every open line of the reference. Default 2: nearer, it is the open line's own smear
    /// over the coarse speeds and offset bins, and opening it split a play of a mix in two.
    public var copySeparationSeconds: Double = 2
    /// Lines of one reference within this many seconds of a closing line at its last hit are
    /// that line, not another alignment that dominates its end (a seek or a pause). Default 0.1.
    public var sameLineSeconds: Double = 0.1
    /// Horizon of a segment's edge from its hits, seconds: the span after a hit over which the
    /// stretch's local hit rate is measured when a cluster of early hits is tested for chance
    /// (``RecordingScanner/edge(_:chanceRate:horizon:reach:span:straddleRate:silentBefore:)``;
    /// after silence the next hit must follow within half of it). Default 2.
    public var edgeHorizonSeconds: Double = 2
    /// How far from an edge a stretch where the recording and the reference are both silent
    /// is followed, seconds. Default 30.
    public var silentStretchSeconds: Double = 30
    /// Shared material between two references' segments: the shorter one lies at least this
    /// fraction inside the longer one (and, for one stretch in two references, each inside
    /// the other). Default 0.8.
    public var sharedInsideFraction: Double = 0.8
    /// Shared material: the shorter segment gathers at least this multiple of the longer one's
    /// hits per second. Default 0.5 (with ``sharedRateHigh``: about as many hits per second, two
    /// versions of a song; the longer one, which also explains the rest, keeps the other as its
    /// alternative for that stretch).
    public var sharedRateLow: Double = 0.5
    /// Shared material: the shorter segment gathers at most this multiple of the longer one's
    /// hits per second. Default 1.3 (see ``sharedRateLow``).
    public var sharedRateHigh: Double = 1.3
    /// One stretch in two references (the same recording catalogued twice, or two versions
    /// identical there) is one entry when its hit rate is at least this multiple of the
    /// other's. Default 0.77.
    public var sameStretchRate: Double = 0.77
    /// How far (reference seconds) the second of two parts on one reference's line may start
    /// from the first part's line for the two to be one play, at no gap. Default 0.15.
    public var joinToleranceSeconds: Double = 0.15
    /// What that tolerance grows by per second of gap between the parts. Default 0.02 (2 %: a
    /// weak part's speed is known to a percent or two).
    public var joinTolerancePerGapSecond: Double = 0.02
    /// The most that tolerance grows to, seconds. Default 0.5: two parts 0.5 s apart on lines
    /// 0.5 s apart are a pause in the play, not a quiet passage.
    public var joinToleranceMaximumSeconds: Double = 0.5

    /// The defaults.
    public init() {}

    /// The defaults, for the scanner's static helpers.
    public static let `default` = ScanTuning()
}
