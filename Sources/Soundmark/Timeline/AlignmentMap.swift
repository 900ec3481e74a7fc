/// The mapping from recording time to reference time found by a scan: one piece per segment,
/// each a straight line (offset and speed). Pieces begin and end where the audio jumps: a
/// pre-roll, an inserted break, a removed stretch, a pause, a seek or a rewind.
public struct AlignmentMap: Sendable {
    /// The segments, in recording order; each is one piece of the map.
    public var segments: [Segment]
    /// Length of the recording in seconds; no cue is placed past it.
    public var recordingDuration: Double

    /// Creates a map from scan segments.
    public init(segments: [Segment], recordingDuration: Double) {
        self.segments = segments.sorted { $0.start < $1.start }
        self.recordingDuration = recordingDuration
    }

    /// Where each annotation of a reference aired, in recording time.
    public struct MappedCues: Sendable {
        /// Cues in recording time, sorted by start (then end, then text).
        public var cues: [Cue]
        /// Annotations no part of which aired (their stretch was removed or never played).
        public var dropped: [Annotation]
    }

    /// Maps annotations (reference time) of reference `referenceIndex` into recording time.
    ///
    /// Every piece of that reference maps the part of each annotation that falls inside the
    /// piece's reference range: a cue cut by a piece boundary is clipped to the part that aired,
    /// and a stretch that plays twice (a rewind) gives its cues twice. Cues are clipped to
    /// `0 ... recordingDuration`; parts shorter than `minimumDuration` seconds (default 0.05) are
    /// not cues. The output is sorted and never has a negative or zero-length cue.
    public func cues(for annotations: [Annotation], referenceIndex: Int, minimumDuration: Double = 0.05) -> MappedCues {
        var cues: [Cue] = []
        var aired = [Bool](repeating: false, count: annotations.count)
        for piece in segments where piece.referenceIndex == referenceIndex {
            for (i, cue) in mapped(annotations, into: piece, minimumDuration: minimumDuration) {
                cues.append(cue)
                aired[i] = true
            }
        }
        cues.sort { ($0.start, $0.end, $0.text) < ($1.start, $1.end, $1.text) }
        let dropped = annotations.indices.filter { !aired[$0] }.map { annotations[$0] }
        return MappedCues(cues: cues, dropped: dropped)
    }

    /// The cues of a whole recording when annotations are asked for (`scan --cues annotations`).
    public struct PlayCues: Sendable {
        /// Cues in recording time, sorted by start (then end, then text): the annotations
        /// aired in each segment, and one cue spanning each segment in which none aired.
        public var cues: [Cue]
        /// For each of ``cues``, the index in ``AlignmentMap/segments`` of the segment it lies in.
        public var segmentIndices: [Int]
        /// Indices in ``AlignmentMap/segments`` of the segments that got one cue of their own
        /// (their reference has no annotations, or none of them aired in the segment).
        public var segmentCues: [Int]
    }

    /// The cues of every play in the recording: each segment holds the annotations of its
    /// reference that aired in it (as ``cues(for:referenceIndex:minimumDuration:)`` maps them),
    /// and a segment in which none aired is one cue, `segmentText(segment)`, over the whole
    /// segment. So no play is left out of the cues, and no cue spans audio of another play:
    /// every cue lies inside its own segment.
    /// - Parameters:
    ///   - annotations: the annotations of each reference, by reference index (missing: none).
    ///   - segmentText: the text of a segment's own cue, plain text (``CueTextKind/plain``:
    ///     a title `<b>Live</b>` is not markup).
    ///   - minimumDuration: the shortest annotation cue kept, seconds (default 0.05).
    public func playCues(annotations: [Int: [Annotation]], segmentText: (Segment) -> String,
                         minimumDuration: Double = 0.05) -> PlayCues {
        var entries: [(cue: Cue, segment: Int)] = []
        var own: [Int] = []
        for (n, piece) in segments.enumerated() {
            let aired = mapped(annotations[piece.referenceIndex] ?? [], into: piece, minimumDuration: minimumDuration).map(\.cue)
            if aired.isEmpty {
                let start = max(0, piece.start), end = min(recordingDuration, piece.end)
                guard end > start else { continue }
                entries.append((Cue(start: start, end: end, text: segmentText(piece), kind: .plain), n))
                own.append(n)
            } else {
                entries += aired.map { ($0, n) }
            }
        }
        entries.sort { ($0.cue.start, $0.cue.end, $0.cue.text) < ($1.cue.start, $1.cue.end, $1.cue.text) }
        return PlayCues(cues: entries.map(\.cue), segmentIndices: entries.map(\.segment), segmentCues: own)
    }

    /// The parts of `annotations` that aired in `piece`, in recording time (with each one's
    /// index in `annotations`), clipped to the piece and to `0 ... recordingDuration`; parts
    /// shorter than `minimumDuration` seconds are left out. WebVTT timestamp tags in the text
    /// are mapped into recording time too.
    private func mapped(_ annotations: [Annotation], into piece: Segment, minimumDuration: Double) -> [(index: Int, cue: Cue)] {
        guard piece.timeScale > 0 else { return [] }
        let r0 = min(piece.referenceStart, piece.referenceEnd), r1 = max(piece.referenceStart, piece.referenceEnd)
        var out: [(index: Int, cue: Cue)] = []
        for (i, a) in annotations.enumerated() {
            let lo = max(a.start, r0), hi = min(a.end, r1)
            guard hi > lo else { continue }
            var start = piece.start + (lo - piece.referenceStart) / piece.timeScale
            var end = piece.start + (hi - piece.referenceStart) / piece.timeScale
            start = max(0, max(piece.start, start))
            end = min(recordingDuration, min(piece.end, end))
            guard end - start >= minimumDuration else { continue }
            // Timestamp tags inside the text move with it (CueMarkup).
            let text = CueMarkup.retimingTimestamps(a.text) { piece.start + ($0 - piece.referenceStart) / piece.timeScale }
            out.append((i, Cue(start: start, end: end, text: text)))
        }
        return out
    }
}
