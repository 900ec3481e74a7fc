import Foundation

/// A payload found in a stretch of media.
public struct MarkerDetection: Sendable, Equatable {
    /// The 32-bit payload.
    public let payload: UInt32
    /// Start of the stretch in seconds on the media's playback time line (the start of the first
    /// analysis window that decoded it).
    public var start: Double
    /// End of the stretch in seconds (the end of the last window that decoded it).
    public var end: Double
    /// Mean over the windows of the share of coded bits whose soft value agrees with the decoded
    /// codeword: 0.5 is chance, 1 every coded bit agrees.
    public var confidence: Double
    /// Number of analysis windows that decoded this payload.
    public var windows: Int
}

/// Finds audio markers (``MarkerEmbedder``) in mono audio at 16 kHz (or 8 kHz: the fingerprint's
/// rate, where frames of 256 samples give the same 31.25 Hz bins; the top cells near 4 kHz are
/// then weakened by the resampler's anti-aliasing filter).
///
/// The audio is cut into windows of ``windowSeconds`` (10 s) every ``hopSeconds`` (5 s); the last
/// window is aligned to the end, and audio shorter than a window is one window if it holds at
/// least ``minimumSeconds``. In each window the short-time spectrum is taken on 8 frame grids
/// 2 ms apart; each cell's log power minus the mean of the same cell two frames (32 ms) before
/// and after (the audio's own slow changes cancel) is clipped to ±3 and folded modulo the
/// block (320 frames), so a window of two blocks adds each cell twice. *Synchronisation*: for
/// every grid and each of the 320 block phases, the folded sync cells are correlated with their
/// chips and normalised (z-score: about N(0, 1) for unmarked audio). The best grid and phase, if
/// its z reaches ``syncThreshold``, is the only candidate of the window: its data cells give the
/// 186 soft coded bits, Viterbi decodes them and the payload is reported only if its CRC-24
/// matches.
///
/// **False detections.** One Viterbi decoding per window, accepted only on a CRC-24 match: for
/// unmarked audio the decoded 56 bits are as good as random with respect to the CRC, so a window
/// reports a false payload with probability at most 2⁻²⁴ ≈ 6·10⁻⁸ (the sync threshold only lowers
/// it further): one false payload expected per 2.7 years of continuous audio at a 5 s hop.
///
/// Streaming: ``consume(_:)`` takes audio in any chunks and returns the windows completed, holding
/// at most a window and a hop of audio; ``finish()`` adds the last window aligned to the end.
/// Not thread-safe: use one instance per thread.
public final class MarkerDetector {
    /// Window length in seconds.
    public static let windowSeconds = 10.0
    /// Hop between windows in seconds.
    public static let hopSeconds = 5.0
    /// Shortest audio analysed, seconds (a block and the context of the cell differences).
    public static let minimumSeconds = 5.5
    /// Normalised sync correlation a window's best candidate needs before it is decoded.
    public static let syncThreshold: Float = 4.5
    /// Frame grids tried per hop (offsets of 2 ms).
    static let grids = 8

    /// Input sample rate in Hz (16000 or 8000).
    public let sampleRate: Int
    private let frameLength: Int
    private let hopLength: Int
    private let transform: MarkerTransform
    private let window: Int
    private let hop: Int
    private var buffer: [Float] = []
    private var bufferStart = 0 // absolute sample of buffer[0]
    private var nextStart = 0
    private var lastEnd = 0

    /// Creates a detector for audio at `sampleRate` Hz: 16000 (``MarkerLayout/sampleRate``) or 8000.
    /// Speed changes tried, besides none, when a window decodes nothing (see ``init(sampleRate:speedSearch:)``).
    public let speeds: [Double]

    /// The speeds of ``init(sampleRate:speedSearch:)``'s search: ±2.5 % in 0.5 % steps.
    public static let searchSpeeds: [Double] = [0.995, 1.005, 0.99, 1.01, 0.985, 1.015, 0.98, 1.02, 0.975, 1.025]

    /// Creates a detector for audio at `sampleRate` Hz: 16000 (``MarkerLayout/sampleRate``) or 8000.
    /// - Parameter speedSearch: when a window decodes nothing at its own speed, also try it played
    ///   back at each of ``searchSpeeds`` (a record or tape sped up or slowed down by up to 2.5 %,
    ///   pitch and tempo together): up to 11 decodings per window instead of one, so the false-payload
    ///   bound becomes 11 · 2⁻²⁴ per window and unmarked audio takes 11 times the analysis. Default off.
    public init(sampleRate: Int = MarkerLayout.sampleRate, speedSearch: Bool = false) {
        precondition(sampleRate == 16_000 || sampleRate == 8_000, "MarkerDetector: 16000 or 8000 Hz")
        self.sampleRate = sampleRate
        speeds = speedSearch ? Self.searchSpeeds : []
        frameLength = MarkerLayout.frameLength * sampleRate / MarkerLayout.sampleRate
        hopLength = frameLength / 2
        transform = MarkerTransform(n: frameLength)
        window = Int(Self.windowSeconds) * sampleRate
        hop = Int(Self.hopSeconds) * sampleRate
    }

