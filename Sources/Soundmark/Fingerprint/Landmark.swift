import Foundation

/// A pair of peaks: an anchor and one target in its target zone (Wang 2003).
///
/// Landmarks keep the peaks' fractional bins so that a query can be rescaled for a candidate
/// speed change before it is hashed (see ``LandmarkHasher``).
public struct Landmark: Equatable, Sendable {
    /// Frame of the anchor peak (hops since the start of the stream).
    public var anchorFrame: Int32
    /// Fractional bin of the anchor peak.
    public var anchorBin: Float
    /// Fractional bin of the target peak.
    public var targetBin: Float
    /// Target frame minus anchor frame, in frames (`targetZoneMinFrames ... targetZoneMaxFrames`).
    public var deltaFrames: Int16

    /// Creates a landmark; see the properties for units.
    public init(anchorFrame: Int32, anchorBin: Float, targetBin: Float, deltaFrames: Int16) {
        self.anchorFrame = anchorFrame
        self.anchorBin = anchorBin
        self.targetBin = targetBin
        self.deltaFrames = deltaFrames
    }
}

/// Streaming landmark builder: peaks in (frame order), landmarks out.
///
/// Each peak is an anchor; its targets are the `fanOut` strongest peaks whose frame lies
/// `targetZoneMinFrames ... targetZoneMaxFrames` after the anchor and whose frequency is within
/// `±targetZoneOctaves` of the anchor's. Choosing the strongest rather than the first keeps the
/// pairs of a noisy query close to those of the clean reference: noise adds weak peaks, which
/// are not chosen. An anchor's landmarks are
/// emitted once a peak past its target zone arrives, or at ``flush(emit:)``.
public final class LandmarkBuilder {
    /// The analysis parameters.
    public let configuration: Configuration
    private var peaks: [Peak] = []
    private var head = 0
    private let maxRatio: Float

    /// Creates a builder for `configuration`, pairing each anchor with `configuration.fanOut` targets.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        maxRatio = Float(pow(2, configuration.targetZoneOctaves))
    }

    /// Adds one peak (peaks must arrive in non-decreasing frame order) and emits the landmarks
    /// of every anchor whose target zone is now complete.
    public func consume(_ peak: Peak, emit: (Landmark) -> Void) {
        while head < peaks.count && peaks[head].frame + configuration.targetZoneMaxFrames < peak.frame {
            pair(anchorAt: head, emit: emit)
            head += 1
        }
        if head > 4096 {
            peaks.removeFirst(head)
            head = 0
        }
        peaks.append(peak)
    }

    /// Emits the landmarks of every remaining anchor (end of stream).
    public func flush(emit: (Landmark) -> Void) {
        while head < peaks.count {
            pair(anchorAt: head, emit: emit)
            head += 1
        }
        peaks.removeAll()
        head = 0
    }

    private func pair(anchorAt index: Int, emit: (Landmark) -> Void) {
        let anchor = peaks[index]
        let lo = anchor.frame + configuration.targetZoneMinFrames
        let hi = anchor.frame + configuration.targetZoneMaxFrames
        let fanOut = configuration.fanOut
        // The `fanOut` strongest peaks of the zone (ties: earlier first), kept sorted by power.
        var chosen: [Peak] = []
        chosen.reserveCapacity(fanOut + 1)
        var i = index + 1
        while i < peaks.count {
            let t = peaks[i]
            i += 1
            if t.frame < lo { continue }
            if t.frame > hi { break }
            let ratio = t.bin / anchor.bin
            guard ratio <= maxRatio && ratio >= 1 / maxRatio else { continue }
            if chosen.count == fanOut && t.power <= chosen[fanOut - 1].power { continue }
            var k = chosen.count
            while k > 0 && chosen[k - 1].power < t.power { k -= 1 }
            chosen.insert(t, at: k)
            if chosen.count > fanOut { chosen.removeLast() }
        }
        chosen.sort { ($0.frame, $0.bin) < ($1.frame, $1.bin) }
        for t in chosen {
            emit(Landmark(anchorFrame: Int32(anchor.frame), anchorBin: anchor.bin,
                          targetBin: t.bin, deltaFrames: Int16(t.frame - anchor.frame)))
        }
    }
}

