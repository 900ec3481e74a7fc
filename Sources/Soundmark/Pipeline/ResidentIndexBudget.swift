import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the pages of a mapped index that a long scan has read from piling up in its resident
/// set: every second of audio (``check(_:)``) the process's resident file-backed pages
/// (`/proc/self/statm`, third field) are compared with what they were when the scan began, and
/// when they have grown by more than ``budget`` bytes the index's pages leave the resident set
/// (``PostingIndex/releaseResidentPages()``; they stay in the page cache). A small catalog's
/// index never reaches the budget and is never re-faulted; a large one's stays within it
/// whatever the catalog's size. (Releasing on a fixed clock instead, every 60 s of audio, let a
/// 70.8-hour catalog's index hold 72 MB; every 15 s, 45 MB, and the page faults of re-reading the
/// pages cost 0.17 s of CPU time per hour of audio on the 8-hour one. A 32 MB budget let the
/// 8-hour catalog's scan of mix01 hold 36 MB of index, peak RSS 109 MB against 95 MB released
/// every minute.) Without `/proc` (not Linux), every minute of audio. Several scans in one
/// process (`scan --jobs`) share the index: a release by one serves all, and the pages stay
/// within a budget of the highest baseline.
struct ResidentIndexBudget {
    /// Growth of the resident file-backed pages allowed before a release: 24 MB.
    static let budget = 24 << 20
    private let index: PostingIndex
    private var baseline: Int?
    private var sinceCheck = 0.0
    private var sinceRelease = 0.0
    private let sampleRate: Double

    init(index: PostingIndex, sampleRate: Int) {
        self.index = index
        self.sampleRate = Double(sampleRate)
        baseline = ResidentIndexBudget.residentFileBytes()
    }

    /// Counts `samples` more samples of audio analysed and releases the index's pages when due.
    mutating func check(_ samples: Int) {
        guard index.isMapped else { return }
        sinceCheck += Double(samples)
        sinceRelease += Double(samples)
        guard sinceCheck >= sampleRate else { return }
        sinceCheck = 0
        if let baseline, let now = ResidentIndexBudget.residentFileBytes() {
            guard now - baseline > ResidentIndexBudget.budget else { return }
        } else if sinceRelease < 60 * sampleRate {
            return
        }
        sinceRelease = 0
        index.releaseResidentPages()
    }

    /// Resident file-backed (and shared) memory of this process in bytes, from `/proc/self/statm`.
    static func residentFileBytes() -> Int? {
        #if canImport(Glibc)
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 127) }
        guard n > 0 else { return nil }
        let fields = String(decoding: buffer[..<n], as: UTF8.self).split(separator: " ")
        guard fields.count >= 3, let pages = Int(fields[2]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }
}
