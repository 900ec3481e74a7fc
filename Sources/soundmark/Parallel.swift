import Foundation

/// Number of worker threads for `--jobs N`: N when given (≥ 1), else every core
/// (`ProcessInfo.activeProcessorCount`).
func jobCount(_ args: ParsedArguments) throws -> Int {
    try wholeNumberOption(args, "jobs", in: 1...1024) ?? max(1, ProcessInfo.processInfo.activeProcessorCount)
}

let jobsOption = OptionSpec(name: "jobs", value: "N", help: "worker threads, 1…1024 (default: every core)")

/// Computes `work(i)` for `i` in `0 ..< count` on `jobs` threads, ahead of a consumer that takes
/// the results in order with ``take(_:)``: at most `jobs + lookahead` results wait at a time,
/// so memory stays bounded whatever `count` is. With `jobs == 1` nothing runs ahead: each
/// result is computed by ``take(_:)`` on the caller's thread.
final class OrderedWork<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var results: [Int: Result<T, Error>] = [:]
    private var next = 0
    private var consumed = 0
    private let count: Int
    private let limit: Int
    private let work: (Int) throws -> T
    private let threaded: Bool

    init(count: Int, jobs: Int, lookahead: Int = 2, work: @escaping (Int) throws -> T) {
        self.count = count
        self.work = work
        limit = jobs + lookahead
        threaded = jobs > 1 && count > 1
        guard threaded else { return }
        for _ in 0..<min(jobs, count) {
            let thread = Thread { [self] in self.runWorker() }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func runWorker() {
        while true {
            condition.lock()
            while next < count && next - consumed >= limit { condition.wait() }
            guard next < count else { condition.unlock(); return }
            let i = next
            next += 1
            condition.unlock()
            let result = Result { try work(i) }
            condition.lock()
            results[i] = result
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The result of `work(i)`, waiting for it; call with `i` = 0, 1, 2… in order.
    func take(_ i: Int) throws -> T {
        guard threaded else { return try work(i) }
        condition.lock()
        while results[i] == nil { condition.wait() }
        let result = results.removeValue(forKey: i)!
        consumed = i + 1
        condition.broadcast()
        condition.unlock()
        return try result.get()
    }
}
