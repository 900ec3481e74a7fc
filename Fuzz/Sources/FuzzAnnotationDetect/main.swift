// libFuzzer target: annotation files with format and encoding detected from the content
// (BOMs, UTF-16/32 NUL patterns, Windows-1252 fallback, then whichever parser is detected).
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    _ = try? AnnotationReader.parse(Data(bytes: data, count: size), name: "fuzz.txt")
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzAnnotationDetect_main`): runs libFuzzer's driver.
@_cdecl("FuzzAnnotationDetect_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
