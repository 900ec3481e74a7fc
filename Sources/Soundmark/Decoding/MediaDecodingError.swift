import Foundation

/// Errors thrown while opening or decoding an input with `MediaDecoder`.
public enum MediaDecodingError: Error, LocalizedError, Equatable {
    /// The input could not be opened: missing file, permission denied, a directory,
    /// an empty file, or data that is not a supported media format. `reason` is a
    /// short human-readable cause such as "no such file" or "empty file".
    case cannotOpen(path: String, reason: String)
    /// The input opened, but it contains no audio stream.
    case noAudioStream(path: String)
    /// An explicit stream index was requested, but that stream does not exist or is
    /// not an audio stream (attached cover pictures never count as audio).
    case streamNotAudio(path: String, index: Int)
    /// A language was asked for (`MediaDecoder`'s `language`), but no audio stream is tagged
    /// with it. `streams` lists the input's audio streams.
    case noStreamInLanguage(path: String, language: String, streams: [AudioStreamInfo])
    /// The audio stream uses a codec this FFmpeg build cannot decode. `codec` is
    /// FFmpeg's codec name (e.g. "alac", "none").
    case decoderUnavailable(path: String, codec: String)
    /// An unrecoverable error happened while reading or decoding (out of memory,
    /// a resampler failure, an input that fails before yielding any audio, an input whose
    /// every packet is corrupt: "no audio could be decoded (…)"). Corrupt packets among good
    /// ones and truncated files do not throw this (they give warnings).
    case readFailed(path: String, reason: String)

    /// One line naming the input and the cause.
    public var errorDescription: String? {
        switch self {
        case let .cannotOpen(path, reason):
            return "cannot open \(Self.display(path)): \(reason)"
        case let .noAudioStream(path):
            return "\(Self.display(path)): no audio stream found"
        case let .streamNotAudio(path, index):
            return "\(Self.display(path)): stream \(index) is not an audio stream or does not exist"
        case let .noStreamInLanguage(path, language, streams):
            return "\(Self.display(path)): no audio stream in language '\(language)'; audio streams: "
                + streams.map(\.label).joined(separator: ", ")
        case let .decoderUnavailable(path, codec):
            return "\(Self.display(path)): no decoder available for codec '\(codec)'"
        case let .readFailed(path, reason):
            return "\(Self.display(path)): read failed: \(reason)"
        }
    }

    /// `path` on one line, `<stdin>` for `-`: how errors and warnings name an input.
    static func display(_ path: String) -> String {
        let oneLine = path.replacingOccurrences(of: "\n", with: " ")
        return oneLine == "-" ? "<stdin>" : oneLine
    }
}
