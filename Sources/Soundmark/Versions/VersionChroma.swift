import Foundation

extension ChromaAccumulator {
    /// The chroma of a decoder's audio to its end (the decoder's output rate must be
    /// `configuration.sampleRate`). Frames count from the first decoded sample.
    /// - Throws: ``MediaDecodingError`` when the input cannot be read.
    public static func chroma(decoding decoder: MediaDecoder, configuration: Configuration = Configuration(),
                              features: VersionFeatureConfiguration = VersionFeatureConfiguration()) throws -> ChromaSequence {
        let spectrogram = Spectrogram(configuration: configuration)
        let accumulator = ChromaAccumulator(configuration: configuration, features: features)
        while let chunk = try decoder.nextChunk() {
            spectrogram.consume(chunk.samples) { frame, row in accumulator.consume(frame: frame, row: row) }
        }
        return accumulator.finish()
    }
}
