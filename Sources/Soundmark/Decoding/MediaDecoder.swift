import Foundation
import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Streaming FFmpeg decoder: opens any input FFmpeg can read, picks one audio
/// stream, and yields mono Float32 PCM resampled to a fixed analysis rate.
///
/// Sample positions are on the media's playback time line (see ``PlaybackClock``): sample
/// `n` plays at `n / sampleRate` seconds after the container's start time, as a player shows
/// it. Audio that starts after the container's start (a video whose sound starts later) is
/// preceded by silence, and audio lost in the middle (missing packets, undecodable frames)
/// becomes silence of the same length with a warning ("2.0 s of audio missing at 50.0 s");
/// time stamp jitter below 50 ms is ignored (samples are counted). Memory use is
/// flat: audio is produced chunk by chunk (about 1 s each) and never accumulated.
///
/// Multichannel input is downmixed with swresample's standard matrix for the input
/// layout (inputs with an unknown layout get FFmpeg's default layout for their channel
/// count), so e.g. a 5.1 file with content only in the centre channel keeps its level. A
/// stereo input whose channels are out of phase gives their difference instead (see
/// ``antiphaseRatio``), with a warning.
///
/// An Ogg Vorbis file, pipe or network stream FFmpeg refuses (FFmpeg 5.1 rejects some old
/// encoders' headers) is decoded with libvorbisfile instead (a network stream is fetched again
/// from its start), with a warning that gives FFmpeg's reason; when nothing reads an input
/// FFmpeg recognised (or a network stream), `cannotOpen` carries FFmpeg's own message.
///
/// FFmpeg's own console logging is silenced; problems that do not stop decoding
/// (a corrupt packet skipped, a premature end of input) are reported through the
/// `warning` callback as one-line messages.
///
/// Not thread-safe: use one instance from one thread at a time.
public final class MediaDecoder {
    /// Container/stream tags with lowercased keys ("title", "artist", "album", ...).
    /// Container tags win; tags of the decoded audio stream fill in missing keys.
    public let tags: [String: String]
    /// Index (in the container's stream list) of the audio stream being decoded.
    public let streamIndex: Int
    /// Every audio stream of the input (attached pictures excluded), in container order.
    public let audioStreams: [AudioStreamInfo]
    /// The audio stream being decoded (one of ``audioStreams``).
    public var chosenStream: AudioStreamInfo {
        audioStreams.first { $0.index == streamIndex }
            ?? AudioStreamInfo(index: streamIndex, language: nil, codec: "?", channels: 0, isDefault: false)
    }
    /// Short description of the input stream, e.g. "mp3, 44100 Hz, 2 channels".
    public let inputDescription: String
    /// The decoded stream's own sample rate in Hz (before resampling to the output rate), or 0 when unknown.
    public var inputSampleRate: Int { Int(codecContext?.pointee.sample_rate ?? 0) }
    /// Total output samples (at the output rate, in Hz given to `init`) returned by
    /// `nextChunk()` so far, silence for a late start or a hole included; equals the
    /// `firstSample` of the next chunk (samples on the playback time line).
    public private(set) var samplesProduced: Int64 = 0
    /// The end of the audio on the playback time line, in output samples (one past the last
    /// sample), once `nextChunk()` has returned `nil`; `nil` before. Nothing soundmark reports
    /// about this input should end later than this.
    public var audioEnd: Int64? { finished && pending.isEmpty && silence.isEmpty ? samplesProduced : nil }
    /// The playback duration of the input in seconds, once `nextChunk()` has returned `nil`
    /// (`nil` before): the end of the audio (``audioEnd`` / rate) or, for a file with video
    /// whose container knows a longer duration, that duration (what a player shows).
    public var playbackDuration: Double? {
        guard let end = audioEnd else { return nil }
        let audio = Double(end) / Double(outputRate)
        return containerDuration.map { max($0, audio) } ?? audio
    }

    // MARK: - Private state

    private let source: String
    private let outputRate: Int32
    private let chunkSize: Int
    private let isNetwork: Bool
    private let warningHandler: ((String) -> Void)?

    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    /// A local file whose content no demuxer recognised when it was opened (FFmpeg's probe
    /// score is at most `AVPROBE_SCORE_EXTENSION`: the format was chosen by the file's name):
    /// when it yields no packet at all it is refused as no media, not reported as silent.
    private let formatFromNameOnly: Bool
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?

    /// swresample context (opaque `SwrContext *`) and the input format it was built for.
    private var resampler: OpaquePointer?
    /// For 2-channel input whose channels turned out to be out of phase (see
    /// ``antiphaseRatio``): a resampler of (left − right) / 2, fed every frame from then on.
    private var sideResampler: OpaquePointer?
    /// Energies of (left + right) / 2 and (left − right) / 2 of a 2-channel input, decaying
    /// over about 1 s of input.
    private var stereoEnergy = (mid: 0.0, side: 0.0)
    /// The same energies decaying over about 0.25 s: the switch back to the sum follows them,
    /// so the in-phase audio after a loud passage out of phase is read from the sum again soon.
    private var recentEnergy = (mid: 0.0, side: 0.0)
    /// Input samples behind ``stereoEnergy``, decaying alike.
    private var stereoSamples = 0.0
    /// Whether the output is (left − right) / 2 (see ``antiphaseRatio``).
    private var usingSide = false
    private var sideScratch: [Float] = []
    private var resamplerRate: Int32 = 0
    private var resamplerFormat: Int32 = -1
    private var resamplerLayout = AVChannelLayout()

    private var pending: [Float] = []
    /// Silence still to be emitted: `count` zero samples before `pending[offset]`, sorted by offset.
    private var silence: [(offset: Int, count: Int)] = []
    private var clock: PlaybackClock
    /// The container's start time in seconds (`nil` until known: then the first frame's time stamp).
    private var origin: Double?
    /// For a file with video: the container's duration in seconds, the playback duration's floor.
    private let containerDuration: Double?
    /// Raw elementary stream (MP3, ADTS AAC, AC-3, ...): its time stamps are derived from a
    /// count of frames, so lost frames are estimated from the bytes skipped.
    private let isRawStream: Bool
    /// Raw streams: the bytes lost to damage, turned into seconds (see ``RawStreamLoss``).
    private var rawStreamLoss = RawStreamLoss()
    /// Raw streams: the input's read position minus the end of the packet just read, bytes.
    private var readAhead: Int64?
    /// Raw streams: where the hole being measured lies, in `pending` (after the resampler was
    /// drained) and in output samples; chunks are held back until it is decided (at most 4 s).
    private var holeMark: (offset: Int, count: Int64)?
    /// A packet or frame failed to decode since the last good frame.
    private var damageSinceLastFrame = false
    /// Raw streams: output samples estimated lost (from bytes skipped) and not yet filled, so
    /// that small losses add up until they are worth a gap instead of being forgotten.
    private var rawLoss: Int64 = 0
    /// Standard input's I/O context, when reading `-` (freed after the format context).
    private var standardInput: StandardInput?
    /// libvorbisfile, for an Ogg Vorbis file FFmpeg refused (then there is no format context).
    private var vorbisFile: VorbisFileReader?
    /// Bounds the input read without audio coming out of it (see ``GarbageBudget``).
    private let budget: GarbageBudget
    /// The end of the real audio (output samples on the playback time line) when the stream
    /// declares it (an MP3's LAME header: frames − encoder delay − padding): decoded audio past
    /// it is encoder padding and dropped, unless more than ``limitSlack`` follows (then the
    /// declaration was not about the whole stream, e.g. concatenated MP3s, and is dropped).
    private var outputLimit: Int64?
    private let limitSlack: Int64
    private var scratch: [Float] = []
    private var finished = false
    private var packetsDecoded = 0
    private var lastWarning: String?
    /// `networkTimeout` of init, seconds, for the stall warning (0 for UDP, which ends quietly).
    private let networkTimeout: Double
    private var warningsEmitted = 0
    /// Corrupt-data warnings from before the first decoded audio (see ``warn(_:holdable:)``).
    private var heldWarnings: [String] = []
    /// Whether the input ended well before the length its header declares (a warning said so;
    /// see `warnIfTruncated()`), once `nextChunk()` has returned `nil`.
    public private(set) var isTruncated = false
    private static let maxWarnings = 25

