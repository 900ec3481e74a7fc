import Foundation

/// Turns the ``ScanEvent``s of a live stream's scanner(s) into activity events (what
/// ``ManagedSession`` and `soundmark monitor` report): one activity per
/// continuous play, with activity ids that stay unique when the scanner is replaced (a catalog
/// reload).
///
/// - An *echo* is not a new play: after a segment's `ended`, the sliding window still holds the
///   last seconds of its audio and may find the same line again (same reference, reference time
///   within ``sameLineSeconds``), starting inside the ended segment. Such a line is held back; it
///   becomes an activity only once it extends more than ``echoMarginSeconds`` past the ended
///   segment's end (the play resumed after a quiet passage), and is dropped silently otherwise.
///   This is what `scan` does when it cleans its segments up (a short duplicate of a line is
///   joined or dropped).
/// - Handover: when the scanner is replaced, the old scanner's open segments are ended into
///   ``handover(_:)`` instead of being written. A segment of the new scanner on the same line
///   continues that activity (same id, its start kept) and is written as `refined`; handed-over
///   activities that no new segment continues within ``handoverSeconds`` of recording time are
///   ended with the end the old scanner measured.
/// - Every segment written is clamped to the audio known so far (``limit``): no event's time
///   lies past the end of the stream.
public final class ActivityTracker {
    /// Reference time difference (seconds) under which two segments of a reference are the
    /// same line (the same play) for an echo or a handover: 0.5. These segments overlap or
    /// follow within seconds; `scan` joins two parts of a play across a longer gap within
    /// ``ScanTuning/joinToleranceSeconds`` plus ``ScanTuning/joinTolerancePerGapSecond`` of
    /// the gap, at most ``ScanTuning/joinToleranceMaximumSeconds`` (also 0.5).
    public static let sameLineSeconds = 0.5
    /// How far (seconds) an echo of an ended segment must extend past its end to be a play.
    public static let echoMarginSeconds = 1.5
    /// How long (recording seconds) a handed-over activity waits for the new scanner.
    public static let handoverSeconds = 12.0
    /// How long (recording seconds) an ended activity is remembered to recognise its echoes.
    public static let memorySeconds = 30.0

    /// Receives the activity events (ids are activity ids, 1, 2, …).
    private let emit: (ScanEvent) -> Void
    /// The recording time (seconds) up to which audio is known; segments are clamped to it.
    public var limit: Double = .infinity
    /// The current scanner generation (bumped by ``handover(_:)``).
    private var generation = 0
    /// Scanner segment (generation, scanner id) → activity id, for written activities.
    private var activities: [Key: Int] = [:]
    /// Scanner segments held back as echoes, with their latest segment and the ended segment.
    private var echoes: [Key: (segment: Segment, of: Segment)] = [:]
    /// Recently ended activities: their last segment.
    private var ended: [Segment] = []
    /// Activities handed over by a replaced scanner: activity id and last segment.
    private var handedOver: [(id: Int, segment: Segment)] = []
    /// The next activity id.
    private var nextID = 1

    /// A scanner segment of one generation.
    private struct Key: Hashable { let generation: Int, id: Int }

    /// Creates a tracker writing its events to `emit` (ids are activity ids: 1, 2, … per run).
    public init(emit: @escaping (ScanEvent) -> Void) { self.emit = emit }

    /// Whether `b` lies on `a`'s line: same reference (by id, so across catalog reloads) and
    /// the reference time `a` predicts at `b`'s start within ``sameLineSeconds``.
    private static func sameLine(_ a: Segment, _ b: Segment) -> Bool {
        a.item.id == b.item.id && abs(a.referenceTime(at: b.start) - b.referenceStart) <= sameLineSeconds
    }

    /// `segment` clamped to ``limit``: its end (and start) not past the known audio.
    private func clamped(_ segment: Segment) -> Segment {
        guard segment.end > limit else { return segment }
        var s = segment
        s.end = max(limit, 0)
        s.start = min(s.start, s.end)
        s.referenceEnd = s.referenceTime(at: s.end)
        return s
    }

