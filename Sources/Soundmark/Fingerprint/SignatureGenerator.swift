import Foundation

/// The fingerprint of some audio: its landmarks and its length.
///
/// A *reference signature* is catalogued (see ``Catalog``); a *query signature* is matched
/// against a catalog. ``dataRepresentation`` serialises a signature; ``init(dataRepresentation:)``
/// reads it back and refuses data made with another ``Configuration/formatVersion``.
public struct Signature: Equatable, Sendable {
    /// The configuration the landmarks were made with.
    public var configuration: Configuration
    /// Landmarks in anchor-frame order.
    public var landmarks: [Landmark]
    /// Length of the audio in samples at `configuration.sampleRate`.
    public var sampleCount: Int64

    /// Creates a signature from its parts.
    public init(configuration: Configuration, landmarks: [Landmark], sampleCount: Int64) {
        self.configuration = configuration
        self.landmarks = landmarks
        self.sampleCount = sampleCount
    }

    /// Length of the audio in seconds.
    public var duration: Double { Double(sampleCount) / Double(configuration.sampleRate) }

    private static let magic: UInt32 = 0x534D_5347 // "SMSG"

    /// Binary form: magic `SMSG`, format version, configuration JSON, sample count, then per
    /// landmark anchor frame (Int32), anchor bin (Float32), target bin (Float32), frame
    /// difference (Int16); all little-endian.
    public var dataRepresentation: Data {
        var w = ByteWriter()
        w.u32(Signature.magic)
        w.u32(UInt32(Configuration.formatVersion))
        let json = (try? JSONEncoder().encode(configuration)) ?? Data()
        w.u32(UInt32(json.count))
        w.bytes.append(contentsOf: json)
        w.u64(UInt64(sampleCount))
        w.u32(UInt32(landmarks.count))
        for l in landmarks {
            w.u32(UInt32(bitPattern: l.anchorFrame))
            w.u32(l.anchorBin.bitPattern)
            w.u32(l.targetBin.bitPattern)
            w.u16(UInt16(bitPattern: l.deltaFrames))
        }
        return Data(w.bytes)
    }

    /// Reads a signature written by ``dataRepresentation``.
    /// - Throws: ``SoundmarkError/invalidSignature(_:)`` for foreign, truncated or other-version data,
    ///   a configuration out of range (see ``Configuration/problem``), a sample count above
    ///   `Int64.max`, or a landmark whose frequency bins are not finite and positive. (Anchor
    ///   frames keep their sign: a query's may be negative; ``PostingCodec/postings(of:)`` skips them.)
    public init(dataRepresentation data: Data) throws {
        var r = ByteReader(Array(data))
        guard r.u32() == Signature.magic else { throw SoundmarkError.invalidSignature("not a soundmark signature") }
        let version = r.u32()
        guard version == UInt32(Configuration.formatVersion) else {
            throw SoundmarkError.invalidSignature("format version \(version ?? 0), this build reads \(Configuration.formatVersion)")
        }
        guard let n = r.u32(), let json = r.take(Int(n)),
              let config = try? JSONDecoder().decode(Configuration.self, from: Data(json)),
              let samples = r.u64(), let count = r.u32() else {
            throw SoundmarkError.invalidSignature("truncated header")
        }
        if let problem = config.problem { throw SoundmarkError.invalidSignature("configuration out of range: \(problem)") }
        guard let sampleCount = Int64(exactly: samples) else {
            throw SoundmarkError.invalidSignature("sample count \(samples) out of range")
        }
        // 14 bytes per landmark: a count the data cannot hold is corrupt (and is not allocated).
        guard Int(count) <= (r.bytes.count - r.position) / 14 else { throw SoundmarkError.invalidSignature("truncated landmarks") }
        var landmarks: [Landmark] = []
        landmarks.reserveCapacity(Int(count))
        for i in 0..<Int(count) {
            guard let f = r.u32(), let a = r.u32(), let t = r.u32(), let d = r.u16() else {
                throw SoundmarkError.invalidSignature("truncated landmarks")
            }
            let landmark = Landmark(anchorFrame: Int32(bitPattern: f), anchorBin: Float(bitPattern: a),
                                    targetBin: Float(bitPattern: t), deltaFrames: Int16(bitPattern: d))
            guard landmark.anchorBin.isFinite, landmark.anchorBin > 0, landmark.targetBin.isFinite, landmark.targetBin > 0 else {
                throw SoundmarkError.invalidSignature("landmark \(i): frequency bin \(landmark.anchorBin), \(landmark.targetBin) (expected finite and > 0)")
            }
            landmarks.append(landmark)
        }
        self.init(configuration: config, landmarks: landmarks, sampleCount: sampleCount)
    }
}

