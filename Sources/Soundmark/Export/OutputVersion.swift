import Foundation

/// The program's version and the version of its JSON outputs' shapes, as every JSON output of
/// `soundmark` names them in its `version` member.
public enum OutputVersion {
    /// The program's version: "0.1.0".
    public static let program = "0.1.0"

    /// The version of the JSON outputs' shapes (docs/schemas/): raised when a field is renamed,
    /// removed or changes type. 1: before the one vocabulary (airings' `"reference":"id"`); 2: the
    /// one vocabulary; 3 (now): scan's `pieces[].timeScale` (was `speed`), `library show`'s
    /// `airingCount` (was `airings`, a count), `queue status` versioned with `jobs[].source` (was `media`).
    public static let jsonFormat = 3

    /// `{"program":"0.1.0","format":3}`: ``program`` and ``jsonFormat``.
    public static let json = JSONOutput.object([("program", .string(program)), ("format", .integer(jsonFormat))])
}

extension JSONOutput {
    /// `members` with a `"warnings"` array of strings appended when `warnings` is not empty (an
    /// output without warnings stays as it was).
    public static func object(_ members: [(String, JSONOutput)], warnings: [String]) -> JSONOutput {
        .object(members + (warnings.isEmpty ? [] : [("warnings", .array(warnings.map { .string($0) }))]))
    }
}
