import CFFTW
import Foundation

private let shazamPlanLock = NSLock()

/// Computes Shazam-format spectral peaks (see ``ShazamSignature``) from mono PCM at 16 kHz,
/// the way Shazam's own signature generators pick them.
///
/// Each *pass* appends 128 samples (8 ms) to a 2048-sample window (zeros before the stream
/// starts: 1920 samples of silence precede the first pass, as in the official signatures),
/// applies a Hann window to the samples scaled to 16-bit full scale and takes a real FFT with
/// FFTW (1025 bins, power = |X|² / 2¹⁷). A bin of a pass is a *candidate peak* when its power
/// is at least 1/64 and strictly beats every other bin of two neighbourhoods: ±45 passes
/// (±360 ms) × ±1 bin, and ±3 passes × ±10 bins (±78 Hz); passes before the start and after the
/// end count as silence. Its magnitude is `ln(power) · 1477.3 + 6144` rounded (Shazam's 16-bit
/// log scale), its bin refined by quadratic interpolation of those log magnitudes and stored
/// ×64 (`bin · 64` plus the truncated offset ×64), and it goes to the band (250–520, 520–1450,
/// 1450–3500, 3500–5500 Hz) of its interpolated frequency; candidates outside are dropped.
///
/// Shazam limits the peak density per *block* of 256 passes (2.048 s, the ring of spectra its
/// generator keeps): of each band's candidates in a block it keeps the ``peaksPerBlock`` (24)
/// strongest. Blocks are counted from the pass being computed when a pass is decided (45 passes
/// later), so block boundaries fall where `pass + 45` is a multiple of 256: block 0 holds passes
/// 0–210, block 1 passes 211–466, and so on. (Both rules were read off the official signatures:
/// in the Shazam app's signature of a 444 s song every such block of bands 2 and 3 holds exactly
/// 24 peaks; against the official signatures of shazam-for-real's test file, 96.4 % of our
/// peaks are theirs, see ``ShazamPeakAgreement``.)
///
/// A pass is decided 45 passes (360 ms) after it was computed and a block is kept when its last
/// pass is decided, so ``bands`` grows while audio is appended; ``finish()`` adds the 15 passes
/// whose windows still hold the end of the audio (1920 samples of silence after it, as in the
/// official signatures) and decides the rest.
public final class ShazamPeakGenerator {
    /// Sample rate of the input (Hz).
    public static let sampleRate = 16000
    /// FFT length in samples.
    public static let fftLength = 2048
    /// Samples per pass.
    public static let hop = 128
    /// Passes per block: the peak density is limited per block of 256 passes (2.048 s).
    public static let blockPasses = 256
    /// Peaks kept per band and block (24 per 2.048 s: 11.7 per second).
    public static let peaksPerBlock = 24
    /// Passes on each side of a peak in its time neighbourhood (±45 passes × ±1 bin).
    public static let timeRadius = 45
    /// Bins on each side of a peak in its frequency neighbourhood (±3 passes × ±10 bins).
    public static let frequencyRadius = 10
    /// Passes on each side of a peak in its frequency neighbourhood.
    public static let frequencyPassRadius = 3
    /// Minimum power of a peak (1/64 on the power scale above; magnitude about 0).
    public static let minimumPower: Float = 1.0 / 64

    private static let ringSize = 128   // ≥ 2 · timeRadius + 1, a power of two
    private let plan: fftwf_plan
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<fftwf_complex>
    private let window: [Float]
    private var samples = [Float](repeating: 0, count: 2048)
    private var samplePosition = 0
    private var pending: [Float] = []
    /// The latest power spectra (1025 bins each), by pass number modulo `ringSize`.
    private var spectra = [[Float]](repeating: [Float](repeating: 0, count: 1025), count: ShazamPeakGenerator.ringSize)
    /// Passes computed so far.
    private var passes = 0
    /// Passes decided so far (pass numbers below it are decided).
    private var decided = 0
    /// Candidates of the open block, per band: (pass, power, peak).
    private var open: [[(pass: Int, power: Float, peak: ShazamPeak)]] = [[], [], [], []]
    /// Input samples appended so far.
    public private(set) var sampleCount = 0
    /// Peaks kept so far, per band, in pass order: those of every completed block.
    public private(set) var bands: [[ShazamPeak]] = [[], [], [], []]

