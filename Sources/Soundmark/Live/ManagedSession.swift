import Foundation

/// What a ``ManagedSession`` reports while it follows a live source, in the order it decides
/// it (the events `soundmark monitor` prints). Times are recording seconds since the source
/// opened; recording time keeps running through the gaps of a reconnected source.
public enum LiveEvent: Equatable, Sendable {
    /// An activity (one continuous play of a reference) started, was refined or ended; the
    /// event's id is the activity id (1, 2, … per run), the segment's `start`/`end` recording
    /// seconds (clamped to the audio received).
    case segment(ScanEvent)
    /// A network source was down: `duration` seconds of audio lost from recording time `time`.
    case gap(time: Double, duration: Double)
    /// The source was reopened (after `attempt` attempts); its audio continues at `time`.
    case reconnected(time: Double, attempt: Int)
    /// Another process changed the catalog: `references` references are matched from now on.
    case catalogReloaded(references: Int)
    /// The stream ended at recording time `time` (last event of a run).
    case ended(time: Double)
}

/// How a ``ManagedSession`` run ended.
public enum LiveOutcome: Equatable, Sendable {
    /// The source ended.
    case ended
    /// ``ManagedSession/stop()`` was called.
    case stopped
    /// The source failed mid-stream or reconnecting gave up (one line); the open activities
    /// were ended and ``LiveEvent/ended(time:)`` was reported first.
    case failed(String)
}

/// The error a ``ManagedSession`` run throws when its source never opened.
public struct LiveSourceError: Error, LocalizedError, Equatable, Sendable {
    /// One line: the source and the cause.
    public let reason: String
    /// The cause.
    public var errorDescription: String? { reason }
}

/// The one-shot outcome of ``ManagedSession/result(from:)`` (ShazamKit's `SHSession.Result`).
public enum LiveResult: Equatable, Sendable {
    /// The first activity found: its segment (recording seconds, reference offsets) when it started.
    case match(Segment)
    /// The source ended (or the session was stopped) before anything matched.
    case noMatch
    /// The source could not be read (one line).
    case error(String)
}

/// Follows a live source (a URL, a file or `-`) and matches it against a catalog as it plays:
/// ShazamKit's `SHManagedSession` for streams, and what `soundmark monitor` runs.
///
/// A session is ``State-swift.enum/idle`` until ``prepare(source:)`` opens the source and starts
/// reading it (``State-swift.enum/prerecording``: up to ``LiveSourceChannel/capacity`` chunks of
/// 1 s are buffered, so matching starts without the opening's delay), and
/// ``State-swift.enum/matching`` while ``run(source:)`` (blocking) or ``result(from:)`` (async)
/// matches it; it returns to idle when the run ends. Events come as ``LiveEvent``s, to
/// ``onEvent`` (synchronously, on the matching thread, in order) and on ``events`` (an
/// `AsyncStream`, finished when the first run ends: later runs report to ``onEvent`` only).
///
/// Underneath: a reader thread decodes the source (``LiveSource/read(_:sampleRate:options:channel:warning:)``,
/// with reconnects when ``LiveSourceOptions/reconnectTimeout`` is set); the matching thread
/// fingerprints the audio, places it on the recording timeline (``RecordingClock``: a
/// reconnected source starts with the audio of the moment it was reopened, so for a source that
/// plays in real time recording time keeps following the wall clock), feeds a ``RecordingScanner`` with
/// heartbeats through silence and outages, and turns its events into activities
/// (``ActivityTracker``). With a catalog path and a poll interval, the catalog is watched and
/// reloaded when another process changes it (the activities playing continue).
///
/// ```swift
/// let index = try Catalog(path: "music.db").loadIndex()
/// let session = ManagedSession(index: index)
/// Task { for await event in session.events { print(event) } }
/// let outcome = try session.run(source: "https://radio.example/stream")
/// ```
public final class ManagedSession: @unchecked Sendable {
    /// ShazamKit's `SHManagedSession.State`.
    public enum State: Equatable, Sendable {
        /// Not reading any source.
        case idle
        /// The source is open and being read; nothing is matched yet.
        case prerecording
        /// The source is being matched.
        case matching
    }

