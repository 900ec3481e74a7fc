/// ``Matcher/sameRecording(as:)`` as the ``SameRecordingTest`` of `catalog add`, with
/// ``Matcher/duplicateLengthTolerance``.
public struct AlignedSameRecordingTest: SameRecordingTest {
    /// Creates the test.
    public init() {}

    /// ``Matcher/duplicateLengthTolerance``.
    public var lengthTolerance: Double { Matcher.duplicateLengthTolerance }

    /// `Matcher(index: index).sameRecording(as: signature)`'s reference index.
    public func sameRecording(as signature: Signature, in index: CatalogIndex) -> Int? {
        Matcher(index: index).sameRecording(as: signature)?.referenceIndex
    }
}

extension SameRecordingTest where Self == AlignedSameRecordingTest {
    /// ``Matcher/sameRecording(as:)``: the same length, aligned from start to end at offset 0,
    /// covering ``Matcher/duplicateCoverage`` of the slots.
    public static var aligned: AlignedSameRecordingTest { AlignedSameRecordingTest() }
}
