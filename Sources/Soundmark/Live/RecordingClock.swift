import Foundation

/// Recording position of a live stream: which sample of the recording the current connection's
/// first sample is (a reconnected source continues the recording after its gap), and the
/// heartbeat that keeps a ``RecordingScanner``'s clock running through silence and outages.
public struct RecordingClock: Sendable {
    /// Heartbeats lag the decoded audio by this many seconds (2), so that real landmarks (decided
    /// about 1 s after their anchor) practically always arrive before a heartbeat that follows them.
    public static let heartbeatLagSeconds = 2.0
    /// Samples per second.
    public let sampleRate: Int
    /// Samples per frame hop.
    public let hop: Int
    /// Recording sample of the current connection's sample 0 (a multiple of ``hop``).
    public var base: Int64 = 0
    /// Recording frame of the current connection's frame 0.
    public var baseFrame: Int32 { Int32(base / Int64(hop)) }
    /// Last heartbeat frame fed to the scanner.
    public var lastHeartbeat: Int32 = 0

    /// Creates a clock at recording sample 0.
    /// - Parameters:
    ///   - sampleRate: samples per second (the catalog's).
    ///   - hop: samples per frame hop (the catalog's).
    public init(sampleRate: Int, hop: Int) {
        self.sampleRate = sampleRate
        self.hop = hop
    }

    /// Seconds of `samples`.
    public func seconds(_ samples: Int64) -> Double { Double(samples) / Double(sampleRate) }

    /// `samples` rounded up to a whole number of hops.
    public func roundedUp(_ samples: Int64) -> Int64 {
        (samples + Int64(hop) - 1) / Int64(hop) * Int64(hop)
    }

    /// The frame the scanner's clock may move to (``RecordingScanner/advance(toFrame:)``) for recording
    /// sample `position`, when it moves the clock on; nil otherwise.
    ///
    /// The scanner closes its hop blocks (and so decides `ended`) as landmarks arrive; in
    /// silence, or while a network source is down, none does, so the clock is moved on by hand.
    /// It lags `position` by ``heartbeatLagSeconds`` so that landmarks still being decided
    /// (about 1 s behind the audio) are not older than the clock.
    public mutating func heartbeat(at position: Int64) -> Int? {
        let frame = (position - Int64(RecordingClock.heartbeatLagSeconds * Double(sampleRate))) / Int64(hop)
        guard frame > Int64(lastHeartbeat), frame < Int64(Int32.max) else { return nil }
        lastHeartbeat = Int32(frame)
        return Int(frame)
    }
}