    /// The catalog snapshot matched (replaced when the watched catalog changes).
    public private(set) var index: CatalogIndex
    /// Scanner options (``ScanOptions/keepsSegments`` is turned off: a stream has no end).
    public let scanOptions: ScanOptions
    /// How the source is read.
    public let sourceOptions: LiveSourceOptions
    /// The catalog file watched for changes by other processes, with the poll interval in
    /// seconds (SQLite `data_version`, no table read), or nil (default: not watched).
    public let watch: (path: String, interval: Double)?
    /// Receives every event, synchronously on the matching thread, in order.
    public var onEvent: ((LiveEvent) -> Void)?
    /// Receives the decoded audio (mono at the catalog's rate) with the recording time (seconds)
    /// of its first sample, before it is matched (for recording or marker reading).
    public var onAudio: (([Float], Double) -> Void)?
    /// Receives estimates of the Unix time (seconds) of recording time 0 (the time the source's
    /// first audio arrived): the smallest estimate offered before the first event is the best.
    public var onOrigin: ((Double) -> Void)?
    /// Receives the new index when the watched catalog changed, before it is matched.
    public var onCatalogChange: ((CatalogIndex) -> Void)?
    /// Called once at the end of a run, before the open activities are ended.
    public var onFinishing: (() -> Void)?
    /// Receives one-line warnings (decoder, reconnect attempts, catalog watcher).
    public var onWarning: ((String) -> Void)?
    /// The events of the run; finishes when the run ends.
    public let events: AsyncStream<LiveEvent>
    private let continuation: AsyncStream<LiveEvent>.Continuation
    private let lock = NSLock()
    private var currentState = State.idle
    private var channel: LiveSourceChannel?
    private var preparedSource: String?
    /// Whether the last run's reader thread has returned (a read blocked on a source that sends
    /// nothing may outlive the run; a process may then exit without waiting for it).
    public private(set) var isReaderDone = true

    /// Creates an idle session.
    /// - Parameters:
    ///   - index: the catalog snapshot to match.
    ///   - scanOptions: the scanner's options (default ``ScanOptions``).
    ///   - sourceOptions: stream choice and reconnects (default: best stream, read once).
    ///   - watch: a catalog path and poll interval (seconds) to reload the index from when
    ///     another process changes it (default nil: not watched).
    public init(index: CatalogIndex, scanOptions: ScanOptions = ScanOptions(), sourceOptions: LiveSourceOptions = LiveSourceOptions(),
                watch: (path: String, interval: Double)? = nil) {
        self.index = index
        var options = scanOptions
        options.keepsSegments = false
        self.scanOptions = options
        self.sourceOptions = sourceOptions
        self.watch = watch
        (events, continuation) = AsyncStream.makeStream(of: LiveEvent.self)
    }

    /// The session's state.
    public var state: State {
        lock.lock()
        defer { lock.unlock() }
        return currentState
    }

    private func setState(_ s: State) {
        lock.lock()
        currentState = s
        lock.unlock()
    }

    /// Opens `source` and starts reading it ahead of matching (state
    /// ``State-swift.enum/prerecording``); ``run(source:)`` with the same source then matches
    /// from its first sample. Does nothing when a source is already prepared or running.
    public func prepare(source: String) {
        lock.lock()
        defer { lock.unlock() }
        guard channel == nil else { return }
        let channel = LiveSourceChannel()
        self.channel = channel
        preparedSource = source
        currentState = .prerecording
        isReaderDone = false
        let rate = index.configuration.sampleRate, options = sourceOptions
        let warning: (String) -> Void = { [weak self] in self?.onWarning?($0) }
        let reader = Thread { LiveSource.read(source, sampleRate: rate, options: options, channel: channel, warning: warning) }
        reader.stackSize = 1 << 22
        reader.start()
        if let watch, watch.interval > 0 {
            let watcher = Thread { LiveSource.watchCatalog(watch.path, interval: watch.interval, channel: channel, warning: warning) }
            watcher.start()
        }
    }

    /// Stops the run (safe from any thread, for example a signal handler): reading stops, the
    /// open activities end and ``LiveEvent/ended(time:)`` is reported; ``run(source:)`` returns
    /// ``LiveOutcome/stopped``.
    public func stop() {
        lock.lock()
        let channel = self.channel
        lock.unlock()
        channel?.requestStop()
    }

    /// ShazamKit's name for ``stop()``: ends the run (safe from any thread).
    public func cancel() { stop() }

    /// The events of the run under ShazamKit's name (``events``).
    public var results: AsyncStream<LiveEvent> { events }

