import CFFTW
import Foundation

/// The marker's synchronisation search for one ``MarkerFormat``: the correlation of a folded
/// block of cell values (``MarkerLayout/blockFrames`` × the format's cells) with the format's
/// sync chips at every one of the 320 block phases at once, as a circular cross-correlation per
/// cell column through FFTW (one transform of 320 points per column and one inverse instead of
/// 320 × (sync cells) products). Not thread-safe: one per detector and format.
final class MarkerSync {
    static let frames = MarkerLayout.blockFrames
    static let bins = frames / 2 + 1

    let format: MarkerFormat
    private let cells: Int
    /// Spectrum of each cell column of the sync chips (zero on data cells), column-major
    /// `c * bins + k`, interleaved re/im.
    private let chipSpectrum: [Float]

    private let input: UnsafeMutablePointer<Float>       // frames × cells, frame-major (copy of the folded block)
    private let spectra: UnsafeMutablePointer<fftwf_complex> // bins × cells, bin-major
    private let sum: UnsafeMutablePointer<fftwf_complex>
    private let scores: UnsafeMutablePointer<Float>
    private let forward: fftwf_plan
    private let inverse: fftwf_plan

    init(format: MarkerFormat) {
        self.format = format
        let f = Self.frames, c = format.cellsPerFrame, b = Self.bins
        cells = c
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
        // The chips' column spectra, through the forward plan (its input is overwritten after).
        for q in 0..<f {
            for cell in 0..<c { input[q * c + cell] = MarkerLayout.isSync(q, cell) ? format.chips[q * c + cell] : 0 }
        }
        fftwf_execute(forward)
        var out = [Float](repeating: 0, count: c * b * 2)
        let raw = UnsafeMutableRawPointer(spectra).assumingMemoryBound(to: Float.self)
        for cell in 0..<c {
            for k in 0..<b {
                out[2 * (cell * b + k)] = raw[2 * (k * c + cell)]
                out[2 * (cell * b + k) + 1] = raw[2 * (k * c + cell) + 1]
            }
        }
        chipSpectrum = out
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

    /// The best block phase of a folded block and its z-score: the sync correlation over the root
    /// of the sync cells' energy (about N(0, 1) for audio without a mark). Frame `q0` of the
    /// window's fold is block frame `(q0 + phase) % 320`.
    /// - Parameters:
    ///   - folded: frame-major rows of `stride` values; this format's cell `c` of row `q0` is
    ///     `folded[q0 * stride + offset + c]`.
    ///   - stride: values per row (at least `offset` + this format's cells).
    ///   - offset: the column of this format's first cell.
    func best(_ folded: UnsafeBufferPointer<Float>, stride: Int, offset: Int) -> (phase: Int, z: Float) {
        let f = Self.frames, c = cells, b = Self.bins
        // Energy of the sync cells per phase class: cell (q0, c) is a sync cell at phase p when (q0 + p + c) % 4 == 0.
        var energy: [Float] = [0, 0, 0, 0]
        for q0 in 0..<f {
            for cell in 0..<c {
                let v = folded[q0 * stride + offset + cell]
                energy[(q0 + cell) & 3] += v * v
                input[q0 * c + cell] = v
            }
        }
        fftwf_execute(forward)
        // score(p) = Σ_c Σ_q0 x_c[q0] y_c[q0 + p]  →  IFFT(Σ_c conj(X_c) · Y_c) / f.
        let x = UnsafeMutableRawPointer(spectra).assumingMemoryBound(to: Float.self)
        let s = UnsafeMutableRawPointer(sum).assumingMemoryBound(to: Float.self)
        chipSpectrum.withUnsafeBufferPointer { y in
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
