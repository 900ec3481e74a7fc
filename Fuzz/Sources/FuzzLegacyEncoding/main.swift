// libFuzzer target: annotation files in a legacy code page (`--encoding CP1256` …): the first
// byte picks the code page, the rest is the file.
import Foundation
import Soundmark
import CFuzzDriver

let encodings = ["CP1252", "CP1250", "CP1251", "CP1253", "CP1254", "CP1255", "CP1256", "CP1257", "KOI8-R",
                 "ISO-8859-2", "CP949", "SHIFT_JIS", "GB18030", "BIG5", "CP932", "windows-1251", "latin1"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    guard size > 0 else { return 0 }
    let encoding = encodings[Int(data[0]) % encodings.count]
    _ = try? AnnotationReader.parse(Data(bytes: data + 1, count: size - 1), name: "fuzz.srt",
                                    legacyEncoding: encoding)
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzLegacyEncoding_main`): runs libFuzzer's driver.
@_cdecl("FuzzLegacyEncoding_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
