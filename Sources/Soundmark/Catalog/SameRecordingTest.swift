/// The decision `catalog add` asks for when a new reference may be another copy of a stored one
/// (a re-encoding, a resampled or re-wrapped copy): given the few stored references of its
/// length that ``DuplicateKeys`` found, which of them holds the same recording, if any.
///
/// The catalog stores and looks up; the decision votes landmarks like a match, so it lives with
/// matching (`.aligned`: the same length, aligned from start to end at offset 0), above the
/// catalog, and is handed to
/// ``Catalog/addReferenceSignature(_:representing:annotations:source:replacingOtherAudio:file:allowingDuplicateAudio:checkingSameRecording:)``.
public protocol SameRecordingTest: Sendable {
    /// Seconds two recordings' lengths may differ by and still be one recording: the catalog
    /// decodes only stored references within this of the new signature's length.
    var lengthTolerance: Double { get }

    /// The index in `index.references` of the reference that holds the same recording as
    /// `signature`, or `nil`.
    func sameRecording(as signature: Signature, in index: CatalogIndex) -> Int?
}
