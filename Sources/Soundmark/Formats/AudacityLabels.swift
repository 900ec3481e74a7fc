import Foundation

// Audacity label track: written by CueWriter.audacityLabels.

// MARK: - Writing (Audacity labels)

extension CueWriter {
    /// Audacity label track (File ▸ Import ▸ Labels): one `start\tend\tlabel` line per cue,
    /// times in seconds with 6 decimals (`1.500000`), LF line ends. Labels are single-line, so
    /// line breaks and tabs in the text become spaces; labels are plain text, so markup
    /// (``CueMarkup/plainText(_:)``) is dropped and counted in `loss`, text that is not markup
    /// (`Track <1>`) kept; a ``CueTextKind/plain`` cue's text is written as it is.
    public static func audacityLabels(_ cues: [Cue], loss: StylingLoss? = nil) -> String {
        var out = ""
        for cue in cues {
            let (start, end) = times(cue)
            if cue.kind == .markup, CueMarkup.hasMarkup(cue.text) { loss?.drop("styling"); loss?.endCue() }
            let label = String((cue.kind == .plain ? cue.text : CueMarkup.plainText(cue.text)).unicodeScalars.map { s -> Character in
                (s == "\r" || s == "\n" || s == "\t") ? " " : Character(s)
            })
            out += "\(fixed6(start))\t\(fixed6(end))\t\(label)\n"
        }
        return out
    }
}
