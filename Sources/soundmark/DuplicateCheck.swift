/// `catalog add --allow-duplicates`.
let allowDuplicatesOption = OptionSpec(name: "allow-duplicates", value: nil,
    help: "add audio that is the same recording as a reference already in the catalog (a re-encoding, a resampled copy); by default it is skipped with a message naming both")

/// `catalog add --replace`: an id (`--id`, or an `id` cell of `--metadata`) that already names
/// another reference's audio replaces it; without it the file is refused with a message naming
/// the id and the reference's source.
let replaceOption = OptionSpec(name: "replace", value: nil,
    help: "let --id (or an id in --metadata) replace a reference that already holds other audio under that id; by default such a file is refused")