    /// Finds the first activity of `source` and stops (ShazamKit's one-shot `result()`): runs
    /// the session on a thread of its own until an activity starts or the source ends.
    /// - Returns: ``LiveResult/match(_:)`` with the segment as it started, ``LiveResult/noMatch``,
    ///   or ``LiveResult/error(_:)`` when the source cannot be read.
    public func result(from source: String) async -> LiveResult {
        await withCheckedContinuation { (done: CheckedContinuation<LiveResult, Never>) in
            let thread = Thread { [self] in
                var found: Segment?
                let previous = onEvent
                onEvent = { [self] event in
                    previous?(event)
                    if found == nil, case .segment(.started(_, let segment)) = event {
                        found = segment
                        stop()
                    }
                }
                let result: LiveResult
                do {
                    let outcome = try run(source: source)
                    if let found { result = .match(found) } else if case .failed(let text) = outcome { result = .error(text) } else { result = .noMatch }
                } catch {
                    result = .error(LiveSource.describe(error))
                }
                onEvent = previous
                done.resume(returning: result)
            }
            thread.stackSize = 1 << 22
            thread.start()
        }
    }

    /// Matches `source` until it ends, fails or ``stop()`` is called (blocking; state
    /// ``State-swift.enum/matching``), reporting ``LiveEvent``s as they are decided; the last
    /// is ``LiveEvent/ended(time:)``. Prepares the source first unless ``prepare(source:)`` did.
    /// - Returns: how the run ended.
    /// - Throws: ``LiveSourceError`` when the source never opened (cannot be opened, or
    ///   connecting with reconnects gave up); nothing was reported.
    public func run(source: String) throws -> LiveOutcome {
        if preparedSource != nil && preparedSource != source {
            // Another source was prepared: it is dropped.
            stop()
            release()
        }
        prepare(source: source)
        guard let channel else { return .stopped }
        setState(.matching)
        defer {
            release()
            continuation.finish()
        }
        return try loop(channel)
    }

    /// Forgets the current source (its reader stops at its next chunk) and returns to idle.
    private func release() {
        lock.lock()
        isReaderDone = channel?.isReaderDone ?? true
        channel = nil
        preparedSource = nil
        currentState = .idle
        lock.unlock()
    }

    private func report(_ event: LiveEvent) {
        onEvent?(event)
        continuation.yield(event)
    }

