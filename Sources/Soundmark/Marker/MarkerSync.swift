import CFFTW
import Foundation

/// The marker's synchronisation search: the correlation of a folded block of cell values
/// (``MarkerLayout/blockFrames`` × ``MarkerLayout/cellsPerFrame``, frame-major) with the sync
/// chips at every one of the 320 block phases at once, as a circular cross-correlation per cell
/// column through FFTW (56 transforms of 320 points and one inverse instead of 320 × 4480
/// products). Not thread-safe: one per detector.
final class MarkerSync {
    static let frames = MarkerLayout.blockFrames
    static let cells = MarkerLayout.cellsPerFrame
    static let bins = frames / 2 + 1

    /// Spectrum of each cell column of the sync chips (zero on data cells), column-major
    /// `c * bins + k`, interleaved re/im.
    private static let chipSpectrum: [Float] = {
        var out = [Float](repeating: 0, count: cells * bins * 2)
        let input = fftwf_alloc_real(frames)!
        let output = fftwf_alloc_complex(bins)!
        defer { fftwf_free(input); fftwf_free(output) }
        fftwPlanLock.lock()
        let plan = fftwf_plan_dft_r2c_1d(Int32(frames), input, output, UInt32(FFTW_ESTIMATE))
        fftwPlanLock.unlock()
        defer { fftwPlanLock.lock(); fftwf_destroy_plan(plan); fftwPlanLock.unlock() }
        for c in 0..<cells {
            for q in 0..<frames { input[q] = MarkerLayout.isSync(q, c) ? MarkerLayout.chips[q * cells + c] : 0 }
            fftwf_execute(plan)
            let raw = UnsafeMutableRawPointer(output).assumingMemoryBound(to: Float.self)
            for k in 0..<(2 * bins) { out[c * bins * 2 + k] = raw[k] }
        }
        return out
    }()

    private let input: UnsafeMutablePointer<Float>       // frames × cells, frame-major (copy of the folded block)
    private let spectra: UnsafeMutablePointer<fftwf_complex> // bins × cells, bin-major
    private let sum: UnsafeMutablePointer<fftwf_complex>
    private let scores: UnsafeMutablePointer<Float>
    private let forward: fftwf_plan
    private let inverse: fftwf_plan

    init() {
        let f = Self.frames, c = Self.cells, b = Self.bins
        input = fftwf_alloc_real(f * c)
        spectra = fftwf_alloc_complex(b * c)
        sum = fftwf_alloc_complex(b)
        scores = fftwf_alloc_real(f)
        fftwPlanLock.lock()
        var n = Int32(f)
        // Column c of the frame-major block: stride `cells`, columns 1 apart.
        forward = fftwf_plan_many_dft_r2c(1, &n, Int32(c), input, nil, Int32(c), 1, spectra, nil, Int32(c), 1, UInt32(FFTW_ESTIMATE))
        inverse = fftwf_plan_dft_c2r_1d(n, sum, scores, UInt32(FFTW_ESTIMATE))
        fftwPlanLock.unlock()
        _ = Self.chipSpectrum
    }

    deinit {
        fftwPlanLock.lock()
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwPlanLock.unlock()
        fftwf_free(input)
        fftwf_free(UnsafeMutableRawPointer(spectra))
        fftwf_free(UnsafeMutableRawPointer(sum))
        fftwf_free(scores)
    }

    /// The best block phase of `folded` (frame `q0` of the window's fold is block frame
    /// `(q0 + phase) % 320`) and its z-score: the sync correlation over the root of the sync cells'
    /// energy (about N(0, 1) for audio without a mark).
    func best(_ folded: UnsafeBufferPointer<Float>) -> (phase: Int, z: Float) {
        let f = Self.frames, c = Self.cells, b = Self.bins
        // Energy of the sync cells per phase class: cell (q0, c) is a sync cell at phase p when (q0 + p + c) % 4 == 0.
        var energy: [Float] = [0, 0, 0, 0]
        for q0 in 0..<f {
            for cell in 0..<c {
                let v = folded[q0 * c + cell]
                energy[(q0 + cell) & 3] += v * v
            }
        }
        for i in 0..<(f * c) { input[i] = folded[i] }
        fftwf_execute(forward)
        // score(p) = Σ_c Σ_q0 x_c[q0] y_c[q0 + p]  →  IFFT(Σ_c conj(X_c) · Y_c) / f.
        let x = UnsafeMutableRawPointer(spectra).assumingMemoryBound(to: Float.self)
        let s = UnsafeMutableRawPointer(sum).assumingMemoryBound(to: Float.self)
        Self.chipSpectrum.withUnsafeBufferPointer { y in
            for k in 0..<b {
                var re: Float = 0, im: Float = 0
                for cell in 0..<c {
                    let xr = x[2 * (k * c + cell)], xi = x[2 * (k * c + cell) + 1]
                    let yr = y[2 * (cell * b + k)], yi = y[2 * (cell * b + k) + 1]
                    re += xr * yr + xi * yi
                    im += xr * yi - xi * yr
                }
                s[2 * k] = re
                s[2 * k + 1] = im
            }
        }
        fftwf_execute(inverse)
        var best: (phase: Int, z: Float) = (0, -.infinity)
        for p in 0..<f {
            // Sync cells at phase p: (q0 + cell) % 4 == (4 - p % 4) % 4.
            let e = energy[(4 - p & 3) & 3]
            let z = e > 0 ? scores[p] / Float(f) / e.squareRoot() : 0
            if z > best.z { best = (p, z) }
        }
        return best
    }
}
