import Foundation

/// Parameters of the version (cover-song) features: 12-bin chroma pooled over fixed blocks of
/// spectrogram frames (beat-free: tempo is left to the alignment, ``SubsequenceDTW``).
public struct VersionFeatureConfiguration: Equatable, Sendable {
    /// Spectrogram frames pooled into one chroma frame. Default 25: 25 × 16 ms = 0.4 s at the
    /// default hop (128 samples at 8 kHz), fine enough to place a song start within a second,
    /// coarse enough that a 4-minute reference is 600 frames.
    public var framesPerBlock: Int = 25
    /// Lowest frequency counted, Hz. Default 100 (the spectrogram rows start at
    /// ``Configuration/minFrequency``, 150 Hz, so 150 in practice): below, one FFT bin of
    /// 7.8 Hz spans more than a semitone.
    public var minFrequency: Double = 100
    /// Highest frequency counted, Hz. Default 2000: harmonics above blur the pitch classes
    /// (Ellis's chroma stops at about 2 kHz too).
    public var maxFrequency: Double = 2000
    /// Blocks whose mean power per frame is below this level (dB re a full-scale sine, summed
    /// over the counted bins) are silent: a zero chroma vector. Default −70 dB.
    public var silenceFloor: Double = -70
    /// Count only bins that are local maxima of their frame's spectrum (a bin at least as
    /// strong as both neighbours), as the HPCP does with spectral peaks (E. Gómez, "Tonal
    /// description of music audio signals", PhD thesis, UPF 2006): noise, crowd and the skirts
    /// of the window spread over every pitch class and are left out. Default `true`: on the
    /// public live excerpts it raised the answers named ahead of every non-catalog excerpt's
    /// lead from 54 to 61 of 70 (see the issue note).
    public var peaksOnly: Bool = true

    /// The defaults.
    public init() {}
}

/// A chroma sequence: one 12-bin pitch-class profile per block (bin 0 = C, 1 = C♯ … 11 = B),
/// each non-negative with its largest bin 1 (all zero in silence).
///
/// After D. Ellis & G. Poliner, "Identifying 'cover songs' with chroma features and dynamic
/// programming beat tracking" (ICASSP 2007), without the beat tracking: frames are fixed blocks
/// and the tempo is absorbed by the alignment.
public struct ChromaSequence: Equatable, Sendable {
    /// Seconds per chroma frame (`framesPerBlock × hopDuration`).
    public var frameDuration: Double
    /// `12 × count` values, frame-major.
    public var values: [Float]

    /// Number of frames.
    public var count: Int { values.count / 12 }
    /// Duration covered, seconds.
    public var duration: Double { Double(count) * frameDuration }

    /// A sequence from its frames.
    public init(frameDuration: Double, values: [Float]) {
        precondition(values.count % 12 == 0, "chroma values come in frames of 12")
        self.frameDuration = frameDuration
        self.values = values
    }

    /// The frames `range` (clamped) as a new sequence.
    public func slice(_ range: Range<Int>) -> ChromaSequence {
        let lo = max(0, min(count, range.lowerBound)), hi = max(lo, min(count, range.upperBound))
        return ChromaSequence(frameDuration: frameDuration, values: Array(values[(lo * 12)..<(hi * 12)]))
    }

    /// Storage form: u32 little-endian frame duration in microseconds, then one byte per bin
    /// (value × 255, rounded). 12 bytes per frame: 30 bytes per second at 0.4 s frames.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + values.count)
        let micros = UInt32(clamping: Int((frameDuration * 1e6).rounded()))
        for k in 0..<4 { out.append(UInt8((micros >> (8 * UInt32(k))) & 0xff)) }
        for v in values { out.append(UInt8(max(0, min(255, (v * 255).rounded())))) }
        return out
    }

    /// Reads ``encoded()``; `nil` when the bytes are not a chroma sequence.
    public init?(encoded bytes: [UInt8]) {
        guard bytes.count >= 4, (bytes.count - 4) % 12 == 0 else { return nil }
        var micros: UInt32 = 0
        for k in 0..<4 { micros |= UInt32(bytes[k]) << (8 * UInt32(k)) }
        guard micros > 0 else { return nil }
        frameDuration = Double(micros) / 1e6
        values = bytes[4...].map { Float($0) / 255 }
    }
}