    private static let configureLogging: Void = {
        FFmpegLog.install()
    }()

    // MARK: - Init

    /// Opens `source` and prepares to decode one audio stream.
    ///
    /// - Parameters:
    ///   - source: a file path, `"-"` for standard input, or a URL FFmpeg's protocols
    ///     understand (`http://`, `udp://`, `file:`, ...). UDP/RTP inputs get a 5 s read
    ///     timeout (unless the URL sets one) and end when the sender stops.
    ///   - sampleRate: output rate in Hz (mono Float32), e.g. 8000–192000.
    ///   - streamIndex: `nil` picks the best audio stream (`av_find_best_stream`,
    ///     never an attached picture); otherwise the index of the stream to decode.
    ///   - language: with `streamIndex` `nil`, picks an audio stream whose language tag is this
    ///     ISO 639 code ("eng", "ger" or "deu", or the two-letter "en", "de"): the default-flagged
    ///     one among them, else the first. When no audio stream carries a language tag (most
    ///     audio files), the best stream is used with a warning. `nil` (default): language tags
    ///     are not looked at.
    ///   - warning: receives one-line warnings (corrupt packet skipped, input ended
    ///     early, ...); may be `nil`.
    ///   - networkTimeout: for other network inputs (http, https, tcp, rtmp, HLS, ...), seconds
    ///     without any data after which a connect or read gives up (FFmpeg's `rw_timeout`), so a
    ///     stalled server ends the input ("input ended early") instead of hanging. Default 15;
    ///     ignored for files, pipes and UDP, and when the URL sets `rw_timeout` itself.
    ///   - openTimeout: for a named pipe (FIFO), seconds to wait for its first bytes (or its
    ///     writer's close) before it is refused; 0 waits without end. Default 10.
    /// - Throws: `MediaDecodingError.cannotOpen` (missing/unreadable/empty/non-media input, a
    ///   named pipe nothing was written to in time, a stream sample rate outside
    ///   ``inputSampleRates``, a PCM header of 1-7-bit samples, or an invalid `sampleRate`), `.noAudioStream`, `.streamNotAudio` (bad
    ///   `streamIndex`), `.noStreamInLanguage` (streams are tagged, none with `language`; the
    ///   error lists the audio streams), `.decoderUnavailable`.
    public init(source: String, sampleRate: Int, streamIndex: Int? = nil, language: String? = nil,
                warning: ((String) -> Void)? = nil, networkTimeout: Double = 15, openTimeout: Double = 10) throws {
        _ = MediaDecoder.configureLogging
        guard sampleRate >= 1000, sampleRate <= 768_000 else {
            throw MediaDecodingError.cannotOpen(path: source,
                                           reason: "invalid output sample rate \(sampleRate) Hz")
        }
        self.source = source
        self.outputRate = Int32(sampleRate)
        self.chunkSize = sampleRate // 1 s per chunk
        self.warningHandler = warning

        let opened: Opened
        let target = MediaDecoder.resolve(source)
        let standardInput = target.isStandardInput ? try StandardInput()
            : try target.namedPipe.map { try StandardInput.namedPipe($0, source: source, timeout: openTimeout) }
        let budget = GarbageBudget()
        self.budget = budget
        do {
            opened = try MediaDecoder.open(source: source, requestedStream: streamIndex, language: language, warning: warning,
                                           networkTimeout: networkTimeout, standardInput: standardInput, budget: budget)
        } catch let error as MediaDecodingError {
            guard let fallback = MediaDecoder.vorbisFallback(source: source, requestedStream: streamIndex, language: language,
                                                             error: error, standardInput: standardInput, warning: warning,
                                                             networkTimeout: networkTimeout) else {
                throw error
            }
            opened = fallback
        }
        // UDP ends on its own 5 s timeout when the sender stops: that is its normal end.
        self.networkTimeout = opened.isUDP ? 0 : networkTimeout
        self.isNetwork = opened.isNetwork
        self.formatContext = opened.format
        self.codecContext = opened.codec
        self.streamIndex = opened.streamIndex
        self.audioStreams = opened.audioStreams
        self.tags = opened.tags
        self.inputDescription = opened.description
        self.clock = PlaybackClock(rate: sampleRate)
        self.origin = opened.origin
        self.containerDuration = opened.containerDuration
        self.isRawStream = opened.isRawStream
        self.standardInput = opened.standardInput
        self.vorbisFile = opened.vorbisFile
        // FFmpeg scores its guess when it opens the input: above AVPROBE_SCORE_EXTENSION (50) only
        // when a demuxer recognised the content (a text file named .flac scores 1).
        self.formatFromNameOnly = target.localPath != nil && target.namedPipe == nil
            && opened.format.map { $0.pointee.probe_score <= AVPROBE_SCORE_EXTENSION } ?? false
        if let info = opened.gapless {
            outputLimit = Int64((Double(info.validSamples) * Double(sampleRate) / Double(info.sampleRate)).rounded())
            limitSlack = Int64(3 * info.samplesPerFrame * sampleRate / info.sampleRate) + 64
        } else {
            limitSlack = 0
        }
        self.packet = av_packet_alloc()
        self.frame = av_frame_alloc()
        if packet == nil || frame == nil {
            throw MediaDecodingError.readFailed(path: source, reason: "out of memory")
        }
    }

    deinit {
        if resampler != nil { swr_free(&resampler) }
        if sideResampler != nil { swr_free(&sideResampler) }
        av_channel_layout_uninit(&resamplerLayout)
        if frame != nil { av_frame_free(&frame) }
        if packet != nil { av_packet_free(&packet) }
        if codecContext != nil { avcodec_free_context(&codecContext) }
        budget.format = nil
        if formatContext != nil { avformat_close_input(&formatContext) }
        standardInput?.close()
    }

    /// Decodes an entire input into one array of mono samples at `sampleRate` Hz.
    ///
    /// Convenience for short inputs and tests; for long inputs iterate `nextChunk()`
    /// instead (this holds the whole signal in memory: 4 bytes per sample).
    /// - Parameters: as for `init(source:sampleRate:streamIndex:warning:)`.
    /// - Returns: all decoded samples (count / `sampleRate` = duration in seconds).
    /// - Throws: any `MediaDecodingError` from `init` or `nextChunk()`.
    public static func decodeAll(source: String, sampleRate: Int, streamIndex: Int? = nil,
                                 warning: ((String) -> Void)? = nil) throws -> [Float] {
        let decoder = try MediaDecoder(source: source, sampleRate: sampleRate,
                                       streamIndex: streamIndex, warning: warning)
        var all: [Float] = []
        while let chunk = try decoder.nextChunk() {
            all.append(contentsOf: chunk.samples)
        }
        return all
    }

    // MARK: - Decoding

