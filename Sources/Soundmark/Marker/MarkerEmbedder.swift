import Foundation

/// Computes the audio marker for a signal: a 32-bit payload repeated every block
/// (``MarkerLayout``, 5.12 s) through the whole signal.
///
/// The mark is patchwork in the short-time spectrum, after audiowmark's published design: in
/// every frame, each cell of the 500–4000 Hz band is scaled by `1 ± δ` (the sign from the
/// cell's sync chip or scrambled coded bit), so the mark added is `±δ` times the audio's own
/// spectrum in that cell. That is the masking model: the mark sits at the same level below the
/// audio in every 62.5 Hz × 32 ms cell (the `strength`, in dB), loud where the audio is loud,
/// silent where it is silent, and nothing outside the band. The mark is resynthesised with the
/// square-root Hann window (overlap-add at 50 %), so it is a signal to *add* to the audio.
public struct MarkerEmbedder: Sendable {
    /// Default strength in dB: the mark's level relative to the audio in every cell of the band.
    public static let defaultStrength: Double = -14
    /// Accepted strengths in dB (−40 is very weak and fragile, −6 clearly audible).
    public static let strengthRange: ClosedRange<Double> = -40 ... -6

    /// The 32-bit payload.
    public let payload: UInt32
    /// The strength in dB (see ``defaultStrength``).
    public let strength: Double

    /// - Parameters:
    ///   - payload: the 32-bit number to carry.
    ///   - strength: dB, within ``strengthRange`` (clamped to it).
    public init(payload: UInt32, strength: Double = MarkerEmbedder.defaultStrength) {
        self.payload = payload
        self.strength = min(max(strength, Self.strengthRange.lowerBound), Self.strengthRange.upperBound)
    }

    /// The mark for `samples` (mono, 16 kHz, ``MarkerLayout/sampleRate``; sample 0 starts block 0).
    /// - Returns: as many samples as `samples`, to be added to the audio (resampled to its rate,
    ///   to every channel).
    public func mark(for samples: [Float]) -> [Float] {
        let n = MarkerLayout.frameLength, hop = MarkerLayout.hopLength
        let cells = MarkerLayout.cellsPerFrame, width = MarkerLayout.cellWidth, first = MarkerLayout.firstBin
        let signs = MarkerLayout.cellSigns(payload: payload)
        let delta = Float(pow(10, strength / 20))
        let transform = MarkerTransform()
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
                        let gain = signs[q * cells + c] * delta * scale
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