    /// Creates an empty generator.
    public init() {
        input = fftwf_alloc_real(2048)
        output = UnsafeMutableRawPointer(fftwf_alloc_complex(1025)!).assumingMemoryBound(to: fftwf_complex.self)
        shazamPlanLock.lock()
        plan = fftwf_plan_dft_r2c_1d(2048, input, output, UInt32(FFTW_ESTIMATE))
        shazamPlanLock.unlock()
        window = (0..<2048).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0 + 1) / 2049)) }
    }

    deinit {
        shazamPlanLock.lock()
        fftwf_destroy_plan(plan)
        shazamPlanLock.unlock()
        fftwf_free(input)
        fftwf_free(output)
    }

    /// Appends mono samples at 16 kHz (full scale ±1).
    public func append(_ samples: [Float]) {
        sampleCount += samples.count
        pending.append(contentsOf: samples)
        var start = 0
        while start + 128 <= pending.count {
            pass(pending[start..<(start + 128)])
            start += 128
        }
        pending.removeFirst(start)
    }

    /// Ends the stream: the last partial pass is completed with zeros, 15 passes of silence
    /// (1920 samples) follow while the window still holds audio, and the passes still open are
    /// decided with silence after them; the last, partial block keeps its ``peaksPerBlock``
    /// strongest peaks per band like the others.
    /// - Returns: the signature of everything appended (input rate 16 kHz, prefix version 1).
    public func finish() -> ShazamSignature {
        if !pending.isEmpty {
            pass((pending + [Float](repeating: 0, count: 128 - pending.count))[...])
            pending = []
        }
        if passes > 0 {
            let zeros = [Float](repeating: 0, count: 128)[...]
            for _ in 0..<15 { pass(zeros) }
            let end = passes
            // Passes after the end are out of range (silence).
            while decided < end { decide(decided, last: end - 1) }
            closeBlock()
        }
        return ShazamSignature(bands: bands, sampleRate: ShazamPeakGenerator.sampleRate, sampleCount: sampleCount)
    }

    private func pass(_ chunk: ArraySlice<Float>) {
        for s in chunk {
            samples[samplePosition] = s * 32768
            samplePosition = (samplePosition + 1) & 2047
        }
        for i in 0..<2048 { input[i] = samples[(i + samplePosition) & 2047] * window[i] }
        fftwf_execute_dft_r2c(plan, input, output)
        let row = passes & (ShazamPeakGenerator.ringSize - 1)
        output.withMemoryRebound(to: Float.self, capacity: 2050) { c in
            spectra[row].withUnsafeMutableBufferPointer { r in
                for k in 0...1024 { r[k] = (c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1]) / 131_072 }
            }
        }
        passes += 1
        let radius = ShazamPeakGenerator.timeRadius
        if passes > radius { decide(passes - 1 - radius, last: passes - 1) }
    }

    /// Decides pass `c` (every pass up to `last` computed, later ones zero or not yet needed).
    private func decide(_ c: Int, last: Int) {
        let ring = ShazamPeakGenerator.ringSize - 1
        let radius = ShazamPeakGenerator.timeRadius, fRadius = ShazamPeakGenerator.frequencyRadius
        let fPasses = ShazamPeakGenerator.frequencyPassRadius
        let centre = spectra[c & ring]
        for bin in fRadius...(1024 - fRadius) {
            let v = centre[bin]
            guard v >= ShazamPeakGenerator.minimumPower else { continue }
            // The frequency neighbourhood of the pass itself first: it rejects most bins.
            var isPeak = true
            for o in -fRadius...fRadius where o != 0 && centre[bin + o] >= v { isPeak = false; break }
            guard isPeak else { continue }
            // ±3 passes × ±10 bins, then ±45 passes × ±1 bin (passes before 0 are silence).
            passes: for d in 1...radius {
                for q in [c - d, c + d] where q >= 0 && q <= last {  // outside: silence
                    let row = spectra[q & ring]
                    let width = d <= fPasses ? fRadius : 1
                    for o in -width...width where row[bin + o] >= v { isPeak = false; break passes }
                }
            }
            guard isPeak else { continue }
            let magnitude = ShazamPeakGenerator.logMagnitude(v)
            let before = ShazamPeakGenerator.logMagnitude(centre[bin - 1])
            let after = ShazamPeakGenerator.logMagnitude(centre[bin + 1])
            let curvature = magnitude * 2 - before - after
            guard curvature > 0 else { continue }
            let corrected = bin * 64 + Int((after - before) * 32 / curvature)
            guard corrected >= 0, corrected < 65536 else { continue }
            let hz = Double(corrected) * 16000 / 2 / 1024 / 64
            guard let band = ShazamPeakGenerator.band(ofHz: hz) else { continue }
            let peak = ShazamPeak(pass: c, magnitude: UInt16(clamping: Int(magnitude.rounded())), correctedBin: UInt16(corrected))
            open[band].append((c, v, peak))
        }
        decided = c + 1
        if (c + radius + 1) % ShazamPeakGenerator.blockPasses == 0 { closeBlock() }
    }

    /// Keeps the strongest ``peaksPerBlock`` candidates of each band of the open block.
    private func closeBlock() {
        for band in 0..<4 where !open[band].isEmpty {
            let kept = open[band]
                .sorted { ($0.power, $1.pass, $1.peak.correctedBin) > ($1.power, $0.pass, $0.peak.correctedBin) }
                .prefix(ShazamPeakGenerator.peaksPerBlock)
                .sorted { ($0.pass, $0.peak.correctedBin) < ($1.pass, $1.peak.correctedBin) }
            bands[band] += kept.map(\.peak)
            open[band] = []
        }
    }

    private static func logMagnitude(_ power: Float) -> Float { log(max(power, 1e-10)) * 1477.3 + 6144 }

    /// The band (0–3) of a frequency in Hz: 250–520, 520–1450, 1450–3500, 3500–5500; nil outside.
    public static func band(ofHz hz: Double) -> Int? {
        switch Int(hz) {
        case 250..<520: return 0
        case 520..<1450: return 1
        case 1450..<3500: return 2
        case 3500...5500: return 3
        default: return nil
        }
    }

    /// Decodes media (a path, URL or `-`) with FFmpeg at 16 kHz mono and returns its
    /// Shazam-format signature.
    /// - Parameters:
    ///   - source: a path, a URL or `-`.
    ///   - streamIndex: the audio stream to use, or `nil` for the best one.
    ///   - warning: receives one-line warnings (skipped packets).
    /// - Throws: ``MediaDecodingError`` when the source cannot be read.
    /// Audio below 16 kHz (an 8 kHz MP3) is decoded at its own rate and brought to 16 kHz with
    /// ``Upsampler`` (linear interpolation and two low-pass biquads, the interpolating resampler
    /// the official signatures of shazam-for-real's test file were made through); other audio is
    /// resampled to 16 kHz by FFmpeg. Standard input is always resampled by FFmpeg.
    public static func signature(ofMedia source: String, streamIndex: Int? = nil,
                                 warning: ((String) -> Void)? = nil) throws -> ShazamSignature {
        var decoder = try MediaDecoder(source: source, sampleRate: sampleRate, streamIndex: streamIndex, warning: warning)
        var upsampler: Upsampler? = nil
        let native = decoder.inputSampleRate
        if source != "-", native > 0, native < sampleRate {
            decoder = try MediaDecoder(source: source, sampleRate: native, streamIndex: streamIndex, warning: warning)
            upsampler = Upsampler(from: native, to: sampleRate)
        }
        let generator = ShazamPeakGenerator()
        while let chunk = try decoder.nextChunk() {
            generator.append(upsampler.map { $0.process(chunk.samples) } ?? chunk.samples)
        }
        return generator.finish()
    }
}


