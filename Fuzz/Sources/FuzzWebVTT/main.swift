// libFuzzer target: WebVTT annotations: bytes read as Windows-1252 (every byte defined, so the time
// goes to the parser; FuzzAnnotationDetect covers encoding detection) → WebVTT parser.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    _ = try? AnnotationReader.parse(Data(bytes: data, count: size), name: "fuzz.vtt", format: .webVTT,
                                    encoding: .windowsCP1252)
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzWebVTT_main`): runs libFuzzer's driver.
@_cdecl("FuzzWebVTT_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