    /// Handles one event of the current scanner.
    public func handle(_ event: ScanEvent) {
        switch event {
        case .started(let id, let segment):
            let key = Key(generation: generation, id: id)
            if let i = handedOver.firstIndex(where: { Self.sameLine($0.segment, segment) }) {
                // The new scanner found an activity of the old one: it continues.
                // Nothing is written: the activity goes on, and the new scanner's segment (found
                // again in the replayed landmarks) only says something new once it passes the end
                // the old one reported.
                let old = handedOver.remove(at: i)
                activities[key] = old.id
                startSegments[key] = old.segment
                return
            }
            if let of = ended.last(where: { Self.sameLine($0, segment) && segment.start < $0.end }) {
                echoes[key] = (segment, of)
                return
            }
            start(key, segment)
        case .refined(let id, let segment):
            let key = Key(generation: generation, id: id)
            if let echo = echoes[key] {
                echoes[key] = (segment, echo.of)
                if segment.end > echo.of.end + Self.echoMarginSeconds {
                    echoes[key] = nil
                    start(key, segment)
                }
                return
            }
            guard let activity = activities[key] else { return }
            if let first = startSegments[key], segment.end <= first.end { return }
            emit(.refined(id: activity, segment: clamped(merged(startSegments[key], segment))))
        case .ended(let id, let segment):
            let key = Key(generation: generation, id: id)
            if let echo = echoes.removeValue(forKey: key) {
                guard segment.end > echo.of.end + Self.echoMarginSeconds else { return }
                start(key, segment)
            }
            guard let activity = activities.removeValue(forKey: key) else { return }
            let full = clamped(merged(startSegments.removeValue(forKey: key), segment))
            if handingOver {
                handedOver.append((activity, full))
                return
            }
            emit(.ended(id: activity, segment: full))
            remember(full)
        }
    }

    /// The segment a handed-over activity (`first`: as the old scanner left it) stands for now
    /// that the new scanner reports `segment` for it: the earlier start, the later end.
    private func merged(_ first: Segment?, _ segment: Segment) -> Segment {
        guard let first else { return segment }
        var s = segment
        if first.start < s.start {
            s.start = first.start
            s.referenceStart = first.referenceStart
        }
        if first.end > s.end {
            s.end = first.end
            s.referenceEnd = first.referenceEnd
        }
        s.hits = max(s.hits, first.hits)
        return s
    }

    /// The segment a handed-over activity had when the new scanner took it over.
    private var startSegments: [Key: Segment] = [:]
    /// Set while the old scanner's open segments are ended into the handover list.
    private var handingOver = false

    /// Writes `started` for a new activity.
    private func start(_ key: Key, _ segment: Segment) {
        activities[key] = nextID
        emit(.started(id: nextID, segment: clamped(segment)))
        nextID += 1
    }

    /// Remembers an ended activity for recognising its echoes (and forgets old ones).
    private func remember(_ segment: Segment) {
        ended.append(segment)
        ended.removeAll { $0.end < segment.end - Self.memorySeconds }
    }

    /// Replaces the scanner: `finishOld` must end the old scanner's open segments (its
    /// ``RecordingScanner/finish()``), whose `ended` events are then held as handed-over activities; the
    /// events of the next generation come from the new scanner.
    public func handover(_ finishOld: () -> Void) {
        handingOver = true
        finishOld()
        handingOver = false
        echoes.removeAll()
        generation += 1
    }

    /// Recording time (seconds) reached: ends handed-over activities that no segment of the new
    /// scanner continued within ``handoverSeconds``.
    public func advance(to time: Double) {
        while let i = handedOver.firstIndex(where: { time - $0.segment.end > Self.handoverSeconds }) {
            let old = handedOver.remove(at: i)
            emit(.ended(id: old.id, segment: clamped(old.segment)))
            remember(old.segment)
        }
    }

    /// Ends every handed-over activity (the stream ended), before the scanner's own ends.
    public func finish() {
        for old in handedOver {
            emit(.ended(id: old.id, segment: clamped(old.segment)))
            remember(old.segment)
        }
        handedOver.removeAll()
    }
}