/// Turns mono PCM at the analysis rate into landmarks, incrementally.
///
/// Append samples as they come (any chunk sizes: the result is the same), then take the
/// ``signature()``; or use ``append(_:emit:)`` to receive landmarks as soon as they are decided
/// (a landmark of anchor frame `t` is decided once frame `t + peakFrameRadius +
/// targetZoneMaxFrames` has been analysed, about 0.9 s later with the defaults).
///
/// The stages are ``Spectrogram`` → ``PeakPicker`` → ``LandmarkBuilder``.
public final class SignatureGenerator {
    /// The analysis parameters.
    public let configuration: Configuration
    private let spectrogram: Spectrogram
    private let picker: PeakPicker
    private let builder: LandmarkBuilder
    private var collected: [Landmark] = []
    /// Samples analysed so far (appended samples minus the ``skippedSamples`` dropped at the start).
    public private(set) var sampleCount: Int64 = 0
    /// Samples dropped at the start of the stream before any analysis (default 0): shifts the
    /// frame grid by that many samples (see ``framings(_:configuration:role:)``).
    public let skippedSamples: Int
    private var stillToSkip: Int

    /// What a signature is for.
    public enum Role: Sendable {
        /// A reference signature for a catalog: the configuration's own density and fan-out.
        case reference
        /// A query signature: denser peaks and a larger fan-out
        /// (``Configuration/forQuery``), so that noisy audio still contains the reference's pairs.
        case query
    }

    /// The role the generator analyses for.
    public let role: Role

    /// Creates a generator for `configuration` and `role` (default: reference) that drops the
    /// first `skipping` samples of the stream (default 0).
    public init(configuration: Configuration = Configuration(), role: Role = .reference, skipping: Int = 0) {
        self.configuration = configuration
        self.role = role
        skippedSamples = max(0, skipping)
        stillToSkip = skippedSamples
        let analysis = role == .query ? configuration.forQuery : configuration
        spectrogram = Spectrogram(configuration: analysis)
        picker = PeakPicker(configuration: analysis)
        builder = LandmarkBuilder(configuration: analysis)
    }

    /// Appends mono samples at `configuration.sampleRate` and emits the landmarks they complete.
    /// `spectrum`, when given, sees every spectrogram row (frame, linear power of bins
    /// ``Configuration/minBin`` … ``Configuration/maxBin``, valid during the call) before its peaks.
    public func append(_ samples: UnsafeBufferPointer<Float>, emit: (Landmark) -> Void,
                       spectrum: ((Int, UnsafeBufferPointer<Float>) -> Void)? = nil) {
        var samples = samples
        if stillToSkip > 0 {
            let dropped = min(stillToSkip, samples.count)
            stillToSkip -= dropped
            samples = UnsafeBufferPointer(rebasing: samples[dropped...])
        }
        sampleCount += Int64(samples.count)
        spectrogram.consume(samples) { frame, row in
            spectrum?(frame, row)
            picker.consume(frame: frame, row: row) { builder.consume($0, emit: emit) }
        }
    }

    /// Ends the stream and emits the remaining landmarks.
    public func finish(emit: (Landmark) -> Void) {
        picker.flush { builder.consume($0, emit: emit) }
        builder.flush(emit: emit)
    }

