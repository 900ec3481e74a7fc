// libFuzzer target: JSON annotations (the reader's own JSON parser); bytes read as Windows-1252,
// which defines every byte, so the time goes to the parser (FuzzAnnotationDetect covers detection).
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    _ = try? AnnotationReader.parse(Data(bytes: data, count: size), name: "fuzz.json", format: .json,
                                    encoding: .windowsCP1252)
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzJSONAnnotations_main`): runs libFuzzer's driver.
@_cdecl("FuzzJSONAnnotations_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