/// Builds a ``ChromaSequence`` from spectrogram rows (the fingerprint's own FFTW spectrum:
/// ``Spectrogram`` rows of power in bins ``Configuration/minBin`` … ``Configuration/maxBin``),
/// so that `catalog add` gets the version features without a second FFT.
///
/// Each bin's magnitude (square root of its power) is added to the pitch class of its centre
/// frequency (MIDI note `69 + 12·log2(f / 440)`, rounded) and summed over the block's frames;
/// only spectral peaks count (``VersionFeatureConfiguration/peaksOnly``).
public final class ChromaAccumulator {
    /// The fingerprint configuration whose rows are consumed.
    public let configuration: Configuration
    /// The chroma parameters.
    public let features: VersionFeatureConfiguration
    private let pitchClass: [Int8]   // per row index; -1: not counted
    private var block = [Double](repeating: 0, count: 12)
    private var blockPower = 0.0
    private var framesInBlock = 0
    private var nextFrame = 0
    private var values: [Float] = []

    /// An accumulator for rows of `configuration`'s spectrogram.
    public init(configuration: Configuration = Configuration(), features: VersionFeatureConfiguration = VersionFeatureConfiguration()) {
        self.configuration = configuration
        self.features = features
        let lo = configuration.minBin, hi = configuration.maxBin
        pitchClass = (lo...hi).map { bin in
            let f = Double(bin) * configuration.binWidth
            guard f >= features.minFrequency, f <= features.maxFrequency else { return -1 }
            let midi = Int((69 + 12 * log2(f / 440)).rounded())
            return Int8(((midi % 12) + 12) % 12)
        }
    }

    /// Consumes the spectrogram row of frame `frame` (frames must come in order; a gap is
    /// treated as silent frames).
    public func consume(frame: Int, row: UnsafeBufferPointer<Float>) {
        while nextFrame < frame { addFrame(nil) }
        addFrame(row)
    }

    private func addFrame(_ row: UnsafeBufferPointer<Float>?) {
        if let row {
            let n = min(row.count, pitchClass.count)
            for i in 0..<n {
                let pc = Int(pitchClass[i])
                guard pc >= 0 else { continue }
                let p = Double(row[i])
                blockPower += p
                if features.peaksOnly && ((i > 0 && row[i - 1] > row[i]) || (i + 1 < row.count && row[i + 1] > row[i])) { continue }
                block[pc] += p.squareRoot()
            }
        }
        nextFrame += 1
        framesInBlock += 1
        if framesInBlock == features.framesPerBlock { closeBlock() }
    }

    private func closeBlock() {
        let meanPower = blockPower / Double(max(1, framesInBlock))
        let peak = block.max() ?? 0
        if peak > 0 && 10 * log10(max(meanPower, 1e-30)) >= features.silenceFloor {
            for v in block { values.append(Float(v / peak)) }
        } else {
            values.append(contentsOf: [Float](repeating: 0, count: 12))
        }
        block = [Double](repeating: 0, count: 12)
        blockPower = 0
        framesInBlock = 0
    }

    /// Ends the stream (a partial last block is dropped) and returns the sequence.
    public func finish() -> ChromaSequence {
        ChromaSequence(frameDuration: Double(features.framesPerBlock) * configuration.hopDuration, values: values)
    }

    /// The chroma of mono samples at `configuration.sampleRate` (a convenience for tests and tools).
    public static func chroma(of samples: [Float], configuration: Configuration = Configuration(),
                              features: VersionFeatureConfiguration = VersionFeatureConfiguration()) -> ChromaSequence {
        let spectrogram = Spectrogram(configuration: configuration)
        let accumulator = ChromaAccumulator(configuration: configuration, features: features)
        spectrogram.consume(samples) { frame, row in accumulator.consume(frame: frame, row: row) }
        return accumulator.finish()
    }
}