    /// Returns the next block of output samples (1 s = `sampleRate` samples, except
    /// the last one, which may be shorter), or `nil` once the input is exhausted.
    ///
    /// A corrupt or undecodable packet is skipped with a warning and decoding goes on (the
    /// audio it held becomes silence when it is worth 50 ms or more: see ``PlaybackClock``);
    /// a truncated file or a read error after audio has started simply ends the input
    /// (with a warning). Chunks are contiguous: each `firstSample` equals the previous
    /// `firstSample + samples.count`, silence for a late start or a hole included. An MP3
    /// whose LAME header declares its length ends there, from a file or a pipe alike (the
    /// encoder's padding is dropped).
    /// - Throws: `MediaDecodingError.readFailed` only for unrecoverable errors (out of
    ///   memory, resampler failure, an input that fails before yielding any packet).
    public func nextChunk() throws -> AudioChunk? {
        while !finished {
            if let limit = outputLimit, samplesProduced + Int64(pendingCount) >= limit {
                // Past the declared end: padding (decide at the end of the input) or more audio.
                if samplesProduced + Int64(pendingCount) - limit > limitSlack {
                    outputLimit = nil
                    continue
                }
            } else if pendingCount >= chunkSize {
                // A hole being measured holds the chunk back, for at most 4 s of output (damage
                // that keeps recurring would otherwise hold a live stream's audio without end).
                if holeMark == nil { break }
                if pendingCount >= 4 * chunkSize {
                    if let seconds = rawStreamLoss.finish() { fillHole(seconds: seconds) }
                    holeMark = nil
                    break
                }
            }
            try pump()
        }
        if finished, let limit = outputLimit {
            dropLast(samplesProduced + Int64(pendingCount) - limit)
        }
        guard pendingCount > 0 else { return nil }
        if !heldWarnings.isEmpty {
            let held = heldWarnings
            heldWarnings = []
            for message in held { warn(message) }
        }
        let wanted = min(chunkSize, pendingCount)
        var samples: [Float] = []
        samples.reserveCapacity(wanted)
        var consumed = 0 // of pending
        while samples.count < wanted {
            if let gap = silence.first, gap.offset == consumed {
                let k = min(gap.count, wanted - samples.count)
                samples.append(contentsOf: repeatElement(0, count: k))
                if k == gap.count { silence.removeFirst() } else { silence[0].count -= k }
                continue
            }
            let limit = silence.first?.offset ?? pending.count
            let k = min(limit - consumed, wanted - samples.count)
            samples.append(contentsOf: pending[consumed..<(consumed + k)])
            consumed += k
        }
        pending.removeSubrange(..<consumed)
        for i in silence.indices { silence[i].offset -= consumed }
        let chunk = AudioChunk(firstSample: samplesProduced, samples: samples)
        samplesProduced += Int64(wanted)
        return chunk
    }

    /// Removes the last `count` samples not yet returned (silence or decoded).
    private func dropLast(_ count: Int64) {
        var left = Int(max(0, count))
        while left > 0 {
            if let gap = silence.last, gap.offset == pending.count {
                let k = min(left, gap.count)
                if k == gap.count { silence.removeLast() } else { silence[silence.count - 1].count -= k }
                left -= k
            } else if !pending.isEmpty {
                let k = min(left, pending.count - (silence.last?.offset ?? 0))
                pending.removeLast(k)
                left -= k
            } else {
                break
            }
        }
    }

    /// Samples decoded (or silence decided) but not yet returned.
    private var pendingCount: Int { pending.count + silence.reduce(0) { $0 + $1.count } }

    /// Places a decoded frame on the playback time line before it is resampled: inserts the
    /// silence that precedes it (late start, lost audio) and reports holes and jumps.
    private func place(_ frame: UnsafeMutablePointer<AVFrame>,
                       _ codecContext: UnsafeMutablePointer<AVCodecContext>?) throws {
        let buffered = resampler.map { Int64(swr_get_delay($0, Int64(outputRate))) } ?? 0
        let count = samplesProduced + Int64(pendingCount) + buffered
        var position: Int64?
        let rate = frame.pointee.sample_rate > 0 ? frame.pointee.sample_rate : (codecContext?.pointee.sample_rate ?? 0)
        if isRawStream {
            // Time stamps of raw streams count frames: estimate lost ones from the bytes skipped.
            let event = rawStreamLoss.frame(position: frame.pointee.pkt_pos, size: Int(frame.pointee.pkt_size), readAhead: readAhead,
                                            seconds: rate > 0 ? Double(frame.pointee.nb_samples) / Double(rate) : 0,
                                            damaged: damageSinceLastFrame)
            switch event {
            case .opened:
                try drainResampler() // the frames before the hole end where they end
                holeMark = (pending.count, samplesProduced + Int64(pendingCount))
            case .decided(let seconds):
                fillHole(seconds: seconds)
            case nil:
                break
            }
            if !clock.started {
                position = 0
            } else if rawLoss != 0 {
                position = count + rawLoss
            }
        } else {
            var timestamp = frame.pointee.best_effort_timestamp
            if timestamp == soundmark_av_nopts_value() { timestamp = frame.pointee.pts }
            if timestamp != soundmark_av_nopts_value(), let codecContext {
                let base = codecContext.pointee.pkt_timebase
                // Container start time unknown: the first time stamp is the origin.
                if origin == nil { origin = PlaybackClock.seconds(timestamp: timestamp, timeBase: (base.num, base.den)) }
                position = clock.sample(timestamp: timestamp, timeBase: (base.num, base.den), origin: origin ?? 0)
            }
        }
        damageSinceLastFrame = false
        let decision = clock.place(position: position, count: count)
        rawLoss -= decision.fill
        if let message = decision.warning { warn(message) }
        if decision.fill > 0 {
            try drainResampler() // the frames before the hole end where they end
            insertSilence(Int(decision.fill), at: pending.count)
        }
    }

    /// Raw streams: fills the hole at ``holeMark`` with the audio it lost (`seconds`, plus the
    /// small losses not yet filled), when the ``PlaybackClock`` finds it worth a gap.
    private func fillHole(seconds: Double) {
        guard let mark = holeMark else { return }
        holeMark = nil
        rawLoss += Int64((seconds * Double(outputRate)).rounded())
        let decision = clock.place(position: mark.count + rawLoss, count: mark.count)
        rawLoss -= decision.fill
        if let message = decision.warning { warn(message) }
        if decision.fill > 0 { insertSilence(Int(decision.fill), at: mark.offset) }
    }

    /// Adds `count` samples of silence before `pending[offset]` (kept sorted by offset).
    private func insertSilence(_ count: Int, at offset: Int) {
        let i = silence.firstIndex { $0.offset >= offset } ?? silence.count
        if i < silence.count && silence[i].offset == offset {
            silence[i].count += count
        } else {
            silence.insert((offset, count), at: i)
        }
    }

    /// Reads one packet and decodes it if it belongs to our stream; at the end of the
    /// input, flushes decoder and resampler and marks the decoder finished.
    private func pump() throws {
        if let vorbisFile { return try pump(vorbisFile) }
        guard let formatContext, let packet else { finished = true; return }
        let result = av_read_frame(formatContext, packet)
        if budget.check() {
            if result >= 0 { av_packet_unref(packet) }
            finished = true
            throw MediaDecodingError.readFailed(path: source, reason: GarbageBudget.reason)
        }
        if result == soundmark_averror(EAGAIN) {
            usleep(5_000) // non-blocking input with no data yet
            return
        }
        if result < 0 {
            try endOfInput(readError: result)
            return
        }
        defer { av_packet_unref(packet) }
        guard Int(packet.pointee.stream_index) == streamIndex else { return }
        packetsDecoded += 1
        if isRawStream, let pb = formatContext.pointee.pb, packet.pointee.pos >= 0 {
            let read = avio_seek(pb, 0, SEEK_CUR)
            readAhead = read >= 0 ? read - packet.pointee.pos - Int64(packet.pointee.size) : nil
        }
        try decode(packet: packet)
    }

    /// "; …" advice for an MP4/M4A/MOV read from standard input that fails before its first packet:
    /// its index (the `moov` atom) comes after the audio, and a pipe cannot be rewound to it. Empty
    /// for any other input.
    private var pipedMP4Hint: String {
        guard standardInput != nil, let name = formatContext?.pointee.iformat?.pointee.name,
              String(cString: name).split(separator: ",").contains("mp4") else { return "" }
        return "; an MP4/M4A/MOV whose index (moov atom) follows the audio cannot be read from a pipe: "
            + "give its path, or rewrite it with 'ffmpeg -i IN -c copy -movflags +faststart OUT'"
    }

