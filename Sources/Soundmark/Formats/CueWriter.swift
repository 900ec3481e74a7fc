import Foundation

/// Serialises cues (recording time, seconds) and tables to text formats.
///
/// All writers are pure functions returning the whole file as a `String` (write it as
/// UTF-8). Times are rounded to the format's precision, never truncated, so 1.9996 s is
/// written as `00:00:02,000`; negative or not-a-number times are written as 0, times beyond
/// ``Annotation/maximumTime`` (and +infinity) as that maximum, and an end before its start is
/// written equal to the start.
public enum CueWriter {
    // Each format's writer is an extension of this type in that format's file.

    /// `t` clamped to `0...Annotation.maximumTime`; not-a-number becomes 0. Every integer
    /// conversion below relies on it.
    static func clean(_ t: Double) -> Double {
        t.isNaN || t <= 0 ? 0 : min(t, Annotation.maximumTime)
    }

    static func times(_ cue: Cue) -> (Double, Double) {
        let start = clean(cue.start)
        return (start, max(start, clean(cue.end)))
    }

    static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// `hh:mm:ss<sep>mmm` from seconds, rounded to the millisecond.
    static func clock(_ seconds: Double, separator: String) -> String {
        let ms = Int((clean(seconds) * 1000).rounded())
        return "\(pad(ms / 3_600_000, 2)):\(pad(ms / 60_000 % 60, 2)):\(pad(ms / 1000 % 60, 2))\(separator)\(pad(ms % 1000, 3))"
    }

    static func fixed6(_ seconds: Double) -> String {
        let micros = Int((clean(seconds) * 1_000_000).rounded())
        return "\(micros / 1_000_000).\(pad(micros % 1_000_000, 6))"
    }

    /// Text lines with CR/CRLF normalised and blank lines removed.
    static func payloadLines(_ text: String) -> [String] {
        AnnotationReader.LineSplitter.split(text).filter { !AnnotationReader.isBlank($0) }
    }
}
