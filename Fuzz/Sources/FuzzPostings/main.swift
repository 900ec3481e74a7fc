// libFuzzer target: the catalog's stored postings blobs (`PostingCodec.decode`); a blob that
// decodes is re-encoded, and that must decode to the same (sorted, deduplicated) postings.
import Foundation
import Soundmark
import CFuzzDriver

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    var postings: [Posting] = []
    guard PostingCodec.decode(Array(UnsafeBufferPointer(start: data, count: size)), into: { postings.append($0) })
    else { return 0 }
    var expected: [Posting] = []
    for p in postings.sorted(by: { ($0.hash, $0.frame) < ($1.hash, $1.frame) }) where expected.last != p {
        expected.append(p)
    }
    var again: [Posting] = []
    precondition(PostingCodec.decode(PostingCodec.encode(postings), into: { again.append($0) }), "re-encoded blob does not decode")
    precondition(again == expected, "postings round trip differs")
    return 0
}

/// The executable's entry (SwiftPM links `main` to `FuzzPostings_main`): runs libFuzzer's driver.
@_cdecl("FuzzPostings_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc, argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { fuzz($0, $1) }
}
