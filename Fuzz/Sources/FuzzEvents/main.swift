// libFuzzer target: recogniser event JSON Lines, as `soundmark timeline merge` reads them:
// parse every line, fold the payloads into an activity timeline, export it in each format.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parsed = TimelinePayload.parseLines(text)
    var timeline = ActivityTimeline()
    for payload in parsed.payloads { _ = timeline.apply(payload) }
    _ = TimelineExport.json(timeline.rows)
    _ = TimelineExport.csv(timeline.rows)
    _ = TimelineExport.srt(timeline.rows)
    _ = TimelineExport.vtt(timeline.rows)
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzEvents_main`): runs libFuzzer's driver.
@_cdecl("FuzzEvents_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
