/// The decision `catalog add` asks for when a new reference may be another copy of a stored one
/// (a re-encoding, a resampled or re-wrapped copy): given the few stored references of its
/// length that ``DuplicateKeys`` found, which of them holds the same recording, if any, or else
/// which shares most of it (a near-duplicate, kept and reported).
///
/// The catalog stores and looks up; the decision votes landmarks like a match, so it lives with
/// matching (`.aligned`: the same length, aligned from start to end at offset 0, no stretch
/// that differs), above the catalog, and is handed to
/// ``Catalog/addReferenceSignature(_:representing:annotations:source:replacingOtherAudio:file:allowingDuplicateAudio:checkingSameRecording:reportingNearDuplicate:)``.
public protocol SameRecordingTest: Sendable {
    /// Seconds two recordings' lengths may differ by and still be one recording: the catalog
    /// decodes only stored references within this of the new signature's length.
    var lengthTolerance: Double { get }

    /// The reference of `index.references` that holds the same recording as `signature`, else
    /// one that shares most of it; `nil` when none does.
    func sameRecording(as signature: Signature, in index: CatalogIndex) -> SameRecordingVerdict?
}

/// What a ``SameRecordingTest`` found for a new reference among stored ones.
public enum SameRecordingVerdict: Equatable, Sendable {
    /// The reference at this index of ``CatalogIndex/references`` is the same recording.
    case same(referenceIndex: Int)
    /// The reference at this index shares most of the new one but is another recording (a
    /// near-duplicate): it differs over `differing` (seconds into the new reference), or holds
    /// only `share` (0…1) of the two's landmarks over the whole length.
    case near(referenceIndex: Int, differing: [ClosedRange<Double>], share: Double)
}

/// A stored reference that shares most of a newly added one but is another recording (spots on
/// one music bed with different voice-overs, another intro): both are kept, and `catalog add`
/// says so.
public struct NearDuplicate: Equatable, Sendable {
    /// The stored reference's id.
    public var id: String
    /// Where the new reference differs from it: seconds into the new reference (empty when it
    /// differs evenly throughout).
    public var differing: [ClosedRange<Double>]
    /// The share of both references' landmarks the other holds at the same time, 0…1.
    public var share: Double

    /// Creates a report.
    public init(id: String, differing: [ClosedRange<Double>], share: Double) {
        self.id = id
        self.differing = differing
        self.share = share
    }
}
