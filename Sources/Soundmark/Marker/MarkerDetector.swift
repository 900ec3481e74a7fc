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
/// least ``minimumSeconds``. In each window the short-time spectrum is taken once on every
/// sub-frame (frames every eighth of a hop, 2 ms apart), as the log power of each pair of
/// adjacent bins. An *alignment* is a playback speed and a frame grid: the marker's frame `t`
/// is read from the sub-frame nearest `grid + 8t / speed` and its cell `c` (of the widest format,
/// ``MarkerFormat/v2``) at bin `(2 + 2c) · speed` (log powers interpolated between bins), so a
/// speed change (pitch and tempo together) is undone in the spectrum without resampling. Each
/// cell's log power minus a weighted mean of the same cell 1, 2, 3 and 4 frames (16–64 ms) before
/// and after (weights 1/4, 1/8, 1/16, 1/16 either side: the audio's own slow changes cancel, and
/// part of the noise the overlapping frames share with the cell) is clipped to ±3, weighted by the
/// cell's share of power over the stationary noise in the frames 16 ms away, and folded modulo the block (320 frames), so a window of two
/// blocks adds each cell twice. *Synchronisation*: for each alignment and each format version in
/// ``MarkerFormat/all`` (version 1's cells are columns 7 ..< 63 of the same fold) the folded sync
/// cells are correlated with their chips at all 320 block phases at once (``MarkerSync``, by FFT)
/// and normalised (z-score: about N(0, 1) for unmarked audio). Alignments searched: the audio's own
/// speed on all 8 grids; every 0.5 % up to ±2.5 % (``defaultSpeedRange``; ±5 % with
/// `speedSearch`) on grids 0 and 4; around the best of those, if its z reaches
/// ``refineThreshold``, the other grids and ±0.25 %. The best alignment, format and phase, if its z
/// reaches ``syncThreshold``, is the only candidate of the window: its data cells, each column
/// weighted by the mark's amplitude over the noise variance measured on that column's sync cells
/// (``columnWeights(_:format:phase:stride:offset:)``), give the 186 soft coded bits, Viterbi
/// decodes them and the payload is reported only if its CRC-24 matches.
/// Files of either format version decode with the same false-payload bound.
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
    /// Sync z-score of the best coarse alignment at another speed below which it is not refined
    /// (a mark found within a quarter step of a coarse speed keeps most of its correlation).
    static let refineThreshold: Float = 3.6
    /// Frame grids tried per hop (offsets of 2 ms).
    static let grids = 8

    /// How a cell's log power is compared with the same cell in the frames around it.
    enum CellDifference {
        /// Against the mean of the frames 32 and 64 ms before and after, weighted by the frames
        /// 32 ms away (the detector before the weighted difference; kept for comparison in tests).
        case fourNeighbours
        /// Against a weighted mean of the 4 frames either side (16, 32, 48, 64 ms away: 1/4, 1/8,
        /// 1/16, 1/16 either side), weighted by the frames 16 ms away.
        case weighted
    }
    /// The cell difference used (``CellDifference/weighted``).
    var cellDifference = CellDifference.weighted
    /// Whether the coded cells are weighted per column from the sync cells
    /// (``columnWeights(_:format:phase:stride:offset:)``; true; false, the detector before them,
    /// is kept for comparison in tests).
    var weighsColumns = true

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

    /// Speed changes tried besides none, coarsely (then refined around the best): see ``init(sampleRate:speedSearch:)``.
    public let speeds: [Double]
    private let wideSearch: Bool

    /// Step of the coarse speed search (0.5 %); the best is refined by half a step either side.
    static let speedStep = 0.005
    /// Largest speed change searched by default (±2.5 %) and with `speedSearch` (±5 %).
    public static let defaultSpeedRange = 0.025, widerSpeedRange = 0.05

    /// The coarse speeds searched up to `range` (e.g. 0.995, 1.005, 0.99 …), nearest first.
    static func searchSpeeds(upTo range: Double) -> [Double] {
        let steps = Int((range / speedStep).rounded())
        return (1...max(1, steps)).flatMap { [1 - Double($0) * speedStep, 1 + Double($0) * speedStep] }
    }

    /// Creates a detector for audio at `sampleRate` Hz: 16000 (``MarkerLayout/sampleRate``) or 8000.
    /// - Parameter speedSearch: search speed changes up to ±5 % (pitch and tempo together) instead of
    ///   the default ±2.5 %. Either way every window is searched at each speed (0.5 % steps, the best
    ///   refined to 0.25 %) and only the best alignment is decoded, so the false-payload bound stays
    ///   2⁻²⁴ per window; the wider search costs more time per window.
    public init(sampleRate: Int = MarkerLayout.sampleRate, speedSearch: Bool = false) {
        precondition(sampleRate == 16_000 || sampleRate == 8_000, "MarkerDetector: 16000 or 8000 Hz")
        self.sampleRate = sampleRate
        wideSearch = speedSearch
        speeds = Self.searchSpeeds(upTo: speedSearch ? Self.widerSpeedRange : Self.defaultSpeedRange)
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
        let detector = MarkerDetector(sampleRate: sampleRate, speedSearch: wideSearch)
        detector.cellDifference = cellDifference
        detector.weighsColumns = weighsColumns
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
        let detector = MarkerDetector(sampleRate: sampleRate, speedSearch: wideSearch)
        detector.cellDifference = cellDifference
        detector.weighsColumns = weighsColumns
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
        let result = buffer.withUnsafeBufferPointer { analyseSearchingSpeed(UnsafeBufferPointer(rebasing: $0[local ..< local + count]), at: start) }
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


    /// One candidate alignment of the received audio with the marker's frame grid.
    struct Alignment: Equatable {
        /// Playback speed tried (received = original played `speed` times fast).
        var speed: Double
        /// Sub-frame offset of frame 0 (0 ..< ``grids``, in eighths of a hop).
        var grid: Int
    }

    /// Analyses one window: its short-time spectrum on every sub-frame (eighth of a hop), then
    /// the sync search over speeds, frame grids and block phases, and one decoding of the best.
    /// - Parameter start: the window's first sample on the stream's time line, when the window
    ///   is part of a stream: the sub-frames it shares with the previous window are reused.
    func analyseSearchingSpeed(_ samples: UnsafeBufferPointer<Float>, at start: Int? = nil) -> WindowResult {
        guard prepare(samples, at: start) else { return WindowResult(payload: nil, z: 0, confidence: 0) }
        var best: (z: Float, phase: Int, format: Int, alignment: Alignment) = (-.infinity, 0, 0, Alignment(speed: 1, grid: 0))
        var bestFolded: [Float] = []
        func attempt(_ a: Alignment) {
            guard let (format, phase, z) = fold(a), z > best.z else { return }
            best = (z, phase, format, a)
            bestFolded = folded
        }
        // Own speed on every grid; the other speeds coarsely (grids 0 and 4), then around the best.
        for grid in 0..<Self.grids { attempt(Alignment(speed: 1, grid: grid)) }
        if !speeds.isEmpty {
            for speed in speeds { for grid in stride(from: 0, to: Self.grids, by: Self.grids / 2) { attempt(Alignment(speed: speed, grid: grid)) } }
            let coarse = best.alignment
            if coarse.speed != 1 && best.z >= Self.refineThreshold {
                for grid in 0..<Self.grids where grid % (Self.grids / 2) != 0 { attempt(Alignment(speed: coarse.speed, grid: grid)) }
                let fine = best.alignment
                for ds in [-Self.speedStep / 2, Self.speedStep / 2] {
                    for dg in -1...1 { attempt(Alignment(speed: fine.speed + ds, grid: (fine.grid + dg + Self.grids) % Self.grids)) }
                }
            }
        }
        guard best.z >= Self.syncThreshold else { return WindowResult(payload: nil, z: max(best.z, 0), confidence: 0) }
        let soft = Self.softBits(bestFolded, format: MarkerFormat.all[best.format], phase: best.phase, weighted: weighsColumns)
        guard let payload = MarkerCode.decode(soft: soft) else { return WindowResult(payload: nil, z: best.z, confidence: 0) }
        let coded = MarkerCode.encode(payload: payload)
        let agree = zip(coded, soft).filter { ($1 > 0) == $0 }.count
        return WindowResult(payload: payload, z: best.z, confidence: Double(agree) / Double(coded.count))
    }

    /// The 186 soft coded bits of a folded block (the widest format's columns) read as `format`
    /// at block phase `phase`: each data cell's value times its scrambling chip and its column's
    /// weight (``columnWeights(_:format:phase:stride:offset:)``; 1 when not `weighted`), summed per coded bit.
    static func softBits(_ folded: [Float], format: MarkerFormat, phase: Int, weighted: Bool = true) -> [Float] {
        let cells = format.cellsPerFrame, blockFrames = MarkerLayout.blockFrames
        let stride = widest.cellsPerFrame, offset = (format.firstBin - widest.firstBin) / MarkerLayout.cellWidth
        let gains = weighted ? columnWeights(folded, format: format, phase: phase, stride: stride, offset: offset)
                             : [Float](repeating: 1, count: cells)
        var soft = [Float](repeating: 0, count: MarkerLayout.codedBits)
        for q0 in 0..<blockFrames {
            let q = (q0 + phase) % blockFrames
            for c in 0..<cells {
                let bit = format.bitOfCell[q * cells + c]
                if bit >= 0 { soft[Int(bit)] += gains[c] * folded[q0 * stride + offset + c] * format.chips[q * cells + c] }
            }
        }
        return soft
    }

    /// Columns either side whose sync cells join a column's estimate in ``columnWeights(_:format:phase:stride:offset:)``.
    static let weightSpan = 6

    /// Maximum-ratio weights of the cell columns of a folded block at its sync phase, from the
    /// sync cells (pilots of known sign): for column `c`, over the sync cells of the columns
    /// `c − 6 ... c + 6` (``weightSpan``; fewer at the band's edges), `max(0, m) / s²`, with `m`
    /// and `s²` the mean and variance of a sync cell's value times its chip. A column's coded
    /// cells then count in proportion to the mark's measured amplitude over its noise variance
    /// there, as in maximum-ratio combining (Brennan, "Linear diversity combining techniques",
    /// Proc. IRE 1959): under pink noise the columns the noise covers count less than the masking
    /// model's weights alone give them. Pink noise at 10 dB SNR over the bench's 30 excerpts, three
    /// noise draws (270 windows): 252 → 255 decoded (at the known alignment 255 → 257; a span of
    /// ±10 columns 255, time-varying weights over quarter blocks fewer). Only the window's one decoding uses them, so
    /// the false-payload bound does not change.
    /// - Returns: one weight (≥ 0) per cell of `format`.
    static func columnWeights(_ folded: [Float], format: MarkerFormat, phase: Int, stride: Int, offset: Int) -> [Float] {
        let cells = format.cellsPerFrame, blockFrames = MarkerLayout.blockFrames
        var sum = [Double](repeating: 0, count: cells), squares = sum, count = sum
        for q0 in 0..<blockFrames {
            let q = (q0 + phase) % blockFrames
            for c in 0..<cells where MarkerLayout.isSync(q, c) {
                let x = Double(folded[q0 * stride + offset + c] * format.chips[q * cells + c])
                sum[c] += x
                squares[c] += x * x
                count[c] += 1
            }
        }
        return (0..<cells).map { c in
            let span = max(0, c - weightSpan)...min(cells - 1, c + weightSpan)
            let n = span.reduce(0) { $0 + count[$1] }
            guard n > 1 else { return 0 }
            let mean = span.reduce(0) { $0 + sum[$1] } / n
            let variance = span.reduce(0) { $0 + squares[$1] } / n - mean * mean
            return variance > 0 ? Float(max(0, mean) / variance) : 0
        }
    }

    /// Bins kept of each sub-frame's spectrum: the widest format's band (bins 2 ..< 128) and room for ±5 % of speed.
    static let storedBins = 1 ..< 136

    // Working storage of one window (reused).
    private var pairLogs: [Float] = []   // sub-frame × stored bin: log power of the bin and the next one
    private var pairWeights: [Float] = [] // sub-frame × stored bin: estimated share of the pair's power above stationary noise
    private var weights: [Float] = []
    private var subframes = 0
    /// Stream sample of the first sub-frame in ``pairLogs`` and the number of its rows, when they
    /// came from a stream window (reused by the next window where it overlaps).
    private var cachedStart: Int?
    private var cachedRows = 0
    private var logs: [Float] = []
    private var folded: [Float] = []
    private lazy var sync = MarkerSync(formats: MarkerFormat.all)
    /// The format whose cells ``fold(_:)`` computes: the widest band (every other format's cells
    /// are a run of its columns).
    static let widest = MarkerFormat.all.max { $0.cellsPerFrame < $1.cellsPerFrame }!

    /// The log power of every pair of adjacent bins (a cell's width) of every sub-frame of the
    /// window (frames of ``frameLength`` every eighth of a hop), over a floor 30 dB under the
    /// sub-frame's mean band power. Each sub-frame's row depends only on the samples of its own frame, so a window of a stream
    /// (`start` given) takes the rows it shares with the previous window (windows 5 s apart
    /// share half their sub-frames) from ``pairLogs`` instead of transforming them again.
    /// - Returns: false when the window is too short for a block.
    private func prepare(_ samples: UnsafeBufferPointer<Float>, at start: Int?) -> Bool {
        let n = frameLength, sub = hopLength / Self.grids
        subframes = samples.count >= n ? (samples.count - n) / sub + 1 : 0
        guard subframes >= (MarkerLayout.blockFrames + 5) * Self.grids else { cachedStart = nil; return false }
        let lo = Self.storedBins.lowerBound, width = Self.storedBins.count, top = n / 2 // bins above Nyquist stay 0
        let band = MarkerFormat.v1.firstBin ..< MarkerLayout.endBin // the floor's reference: version 1's band
        var reused = 0, shift = 0
        if let start, let previous = cachedStart, start >= previous, (start - previous) % sub == 0,
           pairLogs.count >= subframes * width {
            shift = (start - previous) / sub
            reused = max(0, min(cachedRows - shift, subframes))
        }
        if pairLogs.count < subframes * width { pairLogs = [Float](repeating: 0, count: subframes * width) }
        cachedStart = start
        cachedRows = subframes
        var power = [Float](repeating: 0, count: width + 1)
        pairLogs.withUnsafeMutableBufferPointer { out in
            if reused > 0 && shift > 0, let base = out.baseAddress {
                memmove(base, base + shift * width, reused * width * MemoryLayout<Float>.stride)
            }
            for j in reused..<subframes {
                transform.analyse(samples, start: j * sub)
                let s = transform.spectrum
                var sum: Float = 0
                for i in 0..<width {
                    let k = lo + i
                    let p = k <= top ? s[2 * k] * s[2 * k] + s[2 * k + 1] * s[2 * k + 1] : 0
                    power[i] = p
                    if band.contains(k) { sum += p }
                }
                let floor = sum / Float(band.count / MarkerLayout.cellWidth) * 1e-3 + 1e-12
                for i in 0..<width { out[j * width + i] = logf(power[i] + power[i + 1] + floor) }
            }
        }
        // Stationary noise per bin pair: the 10th percentile of its log power over every 8th
        // sub-frame, plus 0.63 (a pair of noise bins has a Gamma(2) power whose 10th percentile is
        // 0.53 × its mean). A pair's weight is its power's share over that noise, P / (P + N).
        if pairWeights.count < subframes * width { pairWeights = [Float](repeating: 0, count: subframes * width) }
        var noise = [Float](repeating: 0, count: width)
        var column: [Float] = []
        column.reserveCapacity((subframes + 7) / 8)
        let count = subframes
        pairLogs.withUnsafeBufferPointer { l in
            for i in 0..<width {
                column.removeAll(keepingCapacity: true)
                for j in stride(from: 0, to: count, by: 8) { column.append(l[j * width + i]) }
                noise[i] = Self.select(&column, column.count / 10) + 0.63
            }
            pairWeights.withUnsafeMutableBufferPointer { w in
                for j in 0..<count {
                    for i in 0..<width { w[j * width + i] = 1 / (1 + expf(noise[i] - l[j * width + i])) }
                }
            }
        }
        return true
    }

    /// The `k`-th smallest value of `values` (0-based; the order of `values` is changed), by
    /// Hoare's selection (quickselect, median-of-three pivots): the value `values.sorted()[k]`
    /// in linear expected time.
    static func select(_ values: inout [Float], _ k: Int) -> Float {
        precondition(values.indices.contains(k))
        return values.withUnsafeMutableBufferPointer { v in
            var lo = 0, hi = v.count - 1
            while lo < hi {
                let mid = lo + (hi - lo) / 2
                // Median of three as the pivot.
                if v[mid] < v[lo] { v.swapAt(mid, lo) }
                if v[hi] < v[lo] { v.swapAt(hi, lo) }
                if v[hi] < v[mid] { v.swapAt(hi, mid) }
                let pivot = v[mid]
                var i = lo, j = hi
                while i <= j {
                    while v[i] < pivot { i += 1 }
                    while pivot < v[j] { j -= 1 }
                    if i <= j { v.swapAt(i, j); i += 1; j -= 1 }
                }
                if k <= j { hi = j } else if k >= i { lo = i } else { return v[k] }
            }
            return v[k]
        }
    }

    /// Cell values for alignment `a` (the cells of ``widest``), folded modulo the block into
    /// ``folded``, and the sync search of every format.
    /// - Returns: the best format (index in ``MarkerFormat/all``), phase and z-score; nil when the
    ///   window is too short at this speed.
    private func fold(_ a: Alignment) -> (format: Int, phase: Int, z: Float)? {
        let cells = Self.widest.cellsPerFrame, width = MarkerLayout.cellWidth, first = Self.widest.firstBin
        let blockFrames = MarkerLayout.blockFrames, stored = Self.storedBins.count, lo = Self.storedBins.lowerBound
        let perFrame = Double(Self.grids) / a.speed
        let frames = Int((Double(subframes - 1 - a.grid) / perFrame).rounded(.down)) + 1
        guard frames >= blockFrames + 4 else { return nil }
        // Where each cell's first bin lands in the received spectrum (frequencies scale with the speed).
        var lower = [Int](repeating: 0, count: cells), fraction = [Float](repeating: 0, count: cells)
        for c in 0..<cells {
            let x = Double(first + c * width) * a.speed - Double(lo)
            let k = min(stored - 3, max(0, Int(x.rounded(.down))))
            lower[c] = k
            fraction[c] = Float(min(1, max(0, x - Double(k))))
        }
        if logs.count < frames * cells { logs = [Float](repeating: 0, count: frames * cells); weights = logs }
        if folded.count != blockFrames * cells { folded = [Float](repeating: 0, count: blockFrames * cells) }
        // Local buffers (no exclusivity checks on the class's arrays inside the loops).
        var logs: [Float] = [], weights: [Float] = [], folded: [Float] = []
        swap(&logs, &self.logs); swap(&weights, &self.weights); swap(&folded, &self.folded)
        defer { swap(&logs, &self.logs); swap(&weights, &self.weights); swap(&folded, &self.folded) }
        pairLogs.withUnsafeBufferPointer { p in
            pairWeights.withUnsafeBufferPointer { w in
                logs.withUnsafeMutableBufferPointer { l in
                    weights.withUnsafeMutableBufferPointer { g in
                        for t in 0..<frames {
                            let row = (a.grid + Int((Double(t) * perFrame).rounded())) * stored
                            for c in 0..<cells {
                                let k = row + lower[c], f = fraction[c]
                                l[t * cells + c] = p[k] + f * (p[k + 1] - p[k])
                                g[t * cells + c] = w[k] + f * (w[k + 1] - w[k])
                            }
                        }
                    }
                }
            }
        }
        // Cell differences against a weighted mean of the same cell in the 4 frames before and
        // after (16, 32, 48, 64 ms away, weights 1/4, 1/8, 1/16, 1/16 either side: the audio's slow
        // changes cancel, and the overlapping frames 16 ms away, whose noise is correlated with
        // the cell's own, cancel part of it), clipped, weighted by the cell's share of power over
        // stationary noise in the frames 16 ms away, folded modulo the block.
        let weighted = cellDifference == .weighted
        logs.withUnsafeBufferPointer { l in
            weights.withUnsafeBufferPointer { w in
                folded.withUnsafeMutableBufferPointer { f in
                    for i in 0..<f.count { f[i] = 0 }
                    for t in 4..<(frames - 4) {
                        let q = (t % blockFrames) * cells
                        for c in 0..<cells {
                            let near = l[(t - 1) * cells + c] + l[(t + 1) * cells + c]
                            let middle = l[(t - 2) * cells + c] + l[(t + 2) * cells + c]
                            let far = l[(t - 4) * cells + c] + l[(t + 4) * cells + c]
                            let v: Float, g: Float
                            if weighted {
                                v = l[t * cells + c] - (0.25 * near + 0.125 * middle
                                                        + 0.0625 * (l[(t - 3) * cells + c] + l[(t + 3) * cells + c] + far))
                                g = 0.5 * (w[(t - 1) * cells + c] + w[(t + 1) * cells + c])
                            } else {
                                v = l[t * cells + c] - 0.25 * (middle + far)
                                g = 0.5 * (w[(t - 2) * cells + c] + w[(t + 2) * cells + c])
                            }
                            f[q + c] += g * min(3, max(-3, v))
                        }
                    }
                }
            }
        }
        return folded.withUnsafeBufferPointer { sync.best($0) }
    }
}