    /// The result of one window: the payload (nil when nothing decoded), the sync z-score and the agreement.
    struct WindowResult {
        var payload: UInt32?
        var z: Float
        var confidence: Double
    }

    /// Finds the payloads in `samples` (sample 0 at time `origin` seconds).
    /// - Returns: one detection per run of consecutive windows that decoded the same payload, in time order.
    public func detect(samples: [Float], origin: Double = 0) -> [MarkerDetection] {
        let detector = MarkerDetector(sampleRate: sampleRate, speedSearch: !speeds.isEmpty)
        var windows = detector.consume(samples)
        windows += detector.finish()
        return Self.merge(windows).map { d in
            var d = d
            d.start += origin
            d.end += origin
            return d
        }
    }

    /// Decodes `decoder`'s audio (opened at this detector's rate) window by window.
    /// - Returns: as ``detect(samples:origin:)``, times on the media's playback time line.
    /// - Throws: decoding errors from `decoder`.
    public func detect(decoding decoder: MediaDecoder) throws -> [MarkerDetection] {
        let detector = MarkerDetector(sampleRate: sampleRate, speedSearch: !speeds.isEmpty)
        var windows: [MarkerDetection] = []
        while let chunk = try decoder.nextChunk() { windows += detector.consume(chunk.samples) }
        windows += detector.finish()
        return Self.merge(windows)
    }

    /// Appends audio; returns one detection per window completed by it that decoded a payload
    /// (`windows` 1; times in seconds from the first sample consumed).
    public func consume(_ samples: [Float]) -> [MarkerDetection] {
        buffer.append(contentsOf: samples)
        var found: [MarkerDetection] = []
        while bufferStart + buffer.count >= nextStart + window {
            if let d = run(nextStart, window) { found.append(d) }
            // Keep the last window's audio: a final window aligned to the end starts inside it.
            buffer.removeFirst(nextStart - bufferStart)
            bufferStart = nextStart
            nextStart += hop
        }
        return found
    }

    /// Ends the audio: the last window, aligned to the end (or the whole audio when it is shorter
    /// than a window but at least ``minimumSeconds``), if it adds a second or more.
    public func finish() -> [MarkerDetection] {
        let total = bufferStart + buffer.count
        var found: [MarkerDetection] = []
        if lastEnd == 0 {
            if total >= Int(Self.minimumSeconds * Double(sampleRate)), let d = run(bufferStart, buffer.count) { found.append(d) }
        } else if total - lastEnd >= sampleRate, total >= window, let d = run(total - window, window) {
            found.append(d)
        }
        buffer = []
        bufferStart = total
        nextStart = Int.max / 2
        return found
    }

    private func run(_ start: Int, _ count: Int) -> MarkerDetection? {
        let local = start - bufferStart
        let result = buffer.withUnsafeBufferPointer { analyseSearchingSpeed(UnsafeBufferPointer(rebasing: $0[local ..< local + count])) }
        lastEnd = start + count
        guard let payload = result.payload else { return nil }
        let rate = Double(sampleRate)
        return MarkerDetection(payload: payload, start: Double(start) / rate, end: Double(start + count) / rate,
                               confidence: result.confidence, windows: 1)
    }

    /// Joins consecutive windows with the same payload (each starting before the previous one
    /// ends) into one detection with their mean confidence.
    public static func merge(_ windows: [MarkerDetection]) -> [MarkerDetection] {
        var runs: [MarkerDetection] = []
        for d in windows { add(d, to: &runs) }
        return runs
    }

    /// Extends the last run when it has the same payload and touches the window, else starts a run.
    static func add(_ detection: MarkerDetection, to runs: inout [MarkerDetection]) {
        if let last = runs.last, last.payload == detection.payload, detection.start <= last.end + 1e-9 {
            let n = Double(last.windows), m = Double(detection.windows)
            runs[runs.count - 1].end = max(last.end, detection.end)
            runs[runs.count - 1].confidence = (last.confidence * n + detection.confidence * m) / (n + m)
            runs[runs.count - 1].windows += detection.windows
        } else {
            runs.append(detection)
        }
    }

