/// A block of decoded mono PCM at the analysis rate.
///
/// Samples are 32-bit float, nominally in -1...1 (a loud in-phase multichannel
/// source can exceed that slightly after the standard downmix).
public struct AudioChunk: Sendable, Equatable {
    /// Index of `samples[0]`, in samples at the output rate, on the media's playback
    /// time line (0 = the container's start time; see ``MediaDecoder``): silence that
    /// precedes late audio or fills lost audio is counted, so `firstSample / rate` is
    /// the time a player shows.
    public var firstSample: Int64
    /// Mono samples at the decoder's output rate (Hz).
    public var samples: [Float]

    /// Creates a chunk starting at `firstSample` (samples at the output rate).
    public init(firstSample: Int64, samples: [Float]) {
        self.firstSample = firstSample
        self.samples = samples
    }
}
