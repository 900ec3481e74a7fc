import Foundation

/// What a live source's reader thread (``LiveSource/read(_:sampleRate:options:channel:warning:)``)
/// and the catalog watcher tell the thread that matches.
public enum LiveSourceMessage: @unchecked Sendable {
    /// The source is open; opening started at Unix time `start` (seconds).
    case opened(start: Double)
    /// Decoded mono samples at the catalog's rate, contiguous with the previous chunk, and the
    /// Unix time (seconds) when the decoder returned them.
    case chunk([Float], wall: Double)
    /// A network source stopped delivering (at Unix time `wall`); a reconnect is pending.
    case dropped(wall: Double)
    /// The source was reopened after `attempt` attempts; it went down at Unix time `down` and
    /// the successful attempt started at `start`.
    case reconnected(attempt: Int, down: Double, start: Double)
    /// Another process changed the catalog; this is its new index (from the catalog watcher).
    case catalogChanged(CatalogIndex)
    /// The source ended normally.
    case ended
    /// The source failed (cannot be opened, fails mid-stream, or reconnecting gave up): one line.
    case failed(String)
}

/// A bounded queue from a live source's reader thread to the matching thread, plus a stop flag
/// (set from any thread, for example a signal handler). At most ``capacity`` chunks wait at a
/// time, so a file read at full speed does not pile up decoded audio.
public final class LiveSourceChannel: @unchecked Sendable {
    /// What ``next(timeout:)`` found.
    public enum Next {
        /// The oldest queued message.
        case message(LiveSourceMessage)
        /// A stop was requested (queued messages are dropped).
        case stop
        /// Nothing arrived within the timeout.
        case idle
    }

    /// Guards every member below and wakes the waiting side.
    private let condition = NSCondition()
    /// Queued messages, oldest first.
    private var messages: [LiveSourceMessage] = []
    /// How many of `messages` are chunks.
    private var queuedChunks = 0
    /// Set by ``requestStop()``.
    private var stopped = false
    /// Set by ``markReaderDone()``.
    private var readerDone = false
    /// Most chunks queued at once.
    public let capacity: Int

    /// Creates a channel holding at most `capacity` chunks (default 4: about 4 s of audio).
    public init(capacity: Int = 4) { self.capacity = capacity }

    /// Queues a message, waiting while ``capacity`` chunks are queued. Returns false (and drops
    /// the message) once a stop was requested.
    @discardableResult
    public func post(_ message: LiveSourceMessage) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if case .chunk = message {
            while queuedChunks >= capacity && !stopped { condition.wait() }
            if stopped { return false }
            queuedChunks += 1
        }
        if stopped { return false }
        messages.append(message)
        condition.broadcast()
        return true
    }

    /// The next message, `.stop` once a stop was requested, or `.idle` after `timeout` seconds.
    public func next(timeout: Double) -> Next {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while messages.isEmpty && !stopped {
            if !condition.wait(until: deadline) { break }
        }
        if stopped { return .stop }
        guard !messages.isEmpty else { return .idle }
        let message = messages.removeFirst()
        if case .chunk = message { queuedChunks -= 1 }
        condition.broadcast()
        return .message(message)
    }

    /// Asks everybody to stop (safe from any thread).
    public func requestStop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether a stop was requested.
    public var isStopped: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopped
    }

    /// Sleeps `seconds` unless a stop is requested first; returns false when stopped.
    public func sleep(_ seconds: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !stopped {
            if !condition.wait(until: deadline) { break }
        }
        return !stopped
    }

    /// Marks the reader thread as finished (it returned from its loop).
    public func markReaderDone() {
        condition.lock()
        readerDone = true
        condition.unlock()
    }

    /// Whether the reader thread has finished.
    public var isReaderDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return readerDone
    }
}

/// How a live source is read.
public struct LiveSourceOptions: Sendable {
    /// The audio stream to decode (index), or nil for the best one (default).
    public var streamIndex: Int?
    /// The audio stream to decode by language (ISO 639), or nil (default).
    public var language: String?
    /// When set, a network URL that cannot be opened is retried, and one that drops or ends is
    /// reopened, until it has been down this many seconds (default nil: read once).
    public var reconnectTimeout: Double?
    /// Reconnect back-off: the first attempt waits this long, seconds (default 0.5).
    public var reconnectFirstDelay = 0.5
    /// Reconnect back-off: the wait doubles up to this, seconds (default 8).
    public var reconnectMaxDelay = 8.0
    /// A named pipe (FIFO) source: seconds to wait for its first bytes before giving up; 0
    /// waits without end (default 60).
    public var openTimeout = 60.0

    /// Creates options; see the properties for the defaults.
    public init(streamIndex: Int? = nil, language: String? = nil, reconnectTimeout: Double? = nil) {
        self.streamIndex = streamIndex
        self.language = language
        self.reconnectTimeout = reconnectTimeout
    }
}

