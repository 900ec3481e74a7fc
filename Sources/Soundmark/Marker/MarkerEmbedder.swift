import Foundation

/// Computes the audio marker for a signal: a 32-bit payload repeated every block
/// (``MarkerLayout``, 5.12 s) through the whole signal.
///
/// The mark is patchwork in the short-time spectrum, after audiowmark's published design: in
/// every frame, each cell of the format's band (``MarkerFormat``: 62.5–4000 Hz for version 2) is scaled by `1 ± g·δ` (the sign from the
/// cell's sync chip or scrambled coded bit), so the mark added is `±g·δ` times the audio's own
/// spectrum in that cell. That is the masking model: the mark sits at `strength` dB (δ) below the
/// audio in every 62.5 Hz × 32 ms cell, loud where the audio is loud, silent where it is silent,
/// nothing outside the band; and `g ≤ 1` lowers it on spectral peaks that stand above a quiet
/// neighbour cell (tones, harmonics over a clean background), whose mark would modulate the
/// tone audibly and spread into the quiet cells beside it: `g = min(1, ERB(f) / 62.5 Hz ·
/// √(P_quieter neighbour / P_cell))`, so at 500 Hz (ERB 1.3 cells) a cell 10 dB above its quieter
/// neighbour gets about 0.4 of the strength, at 4 kHz (ERB 7.3 cells) only peaks more than 17 dB
/// above theirs are lowered. The mark is resynthesised with the square-root Hann window
/// (overlap-add at 50 %), so it is a signal to *add* to the audio.
public struct MarkerEmbedder: Sendable {
    /// Default strength in dB: the mark's level relative to the audio in every cell of the band.
    public static let defaultStrength: Double = -12
    /// Accepted strengths in dB (−40 is very weak and fragile, −6 clearly audible).
    public static let strengthRange: ClosedRange<Double> = -40 ... -6

    /// Largest level of a cell over its quieter neighbour cell, per ERB of the cell's frequency
    /// in cells, up to which the cell gets the whole strength (amplitude ratio; see ``mark(for:)``).
    static let peakAllowance: Float = 1
    /// Share of the strength (amplitude) given to the cells under 500 Hz (format version 2): 0.4,
    /// −8 dB. Marks there at the full strength cost tonal bass (square-wave chiptune bass lines)
    /// up to 0.035 of ViSQOL; at 0.4 the low cells still carry the mark for music whose energy
    /// is mostly in the bass.
    public static let lowBandGain: Float = 0.4

    /// The 32-bit payload.
    public let payload: UInt32
    /// The strength in dB (see ``defaultStrength``).
    public let strength: Double
    /// The frame layout version written (``MarkerFormat/current`` unless chosen).
    public let format: MarkerFormat

    /// - Parameters:
    ///   - payload: the 32-bit number to carry.
    ///   - strength: dB, within ``strengthRange`` (clamped to it).
    ///   - format: the frame layout version to write (default ``MarkerFormat/current``).
    public init(payload: UInt32, strength: Double = MarkerEmbedder.defaultStrength, format: MarkerFormat = .current) {
        self.payload = payload
        self.format = format
        self.strength = min(max(strength, Self.strengthRange.lowerBound), Self.strengthRange.upperBound)
    }

    /// The mark for `samples` (mono, 16 kHz, ``MarkerLayout/sampleRate``; sample 0 starts block 0).
    /// - Returns: as many samples as `samples`, to be added to the audio (resampled to its rate,
    ///   to every channel).
    public func mark(for samples: [Float]) -> [Float] {
        let n = MarkerLayout.frameLength, hop = MarkerLayout.hopLength
        let cells = format.cellsPerFrame, width = MarkerLayout.cellWidth, first = format.firstBin
        let signs = format.cellSigns(payload: payload)
        let delta = Float(pow(10, strength / 20))
        let transform = MarkerTransform()
        var cellPower = [Float](repeating: 0, count: cells)
        let allowance = Self.peakAllowance
        // Equivalent rectangular bandwidth (Glasberg & Moore) at each cell's centre, in cells (62.5 Hz).
        let erbCells: [Float] = (0..<cells).map { c in
            let hz = Float(first + c * width + 1) * Float(MarkerLayout.sampleRate) / Float(n)
            return 24.7 * (4.37 * hz / 1000 + 1) / (Float(MarkerLayout.sampleRate) / Float(n) * Float(width))
        }
        var out = [Float](repeating: 0, count: samples.count + n)
        let scale = 1 / Float(n)
        samples.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                var t = 0
                while t * hop < samples.count {
                    transform.analyse(input, start: t * hop)
                    let q = t % MarkerLayout.blockFrames
                    let spectrum = transform.spectrum
                    for k in 0..<first { spectrum[2 * k] = 0; spectrum[2 * k + 1] = 0 }
                    for c in 0..<cells {
                        var p: Float = 0
                        for b in 0..<width {
                            let k = first + c * width + b
                            p += spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1]
                        }
                        cellPower[c] = p
                    }
                    for c in 0..<cells {
                        // A peak above a quiet neighbour: the mark's frame-to-frame modulation
                        // spreads beyond the cell, outside the peak's critical band at low
                        // frequencies, so the gain is limited to allowance × ERB (in cells) × the
                        // amplitude ratio of the quieter neighbour to the cell.
                        let lower = c > 0 ? cellPower[c - 1] : cellPower[c + 1]
                        let upper = c < cells - 1 ? cellPower[c + 1] : cellPower[c - 1]
                        let g = min(1, allowance * erbCells[c] * (min(lower, upper) / (cellPower[c] + 1e-30)).squareRoot())
                        let gain = signs[q * cells + c] * delta * scale * g * (first + c * width < MarkerFormat.v1.firstBin ? Self.lowBandGain : 1)
                        for b in 0..<width {
                            let k = first + c * width + b
                            spectrum[2 * k] *= gain
                            spectrum[2 * k + 1] *= gain
                        }
                    }
                    for k in (first + cells * width)...(n / 2) { spectrum[2 * k] = 0; spectrum[2 * k + 1] = 0 }
                    transform.synthesise()
                    let base = t * hop
                    for i in 0..<n { output[base + i] += transform.real[i] * transform.window[i] }
                    t += 1
                }
            }
        }
        out.removeLast(n)
        return out
    }
}
