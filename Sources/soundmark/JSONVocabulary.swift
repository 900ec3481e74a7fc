import Foundation
import Soundmark

// The one vocabulary of every JSON output, described by docs/schemas/common.schema.json:
// a reference is an object `{"id","title",…}`; times in seconds are numbers named `start`/`end`
// (`referenceStart`/`referenceEnd` in the reference); wall-clock times are ISO 8601 UTC
// strings in fields named `wall…`; the audio an object describes is its `source`, as given on
// the command line; an output that is one object starts with `version`.

/// The version of the JSON outputs' shapes (``OutputVersion/jsonFormat``).
let jsonOutputFormat = OutputVersion.jsonFormat

/// `{"program":"0.1.0","format":3}` (``OutputVersion/json``).
let versionJSON = OutputVersion.json

/// A top-level output object: `version` first, then `members`.
func versionedJSON(_ members: [(String, JSONOutput)]) -> JSONOutput {
    .object([("version", versionJSON)] + members)
}

/// The `reference` object of an output that knows only the reference's id, title and artist
/// (a library's airings and counts): `{"id","title","artist"}`, unknown values `null`.
func referenceJSON(id: String, title: String?, artist: String?) -> JSONOutput {
    .object([("id", .string(id)), ("title", .optional(title)), ("artist", .optional(artist))])
}
