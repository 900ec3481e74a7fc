import Foundation
import Soundmark

/// The subtitle file of `cues` in `format` (`srt`, `vtt`, `ass`, else Audacity labels), with a
/// warning about `source` (stderr and its JSON warnings) for each kind of styling the format
/// cannot express and so left out (``StylingLoss``).
func subtitleFile(_ format: String, _ cues: [Cue], source: String) -> String {
    let text: String
    let loss: StylingLoss
    switch format {
    case "srt": loss = StylingLoss(format: "SubRip"); text = CueWriter.srt(cues, loss: loss)
    case "vtt": loss = StylingLoss(format: "WebVTT"); text = CueWriter.webVTT(cues, loss: loss)
    case "ass": loss = StylingLoss(format: "ASS"); text = CueWriter.ass(cues, loss: loss)
    default: loss = StylingLoss(format: "Audacity label"); text = CueWriter.audacityLabels(cues, loss: loss)
    }
    for message in loss.messages { warn("\(source): \(message)", about: source) }
    return text
}
