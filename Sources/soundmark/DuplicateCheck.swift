/// `catalog add --allow-duplicates`.
let allowDuplicatesOption = OptionSpec(name: "allow-duplicates", value: nil,
    help: "add audio that is the same recording as a reference already in the catalog (a re-encoding, a resampled copy); by default it is skipped with a message naming both")
