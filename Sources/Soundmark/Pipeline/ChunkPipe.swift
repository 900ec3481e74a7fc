import Foundation

/// Items made on a thread of their own (decoded and fingerprinted chunks of a recording) up to
/// `depth` items ahead of the reader (a bounded queue: memory stays flat however long the
/// recording is). `produce` runs on that thread until it returns `nil` or throws.
final class ChunkPipe<Item>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [Item] = []
    private var finished = false
    private var failure: Error?
    private var stopped = false
    private let depth: Int
    private let produce: () throws -> Item?

    init(depth: Int = 8, produce: @escaping () throws -> Item?) {
        self.depth = depth
        self.produce = produce
        let thread = Thread { [self] in
            while true {
                let item: Item?
                do {
                    item = try self.produce()
                } catch {
                    condition.lock(); failure = error; finished = true; condition.broadcast(); condition.unlock()
                    return
                }
                condition.lock()
                guard let item, !stopped else { finished = true; condition.broadcast(); condition.unlock(); return }
                while queue.count >= depth && !stopped { condition.wait() }
                queue.append(item)
                condition.broadcast()
                condition.unlock()
            }
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The next item, `nil` at the end; rethrows the producer's error where it happened.
    func next() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty && !finished { condition.wait() }
        if !queue.isEmpty {
            condition.broadcast()
            return queue.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    deinit {
        condition.lock(); stopped = true; condition.broadcast(); condition.unlock()
    }
}

/// A chunk of a recording with the landmarks its samples completed (`samples` `nil`: the
/// landmarks left at the end of the stream).
struct FingerprintedChunk {
    var samples: [Float]?
    var landmarks: [Landmark]
    /// The spectrogram rows the samples completed (frame, ``SpectrumRing/quantise(_:)`` levels).
    var rows: [(frame: Int, levels: [UInt8])] = []
}