    private func loop(_ channel: LiveSourceChannel) throws -> LiveOutcome {
        let configuration = index.configuration
        let sampleRate = configuration.sampleRate
        let activities = ActivityTracker { [unowned self] in report(.segment($0)) }
        func makeScanner(_ index: CatalogIndex) -> RecordingScanner {
            let scanner = RecordingScanner(index: index, options: scanOptions)
            scanner.onEvent = { activities.handle($0) }
            return scanner
        }
        var scanner = makeScanner(index)
        var position = RecordingClock(sampleRate: sampleRate, hop: configuration.hopLength)
        var generator = SignatureGenerator(configuration: configuration, role: .reference)  // one per connection
        // The landmarks of the last window and a half, replayed into a new scanner after a catalog
        // reload so that it finds what is playing at once.
        var recent: [Landmark] = []
        var recentCapacity = 4096  // pruned when it holds more (amortised: twice what is kept)
        let recentFrames = Int32((scanOptions.windowSeconds * 1.5 + RecordingClock.heartbeatLagSeconds) / configuration.hopDuration)
        /// Moves a landmark of the current connection to recording time and scans it.
        func feed(_ l: Landmark) {
            var moved = l
            moved.anchorFrame += position.baseFrame
            scanner.consume(moved)
            recent.append(moved)
            if recent.count > recentCapacity {
                recent.removeAll { moved.anchorFrame - $0.anchorFrame > recentFrames }
                recentCapacity = max(4096, 2 * recent.count)
            }
        }
        /// Moves the scanner's clock on (see ``RecordingClock/heartbeat(at:)``).
        func heartbeat(at sample: Int64) {
            guard let beat = position.heartbeat(at: sample) else { return }
            scanner.advance(toFrame: beat)
            activities.advance(to: Double(beat) * configuration.hopDuration)
        }

        var outcome = LiveOutcome.ended
        var outage: (since: Double, at: Int64)?  // while a network source is down: since when, at which recording sample
        var opened = false                       // whether the source opened at all
        // When did the audio at recording time 0 arrive? Not when the open returned: FFmpeg's
        // probing reads ahead (about 1.3 s of a real-time pipe) first. A chunk that ends at
        // recording time e and arrives at wall time w says "origin ≤ w − e" (audio cannot arrive
        // before it is played), so for a source delivering in real time the smallest w − e over
        // the chunks is a close estimate; it is never taken earlier than the start of the
        // opening, which is what a faster-than-real-time source (a file) gets.
        var firstOpening: Double?  // when the first connection's opening started, until it drops
        // After a reconnect the recording position of the new connection must be fixed before its
        // first chunk is fed.
        var awaiting: (start: Double, attempt: Int, down: Double)?
        // The smallest `wall − recording time` of any chunk's end so far: for audio delivered in
        // real time (even in bursts, as a server's output buffer sends it), the Unix time of
        // recording time 0 on the wall clock; for a faster source, far earlier.
        var liveOrigin = Double.infinity
        /// Places a reconnected source on the recording timeline and reports its gap and
        /// reconnection.
        ///
        /// The new connection's first sample is the audio of the moment the successful attempt
        /// started (a live source sends what plays when it is asked, whatever FFmpeg's probing
        /// then reads ahead before the first chunk comes out). So the gap is the wall time from
        /// the drop to that moment, and, for a source that played in real time, the new
        /// connection starts at that moment's recording time on the wall clock (`wall −
        /// liveOrigin`): recording time and wall time follow the wall clock after any number of
        /// reconnects, and audio that was lost before the drop was noticed (a stalled server)
        /// counts as gap. A source delivering faster than real time (a file served over HTTP)
        /// is ahead of the wall clock, and only the outage is added.
        func connectionStarted() {
            guard let (start, attempt, down) = awaiting else { return }
            awaiting = nil
            let dropAt = outage?.at ?? position.base + generator.sampleCount
            var base = dropAt + Int64(max(0, start - down) * Double(sampleRate))
            if liveOrigin.isFinite {
                base = max(base, Int64((start - liveOrigin) * Double(sampleRate)))
            }
            position.base = position.roundedUp(base)
            generator = SignatureGenerator(configuration: configuration, role: .reference)
            outage = nil
            report(.gap(time: position.seconds(dropAt), duration: position.seconds(position.base - dropAt)))
            report(.reconnected(time: position.seconds(position.base), attempt: attempt))
        }
        loop: while true {
            switch channel.next(timeout: 0.25) {
            case .stop:
                outcome = .stopped
                break loop
            case .idle:
                if let outage { heartbeat(at: outage.at + Int64((LiveSource.now() - outage.since) * Double(sampleRate))) }
            case .message(let message):
                switch message {
                case .opened(let start):
                    firstOpening = start
                    opened = true
                case .chunk(let samples, let wall):
                    connectionStarted()
                    if let start = firstOpening {
                        onOrigin?(max(start, wall - position.seconds(generator.sampleCount + Int64(samples.count))))
                    }
                    activities.limit = position.seconds(position.base + generator.sampleCount + Int64(samples.count))
                    onAudio?(samples, position.seconds(position.base + generator.sampleCount))
                    liveOrigin = min(liveOrigin, wall - activities.limit)
                    // The spectrum rows too, in recording frames, as `scan` feeds them: a line at a
                    // searched speed is checked in it (see RecordingScanner's searched-speed check).
                    let baseFrame = Int(position.baseFrame)
                    samples.withUnsafeBufferPointer { p in
                        generator.append(p, emit: { feed($0) }, spectrum: { frame, levels in
                            scanner.consumeSpectrum(frame: frame + baseFrame, levels: SpectrumRing.quantise(levels))
                        })
                    }
                    heartbeat(at: position.base + generator.sampleCount)
                case .dropped(let wall):
                    connectionStarted()
                    if let start = firstOpening { onOrigin?(start) }
                    firstOpening = nil
                    generator.finish { feed($0) }
                    outage = (wall, position.base + generator.sampleCount)
                    activities.limit = position.seconds(position.base + generator.sampleCount)
                case .reconnected(let attempt, let down, let start):
                    awaiting = (start, attempt, down)
                case .catalogChanged(let newIndex):
                    // The old scanner's open segments are handed over to the new one, which gets
                    // the recent landmarks again and continues what is playing.
                    let old = scanner
                    activities.handover { _ = old.finish() }
                    index = newIndex
                    scanner = makeScanner(newIndex)
                    onCatalogChange?(newIndex)
                    if let last = recent.last?.anchorFrame {
                        for l in recent where last - l.anchorFrame <= recentFrames { scanner.consume(l) }
                    }
                    if position.lastHeartbeat > 0 { scanner.advance(toFrame: Int(position.lastHeartbeat)) }
                    report(.catalogReloaded(references: newIndex.references.count))
                case .ended:
                    break loop
                case .failed(let text):
                    if !opened {
                        channel.requestStop()
                        throw LiveSourceError(reason: text)
                    }
                    outcome = .failed(text)
                    break loop
                }
            }
        }
        channel.requestStop()

        connectionStarted()
        if let start = firstOpening { onOrigin?(start) }
        if outage == nil { generator.finish { feed($0) } }
        let end = outage?.at ?? position.base + generator.sampleCount
        activities.limit = position.seconds(end)
        onFinishing?()
        activities.finish()
        _ = scanner.finish()
        report(.ended(time: position.seconds(end)))
        return outcome
    }
}