    /// ``analyse(_:)`` at the audio's own speed, then, while nothing decodes, at each of ``speeds``.
    func analyseSearchingSpeed(_ samples: UnsafeBufferPointer<Float>) -> WindowResult {
        let plain = analyse(samples)
        guard plain.payload == nil, !speeds.isEmpty else { return plain }
        var resampled: [Float] = []
        for speed in speeds {
            // Audio played `speed` times fast: sample n of the original is at n / speed.
            let count = Int(Double(samples.count - 1) * speed)
            resampled = [Float](repeating: 0, count: count)
            for n in 0..<count {
                let x = Double(n) / speed
                let i = Int(x), f = Float(x - Double(i))
                resampled[n] = samples[i] + f * (samples[min(i + 1, samples.count - 1)] - samples[i])
            }
            let result = resampled.withUnsafeBufferPointer { analyse($0) }
            if result.payload != nil { return result }
        }
        return plain
    }

    /// Analyses one window of audio.
    func analyse(_ samples: UnsafeBufferPointer<Float>) -> WindowResult {
        let n = frameLength, hop = hopLength
        let cells = MarkerLayout.cellsPerFrame, width = MarkerLayout.cellWidth, first = MarkerLayout.firstBin
        let blockFrames = MarkerLayout.blockFrames
        let step = hop / Self.grids
        var best: (z: Float, grid: Int, phase: Int) = (-.infinity, 0, 0)
        var bestFolded: [Float] = []
        var logs: [Float] = []
        var folded = [Float](repeating: 0, count: blockFrames * cells)
        for grid in 0..<Self.grids {
            let frames = samples.count >= grid * step + n ? (samples.count - grid * step - n) / hop + 1 : 0
            guard frames >= blockFrames + 4 else { continue }
            // Log power per cell and frame.
            logs = [Float](repeating: 0, count: frames * cells)
            for t in 0..<frames {
                transform.analyse(samples, start: grid * step + t * hop)
                let s = transform.spectrum
                var sum: Float = 0
                for c in 0..<cells {
                    var p: Float = 0
                    for b in 0..<width {
                        let k = first + c * width + b
                        p += s[2 * k] * s[2 * k] + s[2 * k + 1] * s[2 * k + 1]
                    }
                    logs[t * cells + c] = p
                    sum += p
                }
                let floor = sum / Float(cells) * 1e-3 + 1e-12
                for c in 0..<cells { logs[t * cells + c] = logf(logs[t * cells + c] + floor) }
            }
            // Cell differences against the frames 32 ms before and after, folded modulo the block.
            for i in folded.indices { folded[i] = 0 }
            for t in 2..<(frames - 2) {
                let q = t % blockFrames
                for c in 0..<cells {
                    let v = logs[t * cells + c] - 0.5 * (logs[(t - 2) * cells + c] + logs[(t + 2) * cells + c])
                    folded[q * cells + c] += min(3, max(-3, v))
                }
            }
            // Sync: correlation with the chips at every block phase.
            let chips = MarkerLayout.chips
            for phase in 0..<blockFrames {
                var score: Float = 0, energy: Float = 0
                for q0 in 0..<blockFrames {
                    let q = (q0 + phase) % blockFrames
                    var c = (4 - q & 3) & 3
                    while c < cells {
                        let w = folded[q0 * cells + c]
                        score += w * chips[q * cells + c]
                        energy += w * w
                        c += 4
                    }
                }
                let z = energy > 0 ? score / energy.squareRoot() : 0
                if z > best.z {
                    best = (z, grid, phase)
                    bestFolded = folded
                }
            }
        }
        guard best.z >= Self.syncThreshold else { return WindowResult(payload: nil, z: max(best.z, 0), confidence: 0) }
        var soft = [Float](repeating: 0, count: MarkerLayout.codedBits)
        for q0 in 0..<blockFrames {
            let q = (q0 + best.phase) % blockFrames
            for c in 0..<cells {
                let bit = MarkerLayout.bitOfCell[q * cells + c]
                if bit >= 0 { soft[Int(bit)] += bestFolded[q0 * cells + c] * MarkerLayout.chips[q * cells + c] }
            }
        }
        guard let payload = MarkerCode.decode(soft: soft) else { return WindowResult(payload: nil, z: best.z, confidence: 0) }
        let coded = MarkerCode.encode(payload: payload)
        let agree = zip(coded, soft).filter { ($1 > 0) == $0 }.count
        return WindowResult(payload: payload, z: best.z, confidence: Double(agree) / Double(coded.count))
    }
}
