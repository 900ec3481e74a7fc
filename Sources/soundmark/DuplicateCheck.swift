import Soundmark
import Foundation

/// `catalog add --allow-duplicates`.
let allowDuplicatesOption = OptionSpec(name: "allow-duplicates", value: nil,
    help: "add audio that is the same recording as a reference already in the catalog (a re-encoding, a resampled copy); by default it is skipped with a message naming both")

/// `catalog add --replace`: an id (`--id`, or an `id` cell of `--metadata`) that already names
/// another reference's audio replaces it; without it the file is refused with a message naming
/// the id and the reference's source.
let replaceOption = OptionSpec(name: "replace", value: nil,
    help: "let --id (or an id in --metadata) replace a reference that already holds other audio under that id; by default such a file is refused")

/// The line `catalog add` prints after adding reference `id` that is a near-duplicate of a
/// stored one: "ID: near-duplicate of 'OTHER' (the same but for 2.8–7.2 s): kept as another
/// recording" (at most three stretches named), or, when it differs throughout (holds less than
/// ``SameRecordingRule/overallFloor`` of the landmarks), "(holds 34 % of its landmarks at the
/// same times)".
func describe(_ near: NearDuplicate, id: String) -> String {
    let how: String
    if near.differing.isEmpty || near.share < SameRecordingRule.overallFloor {
        how = String(format: "holds %.0f %% of its landmarks at the same times", near.share * 100)
    } else {
        let shown = near.differing.prefix(3).map { String(format: "%.1f–%.1f s", $0.lowerBound, $0.upperBound) }
        let more = near.differing.count > 3 ? " and \(near.differing.count - 3) more" : ""
        how = "the same but for \(shown.joined(separator: ", "))\(more)"
    }
    return "\(id): near-duplicate of '\(near.id)' (\(how)): kept as another recording"
}
