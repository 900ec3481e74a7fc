/// Two recordings of about the same length compared over their whole length, aligned at
/// `offset` frames (reference frame = query frame + offset): in each window of
/// ``SameRecordingRule/windowSeconds`` (every ``SameRecordingRule/stepSeconds``), the share of
/// both sides' postings that the other side holds (the same hash at the aligned frame, ±1
/// frame). A re-encoding keeps a steady share of the landmarks everywhere; two spots on one
/// music bed with different voice-overs share the bed's landmarks, but where either speaks the
/// other's window holds landmarks it lacks, and a different intro shares none there.
public struct RecordingComparison: Equatable, Sendable {
    /// One window: its start (seconds into the new recording) and the share of its postings
    /// (both sides together) held by the other side, 0…1; `nil` when both sides together hold
    /// fewer than ``SameRecordingRule/windowMinimumPostings`` there, or fewer than
    /// ``SameRecordingRule/windowMinimumOfMedian`` times the median window's (a quiet passage).
    public struct Window: Equatable, Sendable {
        /// Seconds into the new recording.
        public var start: Double
        /// Postings of both sides in the window (count).
        public var count: Int
        /// Postings of both sides in the window that the other side holds (count, 0…``count``).
        public var matched: Int
        /// Whether the window holds enough postings to be judged (``SameRecordingRule/windowMinimumPostings``
        /// and ``SameRecordingRule/windowMinimumOfMedian``); when not, it has no ``share``.
        public var judged: Bool
        /// ``matched`` over ``count``, 0…1; `nil` when the window is not ``judged``.
        public var share: Double? { judged ? Double(matched) / Double(count) : nil }
    }

    /// The windows in time order.
    public var windows: [Window]
    /// Matched postings of both sides over all postings of both sides, over the whole length.
    public var share: Double
    /// Stretches (seconds into the new recording) covered by windows whose share is under
    /// ``SameRecordingRule/windowFloorRatio`` times ``share`` or under ``share`` by
    /// ``SameRecordingRule/windowDeficit`` or more, merged where they overlap.
    public var differing: [ClosedRange<Double>]

    /// Whether the two are one recording by ``SameRecordingRule``: the whole share at least
    /// ``SameRecordingRule/overallFloor`` and no stretch that differs.
    public var isSameRecording: Bool { share >= SameRecordingRule.overallFloor && differing.isEmpty }

    /// Compares `query` (postings of the new recording) with `reference` (a stored one's) at
    /// `offset` frames; `hop` seconds per frame.
    public init(query: [Posting], reference: [Posting], offset: Int, hop: Double) {
        func key(_ hash: UInt32, _ frame: Int) -> UInt64 { UInt64(hash) << 32 | UInt64(UInt32(truncatingIfNeeded: frame)) }
        let queryKeys = Set(query.map { key($0.hash, Int($0.frame)) })
        let referenceKeys = Set(reference.map { key($0.hash, Int($0.frame)) })
        func held(_ keys: Set<UInt64>, _ hash: UInt32, _ frame: Int) -> Bool {
            (frame - 1 ... frame + 1).contains { $0 >= 0 && keys.contains(key(hash, $0)) }
        }
        // Both sides' postings on the new recording's time line, each with whether the other holds it.
        var points: [(frame: Int, matched: Bool)] = query.map { ($0.frame.asInt, held(referenceKeys, $0.hash, $0.frame.asInt + offset)) }
        points += reference.map { ($0.frame.asInt - offset, held(queryKeys, $0.hash, $0.frame.asInt - offset)) }
        let step = max(1, Int((SameRecordingRule.stepSeconds / hop).rounded()))
        let last = points.map(\.frame).max() ?? 0
        let slots = last / step + 1
        var total = [Int](repeating: 0, count: slots), matched = [Int](repeating: 0, count: slots)
        for p in points where p.frame >= 0 {
            total[p.frame / step] += 1
            if p.matched { matched[p.frame / step] += 1 }
        }
        let all = points.count, agreed = points.filter(\.matched).count
        let share = all == 0 ? 0 : Double(agreed) / Double(all)
        let perWindow = max(1, Int((SameRecordingRule.windowSeconds / SameRecordingRule.stepSeconds).rounded()))
        let ranges = (0 ..< max(1, slots - perWindow + 1)).map { $0 ..< min(slots, $0 + perWindow) }
        let counts = ranges.map { r in r.reduce(0) { $0 + total[$1] } }
        let median = counts.sorted()[counts.count / 2]
        let fewest = max(SameRecordingRule.windowMinimumPostings, Int((SameRecordingRule.windowMinimumOfMedian * Double(median)).rounded(.up)))
        var windows: [Window] = []
        var differing: [ClosedRange<Double>] = []
        for (first, range) in ranges.enumerated() {
            let n = counts[first], m = range.reduce(0) { $0 + matched[$1] }
            let start = Double(first * step) * hop
            let window = Window(start: start, count: n, matched: m, judged: n >= fewest)
            windows.append(window)
            if let windowShare = window.share, SameRecordingRule.differs(windowShare, from: share) {
                let end = start + Double(range.count * step) * hop
                if let previous = differing.last, previous.upperBound >= start {
                    differing[differing.count - 1] = previous.lowerBound ... end
                } else {
                    differing.append(start ... end)
                }
            }
        }
        self.windows = windows
        self.differing = differing
        self.share = share
    }
}

