/// ``Matcher/alignedCopies(of:)`` as the ``SameRecordingTest`` of `catalog add`, with
/// ``Matcher/duplicateLengthTolerance``.
public struct AlignedSameRecordingTest: SameRecordingTest {
    /// Creates the test.
    public init() {}

    /// ``Matcher/duplicateLengthTolerance``.
    public var lengthTolerance: Double { Matcher.duplicateLengthTolerance }

    /// The first of `Matcher(index: index).alignedCopies(of: signature)`: `.same` when no
    /// stretch of it differs (``RecordingComparison/isSameRecording``), else `.near`.
    public func sameRecording(as signature: Signature, in index: CatalogIndex) -> SameRecordingVerdict? {
        guard let copy = Matcher(index: index).alignedCopies(of: signature).first else { return nil }
        return copy.comparison.isSameRecording ? .same(referenceIndex: copy.referenceIndex)
            : .near(referenceIndex: copy.referenceIndex, differing: copy.comparison.differing, share: copy.comparison.share)
    }
}

extension SameRecordingTest where Self == AlignedSameRecordingTest {
    /// ``Matcher/alignedCopies(of:)``: the same length, aligned from start to end at offset 0,
    /// covering ``Matcher/duplicateCoverage`` of the slots, and no stretch that differs.
    public static var aligned: AlignedSameRecordingTest { AlignedSameRecordingTest() }
}