/// Turns landmarks into hashes, optionally undoing a candidate speed change first.
///
/// A hash packs three quantised values:
/// - the anchor frequency on a log scale: `⌊log2(f / minFrequency) · logStepsPerOctave⌋`;
/// - the target/anchor frequency ratio on the same scale (unchanged by a speed change);
/// - the frame difference, rounded.
///
/// `hash = (anchorStep · ratioCount + ratioStep) · deltaCount + (delta − targetZoneMinFrames)`,
/// a value in `0 ..< hashCount` (about 2^20 with the defaults).
///
/// For a query that plays `timeScale` times faster and `frequencyScale` times higher than the
/// reference, frequencies are divided by `frequencyScale` and frame differences multiplied by
/// `timeScale` before quantising, so its hashes are those of the reference. Landmarks that
/// leave the scale's range give no hash.
public struct LandmarkHasher: Sendable {
    /// The analysis parameters.
    public let configuration: Configuration
    /// Number of anchor-frequency steps.
    public let anchorCount: Int
    /// Number of ratio steps.
    public let ratioCount: Int
    /// Number of frame-difference values.
    public let deltaCount: Int
    private let ratioHalf: Int
    private let steps: Double
    private let binToLog: Double   // log2(binWidth / minFrequency)

    /// Creates a hasher for `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        steps = Double(configuration.logStepsPerOctave)
        anchorCount = Int((log2(configuration.maxFrequency / configuration.minFrequency) * steps).rounded(.up)) + 1
        ratioHalf = Int((configuration.targetZoneOctaves * steps).rounded(.up)) + 1
        ratioCount = 2 * ratioHalf + 1
        deltaCount = configuration.targetZoneMaxFrames - configuration.targetZoneMinFrames + 1
        binToLog = log2(configuration.binWidth / configuration.minFrequency)
    }

    /// Size of the hash space: every hash is in `0 ..< hashCount`.
    public var hashCount: Int { anchorCount * ratioCount * deltaCount }

    /// A landmark with the speed-independent parts of its hash worked out once, so that
    /// hashing it for many candidate speeds needs no logarithm.
    public struct Prepared: Sendable {
        /// Frame of the anchor peak.
        public var anchorFrame: Int32
        /// Anchor frequency on the hash's log scale, in (fractional) steps above `minFrequency`.
        public var anchorStep: Double
        /// Target/anchor frequency-ratio step (unchanged by speed changes), `0 ..< ratioCount`.
        public var ratioStep: Int32
        /// Target frame minus anchor frame.
        public var deltaFrames: Int16
    }

    /// Prepares a landmark for ``hash(_:timeScale:logShift:)``; `nil` when its frequency ratio
    /// is outside the target zone (or not a number: a bin of zero, negative or infinite).
    @inline(__always)
    public func prepare(_ landmark: Landmark) -> Prepared? {
        // In Double (a Float ratio of extreme bins overflows); NaN fails the range check.
        let step = (log2(Double(landmark.targetBin) / Double(landmark.anchorBin)) * steps).rounded(.down)
        guard step >= Double(-ratioHalf) && step < Double(ratioCount - ratioHalf) else { return nil }
        let r = Int(step) + ratioHalf
        return Prepared(anchorFrame: landmark.anchorFrame, anchorStep: (log2(Double(landmark.anchorBin)) + binToLog) * steps,
                        ratioStep: Int32(r), deltaFrames: landmark.deltaFrames)
    }

    /// `log2(frequencyScale) · logStepsPerOctave`: the shift of a speed candidate on the log scale.
    public func logShift(frequencyScale: Double) -> Double { log2(frequencyScale) * steps }

    /// The hash of a prepared landmark after undoing a speed change: frame difference × `timeScale`,
    /// anchor step − `logShift` (see ``logShift(frequencyScale:)``).
    @inline(__always)
    public func hash(_ p: Prepared, timeScale: Double, logShift: Double) -> UInt32? {
        let a = p.anchorStep - logShift
        guard a >= 0 && a < Double(anchorCount) else { return nil }   // also false for NaN
        let anchor = Int(a)
        let d = Int((Double(p.deltaFrames) * timeScale).rounded()) - configuration.targetZoneMinFrames
        guard d >= 0 && d < deltaCount else { return nil }
        return UInt32((anchor * ratioCount + Int(p.ratioStep)) * deltaCount + d)
    }

    /// The hash of `landmark` after undoing a speed change of `timeScale` (tempo) and
    /// `frequencyScale` (pitch); `nil` when the rescaled landmark falls outside the hash's range.
    @inline(__always)
    public func hash(_ landmark: Landmark, timeScale: Double = 1, frequencyScale: Double = 1) -> UInt32? {
        guard let p = prepare(landmark) else { return nil }
        return hash(p, timeScale: timeScale, logShift: frequencyScale == 1 ? 0 : logShift(frequencyScale: frequencyScale))
    }
}
