import Foundation

// CDRWIN cue sheet (.cue): written by CueWriter.cueSheet.

/// One track of a CDRWIN cue sheet written by ``CueWriter/cueSheet(file:tracks:)``.
public struct CueSheetTrack: Sendable, Equatable {
    /// Where the track starts in the audio file, seconds (written as `INDEX 01 mm:ss:ff`).
    public var start: Double
    /// Track title (`TITLE "…"`).
    public var title: String
    /// Track performer (`PERFORMER "…"`), omitted when `nil`.
    public var performer: String?
    /// Where the track's audio ends, seconds; `nil`: it lasts until the next track starts.
    /// A cue sheet has no track ends, so ``CueWriter/cueSheet(file:tracks:gapTitle:minimumGap:)``
    /// writes an uncovered stretch after the track as the next track's pregap (`INDEX 00`).
    public var end: Double?

    /// Creates a track starting `start` seconds into the file (and ending at `end`, when known).
    public init(start: Double, title: String, performer: String? = nil, end: Double? = nil) {
        self.start = start
        self.title = title
        self.performer = performer
        self.end = end
    }
}

// MARK: - Writing (CDRWIN cue sheet)

extension CueWriter {
    /// Title of the track ``cueSheet(file:tracks:gapTitle:minimumGap:)`` writes for a stretch
    /// before the first track: `(unidentified)`.
    public static let unidentifiedTitle = "(unidentified)"

    /// CDRWIN cue sheet (the `.cue` format read by cuetools, EAC, foobar2000 …):
    ///
    /// ```
    /// FILE "name.wav" WAVE
    ///   TRACK 01 AUDIO
    ///     TITLE "…"
    ///     PERFORMER "…"
    ///     INDEX 01 mm:ss:ff
    /// ```
    ///
    /// - The file type is `MP3` for `.mp3`, `AIFF` for `.aif`/`.aiff`, else `WAVE`.
    /// - `INDEX 01` is `start` seconds rounded to CD frames (75 per second); `mm` is the total
    ///   number of minutes and may exceed 99.
    /// - Tracks are written in ascending `start` order (stable), numbered from 01. The format
    ///   allows at most 99 tracks; more are written with three-digit numbers, which strict
    ///   readers reject.
    /// - CDRWIN strings have no escape mechanism: `"` in titles becomes `'`, line breaks
    ///   become spaces. CRLF line ends, as CDRWIN wrote them.
    /// - Stretches of the file no track covers, when they last at least `minimumGap` seconds:
    ///   before the first track, a track of its own titled `gapTitle` at 00:00:00 (split tools
    ///   — `cuebreakpoints`, `shnsplit` — start their first piece at the file's start and
    ///   ignore a first track's `INDEX 00`, so only a track of its own keeps a lead-in out of
    ///   track 1); between a track with an ``CueSheetTrack/end`` and the next one, the next
    ///   track's pregap (`INDEX 00` at the stretch's start, as the format records gaps
    ///   between tracks: tools split at `INDEX 01` by default and can split the gaps out,
    ///   `cuebreakpoints --split-gaps`). So with default options every split point is a track
    ///   start. A stretch after the last track stays with it (a cue sheet has no end mark).
    public static func cueSheet(file: String, tracks: [CueSheetTrack], gapTitle: String = unidentifiedTitle,
                                minimumGap: Double = 1) -> String {
        let ext = (file as NSString).pathExtension.lowercased()
        let type = ext == "mp3" ? "MP3" : (ext == "aif" || ext == "aiff") ? "AIFF" : "WAVE"
        var out = "FILE \"\(cueString(file))\" \(type)\r\n"
        let sorted = tracks.enumerated().sorted {
            (clean($0.element.start), $0.offset) < (clean($1.element.start), $1.offset)
        }.map(\.element)
        // Uncovered stretches, in CD frames so that what is written decides.
        func frames(_ t: Double) -> Int { Int((clean(t) * 75).rounded()) }
        func index(_ number: Int, _ f: Int) -> String {
            "    INDEX \(pad(number, 2)) \(pad(f / 4500, 2)):\(pad(f / 75 % 60, 2)):\(pad(f % 75, 2))\r\n"
        }
        let minimumFrames = max(1, Int((minimumGap * 75).rounded()))
        var ordered: [(track: CueSheetTrack, pregap: Int?)] = []
        if let first = sorted.first, frames(first.start) >= minimumFrames {
            ordered.append((CueSheetTrack(start: 0, title: gapTitle), nil))
        }
        var coveredTo: Int?  // end of the audio covered by the previous track; nil: up to this one
        for track in sorted {
            var pregap: Int?
            if let covered = coveredTo, frames(track.start) - covered >= minimumFrames { pregap = covered }
            ordered.append((track, pregap))
            coveredTo = track.end.map { max(frames(track.start), frames($0)) }
        }
        for (n, (track, pregap)) in ordered.enumerated() {
            out += "  TRACK \(pad(n + 1, 2)) AUDIO\r\n"
            out += "    TITLE \"\(cueString(track.title))\"\r\n"
            if let performer = track.performer {
                out += "    PERFORMER \"\(cueString(performer))\"\r\n"
            }
            if let pregap { out += index(0, pregap) }
            out += index(1, frames(track.start))
        }
        return out
    }

    static func cueString(_ s: String) -> String {
        String(s.unicodeScalars.map { c -> Character in
            switch c {
            case "\"": return "'"
            case "\r", "\n", "\t": return " "
            default: return Character(c)
            }
        })
    }
}
