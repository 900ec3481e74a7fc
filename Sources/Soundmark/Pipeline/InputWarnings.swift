import Foundation

/// The warnings said about each input while it was read and matched, kept for its report: a
/// warning that affects a result (a truncated file, skipped corrupt data, a clip too short, an
/// annotation left out) belongs in the output too, not only where it was said. Inputs are told
/// apart by the name they were given (a path, URL or `-`); several threads may record at once
/// (decoding and matching run on threads of their own). At most ``keptPerSource`` are kept per
/// input (a monitor that runs for weeks through gaps and reconnects must not grow without
/// bound): the rest are counted, and ``take(_:)`` ends with one line saying how many more there
/// were.
public final class InputWarnings: @unchecked Sendable {
    /// Warnings kept per input (count): 100, more than a reader goes through, few enough that a
    /// report (a monitor's stream.ended line) stays a few kilobytes.
    public static let keptPerSource = 100
    private let lock = NSLock()
    private var bySource: [String: [String]] = [:]
    private var notKept: [String: Int] = [:]

    /// An empty store.
    public init() {}

    /// Keeps `message` (one line, as said) for `source`, after those said before it, or counts
    /// it when `source` already has ``keptPerSource``.
    public func record(_ source: String, _ message: String) {
        lock.lock(); defer { lock.unlock() }
        if bySource[source, default: []].count < Self.keptPerSource {
            bySource[source, default: []].append(message)
        } else {
            notKept[source, default: 0] += 1
        }
    }

    /// The warnings kept for `source`, in the order they were recorded, then "N more warning(s)
    /// on stderr" when N were only counted (they went to stderr, or to the handler that was
    /// told each one); and forgets them. Empty for a source with none.
    public func take(_ source: String) -> [String] {
        lock.lock(); defer { lock.unlock() }
        let kept = bySource.removeValue(forKey: source) ?? []
        guard let more = notKept.removeValue(forKey: source) else { return kept }
        return kept + ["\(more) more warning(s) on stderr"]
    }

    /// Opens `source` at `sampleRate` (``MediaDecoder/init(source:sampleRate:streamIndex:language:warning:networkTimeout:openTimeout:)``)
    /// with a warning handler that records every warning for `source` in the store returned
    /// and passes it on to `onWarning`.
    static func open(_ source: String, sampleRate: Int, streamIndex: Int?, language: String?,
                     onWarning: ((String) -> Void)?) throws -> (MediaDecoder, InputWarnings) {
        let warnings = InputWarnings()
        let decoder = try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: streamIndex,
                                       language: language) { warnings.record(source, $0); onWarning?($0) }
        return (decoder, warnings)
    }
}
