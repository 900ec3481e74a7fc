import CFFTW
import Foundation

/// The marker's synchronisation search for every ``MarkerFormat`` at once: the correlation of a
/// folded block of cell values (``MarkerLayout/blockFrames`` × the widest format's cells) with
/// each format's sync chips at every one of the 320 block phases, as a circular
/// cross-correlation per cell column through FFTW: one transform of 320 points per column,
/// shared by the formats (a narrower format's cells are a run of the widest format's columns),
/// and one inverse per format, instead of 320 × (sync cells) products. Not thread-safe: one per
/// detector.
final class MarkerSync {
    static let frames = MarkerLayout.blockFrames
    static let bins = frames / 2 + 1

    /// The formats searched, and the column of each one's first cell in the folded block.
    let formats: [MarkerFormat]
    let offsets: [Int]
    /// Columns of the folded block (the widest format's cells).
    let columns: Int
    /// Per format: the spectrum of each of its cell columns of the sync chips (zero on data
    /// cells), column-major `c * bins + k`, interleaved re/im.
    private let chipSpectra: [[Float]]

    private let input: UnsafeMutablePointer<Float>       // frames × columns, frame-major (copy of the folded block)
    private let spectra: UnsafeMutablePointer<fftwf_complex> // bins × columns, bin-major
    private let sum: UnsafeMutablePointer<fftwf_complex>
    private let scores: UnsafeMutablePointer<Float>
    private let forward: fftwf_plan
    private let inverse: fftwf_plan

    /// - Parameter formats: the formats to search; each one's band must end where the widest
    ///   one's does (``MarkerLayout/endBin``), as every ``MarkerFormat`` does.
    init(formats: [MarkerFormat]) {
        self.formats = formats
        let widest = formats.max { $0.cellsPerFrame < $1.cellsPerFrame }!
        offsets = formats.map { ($0.firstBin - widest.firstBin) / MarkerLayout.cellWidth }
        let f = Self.frames, c = widest.cellsPerFrame, b = Self.bins
        columns = c
        input = fftwf_alloc_real(f * c)
        spectra = fftwf_alloc_complex(b * c)
        sum = fftwf_alloc_complex(b)
        scores = fftwf_alloc_real(f)
        fftwPlanLock.lock()
        var n = Int32(f)
        // Column c of the frame-major block: stride `columns`, columns 1 apart.
        forward = fftwf_plan_many_dft_r2c(1, &n, Int32(c), input, nil, Int32(c), 1, spectra, nil, Int32(c), 1, UInt32(FFTW_ESTIMATE))
        inverse = fftwf_plan_dft_c2r_1d(n, sum, scores, UInt32(FFTW_ESTIMATE))
        fftwPlanLock.unlock()
        // Each format's chip column spectra, through the forward plan (its input is overwritten after).
        var all: [[Float]] = []
        for (format, offset) in zip(formats, offsets) {
            let cells = format.cellsPerFrame
            for i in 0..<(f * c) { input[i] = 0 }
            for q in 0..<f {
                for cell in 0..<cells where MarkerLayout.isSync(q, cell) { input[q * c + offset + cell] = format.chips[q * cells + cell] }
            }
            fftwf_execute(forward)
            var out = [Float](repeating: 0, count: cells * b * 2)
            let raw = UnsafeMutableRawPointer(spectra).assumingMemoryBound(to: Float.self)
            for cell in 0..<cells {
                for k in 0..<b {
                    out[2 * (cell * b + k)] = raw[2 * (k * c + offset + cell)]
                    out[2 * (cell * b + k) + 1] = raw[2 * (k * c + offset + cell) + 1]
                }
            }
            all.append(out)
        }
        chipSpectra = all
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

    /// The best format and block phase of a folded block and its z-score: the sync correlation
    /// over the root of the sync cells' energy (about N(0, 1) for audio without a mark). Frame
    /// `q0` of the window's fold is block frame `(q0 + phase) % 320`.
    /// - Parameter folded: frame-major rows of ``columns`` values (the widest format's cells);
    ///   format `i`'s cell `c` of row `q0` is `folded[q0 * columns + offsets[i] + c]`.
    /// - Returns: the index in ``formats`` of the best format, its phase and z-score.
    func best(_ folded: UnsafeBufferPointer<Float>) -> (format: Int, phase: Int, z: Float) {
        let f = Self.frames, c = columns, b = Self.bins
        // Energy per column and phase class: cell (q0, col) is in class (q0 + col) % 4.
        var columnEnergy = [Float](repeating: 0, count: c * 4)
        for q0 in 0..<f {
            for col in 0..<c {
                let v = folded[q0 * c + col]
                columnEnergy[col * 4 + ((q0 + col) & 3)] += v * v
                input[q0 * c + col] = v
            }
        }
        fftwf_execute(forward)
        var best: (format: Int, phase: Int, z: Float) = (0, 0, -.infinity)
        let x = UnsafeMutableRawPointer(spectra).assumingMemoryBound(to: Float.self)
        let s = UnsafeMutableRawPointer(sum).assumingMemoryBound(to: Float.self)
        for (i, format) in formats.enumerated() {
            let cells = format.cellsPerFrame, offset = offsets[i]
            // A format's cell c = col − offset is a sync cell at phase p when (q0 + p + c) % 4 == 0,
            // i.e. in column class (q0 + col) % 4 == (offset − p) % 4.
            var energy: [Float] = [0, 0, 0, 0]
            for col in offset..<(offset + cells) { for r in 0..<4 { energy[r] += columnEnergy[col * 4 + r] } }
            // score(p) = Σ_c Σ_q0 x_c[q0] y_c[q0 + p]  →  IFFT(Σ_c conj(X_c) · Y_c) / f.
            chipSpectra[i].withUnsafeBufferPointer { y in
                for k in 0..<b {
                    var re: Float = 0, im: Float = 0
                    for cell in 0..<cells {
                        let xr = x[2 * (k * c + offset + cell)], xi = x[2 * (k * c + offset + cell) + 1]
                        let yr = y[2 * (cell * b + k)], yi = y[2 * (cell * b + k) + 1]
                        re += xr * yr + xi * yi
                        im += xr * yi - xi * yr
                    }
                    s[2 * k] = re
                    s[2 * k + 1] = im
                }
            }
            fftwf_execute(inverse)
            for p in 0..<f {
                let e = energy[(offset - p % 4 + 8) & 3]
                let z = e > 0 ? scores[p] / Float(f) / e.squareRoot() : 0
                if z > best.z { best = (i, p, z) }
            }
        }
        return best
    }
}
