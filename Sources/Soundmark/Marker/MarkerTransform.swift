import CFFTW
import Foundation

/// One FFTW real transform pair of `n` samples (``MarkerLayout/frameLength`` at 16 kHz) with the marker's
/// periodic square-root Hann window. Plans are made and destroyed under the shared FFTW plan
/// lock (only `fftwf_execute*` is thread-safe). Not thread-safe itself: one per thread.
final class MarkerTransform {
    let n: Int
    let window: [Float]
    let real: UnsafeMutablePointer<Float>
    let spectrum: UnsafeMutablePointer<Float> // interleaved re, im: n/2 + 1 bins
    private let complex: UnsafeMutablePointer<fftwf_complex>
    private let forward: fftwf_plan
    private let inverse: fftwf_plan

    /// - Parameter n: frame length in samples (512 at 16 kHz, 256 at 8 kHz: 32 ms either way).
    init(n: Int = MarkerLayout.frameLength) {
        self.n = n
        real = fftwf_alloc_real(n)
        let raw = UnsafeMutableRawPointer(fftwf_alloc_complex(n / 2 + 1)!)
        complex = raw.assumingMemoryBound(to: fftwf_complex.self)
        spectrum = raw.assumingMemoryBound(to: Float.self)
        fftwPlanLock.lock()
        forward = fftwf_plan_dft_r2c_1d(Int32(n), real, complex, UInt32(FFTW_ESTIMATE))
        inverse = fftwf_plan_dft_c2r_1d(Int32(n), complex, real, UInt32(FFTW_ESTIMATE))
        fftwPlanLock.unlock()
        let count = n
        window = (0..<count).map { i in Float(sin(Double.pi * Double(i) / Double(count))) }
    }

    deinit {
        fftwPlanLock.lock()
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwPlanLock.unlock()
        fftwf_free(real)
        fftwf_free(UnsafeMutableRawPointer(complex))
    }

    /// Windows `samples[start ..< start + n]` (zeros past the end) into ``real`` and transforms it into ``spectrum``.
    func analyse(_ samples: UnsafeBufferPointer<Float>, start: Int) {
        let available = max(0, min(n, samples.count - start))
        for i in 0..<available { real[i] = samples[start + i] * window[i] }
        for i in available..<n { real[i] = 0 }
        fftwf_execute_dft_r2c(forward, real, complex)
    }

    /// Inverse transform of ``spectrum`` into ``real`` (unnormalised: scaled by `n`).
    func synthesise() {
        fftwf_execute_dft_c2r(inverse, complex, real)
    }
}