/// Reading a live source (a URL, a file or `-`) on a thread of its own, with reconnects.
public enum LiveSource {
    /// The current Unix time in seconds.
    public static func now() -> Double { Date().timeIntervalSince1970 }

    /// Whether `source` is a network URL (`scheme://…`, not `file://`), the only kind that is
    /// reconnected.
    public static func isNetworkURL(_ source: String) -> Bool {
        guard let range = source.range(of: "://") else { return false }
        let scheme = source[..<range.lowerBound]
        return !scheme.isEmpty && scheme.lowercased() != "file"
            && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// One line for an error: its `LocalizedError` description, else its text.
    static func describe(_ error: Error) -> String {
        if let e = error as? LocalizedError, let d = e.errorDescription { return d }
        return "\(error)"
    }

    /// The reader loop (run it on a thread of its own): opens `source`, posts its chunks (mono
    /// at `sampleRate`), and, when ``LiveSourceOptions/reconnectTimeout`` is set, retries a
    /// failed first connection and reopens the source after it ends, with exponential back-off
    /// and a warning per failed attempt, giving up (a `.failed` message) once it has been down
    /// (or unreachable) for that long. Returns when the source ended or failed, or a stop was
    /// requested; marks the channel's reader done.
    /// - Parameters:
    ///   - warning: receives one-line warnings (decoder warnings, failed attempts).
    public static func read(_ source: String, sampleRate: Int, options: LiveSourceOptions, channel: LiveSourceChannel,
                            warning: @escaping (String) -> Void) {
        defer { channel.markReaderDone() }
        /// Opens the source; with a reconnect timeout, retries until it opens or `down` (the Unix
        /// time the source became unreachable) lies that far back. The first attempt is made at
        /// once when `immediately`, else after the first back-off. Returns the decoder, when the
        /// successful attempt started and its number; nil when it gave up (a `.failed` message
        /// was posted) or a stop was requested.
        func connect(immediately: Bool, down: Double, what: String) -> (decoder: MediaDecoder, start: Double, attempt: Int)? {
            var delay = options.reconnectFirstDelay
            var attempt = 0
            while true {
                if attempt > 0 || !immediately {
                    let timeout = options.reconnectTimeout ?? 0
                    let pause = min(delay, timeout - (now() - down))
                    if pause <= 0 {
                        channel.post(.failed(String(format: "%@: gave up %@ after %d attempt(s), %.0f s down",
                                                    source, what, attempt, now() - down)))
                        return nil
                    }
                    guard channel.sleep(pause) else { return nil }
                    delay = min(delay * 2, options.reconnectMaxDelay)
                }
                attempt += 1
                let start = now()
                do {
                    return (try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: options.streamIndex,
                                             language: options.language, warning: warning, openTimeout: options.openTimeout), start, attempt)
                } catch {
                    guard let timeout = options.reconnectTimeout else {
                        channel.post(.failed(describe(error)))
                        return nil
                    }
                    let left = timeout - (now() - down)
                    warning("\(describe(error)); \(what) attempt \(attempt) failed, "
                            + (left > 0 ? String(format: "retrying in %.1f s", min(delay, left)) : "giving up"))
                }
            }
        }
        guard let first = connect(immediately: true, down: now(), what: "connecting") else { return }
        var decoder = first.decoder
        channel.post(.opened(start: first.start))
        while true {
            var failure: String?
            do {
                while let chunk = try decoder.nextChunk() {
                    guard channel.post(.chunk(chunk.samples, wall: now())) else { return }
                }
            } catch {
                failure = describe(error)
            }
            if channel.isStopped { return }
            guard options.reconnectTimeout != nil else {
                channel.post(failure.map { .failed($0) } ?? .ended)
                return
            }
            let down = now()
            if let failure { warning(failure) }
            channel.post(.dropped(wall: down))
            guard let next = connect(immediately: false, down: down, what: "reconnecting") else { return }
            decoder = next.decoder
            channel.post(.reconnected(attempt: next.attempt, down: down, start: next.start))
        }
    }

    /// The catalog watcher loop (run it on a thread of its own): every `interval` seconds reads
    /// the catalog's change stamp (``Catalog/changeStamp()``, SQLite `PRAGMA data_version`) and,
    /// when another process changed the catalog, loads a new index and posts it. Stops with the
    /// channel.
    /// - Parameter warning: receives a one-line warning when reading the catalog fails (once
    ///   until it succeeds again).
    public static func watchCatalog(_ path: String, interval: Double, channel: LiveSourceChannel,
                                    warning: @escaping (String) -> Void) {
        guard let catalog = try? Catalog(path: path, readOnly: true), var stamp = try? catalog.changeStamp() else { return }
        var failed = false
        while channel.sleep(interval) {
            do {
                let now = try catalog.changeStamp()
                guard now != stamp else { continue }
                let index = try catalog.loadIndex()
                stamp = now
                failed = false
                channel.post(.catalogChanged(index))
            } catch {
                if !failed { warning("\(describe(error)); the monitor keeps the catalog it has") }
                failed = true
            }
        }
    }
}