    /// Appends mono samples at `configuration.sampleRate`, keeping the landmarks for ``signature()``.
    public func append(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { p in append(p) { collected.append($0) } }
    }

    /// Ends the stream and returns the signature of everything appended.
    public func signature() -> Signature {
        finish { collected.append($0) }
        let result = Signature(configuration: configuration, landmarks: collected, sampleCount: sampleCount)
        collected = []
        return result
    }

    /// `count` generators (at least 1) whose frame grids fall `hopLength / count` samples apart:
    /// generator `k` drops the first `k · hopLength / count` samples. Fed the same stream, they
    /// give the query and its ``Matcher/match(_:reframed:)`` framings; generator 0 is the plain one.
    public static func framings(_ count: Int, configuration: Configuration, role: Role) -> [SignatureGenerator] {
        let count = max(1, count)
        return (0..<count).map {
            SignatureGenerator(configuration: configuration, role: role, skipping: $0 * configuration.hopLength / count)
        }
    }

    /// Decodes a media file, URL or `-` (stdin) with FFmpeg once and returns `framings`
    /// signatures of it: signature `k` (0-based) is made with the first
    /// `k · hopLength / framings` samples dropped, so the frame grids of the signatures fall
    /// `1 / framings` hop apart. Signature 0 is the plain one. Used to make a query's landmarks
    /// independent of where the clip was cut (see ``Matcher/match(_:reframed:)``).
    /// - Parameters:
    ///   - source: a path, a URL or `-`.
    ///   - role: reference or query analysis (default: reference).
    ///   - framings: number of frame grids, at least 1 (default 1).
    ///   - streamIndex: the audio stream to use, or `nil` for the best one.
    ///   - language: with `streamIndex` `nil`, the ISO 639 language of the audio stream to use
    ///     (see ``MediaDecoder``); `nil` (default) for the best stream.
    ///   - warning: receives one-line warnings (skipped packets).
    /// - Returns: the signatures (`sampleCount` of each counts the samples it analysed) and the
    ///   media's tags (lowercased keys).
    /// - Throws: ``MediaDecodingError`` when the source cannot be read.
    public static func signatures(ofMedia source: String, configuration: Configuration = Configuration(),
                                  role: Role = .reference, framings: Int = 1, streamIndex: Int? = nil,
                                  language: String? = nil,
                                  warning: ((String) -> Void)? = nil) throws -> ([Signature], [String: String]) {
        let decoder = try MediaDecoder(source: source, sampleRate: configuration.sampleRate,
                                       streamIndex: streamIndex, language: language, warning: warning)
        return (try signatures(decoding: decoder, configuration: configuration, role: role, framings: framings), decoder.tags)
    }