    private func endOfInput(readError: Int32) throws {
        if readError == soundmark_averror(ENOMEM) {
            throw MediaDecodingError.readFailed(path: source, reason: "out of memory")
        }
        if readError != soundmark_averror_eof() {
            let quietEnd = isNetwork && (readError == soundmark_averror(EIO)
                                         || readError == soundmark_averror(ETIMEDOUT)
                                         || readError == soundmark_averror_exit())
            if packetsDecoded == 0 && samplesProduced == 0 && pending.isEmpty && !quietEnd {
                finished = true
                throw MediaDecodingError.readFailed(path: source, reason: MediaDecoder.errorString(readError) + pipedMP4Hint)
            }
            if !quietEnd {
                warn("input ended early at \(positionString()): \(MediaDecoder.errorString(readError))")
            } else if readError == soundmark_averror(ETIMEDOUT) && networkTimeout > 0 {
                // A live stream that closes ends quietly; a server that stalls is worth a word.
                warn(String(format: "input ended early at %@: no data for %g s", positionString(), networkTimeout))
            }
        }
        // Flush the decoder (NULL packet), decide a hole still being measured, then flush the resampler.
        try decode(packet: nil)
        if let seconds = rawStreamLoss.finish() { fillHole(seconds: seconds) }
        holeMark = nil
        try drainResampler()
        finished = true
        if let first = heldWarnings.first, samplesProduced == 0 && pendingCount == 0 {
            // Nothing but corrupt data (a file cut inside its first frames): one error, not a
            // warning per packet and then "no audio".
            throw MediaDecodingError.readFailed(path: source, reason: "no audio could be decoded (\(first))")
        }
        if samplesProduced == 0 && pendingCount == 0 && packetsDecoded == 0 && formatFromNameOnly {
            // A text file named .flac: FFmpeg took the format from the name and found nothing in it.
            throw MediaDecodingError.cannotOpen(path: source, reason: "not a media file or unsupported format (only its name looks like one)")
        }
        warnIfTruncated()
    }

    /// A local file whose audio ends well before the length its header declares (a WAV's data
    /// size, an MP4 track's duration, an MP3's Xing frame count: not a bit-rate estimate) was cut
    /// short: decoding simply ends there, so say so (`catalog add` would store the shorter audio).
    private func warnIfTruncated() {
        guard !isNetwork, source != "-", let fmt = formatContext, streamIndex >= 0, streamIndex < Int(fmt.pointee.nb_streams),
              let stream = fmt.pointee.streams[streamIndex], av_fmt_ctx_get_duration_estimation_method(fmt) != AVFMT_DURATION_FROM_BITRATE
        else { return }
        let nopts = soundmark_av_nopts_value()
        guard stream.pointee.duration != nopts, stream.pointee.duration > 0, stream.pointee.time_base.den > 0 else { return }
        let base = Double(stream.pointee.time_base.num) / Double(stream.pointee.time_base.den)
        let start = stream.pointee.start_time != nopts ? Double(stream.pointee.start_time) * base : 0
        let origin = fmt.pointee.start_time != nopts ? max(0, Double(fmt.pointee.start_time) / 1_000_000) : 0
        let declared = start - origin + Double(stream.pointee.duration) * base
        let decoded = Double(samplesProduced + Int64(pendingCount)) / Double(outputRate)
        if declared - decoded > max(1, 0.02 * declared) {
            isTruncated = true
            warn(String(format: "the audio ends at %.1f s but the file declares %.1f s: it is truncated", decoded, declared))
        }
    }

    /// Decodes one block with libvorbisfile and resamples it; at the end, flushes the resampler.
    private func pump(_ reader: VorbisFileReader) throws {
        guard let frame else { finished = true; return }
        let block = reader.next()
        if let budget = reader.budget, budget.exceeded {
            finished = true
            throw MediaDecodingError.readFailed(path: source, reason: GarbageBudget.reason)
        }
        switch block {
        case .end:
            try drainResampler()
            finished = true
        case .hole:
            warn("corrupt audio skipped at \(positionString()) (hole in the Ogg data)")
        case .failed(let code):
            if let readError = reader.readError {
                warn("input ended early at \(positionString()): \(MediaDecoder.errorString(readError))")
            } else {
                warn("input ended early at \(positionString()): libvorbisfile error \(code)")
            }
            try drainResampler()
            finished = true
        case let .audio(channels, count, channelCount, rate):
            reader.budget?.add(seconds: Double(count) / Double(rate))
            frame.pointee.nb_samples = Int32(count)
            frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            frame.pointee.sample_rate = Int32(rate)
            av_channel_layout_uninit(&frame.pointee.ch_layout)
            // Vorbis orders 3–8 channels its own way: hand them over in FFmpeg's order.
            var planes: [UnsafeMutablePointer<UInt8>?]
            if let (mask, order) = MediaDecoder.vorbisOrder[channelCount] {
                av_channel_layout_from_mask(&frame.pointee.ch_layout, mask)
                planes = order.map { UnsafeMutableRawPointer(channels[$0]).map { $0.assumingMemoryBound(to: UInt8.self) } }
            } else {
                av_channel_layout_default(&frame.pointee.ch_layout, Int32(channelCount))
                planes = (0..<channelCount).map { UnsafeMutableRawPointer(channels[$0]).map { $0.assumingMemoryBound(to: UInt8.self) } }
            }
            try planes.withUnsafeMutableBufferPointer { buffer in
                frame.pointee.extended_data = buffer.baseAddress
                defer {
                    // The samples belong to libvorbisfile: unhook them before the frame is reused or freed.
                    frame.pointee.extended_data = nil
                    frame.pointee.nb_samples = 0
                    av_channel_layout_uninit(&frame.pointee.ch_layout)
                }
                try place(frame, codecContext)
                try resample(frame, codecContext)
            }
        }
    }

    /// Vorbis channel orders (spec section 4.3.9) as FFmpeg channel masks, with the Vorbis
    /// channel that goes to each of the mask's channels in FFmpeg's (bit) order.
    private static let vorbisOrder: [Int: (UInt64, [Int])] = {
        let (fl, fr, fc, lfe, bl, br, bc, sl, sr): (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x100, 0x200, 0x400)
        return [3: (fl | fr | fc, [0, 2, 1]),
                4: (fl | fr | bl | br, [0, 1, 2, 3]),
                5: (fl | fr | fc | bl | br, [0, 2, 1, 3, 4]),
                6: (fl | fr | fc | lfe | bl | br, [0, 2, 1, 5, 3, 4]),
                7: (fl | fr | fc | lfe | bc | sl | sr, [0, 2, 1, 6, 5, 3, 4]),
                8: (fl | fr | fc | lfe | bl | br | sl | sr, [0, 2, 1, 7, 5, 6, 3, 4])]
    }()

    /// Sends `packet` (nil = flush) to the decoder and resamples every frame it yields.
    private func decode(packet: UnsafeMutablePointer<AVPacket>?) throws {
        guard let codecContext, let frame else { return }
        var attempts = 0
        while true {
            let sent = avcodec_send_packet(codecContext, packet)
            if sent == soundmark_averror(EAGAIN) && attempts == 0 {
                // Decoder output full (should not happen as we always drain): drain, retry once.
                try receiveFrames(codecContext, frame)
                attempts += 1
                continue
            }
            if sent == soundmark_averror(ENOMEM) {
                throw MediaDecodingError.readFailed(path: source, reason: "out of memory")
            }
            if sent < 0 && sent != soundmark_averror_eof() && sent != soundmark_averror(EAGAIN) {
                damageSinceLastFrame = true
                warn("corrupt packet skipped at \(positionString()): \(MediaDecoder.errorString(sent))", holdable: true)
            }
            break
        }
        try receiveFrames(codecContext, frame)
    }

    private func receiveFrames(_ codecContext: UnsafeMutablePointer<AVCodecContext>,
                               _ frame: UnsafeMutablePointer<AVFrame>) throws {
        while true {
            let received = avcodec_receive_frame(codecContext, frame)
            if received == soundmark_averror(EAGAIN) || received == soundmark_averror_eof() { return }
            if received == soundmark_averror(ENOMEM) {
                throw MediaDecodingError.readFailed(path: source, reason: "out of memory")
            }
            if received < 0 {
                damageSinceLastFrame = true
                warn("corrupt audio skipped at \(positionString()): \(MediaDecoder.errorString(received))", holdable: true)
                return
            }
            defer { av_frame_unref(frame) }
            let rate = frame.pointee.sample_rate > 0 ? frame.pointee.sample_rate : codecContext.pointee.sample_rate
            if frame.pointee.nb_samples > 0 && rate > 0 {
                guard MediaDecoder.inputSampleRates.contains(Int(rate)) else {
                    throw MediaDecodingError.readFailed(path: source, reason: MediaDecoder.unsupportedRate(Int(rate)))
                }
                budget.add(seconds: Double(frame.pointee.nb_samples) / Double(rate))
            }
            if frame.pointee.nb_samples > 0 { try place(frame, codecContext) }
            try resample(frame, codecContext)
        }
    }

