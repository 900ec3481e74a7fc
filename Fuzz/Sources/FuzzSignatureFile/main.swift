// libFuzzer target: soundmark signature files (`SignatureFile(data:)`, the .smsig files that
// identify and scan accept in place of media); a file that reads is written back, and that
// must read back the same.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard let file = try? SignatureFile(data: Data(bytes: data, count: size)) else { return 0 }
    precondition((try? SignatureFile(data: file.dataRepresentation)) == file, "signature file round trip differs")
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzSignatureFile_main`): runs libFuzzer's driver.
@_cdecl("FuzzSignatureFile_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