    /// Reads `decoder` to its end and returns `framings` signatures of its audio, as
    /// ``signatures(ofMedia:configuration:role:framings:streamIndex:language:warning:)`` does.
    /// - Parameters:
    ///   - decoder: an opened decoder whose output rate is `configuration.sampleRate`.
    ///   - configuration, role, framings: as for `signatures(ofMedia:)`.
    /// - Returns: the signatures; their frames count from the start of the media's playback
    ///   time line (see ``MediaDecoder``).
    ///   - onChunk: sees every decoded chunk (mono samples at `configuration.sampleRate`) before
    ///     it is analysed, e.g. for a digest of the audio (default: none).
    ///   - spectrum: sees every spectrogram row of the first signature's analysis (frame, linear
    ///     power of bins ``Configuration/minBin`` … ``Configuration/maxBin``, valid during the
    ///     call; see ``append(_:emit:spectrum:)``), e.g. for ``Matcher/match(_:reframed:spectrum:)``
    ///     (default: none).
    /// - Throws: ``MediaDecodingError`` when the input cannot be read.
    ///
    /// With more than one framing, the second half of the framings is analysed on a thread of its
    /// own, chunk by chunk as the decoder delivers them (the calling thread decodes and analyses
    /// the first half), so on two free cores a 10 s query's four framings take about half the
    /// wall time; every signature is the same as when analysed on one thread.
    public static func signatures(decoding decoder: MediaDecoder, configuration: Configuration = Configuration(),
                                  role: Role = .reference, framings: Int = 1,
                                  onChunk: (([Float]) -> Void)? = nil,
                                  spectrum: ((Int, UnsafeBufferPointer<Float>) -> Void)? = nil) throws -> [Signature] {
        let generators = SignatureGenerator.framings(framings, configuration: configuration, role: role)
        let here = (generators.count + 1) / 2
        let feed = generators.count > 1 ? ChunkFeed(generators: Array(generators[here...])) : nil
        defer { feed?.finish() }
        while let chunk = try decoder.nextChunk() {
            onChunk?(chunk.samples)
            feed?.send(chunk.samples)
            for (k, generator) in generators[..<here].enumerated() {
                guard k == 0, let spectrum else { generator.append(chunk.samples); continue }
                chunk.samples.withUnsafeBufferPointer { p in generator.append(p, emit: { generator.collected.append($0) }, spectrum: spectrum) }
            }
        }
        feed?.finish()
        return generators.map { $0.signature() }
    }
}

/// Feeds decoded chunks, in order, to generators that run on a thread of their own (see
/// ``SignatureGenerator/signatures(decoding:configuration:role:framings:onChunk:spectrum:)``).
/// The generators are touched only by that thread until ``finish()`` returns.
private final class ChunkFeed: @unchecked Sendable {
    private let generators: [SignatureGenerator]
    private let condition = NSCondition()
    private var pending: [[Float]] = []
    private var closed = false
    private let done = DispatchSemaphore(value: 0)
    private var finished = false
    /// Chunks waiting at most; the decoder waits when the analysis falls this far behind.
    private static let backlog = 64

    init(generators: [SignatureGenerator]) {
        self.generators = generators
        Thread.detachNewThread { [self] in
            while let chunk = self.take() {
                for g in self.generators { g.append(chunk) }
            }
            self.done.signal()
        }
    }

    /// Queues a chunk for the generators.
    func send(_ chunk: [Float]) {
        condition.lock()
        while pending.count >= ChunkFeed.backlog { condition.wait() }
        pending.append(chunk)
        condition.broadcast()
        condition.unlock()
    }

    private func take() -> [Float]? {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty && !closed { condition.wait() }
        if pending.isEmpty { return nil }
        let chunk = pending.removeFirst()
        condition.broadcast()
        return chunk
    }

    /// Waits until every chunk sent has been analysed (again: returns at once).
    func finish() {
        guard !finished else { return }
        finished = true
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
        done.wait()
    }
}

extension SignatureGenerator {

    /// Decodes a media file, URL or `-` (stdin) with FFmpeg and returns its signature.
    /// - Parameters:
    ///   - source: a path, a URL or `-`.
    ///   - configuration: the analysis parameters (default: the defaults).
    ///   - role: reference or query analysis (default: reference).
    ///   - streamIndex: the audio stream to use, or `nil` for the best one.
    ///   - language: with `streamIndex` `nil`, the ISO 639 language of the audio stream to use;
    ///     `nil` (default) for the best stream.
    ///   - warning: receives one-line warnings (skipped packets).
    /// - Returns: the signature and the media's tags (lowercased keys).
    /// - Throws: ``MediaDecodingError`` when the source cannot be read.
    public static func signature(ofMedia source: String, configuration: Configuration = Configuration(),
                                 role: Role = .reference, streamIndex: Int? = nil, language: String? = nil,
                                 warning: ((String) -> Void)? = nil) throws -> (Signature, [String: String]) {
        let (signatures, tags) = try self.signatures(ofMedia: source, configuration: configuration, role: role,
                                                     streamIndex: streamIndex, language: language, warning: warning)
        return (signatures[0], tags)
    }
}