    /// Converts one decoded frame to mono Float32 at the output rate and appends it to
    /// `pending`, (re)building the resampler when the input format changes.
    private func resample(_ frame: UnsafeMutablePointer<AVFrame>,
                          _ codecContext: UnsafeMutablePointer<AVCodecContext>?) throws {
        let sampleCount = frame.pointee.nb_samples
        guard sampleCount > 0 else { return }
        let rate = frame.pointee.sample_rate > 0 ? frame.pointee.sample_rate : (codecContext?.pointee.sample_rate ?? 0)
        let format = frame.pointee.format

        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        if frame.pointee.ch_layout.nb_channels > 0 {
            _ = av_channel_layout_copy(&layout, &frame.pointee.ch_layout)
        } else if let codecContext {
            _ = av_channel_layout_copy(&layout, &codecContext.pointee.ch_layout)
        }
        let channels = layout.nb_channels
        if layout.order == AV_CHANNEL_ORDER_UNSPEC || av_channel_layout_check(&layout) == 0 {
            av_channel_layout_uninit(&layout)
            av_channel_layout_default(&layout, channels)
        }
        guard rate > 0, channels > 0, format >= 0, frame.pointee.extended_data != nil else {
            warn("undecodable audio frame skipped at \(positionString()) (unknown format)")
            return
        }

        if resampler == nil || rate != resamplerRate || format != resamplerFormat
            || av_channel_layout_compare(&layout, &resamplerLayout) != 0 {
            try drainResampler()
            try makeResampler(rate: rate, format: format, layout: &layout)
        }
        guard let resampler else { return }

        let capacity = Int(swr_get_out_samples(resampler, sampleCount)) + 16
        if scratch.count < capacity { scratch = [Float](repeating: 0, count: capacity) }
        let input = UnsafeMutableRawPointer(frame.pointee.extended_data!)
            .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        let produced = scratch.withUnsafeMutableBytes { raw -> Int32 in
            var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return swr_convert(resampler, &out, Int32(capacity), input, sampleCount)
        }
        if produced < 0 {
            throw MediaDecodingError.readFailed(path: source,
                                           reason: "resampling failed: \(MediaDecoder.errorString(produced))")
        }
        if channels == 2, let e = MediaDecoder.midSideEnergy(frame) {
            let decay = exp(-Double(sampleCount) / Double(rate)), fast = exp(-4 * Double(sampleCount) / Double(rate))
            stereoEnergy = (decay * stereoEnergy.mid + e.mid, decay * stereoEnergy.side + e.side)
            recentEnergy = (fast * recentEnergy.mid + e.mid, fast * recentEnergy.side + e.side)
            stereoSamples = decay * stereoSamples + Double(sampleCount)
            // Decided over half a second of input or more, and not over near-silence (-60 dBFS).
            let heard = stereoSamples >= 0.4 * Double(rate) && stereoEnergy.mid + stereoEnergy.side >= 1e-6 * stereoSamples
            // (Back as soon as one frame of sound is in phase: the energies of a loud passage
            // out of phase outlast it, and the in-phase audio after it was read from the difference.)
            let frameHeard = e.mid + e.side >= 1e-6 * Double(sampleCount)
            let side = usingSide ? !frameHeard || e.side > MediaDecoder.antiphaseRatio / 4 * e.mid
                : heard && stereoEnergy.side > MediaDecoder.antiphaseRatio * stereoEnergy.mid
                    && recentEnergy.side > MediaDecoder.antiphaseRatio * recentEnergy.mid
            if side && sideResampler == nil { sideResampler = makeSideResampler(rate: rate, format: format, layout: &layout) }
            if let sideResampler {
                let n = Int(produced)
                let capacity = Int(swr_get_out_samples(sideResampler, sampleCount)) + 16
                if sideScratch.count < capacity { sideScratch = [Float](repeating: 0, count: capacity) }
                let made = sideScratch.withUnsafeMutableBytes { raw -> Int32 in
                    var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    return swr_convert(sideResampler, &out, Int32(capacity), input, sampleCount)
                }
                if side && made >= 0 {
                    // The same count as the plain mix's (a resampler made mid-stream first
                    // holds back its filter's delay, a few samples): the time line is the plain mix's.
                    let m = min(Int(made), n)
                    for i in 0..<n { scratch[i] = i < n - m ? 0 : sideScratch[i - (n - m)] }
                }
            }
            if side != usingSide {
                usingSide = side
                // Back in phase: the energies start again, so the passage out of phase just
                // ended does not switch the in-phase audio after it back to the difference.
                if !side { (stereoEnergy, recentEnergy, stereoSamples) = ((0, 0), (0, 0), 0) }
                warn(side ? "left and right channels are out of phase (one polarity inverted) from \(positionString()): matching their difference"
                          : "left and right channels are in phase again from \(positionString())")
            }
        }
        pending.append(contentsOf: scratch[..<Int(produced)])
    }

    /// How much more energy (left − right) / 2 must carry than (left + right) / 2, over about 1 s
    /// of a 2-channel input (energies decaying with a 1 s time constant, at least 0.5 s heard,
    /// above −60 dBFS), and over the last 0.25 s as well, for the decoder to output the difference
    /// instead of the sum: 16 (12 dB). It goes back to the sum at the first frame of sound
    /// whose difference carries less than 4 times the sum's energy (with energies over 1 s or
    /// 0.25 s instead, the in-phase audio after a loud 3 s out of phase was read from the
    /// difference for 3.4 or 1.7 s, its play starting that late).
    /// With one channel's polarity inverted (a miswired cable, a broadcast chain's fault) the
    /// sum cancels what both channels share: clips with left = −right matched nothing. Wide
    /// orchestral recordings carry about as much in the difference as in the sum (Wesnoth's
    /// music: 0.9–1.6 times over whole tracks) and up to 11.9 times over 1 s (*Weight of
    /// Revenge*; 11.7 over 2 s, 14.8 over 0.5 s), which at 4 was taken for an inverted channel; so a channel inverted in music
    /// whose difference is less than 12 dB under its sum is still matched from the sum.
    public static let antiphaseRatio = 16.0

    /// Energies of (left + right) / 2 and (left − right) / 2 over a 2-channel frame (from every
    /// 4th sample, times 4) of a common
    /// sample format (float, 16- and 32-bit integer, double; planar or interleaved); `nil`
    /// for another format.
    private static func midSideEnergy(_ frame: UnsafeMutablePointer<AVFrame>) -> (mid: Double, side: Double)? {
        let n = Int(frame.pointee.nb_samples)
        guard n > 0, let data = frame.pointee.extended_data, let p0 = data[0] else { return nil }
        let format = AVSampleFormat(rawValue: frame.pointee.format)
        let planar = av_sample_fmt_is_planar(format) != 0
        guard let p1 = planar ? data[1] : p0 else { return nil }
        func sums<T>(_ type: T.Type, _ value: (T) -> Double) -> (mid: Double, side: Double) {
            let a = UnsafeRawPointer(p0).assumingMemoryBound(to: T.self), b = UnsafeRawPointer(p1).assumingMemoryBound(to: T.self)
            var mid = 0.0, side = 0.0
            // Every 4th sample: an energy over 0.25-1 s needs no more (a fifth of the cost).
            for i in stride(from: 0, to: n, by: 4) {
                let l = value(planar ? a[i] : a[2 * i]), r = value(planar ? b[i] : b[2 * i + 1])
                mid += (l + r) * (l + r) / 4
                side += (l - r) * (l - r) / 4
            }
            return (4 * mid, 4 * side)
        }
        switch format {
        case AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP: return sums(Float.self) { Double($0) }
        case AV_SAMPLE_FMT_S16, AV_SAMPLE_FMT_S16P: return sums(Int16.self) { Double($0) / 32768 }
        case AV_SAMPLE_FMT_S32, AV_SAMPLE_FMT_S32P: return sums(Int32.self) { Double($0) / 2_147_483_648 }
        case AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP: return sums(Double.self) { $0 }
        default: return nil
        }
    }