/// How well one Shazam signature's peaks reproduce another's (a generator checked against an
/// official signature of the same audio).
public struct ShazamPeakAgreement: Equatable, Sendable {
    /// Passes added to our pass numbers to reach the other signature's time origin.
    public var shift: Int
    /// Our peaks compared (those whose shifted pass lies inside the other signature's passes,
    /// edges excluded).
    public var compared: Int
    /// Of those, the peaks the other signature has at the same pass within ±1 FFT bin (±64 stored units).
    public var matched: Int
    /// The other signature's peaks in the same passes.
    public var otherCount: Int
    /// `matched / compared`.
    public var fraction: Double { compared == 0 ? 0 : Double(matched) / Double(compared) }
    /// `compared / otherCount − 1`.
    public var countDifference: Double { otherCount == 0 ? 0 : Double(compared) / Double(otherCount) - 1 }

    /// Compares `ours` with `other` at every whole-pass shift in `shifts` and returns the shift
    /// with the most matched peaks. Passes within `edge` passes (default 46: the 368 ms a peak
    /// needs on each side) of either end of the common stretch are left out.
    public static func best(ours: ShazamSignature, other: ShazamSignature, shifts: ClosedRange<Int> = -128...128,
                            edge: Int = 46) -> ShazamPeakAgreement {
        let theirs = other.allPeaks.map(\.peak)
        var byPass: [Int: [Int]] = [:]
        for p in theirs { byPass[p.pass, default: []].append(Int(p.correctedBin)) }
        let otherFirst = 0, otherLast = other.sampleCount * 16000 / max(other.sampleRate, 1) / 128
        let mine = ours.allPeaks.map(\.peak)
        let ourLast = ours.sampleCount * 16000 / max(ours.sampleRate, 1) / 128
        var best = ShazamPeakAgreement(shift: 0, compared: 0, matched: 0, otherCount: 0)
        for shift in shifts {
            let lo = max(otherFirst, shift) + edge, hi = min(otherLast, ourLast + shift) - edge
            guard lo < hi else { continue }
            var compared = 0, matched = 0
            for p in mine {
                let q = p.pass + shift
                guard q >= lo && q < hi else { continue }
                compared += 1
                if byPass[q]?.contains(where: { abs($0 - Int(p.correctedBin)) <= 64 }) == true { matched += 1 }
            }
            let otherCount = theirs.filter { $0.pass >= lo && $0.pass < hi }.count
            let candidate = ShazamPeakAgreement(shift: shift, compared: compared, matched: matched, otherCount: otherCount)
            if matched > best.matched { best = candidate }
        }
        return best
    }
}

