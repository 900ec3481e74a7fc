import Foundation

/// Errors of the fingerprint, catalog and matching stages. Each description is one line that
/// names the file (where there is one) and the cause.
public enum SoundmarkError: Error, LocalizedError, Equatable {
    /// Signature data that is not ours, is truncated, or has another format version.
    case invalidSignature(String)
    /// The catalog file cannot be opened or read: path and cause.
    case catalogUnreadable(path: String, reason: String)
    /// The catalog was made with another fingerprint configuration or format version.
    case catalogMismatch(path: String, reason: String)
    /// A write to the catalog failed: path and cause.
    case catalogWriteFailed(path: String, reason: String)
    /// No reference with this id in the catalog.
    case unknownReference(path: String, id: String)
    /// The id already names a reference with other audio (made from `source`).
    case idInUse(path: String, id: String, source: String?)
    /// The audio gave no landmarks (silence, or shorter than a second).
    case noLandmarks(path: String)
    /// A signature that holds no audio (a Shazam signature whose header records 0 samples):
    /// the file and why.
    case emptySignature(path: String, reason: String)
    /// An annotation to store has a time that is not finite, negative, after
    /// ``Annotation/maximumTime`` or an end before its start: catalog path, reference id,
    /// the annotation's 0-based index and the offending times.
    case annotationOutOfRange(path: String, id: String, index: Int, start: Double, end: Double)
    /// A reference longer than the matcher's offsets reach (``Catalog/maximumReferenceFrames``):
    /// the media (path or id), its length and the limit, seconds.
    case referenceTooLong(path: String, duration: Double, limit: Double)

    /// One line naming the file (where there is one) and the cause.
    public var errorDescription: String? {
        switch self {
        case .invalidSignature(let why): return "invalid signature: \(why)"
        case .catalogUnreadable(let path, let why): return "\(path): cannot read catalog: \(why)"
        case .catalogMismatch(let path, let why): return "\(path): \(why)"
        case .catalogWriteFailed(let path, let why): return "\(path): cannot write catalog: \(why)"
        case .unknownReference(let path, let id): return "\(path): no reference with id '\(id)'"
        case .idInUse(let path, let id, let source):
            return "\(path): id '\(id)' already names other audio\(source.map { " (\($0))" } ?? ""); pass --id to choose another id or to replace it"
        case .noLandmarks(let path): return "\(path): no audio content to fingerprint (silent or too short)"
        case .emptySignature(let path, let why): return "\(path): \(why)"
        case .annotationOutOfRange(let path, let id, let index, let start, let end):
            return "\(path): annotation \(index + 1) of '\(id)' (\(start)–\(end) s) is out of range: times must be 0…\(Int(Annotation.maximumTime)) s with end >= start"
        case .referenceTooLong(let path, let duration, let limit):
            return String(format: "%@: %.1f h of audio is longer than a reference may be (%.2f h); cut it into parts", path, duration / 3600, limit / 3600)
        }
    }
}
