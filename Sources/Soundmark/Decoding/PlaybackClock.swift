import Foundation

/// The one definition of time in soundmark: the media's **playback time line**.
///
/// A time is the presentation timestamp of the audio minus the container's start time
/// (`AVFormatContext.start_time`, what `ffprobe` reports as the format's `start_time`): the time
/// a player shows. A video whose audio starts 4.06 s after its picture has its first audio
/// sample at 4.06 s; an MPEG-TS whose time stamps start at 1.4 s starts at 0. Sample indices
/// (``AudioChunk/firstSample``, ``MediaDecoder/samplesProduced``, landmark frames) count output
/// samples from that origin, so `seconds = sample / sampleRate` everywhere.
///
/// `MediaDecoder` keeps its output on this line by comparing each decoded frame's time stamp
/// (or, for raw elementary streams such as MP3 that carry no time stamps, its byte position)
/// with the count of samples it has produced:
/// - the audio that precedes the first frame (a stream that starts after the video) and audio
///   lost in the middle (missing packets, undecodable frames) become silence of the right
///   length, up to ``maximumFill``; a lost stretch is reported as a warning;
/// - disagreements up to ``tolerance`` (time stamp jitter, rounding) change nothing: samples
///   are counted;
/// - a time stamp that jumps back, or ahead by more than ``maximumFill``, is reported and the
///   count goes on (the time stamps are re-based on the count).
struct PlaybackClock {
    /// Output sample rate, Hz.
    let rate: Int
    /// Disagreement between time stamps and the sample count that is ignored: 50 ms.
    static let tolerance = 0.05
    /// Longest stretch of silence inserted for a late start or a hole: 600 s. Longer jumps are
    /// treated as a broken time line (warned about, not filled).
    static let maximumFill = 600.0

    /// Samples added to positions derived from time stamps, after a jump that was not filled.
    private var correction: Int64 = 0
    /// Whether the first frame has been placed.
    private(set) var started = false

    init(rate: Int) { self.rate = rate }

    /// Converts a time stamp to a sample index on the playback time line.
    /// - Parameters:
    ///   - timestamp: presentation time stamp in units of `timeBase`.
    ///   - timeBase: seconds per unit (`num / den`).
    ///   - origin: the container's start time in seconds (0 when unknown).
    /// - Returns: `(timestamp · timeBase − origin) · rate`, rounded to the nearest sample.
    func sample(timestamp: Int64, timeBase: (num: Int32, den: Int32), origin: Double) -> Int64 {
        Int64(((Self.seconds(timestamp: timestamp, timeBase: timeBase) - origin) * Double(rate)).rounded())
    }

    /// A time stamp in seconds: `timestamp · num / den` (0 for a zero denominator).
    static func seconds(timestamp: Int64, timeBase: (num: Int32, den: Int32)) -> Double {
        timeBase.den == 0 ? 0 : Double(timestamp) * Double(timeBase.num) / Double(timeBase.den)
    }

    /// What to do before appending a frame.
    struct Decision: Equatable {
        /// Samples of silence to insert before the frame (0: none).
        var fill: Int64 = 0
        /// A one-line warning (without the input's name), or `nil`.
        var warning: String?
    }

    /// Places a frame whose first sample belongs at `position` (samples on the playback time
    /// line, `nil` when unknown) when `count` samples have been produced so far (or are
    /// buffered for output).
    /// - Returns: the silence to insert before the frame and a warning, if any.
    mutating func place(position: Int64?, count: Int64) -> Decision {
        defer { started = true }
        guard let raw = position else { return Decision() }
        let target = raw + correction
        let difference = target - count
        let tolerance = Int64(Self.tolerance * Double(rate))
        let maximum = Int64(Self.maximumFill * Double(rate))
        if !started {
            // The lead before the first audio frame: exact, no tolerance, no warning.
            if difference > 0 && difference <= maximum { return Decision(fill: difference) }
            if difference == 0 { return Decision() }
            correction -= difference
            if difference > 0 {
                return Decision(warning: String(format: "audio starts %@ into the media, more than %.0f s; times count from the audio",
                                                Self.duration(difference, rate), Self.maximumFill))
            }
            return Decision() // the first frame lies before the start time: count from 0
        }
        if abs(difference) <= tolerance { return Decision() }
        let at = Self.time(count, rate)
        if difference > 0 && difference <= maximum {
            return Decision(fill: difference,
                            warning: "\(Self.duration(difference, rate)) of audio missing at \(at)")
        }
        correction -= difference
        if difference < 0 {
            return Decision(warning: "time stamps go back \(Self.duration(-difference, rate)) at \(at); samples counted on")
        }
        return Decision(warning: "time stamps jump ahead \(Self.duration(difference, rate)) at \(at) (not filled); samples counted on")
    }

    /// `samples` at `rate` as "2.0 s" (one decimal; milliseconds below 0.1 s).
    static func duration(_ samples: Int64, _ rate: Int) -> String {
        let seconds = Double(samples) / Double(rate)
        return seconds < 0.1 ? String(format: "%.0f ms", seconds * 1000) : String(format: "%.1f s", seconds)
    }

    /// Sample index `sample` at `rate` as a time on the playback line, "50.0 s".
    static func time(_ sample: Int64, _ rate: Int) -> String {
        String(format: "%.1f s", Double(sample) / Double(rate))
    }
}
