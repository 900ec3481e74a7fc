// libFuzzer target: signature files (`Signature(dataRepresentation:)`); a signature that
// reads is also hashed into postings and written back, which must read back the same.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard let signature = try? Signature(dataRepresentation: Data(bytes: data, count: size)) else { return 0 }
    _ = PostingCodec.postings(of: signature)
    _ = signature.duration
    // Written back, it reads back the same (floats compared by bit pattern: NaN bins stay NaN).
    let again = try! Signature(dataRepresentation: signature.dataRepresentation)
    func bits(_ s: Signature) -> [[UInt32]] {
        s.landmarks.map { [UInt32(bitPattern: $0.anchorFrame), $0.anchorBin.bitPattern, $0.targetBin.bitPattern,
                           UInt32(UInt16(bitPattern: $0.deltaFrames))] }
    }
    precondition(again.sampleCount == signature.sampleCount && bits(again) == bits(signature),
                 "signature round trip differs")
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzSignature_main`): runs libFuzzer's driver.
@_cdecl("FuzzSignature_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