    /// A resampler of (left − right) / 2 of a 2-channel input (see ``antiphaseRatio``); `nil`
    /// when swresample refuses the input format (the output then stays the sum).
    private func makeSideResampler(rate: Int32, format: Int32, layout: inout AVChannelLayout) -> OpaquePointer? {
        var mono = soundmark_av_channel_layout_mono()
        var context: OpaquePointer?
        var result = swr_alloc_set_opts2(&context, &mono, AV_SAMPLE_FMT_FLT, outputRate,
                                         &layout, AVSampleFormat(rawValue: format), rate, 0, nil)
        let matrix: [Double] = [0.5, -0.5]
        if result >= 0 { result = swr_set_matrix(context, matrix, 2) }
        if result >= 0 { result = swr_init(context) }
        if result < 0 {
            if context != nil { swr_free(&context) }
            return nil
        }
        return context
    }

    private func makeResampler(rate: Int32, format: Int32, layout: inout AVChannelLayout) throws {
        var mono = soundmark_av_channel_layout_mono()
        var context: OpaquePointer?
        var result = swr_alloc_set_opts2(&context, &mono, AV_SAMPLE_FMT_FLT, outputRate,
                                         &layout, AVSampleFormat(rawValue: format), rate, 0, nil)
        if result >= 0 { result = swr_init(context) }
        if result < 0 {
            // Exotic layout (custom order, ambisonics, ...): retry with the default
            // layout for the channel count.
            if context != nil { swr_free(&context) }
            var fallback = AVChannelLayout()
            av_channel_layout_default(&fallback, layout.nb_channels)
            result = swr_alloc_set_opts2(&context, &mono, AV_SAMPLE_FMT_FLT, outputRate,
                                         &fallback, AVSampleFormat(rawValue: format), rate, 0, nil)
            if result >= 0 { result = swr_init(context) }
            av_channel_layout_uninit(&fallback)
        }
        if result < 0 {
            if context != nil { swr_free(&context) }
            throw MediaDecodingError.readFailed(
                path: source,
                reason: "cannot convert \(layout.nb_channels)-channel audio at \(rate) Hz: \(MediaDecoder.errorString(result))")
        }
        resampler = context
        resamplerRate = rate
        resamplerFormat = format
        av_channel_layout_uninit(&resamplerLayout)
        _ = av_channel_layout_copy(&resamplerLayout, &layout)
    }

    /// Pulls the samples still buffered inside the resampler, then frees it.
    private func drainResampler() throws {
        guard resampler != nil else { return }
        while true {
            let capacity = max(Int(swr_get_out_samples(resampler, 0)), 0) + 256
            if scratch.count < capacity { scratch = [Float](repeating: 0, count: capacity) }
            let produced = scratch.withUnsafeMutableBytes { raw -> Int32 in
                var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return swr_convert(resampler, &out, Int32(capacity), nil, 0)
            }
            if produced <= 0 { break }
            pending.append(contentsOf: scratch[..<Int(produced)])
        }
        swr_free(&resampler)
        if sideResampler != nil { swr_free(&sideResampler) }
    }

    // MARK: - Helpers

    private func positionString() -> String {
        let seconds = Double(samplesProduced + Int64(pendingCount)) / Double(outputRate)
        return String(format: "%.2f s", seconds)
    }

    /// Passes `message`, prefixed with the input's name, to the warning handler; a message
    /// equal to the previous one is not repeated, and after ``maxWarnings`` the rest are dropped.
    /// A `holdable` message (corrupt data) that comes before any audio was decoded waits in
    /// ``heldWarnings``: passed on with the first audio, or, when none comes, the reason of the
    /// one error (``MediaDecodingError/readFailed(path:reason:)``) instead of a warning each.
    private func warn(_ message: String, holdable: Bool = false) {
        if holdable && samplesProduced == 0 && pendingCount == 0 && !finished {
            if heldWarnings.count < MediaDecoder.maxWarnings { heldWarnings.append(message) }
            return
        }
        guard let warningHandler, message != lastWarning else { return }
        lastWarning = message
        warningsEmitted += 1
        let line = MediaDecodingError.display(source) + ": " + message
        if warningsEmitted < MediaDecoder.maxWarnings {
            warningHandler(line)
        } else if warningsEmitted == MediaDecoder.maxWarnings {
            warningHandler(line + " (further warnings suppressed)")
        }
    }

