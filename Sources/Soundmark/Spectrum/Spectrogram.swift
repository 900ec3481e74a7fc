import CFFTW
import Foundation

/// FFTW plans are not thread-safe to create or destroy; only `fftwf_execute*` is.
let fftwPlanLock = NSLock()

/// Streaming short-time Fourier transform: mono PCM in, one power spectrum per hop out.
///
/// Frame `k` covers samples `[k·hopLength, k·hopLength + frameLength)` of the stream (sample 0 is
/// the first sample ever consumed), is multiplied by a periodic Hann window and transformed with
/// FFTW's real-to-complex FFT. Each emitted row holds the power of bins
/// `configuration.minBin ... configuration.maxBin` relative to a full-scale sine, linear
/// (a sine of amplitude 1.0 centred on a bin reads 1.0 there, 0 dB; take `10·log10` for dB).
/// Rows stay linear because the peak picker only compares values: logarithms are taken for
/// the few peaks only.
///
/// Frames are emitted as soon as their last sample arrives, so the output does not depend on
/// how the input was chunked. A trailing partial frame is never emitted.
public final class Spectrogram {
    /// The analysis parameters (frame length, hop, bin range).
    public let configuration: Configuration
    /// Number of frames emitted so far; the next frame emitted has this index.
    public private(set) var frameCount: Int = 0

    private let plan: fftwf_plan
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<fftwf_complex>
    private let window: [Float]
    private var row: [Float]
    /// Samples not yet fully consumed; `buffer[0]` is stream sample `frameCount · hopLength`.
    private var buffer: [Float] = []
    private let referencePower: Float

    /// Creates an empty spectrogram for `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let n = configuration.frameLength
        input = fftwf_alloc_real(n)
        output = UnsafeMutableRawPointer(fftwf_alloc_complex(n / 2 + 1)!).assumingMemoryBound(to: fftwf_complex.self)
        fftwPlanLock.lock()
        plan = fftwf_plan_dft_r2c_1d(Int32(n), input, output, UInt32(FFTW_ESTIMATE))
        fftwPlanLock.unlock()
        window = (0..<n).map { i in Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(n))) }
        row = [Float](repeating: 0, count: configuration.maxBin - configuration.minBin + 1)
        // A full-scale sine centred on a bin gives |X| = A · Σw / 2 = N / 4 with a Hann window.
        let fullScale = Float(n) / 4
        referencePower = fullScale * fullScale
        buffer.reserveCapacity(n * 4)
    }

    deinit {
        fftwPlanLock.lock()
        fftwf_destroy_plan(plan)
        fftwPlanLock.unlock()
        fftwf_free(input)
        fftwf_free(output)
    }

    /// Appends samples and calls `emit(frameIndex, row)` for every frame completed by them.
    /// The row buffer is only valid during the call.
    public func consume(_ samples: UnsafeBufferPointer<Float>, emit: (Int, UnsafeBufferPointer<Float>) -> Void) {
        buffer.append(contentsOf: samples)
        let n = configuration.frameLength, hop = configuration.hopLength
        var start = 0
        while start + n <= buffer.count {
            buffer.withUnsafeBufferPointer { b in
                for i in 0..<n { input[i] = b[start + i] * window[i] }
            }
            fftwf_execute_dft_r2c(plan, input, output)
            let lo = configuration.minBin
            let scale = 1 / referencePower
            output.withMemoryRebound(to: Float.self, capacity: (n / 2 + 1) * 2) { c in
                row.withUnsafeMutableBufferPointer { r in
                    for j in 0..<r.count {
                        let re = c[2 * (lo + j)], im = c[2 * (lo + j) + 1]
                        r[j] = (re * re + im * im) * scale
                    }
                }
            }
            row.withUnsafeBufferPointer { emit(frameCount, $0) }
            frameCount += 1
            start += hop
        }
        if start > 0 { buffer.removeFirst(min(start, buffer.count)) }
    }

    /// Convenience for arrays; see ``consume(_:emit:)``.
    public func consume(_ samples: [Float], emit: (Int, UnsafeBufferPointer<Float>) -> Void) {
        samples.withUnsafeBufferPointer { consume($0, emit: emit) }
    }
}
