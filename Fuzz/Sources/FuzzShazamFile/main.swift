// libFuzzer target: ShazamKit files as `signature show` and `catalog import` read them
// (`ShazamFile(data:)`: .shazamsignature, bare vnd.shazam.sig, data URIs, .shazamcatalog); a
// signature that reads is written back and read again with the same peaks.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard let file = try? ShazamFile(data: Data(bytes: data, count: size), requireValidCRC: false) else { return 0 }
    if case .signature(let signature) = file {
        // Written back (the writer must not trap on anything the reader accepts) and read again:
        // the same peaks and sample count (bands are read in pass order, so an absolute pass that
        // jumps back writes back as it reads; a pass beyond 32 bits is refused by the reader).
        let again = try! ShazamSignature(data: signature.dataRepresentation())
        precondition(again.bands == signature.bands && again.sampleCount == signature.sampleCount, "Shazam signature round trip differs")
    }
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzShazamFile_main`): runs libFuzzer's driver.
@_cdecl("FuzzShazamFile_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