/// Streaming upsampler: linear interpolation followed by two cascaded RBJ low-pass biquads
/// (Q 0.707) at 0.693 of the input's Nyquist frequency — the interpolating mode of Cockos'
/// WDL resampler, through which the official Shazam signatures used as ground truth were made.
/// It rolls off gently (about −3.5 dB at 2 kHz and −9 dB at 2.75 kHz for 8 → 16 kHz) and leaves
/// faint images above the input's Nyquist frequency, as those signatures show.
public final class Upsampler {
    private let step: Double
    private var position = 0.0   // input position of the next output sample, relative to `previous`
    private var previous: Float = 0
    private var started = false
    private let b0, b1, b2, a1, a2: Double
    private var state = [[Double]](repeating: [0, 0, 0, 0], count: 2)

    /// Creates an upsampler from `inputRate` to `outputRate` (Hz, `outputRate` ≥ `inputRate`).
    public init(from inputRate: Int, to outputRate: Int) {
        step = Double(inputRate) / Double(outputRate)
        let w = step * 0.693 * Double.pi, alpha = sin(w) / (2 * 0.707), scale = 1 / (1 + alpha)
        b1 = (1 - cos(w)) * scale
        b0 = b1 / 2
        b2 = b0
        a1 = -2 * cos(w) * scale
        a2 = (1 - alpha) * scale
    }

    /// Upsamples the next input samples (any chunk sizes: the output does not depend on them).
    public func process(_ input: [Float]) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(Int(Double(input.count) / step) + 2)
        for x in input {
            if !started { previous = x; started = true; continue }
            // Output samples between `previous` (position 0) and `x` (position 1).
            while position < 1 {
                out.append(filter(Double(previous) + (Double(x) - Double(previous)) * position))
                position += step
            }
            position -= 1
            previous = x
        }
        return out
    }

    private func filter(_ input: Double) -> Float {
        var v = input
        for k in 0..<2 {
            let y = b0 * v + b1 * state[k][0] + b2 * state[k][1] - a1 * state[k][2] - a2 * state[k][3]
            state[k][1] = state[k][0]; state[k][0] = v
            state[k][3] = state[k][2]; state[k][2] = y
            v = y
        }
        return Float(v)
    }
}