/// The rule by which ``RecordingComparison`` tells the same recording (a re-encoding, a
/// resampled or re-wrapped copy) from another one that shares much of it (spots on one music
/// bed with different voice-overs, slices of looped music, another intro or ending).
public enum SameRecordingRule {
    /// Seconds per compared window: 0.5. A difference shorter than this (a click, one word
    /// dropped in a re-encoding's noise) may pass; one of a syllable or more shows in it.
    public static let windowSeconds = 0.5
    /// Seconds between windows' starts: 0.25 (windows overlap by half).
    public static let stepSeconds = 0.25
    /// Fewest postings of both sides together for a window to count: 8. Fewer is silence or
    /// near-silence in both, where nothing can be compared.
    public static let windowMinimumPostings = 8
    /// Fewest postings of both sides together for a window to count, as a fraction of the
    /// median window's: 0.8. A quiet passage (a fade in or out) holds fewer landmarks, and a
    /// lossy codec drops most of them there: of MP3 128k, AAC 128k and Opus 64k copies of 11 of
    /// the bench's references (33 copies), 8 differed in a 0.5–1 s stretch with windows judged
    /// from 8 postings up, 6 from half the median, 2 from 0.8 of it. Speech over a music bed
    /// adds landmarks: its windows hold more than the median.
    public static let windowMinimumOfMedian = 0.8
    /// The least share of a window's postings the other side must hold, as a fraction of the
    /// share it holds over the whole length: 0.3. A re-encoding loses landmarks about evenly:
    /// over 20 s spots and 20–40 s music (the sample references), MP3 128k and 64k, AAC 96k,
    /// Opus 64k and 48k and a 48 kHz resample holding 0.45 or more of the whole kept 0.38–0.99
    /// of it in their worst 0.5 s window. Spots on one music bed whose voice-overs differ kept
    /// 0–0.28 of it where the speech differs (the speech 6 dB under the bed; none when it is
    /// over it); a different 2 s intro keeps none there.
    public static let windowFloorRatio = 0.3
    /// The most a window's share may fall under the whole length's: 0.5. The re-encodings above
    /// fell at most 0.38 under it, the spots with voice-overs 6 dB under the bed 0.63 or more.
    public static let windowDeficit = 0.5

    /// Whether a window holding `windowShare` of its postings differs, in a comparison
    /// holding `share` of them over the whole length.
    public static func differs(_ windowShare: Double, from share: Double) -> Bool {
        windowShare < windowFloorRatio * share || share - windowShare >= windowDeficit
    }
    /// The least share of all postings the other side must hold: 0.45. The re-encodings above
    /// held 0.59–1.0; two 20 s slices of looped music (a 2 s bar repeated under a melody that
    /// differs, waveform correlation 0.30–0.41) hold 0.34–0.38 everywhere alike. A copy so
    /// damaged that it holds less is kept as a near-duplicate, not dropped: of 33 MP3 128k, AAC
    /// 128k and Opus 64k copies of bench references, 3 AAC and Opus copies of two dense pieces
    /// held 0.36–0.40 and are kept so.
    public static let overallFloor = 0.45
}

private extension UInt32 {
    var asInt: Int { Int(self) }
}
