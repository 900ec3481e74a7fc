import Foundation
import Soundmark

/// Finds, during one `catalog add`, new audio that is a recording already in the catalog (or
/// added earlier in the same run) under another id: a re-encoding, a resampled copy
/// (``Matcher/sameRecording(as:)``).
///
/// The catalog's index is loaded once, on the first check; references added during the run
/// that have the checked file's length are put in a small in-memory index beside it.
final class DuplicateCheck {
    private let catalog: Catalog
    private var stored: Matcher?
    private var added: [(MediaItem, Signature)] = []

    /// A check over `catalog`.
    init(catalog: Catalog) { self.catalog = catalog }

    /// The id of the reference holding the same recording as `signature` other than `id`, if any.
    /// - Throws: what ``Catalog/loadIndex()`` throws.
    func duplicate(of signature: Signature, id: String) throws -> String? {
        if stored == nil { stored = Matcher(index: try catalog.loadIndex()) }
        // Of the references added during this run only those of the same length can hold the
        // same recording (see Matcher.sameRecording): indexing just those keeps the check
        // cheap however many files the run adds.
        let tolerance = max(1, 0.01 * signature.duration)
        let sameLength = added.filter { abs($0.1.duration - signature.duration) <= tolerance }
        let addedMatcher = sameLength.isEmpty ? nil : Matcher(index: CatalogIndex(configuration: catalog.configuration, items: sameLength))
        for matcher in [stored, addedMatcher].compactMap({ $0 }) {
            if let hit = matcher.sameRecording(as: signature), matcher.index.references[hit.referenceIndex].item.id != id {
                return matcher.index.references[hit.referenceIndex].item.id
            }
        }
        return nil
    }

    /// Records a reference stored during this run so later files are checked against it.
    func didAdd(_ signature: Signature, as item: MediaItem) {
        added.append((item, signature))
    }
}

/// `catalog add --allow-duplicates`.
let allowDuplicatesOption = OptionSpec(name: "allow-duplicates", value: nil,
    help: "add audio that is the same recording as a reference already in the catalog (a re-encoding, a resampled copy); by default it is skipped with a message naming both")