    static func errorString(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 {
            return "error \(code)"
        }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

// MARK: - Opening

extension MediaDecoder {
    fileprivate struct Opened {
        var format: UnsafeMutablePointer<AVFormatContext>?
        var codec: UnsafeMutablePointer<AVCodecContext>?
        var streamIndex: Int
        var audioStreams: [AudioStreamInfo]
        var tags: [String: String]
        var description: String
        var isNetwork: Bool
        var isUDP: Bool
        /// The container's start time in seconds (`nil` when FFmpeg does not know it).
        var origin: Double?
        /// For a file with video: the container's duration in seconds.
        var containerDuration: Double?
        var isRawStream: Bool
        var standardInput: StandardInput?
        var gapless: MP3GaplessInfo?
        var vorbisFile: VorbisFileReader?
    }

    /// For an Ogg file FFmpeg refused with `error`: libvorbisfile, if it reads the file (with a
    /// warning that passes on FFmpeg's reason); `nil` otherwise.
    fileprivate static func vorbisFallback(source: String, requestedStream: Int?, language: String?,
                                           error: MediaDecodingError, standardInput: StandardInput?,
                                           warning: ((String) -> Void)?, networkTimeout: Double) -> Opened? {
        switch error {
        case .cannotOpen, .noAudioStream, .decoderUnavailable, .readFailed: break
        default: return nil
        }
        guard requestedStream == nil || requestedStream == 0 else { return nil }
        let reader: VorbisFileReader?
        let target = resolve(source)
        if let path = target.localPath {
            reader = VorbisFileReader.looksLikeOgg(path) ? VorbisFileReader(path: path) : nil
        } else if let standardInput, standardInput.canReplay, standardInput.head.starts(with: Array("OggS".utf8)) {
            // Everything FFmpeg read is kept: libvorbisfile starts over from it.
            reader = VorbisFileReader(descriptor: standardInput.descriptor, after: standardInput.head)
        } else if target.isNetwork && !target.isUDP {
            // FFmpeg's demuxer dropped what it read: the stream is fetched again from its start,
            // counted by a budget of its own (the first attempt's format context is closed).
            var options: [String: String] = [:]
            if !target.url.contains("rw_timeout=") && networkTimeout > 0 { options["rw_timeout"] = String(Int64(networkTimeout * 1_000_000)) }
            reader = VorbisFileReader(networkURL: target.url, options: options)
        } else {
            reader = nil
        }
        guard let reader else { return nil }
        let language = reader.tags["language"]
        let stream = AudioStreamInfo(index: 0, language: language, codec: "vorbis", channels: reader.channels, isDefault: true)
        if let wanted = languageFilter(language), !LanguageCode.matches(stream.language, wanted) { return nil }
        let cause: String
        switch error {
        case let .cannotOpen(_, reason), let .readFailed(_, reason): cause = reason
        default: cause = error.errorDescription ?? "refused"
        }
        warning?("\(MediaDecodingError.display(source)): FFmpeg cannot read it (\(cause)); decoding it with libvorbisfile")
        return Opened(format: nil, codec: nil, streamIndex: 0, audioStreams: [stream], tags: reader.tags,
                      description: "vorbis, \(reader.rate) Hz, " + (reader.channels == 1 ? "1 channel" : "\(reader.channels) channels")
                        + " (libvorbisfile)",
                      isNetwork: false, isUDP: false, origin: nil, containerDuration: nil, isRawStream: false,
                      standardInput: nil, gapless: nil, vorbisFile: reader)
    }

    private static func languageFilter(_ language: String?) -> String? { language }

    /// Where to read from: the URL handed to FFmpeg and, for local files, the path to
    /// pre-check.
    private struct Target {
        var url: String
        var localPath: String?
        var isNetwork: Bool
        var isUDP: Bool
        /// Standard input (`-`, `pipe:`, `pipe:0`), read through ``StandardInput``.
        var isStandardInput = false
        /// A named pipe's path: read like standard input once something was written to it.
        var namedPipe: String?
    }

    /// `target` of a local `path`, or, when `path` is a named pipe (FIFO), a target read
    /// through ``StandardInput/namedPipe(_:source:timeout:)`` (nothing may read the pipe by
    /// its path: that would block without a writer, and take bytes from the decoder).
    private static func local(_ path: String, _ target: Target) -> Target {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return target }
        return Target(url: path, localPath: nil, isNetwork: false, isUDP: false, namedPipe: path)
    }

    private static func resolve(_ source: String) -> Target {
        if source == "-" || source == "pipe:" || source == "pipe:0" {
            return Target(url: "pipe:0", localPath: nil, isNetwork: false, isUDP: false, isStandardInput: true)
        }
        if source.hasPrefix("file:") {
            var path = String(source.dropFirst("file:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) } // file:///abs/path
            return local(path, Target(url: "file:" + path, localPath: path, isNetwork: false, isUDP: false))
        }
        if let name = avio_find_protocol_name(source).map({ String(cString: $0) }), name != "file" {
            let udp = name == "udp" || name == "rtp" || name == "udplite"
            return Target(url: source, localPath: nil, isNetwork: name != "pipe", isUDP: udp)
        }
        // Plain path (also "weird:name.mp3" when "weird" is no protocol): force the file protocol.
        return local(source, Target(url: "file:" + source, localPath: source, isNetwork: false, isUDP: false))
    }

    /// Cheap checks that give clearer messages than FFmpeg's generic errors.
    private static func precheck(path: String, source: String) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            let reason: String
            switch errno {
            case ENOENT, ENOTDIR: reason = "no such file"
            case EACCES: reason = "permission denied"
            default: reason = String(cString: strerror(errno))
            }
            throw MediaDecodingError.cannotOpen(path: source, reason: reason)
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            throw MediaDecodingError.cannotOpen(path: source, reason: "is a directory")
        }
        if access(path, R_OK) != 0 {
            throw MediaDecodingError.cannotOpen(path: source, reason: "permission denied")
        }
        if type == S_IFREG && info.st_size == 0 {
            throw MediaDecodingError.cannotOpen(path: source, reason: "empty file")
        }
    }

    /// `openReason(code)`, but FFmpeg's own message (`detail`, e.g. "ogg: Header processing
    /// failed: Invalid data found when processing input") instead of the generic "not a media
    /// file" when a demuxer recognised the input and said why it gave up.
    private static func openReason(_ code: Int32, detail: String?) -> String {
        let reason = openReason(code)
        if let detail, reason == "not a media file or unsupported format" { return detail }
        return reason
    }

    /// Whether FFmpeg recognises the input's first bytes as some format by their content alone
    /// (not by the file name's extension): then a demuxer's own complaint is the reason to give.
    private static func recognised(_ target: Target, _ standardInput: StandardInput?) -> Bool {
        var head = standardInput?.head ?? []
        if let path = target.localPath, let handle = FileHandle(forReadingAtPath: path) {
            head = [UInt8]((try? handle.read(upToCount: 4096)) ?? Data())
            try? handle.close()
        }
        guard !head.isEmpty else { return false }
        let count = head.count
        head += [UInt8](repeating: 0, count: 64) // AVPROBE_PADDING_SIZE
        var score: Int32 = 0
        let format = head.withUnsafeMutableBufferPointer { buffer -> UnsafePointer<AVInputFormat>? in
            "".withCString { name in
                var probe = AVProbeData(filename: name, buf: buffer.baseAddress, buf_size: Int32(count), mime_type: nil)
                return av_probe_input_format3(&probe, 1, &score)
            }
        }
        return format != nil && score >= 50 // AVPROBE_SCORE_EXTENSION
    }

    private static func openReason(_ code: Int32) -> String {
        switch code {
        case soundmark_averror(ENOENT): return "no such file"
        case soundmark_averror(EACCES), soundmark_averror(EPERM): return "permission denied"
        case soundmark_averror(EISDIR): return "is a directory"
        case soundmark_averror_invaliddata(), soundmark_averror(EINVAL),
             soundmark_averror_demuxer_not_found(), soundmark_averror_stream_not_found():
            return "not a media file or unsupported format"
        case soundmark_averror_eof(): return "empty input (no data)"
        case soundmark_averror_protocol_not_found(): return "unsupported protocol"
        default: return errorString(code)
        }
    }

    fileprivate static func open(source: String, requestedStream: Int?, language: String?,
                                 warning: ((String) -> Void)?, networkTimeout: Double,
                                 standardInput: StandardInput?, budget: GarbageBudget) throws -> Opened {
        let target = resolve(source)
        if let path = target.localPath { try precheck(path: path, source: source) }

        var options: OpaquePointer?
        if target.isUDP && !target.url.contains("timeout=") {
            av_dict_set(&options, "timeout", "5000000", 0) // microseconds
        } else if target.isNetwork && !target.isUDP && !target.url.contains("rw_timeout=") && networkTimeout > 0 {
            av_dict_set(&options, "rw_timeout", String(Int64(networkTimeout * 1_000_000)), 0) // microseconds
        }
        var format: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        guard let allocated = format else { throw MediaDecodingError.readFailed(path: source, reason: "out of memory") }
        allocated.pointee.interrupt_callback = budget.interruptCallback
        budget.format = allocated
        if let standardInput {
            allocated.pointee.pb = standardInput.context
            allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        }
        FFmpegLog.begin()
        let openResult = avformat_open_input(&format, target.url, nil, &options)
        let openMessage = FFmpegLog.end()
        av_dict_free(&options)
        guard openResult >= 0, let fmt = format else {
            budget.format = nil // avformat_open_input freed it
            if budget.exceeded { throw MediaDecodingError.cannotOpen(path: source, reason: GarbageBudget.reason) }
            // FFmpeg reports an unknown host or a failed connection as a plain I/O error.
            let reason = target.isNetwork && openResult == soundmark_averror(EIO)
                ? "network error (host not found, unreachable or refused)"
                : openReason(openResult, detail: target.isNetwork || recognised(target, standardInput) ? openMessage : nil)
            throw MediaDecodingError.cannotOpen(path: source, reason: reason)
        }
        var success = false
        var codec: UnsafeMutablePointer<AVCodecContext>?
        defer {
            if !success {
                if codec != nil { avcodec_free_context(&codec) }
                budget.format = nil
                var toClose: UnsafeMutablePointer<AVFormatContext>? = fmt
                avformat_close_input(&toClose)
                standardInput?.close() // after the format context that reads from it
            }
        }

        // The "tty" demuxer claims any .txt/.nfo/... file as ANSI art: text is no media.
        if let demuxer = fmt.pointee.iformat?.pointee.name, String(cString: demuxer) == "tty" {
            throw MediaDecodingError.cannotOpen(path: source, reason: "not a media file or unsupported format")
        }
        FFmpegLog.begin()
        let infoResult = avformat_find_stream_info(fmt, nil)
        let infoMessage = FFmpegLog.end()
        if fmt.pointee.nb_streams == 0 {
            throw MediaDecodingError.cannotOpen(
                path: source,
                reason: openReason(infoResult < 0 ? infoResult : soundmark_averror_invaliddata(),
                                   detail: recognised(target, standardInput) ? infoMessage : nil))
        }
        if infoResult < 0 {
            warning?("\(MediaDecodingError.display(source)): could not read all stream parameters: \(errorString(infoResult))")
        }

        let streams = audioStreams(fmt)
        let index = try chooseStream(fmt, requested: requestedStream, language: language, streams: streams, source: source,
                                     warning: warning)
        let stream = fmt.pointee.streams[index]!
        let parameters = stream.pointee.codecpar!
        let codecID = parameters.pointee.codec_id
        let codecName = String(cString: avcodec_get_name(codecID))
        if parameters.pointee.sample_rate != 0 && !inputSampleRates.contains(Int(parameters.pointee.sample_rate)) {
            throw MediaDecodingError.cannotOpen(path: source, reason: unsupportedRate(Int(parameters.pointee.sample_rate)))
        }
        // A WAV/AIFF header claiming 1-7-bit PCM is not a sample format: FFmpeg rounds it up to
        // 8 bits and decodes whatever follows (a 7-bit header was catalogued as 2 s of audio).
        let codedBits = Int(parameters.pointee.bits_per_coded_sample)
        if codecName.hasPrefix("pcm_"), (1..<8).contains(codedBits) {
            throw MediaDecodingError.cannotOpen(path: source, reason: "the header declares \(codedBits)-bit samples, not a valid PCM sample format (8 bits or more)")
        }
        // A PCM header of no channels holds no audio: say so, not that the codec has no decoder
        // (which the decoder's refusal to open said).
        if codecName.hasPrefix("pcm_"), parameters.pointee.ch_layout.nb_channels <= 0 {
            throw MediaDecodingError.cannotOpen(path: source, reason: "the header declares 0 channels (no audio)")
        }
        guard let decoder = avcodec_find_decoder(codecID) else {
            throw MediaDecodingError.decoderUnavailable(path: source, codec: codecName)
        }
        codec = avcodec_alloc_context3(decoder)
        guard let codecContext = codec else {
            throw MediaDecodingError.readFailed(path: source, reason: "out of memory")
        }
        if avcodec_parameters_to_context(codecContext, parameters) < 0 {
            throw MediaDecodingError.decoderUnavailable(path: source, codec: codecName)
        }
        codecContext.pointee.pkt_timebase = stream.pointee.time_base
        if avcodec_open2(codecContext, decoder, nil) < 0 {
            throw MediaDecodingError.decoderUnavailable(path: source, codec: codecName)
        }

        // Only demux what we decode.
        for i in 0..<Int(fmt.pointee.nb_streams) where i != index {
            fmt.pointee.streams[i]?.pointee.discard = AVDISCARD_ALL
        }

        var tags = dictionary(fmt.pointee.metadata)
        for (key, value) in dictionary(stream.pointee.metadata) where tags[key] == nil {
            tags[key] = value
        }

        var parts = [codecName]
        let rate = parameters.pointee.sample_rate
        let channels = parameters.pointee.ch_layout.nb_channels
        if rate > 0 { parts.append("\(rate) Hz") }
        if channels > 0 { parts.append(channels == 1 ? "1 channel" : "\(channels) channels") }

        let nopts = soundmark_av_nopts_value()
        // A negative start time is a codec delay (Opus pre-skip, AAC priming as an edit list):
        // the samples it covers are dropped by the decoder, so the time line starts at 0.
        let origin = fmt.pointee.start_time != nopts ? max(0, Double(fmt.pointee.start_time) / 1_000_000) : nil
        let hasVideo = (0..<Int(fmt.pointee.nb_streams)).contains { i in
            guard let s = fmt.pointee.streams[i], let p = s.pointee.codecpar else { return false }
            return p.pointee.codec_type == AVMEDIA_TYPE_VIDEO && (s.pointee.disposition & soundmark_av_disposition_attached_pic()) == 0
        }
        let containerDuration = hasVideo && fmt.pointee.duration != nopts && fmt.pointee.duration > 0
            ? Double(fmt.pointee.duration) / 1_000_000 : nil
        let demuxer = fmt.pointee.iformat?.pointee.name.map { String(cString: $0) } ?? ""
        let isRaw = ["mp3", "aac", "ac3", "eac3", "dts", "truehd", "mlp"].contains(demuxer)
        // From a pipe FFmpeg skips an MP3's encoder delay but cannot find its end (it needs the
        // file's size): take the number of real samples from the LAME header ourselves, for
        // files too, so that a file and a pipe give the same samples.
        var gapless: MP3GaplessInfo?
        if demuxer == "mp3" {
            let head = target.localPath.map(MP3GaplessInfo.head(ofFile:)) ?? standardInput?.head ?? []
            if let info = MP3GaplessInfo.parse(head), info.sampleRate == Int(parameters.pointee.sample_rate) {
                gapless = info
            }
        }

        success = true
        return Opened(format: fmt, codec: codecContext, streamIndex: index, audioStreams: streams, tags: tags,
                      description: parts.joined(separator: ", "), isNetwork: target.isNetwork, isUDP: target.isUDP,
                      origin: origin, containerDuration: containerDuration, isRawStream: isRaw,
                      standardInput: standardInput, gapless: gapless)
    }

    /// The sample rates of input audio decoded, Hz: a header that declares another (a 176 KB
    /// WAV claiming 1 Hz held a day of "audio" and took 129 s and 355 MB to decode) is refused.
    public static let inputSampleRates = 1000...768_000

    /// Why audio at `rate` Hz is refused, naming the supported range.
    fileprivate static func unsupportedRate(_ rate: Int) -> String {
        "the audio's sample rate \(rate) Hz is outside the supported \(inputSampleRates.lowerBound)–\(inputSampleRates.upperBound) Hz"
    }

    private static func isUsableAudio(_ stream: UnsafeMutablePointer<AVStream>?) -> Bool {
        guard let stream, let parameters = stream.pointee.codecpar else { return false }
        return parameters.pointee.codec_type == AVMEDIA_TYPE_AUDIO
            && (stream.pointee.disposition & soundmark_av_disposition_attached_pic()) == 0
    }

    /// The usable audio streams of `fmt`, in container order.
    private static func audioStreams(_ fmt: UnsafeMutablePointer<AVFormatContext>) -> [AudioStreamInfo] {
        (0..<Int(fmt.pointee.nb_streams)).compactMap { i in
            let stream = fmt.pointee.streams[i]
            guard isUsableAudio(stream), let stream, let parameters = stream.pointee.codecpar else { return nil }
            var language = dictionary(stream.pointee.metadata)["language"]?.lowercased()
            if language == "und" || language == "" { language = nil }
            return AudioStreamInfo(index: i, language: language,
                                   codec: String(cString: avcodec_get_name(parameters.pointee.codec_id)),
                                   channels: Int(parameters.pointee.ch_layout.nb_channels),
                                   isDefault: stream.pointee.disposition & AV_DISPOSITION_DEFAULT != 0)
        }
    }

    private static func chooseStream(_ fmt: UnsafeMutablePointer<AVFormatContext>, requested: Int?, language: String?,
                                     streams: [AudioStreamInfo], source: String,
                                     warning: ((String) -> Void)?) throws -> Int {
        let count = Int(fmt.pointee.nb_streams)
        if let requested {
            guard requested >= 0, requested < count, isUsableAudio(fmt.pointee.streams[requested]) else {
                throw MediaDecodingError.streamNotAudio(path: source, index: requested)
            }
            return requested
        }
        if let language, streams.contains(where: { $0.language != nil }) {
            let matching = streams.filter { LanguageCode.matches($0.language, language) }
            guard let chosen = matching.first(where: \.isDefault) ?? matching.first else {
                throw MediaDecodingError.noStreamInLanguage(path: source, language: language, streams: streams)
            }
            return chosen.index
        }
        if let language, !streams.isEmpty {
            // No stream says its language (most audio files): the language cannot choose.
            warning?("\(MediaDecodingError.display(source)): no audio stream is tagged with a language; '\(language)' ignored")
        }
        let best = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        if best >= 0, Int(best) < count, isUsableAudio(fmt.pointee.streams[Int(best)]) {
            return Int(best)
        }
        // av_find_best_stream skips streams with unknown parameters; take the first audio one.
        if let first = (0..<count).first(where: { isUsableAudio(fmt.pointee.streams[$0]) }) {
            return first
        }
        throw MediaDecodingError.noAudioStream(path: source)
    }

    /// Reads an AVDictionary into a Swift dictionary with lowercased keys, skipping
    /// empty values (first occurrence of a key wins).
    private static func dictionary(_ dict: OpaquePointer?) -> [String: String] {
        var result: [String: String] = [:]
        guard dict != nil else { return result }
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(dict, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            guard let keyC = next.pointee.key, let valueC = next.pointee.value else { continue }
            let key = String(cString: keyC).lowercased()
            let value = String(cString: valueC).trimmingCharacters(in: .whitespacesAndNewlines)
            if !value.isEmpty && result[key] == nil { result[key] = value }
        }
        return result
    }
}
