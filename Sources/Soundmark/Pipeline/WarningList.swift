import Foundation

/// Warnings said on a decoding thread, read on the calling thread.
final class WarningList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []

    /// Keeps `warning` after those said before it.
    func append(_ warning: String) {
        lock.lock(); defer { lock.unlock() }
        list.append(warning)
    }

    /// Opens `source` at `sampleRate` (``MediaDecoder/init(source:sampleRate:streamIndex:language:warning:networkTimeout:openTimeout:)``)
    /// with a warning handler that keeps every warning in the list returned and passes it on to
    /// `onWarning`.
    static func open(_ source: String, sampleRate: Int, streamIndex: Int?, language: String?,
                     onWarning: ((String) -> Void)?) throws -> (MediaDecoder, WarningList) {
        let warnings = WarningList()
        let decoder = try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: streamIndex,
                                       language: language) { warnings.append($0); onWarning?($0) }
        return (decoder, warnings)
    }

    /// Every warning kept, in order.
    var all: [String] {
        lock.lock(); defer { lock.unlock() }
        return list
    }
}
