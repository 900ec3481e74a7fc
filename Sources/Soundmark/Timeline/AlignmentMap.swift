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
        for piece in segments where piece.referenceIndex == referenceIndex && piece.timeScale > 0 {
            let r0 = min(piece.referenceStart, piece.referenceEnd), r1 = max(piece.referenceStart, piece.referenceEnd)
            for (i, a) in annotations.enumerated() {
                let lo = max(a.start, r0), hi = min(a.end, r1)
                guard hi > lo else { continue }
                var start = piece.start + (lo - piece.referenceStart) / piece.timeScale
                var end = piece.start + (hi - piece.referenceStart) / piece.timeScale
                start = max(0, max(piece.start, start))
                end = min(recordingDuration, min(piece.end, end))
                guard end - start >= minimumDuration else { continue }
                cues.append(Cue(start: start, end: end, text: a.text))
                aired[i] = true
            }
        }
        cues.sort { ($0.start, $0.end, $0.text) < ($1.start, $1.end, $1.text) }
        let dropped = annotations.indices.filter { !aired[$0] }.map { annotations[$0] }
        return MappedCues(cues: cues, dropped: dropped)
    }
}
