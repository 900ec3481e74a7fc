import Foundation

/// A spectrogram peak: a strict local maximum of the power spectrogram.
public struct Peak: Equatable, Sendable {
    /// Frame index (hops since the start of the stream).
    public var frame: Int
    /// Bin index with sub-bin precision from parabolic interpolation of the dB values around
    /// the maximum (bin `b` is `b · sampleRate / frameLength` Hz).
    public var bin: Float
    /// Power at the peak in dB relative to a full-scale sine.
    public var power: Float

    /// Creates a peak at `frame` and (fractional) `bin` with `power` in dB.
    public init(frame: Int, bin: Float, power: Float) {
        self.frame = frame
        self.bin = bin
        self.power = power
    }
}

/// Streaming peak picker ("constellation map", Wang 2003).
///
/// A cell (frame `t`, bin `b`) of the power spectrogram (linear rows from ``Spectrogram``) is a
/// peak when it is the strict maximum of
/// the neighbourhood `t ± peakFrameRadius` frames × `b ± peakBinRadius` bins and its power is
/// at least `peakFloor`. Ties are broken towards the earlier frame and the lower bin: a cell
/// must beat earlier equal cells strictly, so a perfectly steady tone yields one peak, at its
/// onset, and no run of landmarks that could line up with any other steady tone. The decision
/// for frame `t`
/// is made when frame `t + peakFrameRadius` arrives (or at ``flush(emit:)``); frames outside the
/// stream count as −∞, so the peaks do not depend on how the input was chunked.
///
/// The frequency maximum uses the van Herk / Gil–Werman running-max algorithm (three
/// comparisons per cell); the time maximum is checked only for cells that pass the frequency
/// test.
public final class PeakPicker {
    /// The analysis parameters.
    public let configuration: Configuration
    private let width: Int          // bins per row
    private let radius: Int         // frame radius
    private let binRadius: Int
    private let floor: Float
    private let lowBin: Int
    /// Ring of the last 2·radius+1 rows (`slots`), row after row: raw power and row-wise
    /// running maxima (`width` values per row).
    private let slots: Int
    private var raw: [Float]
    private var rowMax: [Float]
    private var rowFrame: [Int]
    private var newest = -1          // frame index of the newest row stored
    private var decided = 0          // next frame to decide
    private var g: [Float], h: [Float], padded: [Float]

    /// Creates a peak picker for rows of `configuration.minBin ... configuration.maxBin`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        width = configuration.maxBin - configuration.minBin + 1
        radius = configuration.peakFrameRadius
        binRadius = configuration.peakBinRadius
        floor = Float(pow(10, configuration.peakFloor / 10))
        lowBin = configuration.minBin
        slots = 2 * radius + 1
        raw = [Float](repeating: -.infinity, count: slots * width)
        rowMax = raw
        rowFrame = Array(repeating: -1, count: slots)
        let paddedCount = width + 2 * binRadius
        padded = [Float](repeating: -.infinity, count: paddedCount)
        g = padded
        h = padded
    }

    /// Adds spectrogram row `frame` (linear power, the next frame in order) and emits the peaks of every frame
    /// that became decidable, in frame order and, within a frame, in bin order.
    public func consume(frame: Int, row: UnsafeBufferPointer<Float>, emit: (Peak) -> Void) {
        precondition(frame == newest + 1, "rows must arrive in order")
        let slot = frame % slots
        raw.withUnsafeMutableBufferPointer { dst in
            for i in 0..<width { dst[slot * width + i] = row[i] }
        }
        computeRowMax(slot: slot)
        rowFrame[slot] = frame
        newest = frame
        while decided + radius <= newest {
            decide(frame: decided, emit: emit)
            decided += 1
        }
    }

    /// Decides the remaining frames at the end of the stream.
    public func flush(emit: (Peak) -> Void) {
        while decided <= newest {
            decide(frame: decided, emit: emit)
            decided += 1
        }
    }

    /// Running maximum over ±binRadius of one row (van Herk / Gil–Werman).
    private func computeRowMax(slot: Int) {
        let w = 2 * binRadius + 1
        let n = padded.count
        raw.withUnsafeBufferPointer { rows in
            let src = rows.baseAddress! + slot * width
            padded.withUnsafeMutableBufferPointer { p in
                g.withUnsafeMutableBufferPointer { g in
                    h.withUnsafeMutableBufferPointer { h in
                        for i in 0..<width { p[binRadius + i] = src[i] }
                        var i = 0
                        while i < n {
                            let end = min(i + w, n)
                            g[i] = p[i]
                            var k = i + 1
                            while k < end { g[k] = max(g[k - 1], p[k]); k += 1 }
                            h[end - 1] = p[end - 1]
                            k = end - 2
                            while k >= i { h[k] = max(h[k + 1], p[k]); k -= 1 }
                            i = end
                        }
                        rowMax.withUnsafeMutableBufferPointer { maxima in
                            let out = maxima.baseAddress! + slot * width
                            for b in 0..<width {
                                // window [b, b + w - 1] in padded coordinates
                                let right = min(b + w - 1, n - 1)
                                out[b] = max(h[b], g[right])
                            }
                        }
                    }
                }
            }
        }
    }

    private func decide(frame: Int, emit: (Peak) -> Void) {
        let slot = frame % slots
        raw.withUnsafeBufferPointer { rows in
            rowMax.withUnsafeBufferPointer { maxRows in
                decide(frame: frame, values: rows.baseAddress! + slot * width, maxima: maxRows.baseAddress! + slot * width,
                       maxRows: maxRows.baseAddress!, emit: emit)
            }
        }
    }

    /// Emits the peaks of frame `frame`, whose raw row and running maxima are `values` and
    /// `maxima` (`maxRows`: the running maxima of every slot).
    private func decide(frame: Int, values: UnsafePointer<Float>, maxima: UnsafePointer<Float>, maxRows: UnsafePointer<Float>,
                        emit: (Peak) -> Void) {
        for b in 0..<width {
            let v = values[b]
            guard v >= floor, v == maxima[b] else { continue }
            // Strict in frequency towards lower bins.
            var ok = true
            var k = max(0, b - binRadius)
            while k < b { if values[k] >= v { ok = false; break }; k += 1 }
            if !ok { continue }
            // Strict in time towards earlier frames, non-strict towards later ones.
            for dt in 1...max(radius, 1) where radius > 0 {
                let before = frame - dt
                if before >= 0 && before > newest - slots {
                    let s = before % slots
                    if rowFrame[s] == before && maxRows[s * width + b] >= v { ok = false; break }
                }
                let after = frame + dt
                if after <= newest {
                    let s = after % slots
                    if maxRows[s * width + b] > v { ok = false; break }
                }
            }
            if !ok { continue }
            // Parabolic interpolation on dB values of the peak and its two neighbours.
            let db = 10 * log10f(v)
            var delta: Float = 0
            if b > 0 && b < width - 1 {
                let l = 10 * log10f(max(values[b - 1], 1e-20)), r = 10 * log10f(max(values[b + 1], 1e-20))
                let d = l - 2 * db + r
                if d < 0 { delta = max(-0.5, min(0.5, 0.5 * (l - r) / d)) }
            }
            emit(Peak(frame: frame, bin: Float(lowBin + b) + delta, power: db))
        }
    }
}
