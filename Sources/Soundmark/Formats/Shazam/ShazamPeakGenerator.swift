import CFFTW
import Foundation

private let shazamPlanLock = NSLock()

/// Computes Shazam-format spectral peaks (see ``ShazamSignature``) from mono PCM at 16 kHz,
/// the way Shazam's signature generators pick them.
///
/// Each *pass* appends 128 samples (8 ms) to a 2048-sample window (zeros before the stream
/// starts), applies a Hann window to the samples scaled to 16-bit full scale, and takes a real
/// FFT with FFTW (1025 bins, power / 2¹⁷). A candidate is a bin whose power is at least 1/64,
/// beats a spread neighbourhood in frequency (bins −10…+10 at a few offsets, over a 3-bin
/// running maximum) and in time (passes −45…+39 at a few offsets, over a 4-pass running
/// maximum), and lies in one of the four bands (250–5500 Hz). Its magnitude is
/// `ln(power) · 1477.3 + 6144`, its bin refined by quadratic interpolation of those magnitudes
/// and stored ×64. A pass is decided 45 passes (360 ms) after it was computed; ``finish()``
/// decides the rest by feeding silence, then keeps per band the ``peaksPerSecond`` × duration
/// strongest candidates (Shazam's signatures hold about 12 peaks per second and band).
public final class ShazamPeakGenerator {
    /// Sample rate of the input (Hz).
    public static let sampleRate = 16000
    /// FFT length in samples.
    public static let fftLength = 2048
    /// Samples per pass.
    public static let hop = 128
    /// Peaks kept per band and second of audio (12, as in Shazam's own signatures).
    public static let peaksPerSecond = 12.0

    private let plan: fftwf_plan
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<fftwf_complex>
    private let window: [Float]
    private var ring = [Float](repeating: 0, count: 2048)
    private var ringPosition = 0
    private var pending: [Float] = []
    /// 256 latest power spectra and their spread versions (ring buffers of 1025 bins).
    private var outputs = [[Float]](repeating: [Float](repeating: 0, count: 1025), count: 256)
    private var spread = [[Float]](repeating: [Float](repeating: 0, count: 1025), count: 256)
    private var position = 0
    private var passes = 0
    /// Input samples appended so far.
    public private(set) var sampleCount = 0
    /// Peaks found so far, per band.
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

    /// Ends the stream: the last partial pass is completed with zeros and 45 passes of silence
    /// decide the passes still open (peaks the silence itself makes are not kept); then each
    /// band keeps its ``peaksPerSecond`` × duration strongest candidates, in pass order.
    /// - Returns: the signature of everything appended (input rate 16 kHz, prefix version 1).
    public func finish() -> ShazamSignature {
        let lastPass = passes + (pending.isEmpty ? 0 : 1)
        if !pending.isEmpty {
            pass((pending + [Float](repeating: 0, count: 128 - pending.count))[...])
            pending = []
        }
        let zeros = [Float](repeating: 0, count: 128)[...]
        for _ in 0..<46 { pass(zeros) }
        let limit = Int(ShazamPeakGenerator.peaksPerSecond * Double(sampleCount) / Double(ShazamPeakGenerator.sampleRate))
        let kept = bands.map { band in
            band.filter { $0.pass < lastPass }
                .sorted { ($0.magnitude, $1.pass) > ($1.magnitude, $0.pass) }
                .prefix(limit)
                .sorted { ($0.pass, $0.correctedBin) < ($1.pass, $1.correctedBin) }
        }
        return ShazamSignature(bands: kept, sampleRate: ShazamPeakGenerator.sampleRate, sampleCount: sampleCount)
    }

    private func pass(_ samples: ArraySlice<Float>) {
        for s in samples {
            ring[ringPosition] = s * 32768
            ringPosition = (ringPosition + 1) & 2047
        }
        for i in 0..<2048 { input[i] = ring[(i + ringPosition) & 2047] * window[i] }
        fftwf_execute_dft_r2c(plan, input, output)
        output.withMemoryRebound(to: Float.self, capacity: 2050) { c in
            outputs[position].withUnsafeMutableBufferPointer { r in
                for k in 0...1024 { r[k] = max((c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1]) / 131_072, 1e-10) }
            }
        }
        // Spreading: a 3-bin running maximum in frequency, then into the passes 1, 3 and 6 back.
        var row = outputs[position]
        for k in 0...1022 { row[k] = max(row[k], row[k + 1], row[k + 2]) }
        spread[position] = row
        for back in [1, 3, 6] {
            let p = (position - back) & 255
            spread[p].withUnsafeMutableBufferPointer { f in
                for k in 0...1024 where row[k] > f[k] { f[k] = row[k] }
            }
        }
        position = (position + 1) & 255
        passes += 1
        if passes >= 46 { recognise() }
    }

    private static let frequencyNeighbours = [-10, -7, -4, -3, 1, 2, 5, 8]
    private static let timeNeighbours = [-53, -45, 165, 172, 179, 186, 193, 200, 214, 221, 228, 235, 242, 249]

    private func recognise() {
        let centre = outputs[(position - 46) & 255]
        let spreadCentre = spread[(position - 49) & 255]
        let others = ShazamPeakGenerator.timeNeighbours.map { (position + $0) & 255 }
        for bin in 10...1014 {
            let v = centre[bin]
            guard v >= 1.0 / 64, v >= spreadCentre[bin - 1] else { continue }
            var m: Float = 0
            for o in ShazamPeakGenerator.frequencyNeighbours { m = max(m, spreadCentre[bin + o]) }
            guard v > m else { continue }
            for o in others { m = max(m, spread[o][bin - 1]) }
            guard v > m else { continue }
            let magnitude = ShazamPeakGenerator.logMagnitude(v)
            let before = ShazamPeakGenerator.logMagnitude(centre[bin - 1]), after = ShazamPeakGenerator.logMagnitude(centre[bin + 1])
            let curvature = magnitude * 2 - before - after
            guard curvature > 0 else { continue }
            let corrected = Float(bin * 64) + (after - before) * 32 / curvature
            guard corrected >= 0, corrected < 65536 else { continue }
            let hz = Double(UInt16(corrected)) * 16000 / 2 / 1024 / 64
            guard let band = ShazamPeakGenerator.band(ofHz: hz) else { continue }
            bands[band].append(ShazamPeak(pass: passes - 46, magnitude: UInt16(clamping: Int(magnitude)), correctedBin: UInt16(corrected)))
        }
    }

    private static func logMagnitude(_ power: Float) -> Float { max(log(power), 1.0 / 64) * 1477.3 + 6144 }

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
