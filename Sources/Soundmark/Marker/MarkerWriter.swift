import CFFmpeg
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Errors of ``MarkerWriter``.
public enum MarkerWriterError: Error, LocalizedError, Equatable {
    /// The output cannot be written: unknown format for its extension, no encoder, the same file
    /// as the input, an FFmpeg failure. `reason` says which.
    case cannotWrite(path: String, reason: String)
    /// The input cannot be marked (standard input, which cannot be read twice; too short).
    case cannotMark(path: String, reason: String)

    /// One line naming the file and the cause.
    public var errorDescription: String? {
        switch self {
        case let .cannotWrite(path, reason): return "cannot write \(path): \(reason)"
        case let .cannotMark(path, reason): return "cannot mark \(path): \(reason)"
        }
    }
}

/// What ``MarkerWriter/embed(input:output:embedder:streamIndex:warning:)`` wrote.
public struct MarkerWriteSummary: Sendable {
    /// Seconds of audio marked.
    public let duration: Double
    /// Encoder used (FFmpeg's name, e.g. "libmp3lame"), its sample rate (Hz) and channel count.
    public let encoder: String
    /// Encoder sample rate in Hz.
    public let sampleRate: Int
    /// Encoder channel count.
    public let channels: Int
    /// Indices (in the input) of the streams copied unchanged (video, cover art).
    public let copiedStreams: [Int]
}

/// Writes a marked copy of a media file through FFmpeg.
///
/// Two passes over the input: the first decodes it to mono 16 kHz (``MediaDecoder``) and
/// computes the mark (``MarkerEmbedder``); the mark is resampled to the audio's own rate
/// (swresample) and the second pass decodes the audio at its own rate and channels, adds the
/// mark to every channel and encodes it with the output format's default audio encoder
/// (format from the output's extension: `.wav` PCM, `.flac`, `.mp3` LAME, `.m4a`/`.mp4` AAC,
/// `.ogg` Vorbis, `.opus` Opus, `.mkv`…), keeping the sample rate, channel layout and sample
/// format where the encoder accepts them (else the nearest it does). A lossy input keeps its
/// bit rate (32–320 kbit/s); a lossless one is encoded at 192 kbit/s per stereo pair. Video streams
/// and cover art are copied unchanged when the output container can hold them (else dropped
/// with a warning); other audio and subtitle streams are dropped. The output is written to a
/// temporary file next to it and renamed into place, so a failure leaves an existing output alone.
///
/// Memory: the mark is held whole, 4 bytes per sample at 16 kHz and at the audio's rate.
public enum MarkerWriter {
    /// Marks `input` into `output`.
    /// - Parameters:
    ///   - input: a file or URL FFmpeg reads (not standard input: it is read twice).
    ///   - output: the file to write; its extension picks the container and encoder.
    ///   - embedder: payload and strength.
    ///   - streamIndex: the audio stream to mark (`nil`: FFmpeg's best audio stream).
    ///   - warning: one-line warnings (streams dropped, decoding problems).
    /// - Throws: ``MarkerWriterError``, `MediaDecodingError` for an unreadable input.
    @discardableResult
    public static func embed(input: String, output: String, embedder: MarkerEmbedder, streamIndex: Int? = nil,
                             warning: ((String) -> Void)? = nil) throws -> MarkerWriteSummary {
        if input == "-" { throw MarkerWriterError.cannotMark(path: "<stdin>", reason: "standard input cannot be marked (it is read twice); save it to a file first") }
        var inputInfo = stat(), outputInfo = stat()
        if stat(input, &inputInfo) == 0, stat(output, &outputInfo) == 0,
           inputInfo.st_dev == outputInfo.st_dev, inputInfo.st_ino == outputInfo.st_ino {
            throw MarkerWriterError.cannotWrite(path: output, reason: "it is the input file; write the marked copy elsewhere")
        }
        let decoder = try MediaDecoder(source: input, sampleRate: MarkerLayout.sampleRate, streamIndex: streamIndex, warning: warning)
        var mono: [Float] = []
        while let chunk = try decoder.nextChunk() { mono.append(contentsOf: chunk.samples) }
        guard !mono.isEmpty else { throw MarkerWriterError.cannotMark(path: input, reason: "no audio decoded") }
        let mark16 = embedder.mark(for: mono)
        mono = []
        let session = try Session(input: input, output: output, streamIndex: decoder.streamIndex, warning: warning)
        return try session.run(mark16: mark16)
    }

    static func check(_ code: Int32, _ path: String, _ what: String) throws {
        if code < 0 { throw MarkerWriterError.cannotWrite(path: path, reason: "\(what): \(MediaDecoder.errorString(code))") }
    }

    /// One transcoding pass: demux, decode the marked stream, add the mark, encode, mux.
    final class Session {
        let input: String, output: String, temporary: String
        let warning: ((String) -> Void)?
        var inFormat: UnsafeMutablePointer<AVFormatContext>?
        var outFormat: UnsafeMutablePointer<AVFormatContext>?
        var decoder: UnsafeMutablePointer<AVCodecContext>?
        var encoder: UnsafeMutablePointer<AVCodecContext>?
        var toPlain: OpaquePointer?   // decoded → interleaved float at the input's rate and layout
        var toEncoder: OpaquePointer? // interleaved float → encoder format, rate, layout
        var fifo: OpaquePointer?
        var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()
        var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
        let audioIndex: Int
        var streamMap: [Int: Int] = [:] // input stream → output stream (copied streams)
        var audioOut = 0
        var plainLayout = AVChannelLayout()
        var plainRate: Int32 = 0
        var frameSize = 0
        var encodedSamples: Int64 = 0
        var markedSamples = 0
        /// Samples (at the audio's rate) between the container's start and the first decoded frame
        /// (a video whose sound starts later): where the audio sits in the mark, which is on the
        /// playback time line (silence before the audio), and where its first encoded frame goes.
        var lead: Int?
        var mark: [Float] = []
        var plain: [Float] = []
        var converted: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?
        var convertedCapacity: Int32 = 0
        var opened = false

        init(input: String, output: String, streamIndex: Int, warning: ((String) -> Void)?) throws {
            self.input = input
            self.output = output
            self.warning = warning
            self.audioIndex = streamIndex
            let url = URL(fileURLWithPath: output)
            temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial").path
            guard let guessed = av_guess_format(nil, output, nil) else {
                throw MarkerWriterError.cannotWrite(path: output, reason: "no output format for the extension '\(url.pathExtension)'")
            }
            let localInput = input.contains("://") ? input : "file:" + input
            try check(avformat_open_input(&inFormat, localInput, nil, nil), input, "open")
            try check(avformat_find_stream_info(inFormat, nil), input, "read stream parameters")
            try check(avformat_alloc_output_context2(&outFormat, guessed, nil, temporary), output, "output context")
        }

        deinit {
            if converted != nil { av_freep(&converted![0]); av_freep(&converted) }
            if fifo != nil { av_audio_fifo_free(fifo) }
            if toPlain != nil { swr_free(&toPlain) }
            if toEncoder != nil { swr_free(&toEncoder) }
            av_channel_layout_uninit(&plainLayout)
            if frame != nil { av_frame_free(&frame) }
            if packet != nil { av_packet_free(&packet) }
            if decoder != nil { avcodec_free_context(&decoder) }
            if encoder != nil { avcodec_free_context(&encoder) }
            if let outFormat {
                if opened, let pb = outFormat.pointee.pb { var p: UnsafeMutablePointer<AVIOContext>? = pb; avio_closep(&p) }
                avformat_free_context(outFormat)
            }
            if inFormat != nil { avformat_close_input(&inFormat) }
            unlink(temporary)
        }

        func run(mark16: [Float]) throws -> MarkerWriteSummary {
            guard let inFormat, let outFormat, packet != nil, frame != nil else {
                throw MarkerWriterError.cannotWrite(path: output, reason: "out of memory")
            }
            let inStream = inFormat.pointee.streams[audioIndex]!
            let parameters = inStream.pointee.codecpar!
            // Decoder at the audio's own rate and channels.
            guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
                throw MediaDecodingError.decoderUnavailable(path: input, codec: String(cString: avcodec_get_name(parameters.pointee.codec_id)))
            }
            decoder = avcodec_alloc_context3(codec)
            try check(avcodec_parameters_to_context(decoder, parameters), input, "decoder parameters")
            decoder!.pointee.pkt_timebase = inStream.pointee.time_base
            try check(avcodec_open2(decoder, codec, nil), input, "open decoder")
            plainRate = decoder!.pointee.sample_rate
            _ = av_channel_layout_copy(&plainLayout, &decoder!.pointee.ch_layout)
            if plainLayout.order == AV_CHANNEL_ORDER_UNSPEC || av_channel_layout_check(&plainLayout) == 0 {
                let count = max(1, plainLayout.nb_channels)
                av_channel_layout_uninit(&plainLayout)
                av_channel_layout_default(&plainLayout, count)
            }
            guard plainRate > 0 else { throw MarkerWriterError.cannotMark(path: input, reason: "unknown sample rate") }
            mark = try resample(mark16, to: plainRate)

            try openEncoder(outFormat: outFormat, inputBitRate: parameters.pointee.bit_rate, inputFormat: decoder!.pointee.sample_fmt,
                            lossyInput: isLossy(parameters.pointee.codec_id))
            copyOtherStreams(inFormat: inFormat, outFormat: outFormat)
            av_dict_copy(&outFormat.pointee.metadata, inFormat.pointee.metadata, 0)
            av_dict_copy(&outFormat.pointee.streams[audioOut]!.pointee.metadata, inStream.pointee.metadata, 0)
            if outFormat.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
                try check(avio_open(&outFormat.pointee.pb, temporary, AVIO_FLAG_WRITE), output, "create")
                opened = true
            }
            try check(avformat_write_header(outFormat, nil), output, "write header")

            while true {
                let read = av_read_frame(inFormat, packet)
                if read < 0 { break }
                defer { av_packet_unref(packet) }
                let index = Int(packet!.pointee.stream_index)
                if index == audioIndex {
                    if avcodec_send_packet(decoder, packet) < 0 { warning?("\(input): corrupt audio packet skipped"); continue }
                    try receiveFrames()
                } else if let out = streamMap[index] {
                    av_packet_rescale_ts(packet, inFormat.pointee.streams[index]!.pointee.time_base,
                                         outFormat.pointee.streams[out]!.pointee.time_base)
                    packet!.pointee.stream_index = Int32(out)
                    packet!.pointee.pos = -1
                    try check(av_interleaved_write_frame(outFormat, packet), output, "write")
                }
            }
            avcodec_send_packet(decoder, nil)
            try receiveFrames()
            try convert(nil, count: 0) // flush the rate converter
            try encode(flush: true)
            try check(av_write_trailer(outFormat), output, "write trailer")
            if opened, outFormat.pointee.pb != nil { avio_closep(&outFormat.pointee.pb); opened = false }
            if rename(temporary, output) != 0 {
                throw MarkerWriterError.cannotWrite(path: output, reason: String(cString: strerror(errno)))
            }
            let enc = encoder!.pointee
            return MarkerWriteSummary(duration: Double(markedSamples) / Double(plainRate), encoder: String(cString: enc.codec.pointee.name),
                                      sampleRate: Int(enc.sample_rate), channels: Int(enc.ch_layout.nb_channels),
                                      copiedStreams: streamMap.keys.sorted())
        }

        func isLossy(_ id: AVCodecID) -> Bool {
            guard let descriptor = avcodec_descriptor_get(id) else { return true }
            return descriptor.pointee.props & AV_CODEC_PROP_LOSSY != 0
        }

        /// The mark at `rate` Hz (swresample from 16 kHz).
        func resample(_ samples: [Float], to rate: Int32) throws -> [Float] {
            if rate == Int32(MarkerLayout.sampleRate) { return samples }
            var context: OpaquePointer?
            var mono = soundmark_av_channel_layout_mono()
            var monoIn = soundmark_av_channel_layout_mono()
            try check(swr_alloc_set_opts2(&context, &mono, AV_SAMPLE_FMT_FLT, rate, &monoIn, AV_SAMPLE_FMT_FLT,
                                          Int32(MarkerLayout.sampleRate), 0, nil), output, "resampler")
            defer { swr_free(&context) }
            try check(swr_init(context), output, "resampler")
            let expected = Int((Double(samples.count) * Double(rate) / Double(MarkerLayout.sampleRate)).rounded())
            var out = [Float](repeating: 0, count: expected + 4096)
            var produced = 0
            try samples.withUnsafeBytes { src in
                try out.withUnsafeMutableBytes { dst in
                    var inPtr: UnsafePointer<UInt8>? = src.baseAddress?.assumingMemoryBound(to: UInt8.self)
                    var outPtr: UnsafeMutablePointer<UInt8>? = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let n = swr_convert(context, &outPtr, Int32(expected + 4096), &inPtr, Int32(samples.count))
                    try check(n, output, "resample the mark")
                    produced = Int(n)
                    var tail: UnsafeMutablePointer<UInt8>? = outPtr! + produced * 4
                    let m = swr_convert(context, &tail, Int32(expected + 4096 - produced), nil, 0)
                    try check(m, output, "resample the mark")
                    produced += Int(m)
                }
            }
            out.removeLast(out.count - produced)
            return out
        }

        func openEncoder(outFormat: UnsafeMutablePointer<AVFormatContext>, inputBitRate: Int64, inputFormat: AVSampleFormat,
                         lossyInput: Bool) throws {
            let id = outFormat.pointee.oformat.pointee.audio_codec
            guard id != AV_CODEC_ID_NONE, let codec = avcodec_find_encoder(id) else {
                throw MarkerWriterError.cannotWrite(path: output, reason: "no audio encoder for this format")
            }
            encoder = avcodec_alloc_context3(codec)
            guard let enc = encoder else { throw MarkerWriterError.cannotWrite(path: output, reason: "out of memory") }
            // Sample rate: the input's, else the nearest the encoder takes.
            var rate = plainRate
            if var list = codec.pointee.supported_samplerates {
                var rates: [Int32] = []
                while list.pointee != 0 { rates.append(list.pointee); list += 1 }
                if !rates.isEmpty && !rates.contains(rate) {
                    rate = rates.filter { $0 >= plainRate }.min() ?? rates.max()!
                }
            }
            enc.pointee.sample_rate = rate
            enc.pointee.time_base = AVRational(num: 1, den: rate)
            // Channel layout: the input's, else a supported one with as many channels, else stereo or the first.
            var layouts: [UnsafePointer<AVChannelLayout>] = []
            if var list = codec.pointee.ch_layouts {
                while list.pointee.nb_channels != 0 { layouts.append(list); list += 1 }
            }
            if layouts.isEmpty || layouts.contains(where: { av_channel_layout_compare($0, &plainLayout) == 0 }) {
                _ = av_channel_layout_copy(&enc.pointee.ch_layout, &plainLayout)
            } else if let same = layouts.first(where: { $0.pointee.nb_channels == plainLayout.nb_channels }) {
                _ = av_channel_layout_copy(&enc.pointee.ch_layout, same)
            } else {
                let stereo = layouts.first { $0.pointee.nb_channels == 2 } ?? layouts[0]
                _ = av_channel_layout_copy(&enc.pointee.ch_layout, stereo)
                warning?("\(output): \(plainLayout.nb_channels) channels mixed to \(stereo.pointee.nb_channels) for \(String(cString: codec.pointee.name))")
            }
            // Sample format: the decoder's when accepted (keeps a lossless file's depth), else the encoder's first.
            var formats: [AVSampleFormat] = []
            if var list = codec.pointee.sample_fmts {
                while list.pointee != AV_SAMPLE_FMT_NONE { formats.append(list.pointee); list += 1 }
            }
            enc.pointee.sample_fmt = formats.contains(inputFormat) || formats.isEmpty ? inputFormat : formats[0]
            if enc.pointee.sample_fmt == AV_SAMPLE_FMT_NONE { enc.pointee.sample_fmt = AV_SAMPLE_FMT_S16 }
            if isLossy(id) {
                let pairs = Int64(max(1, (enc.pointee.ch_layout.nb_channels + 1) / 2))
                enc.pointee.bit_rate = lossyInput && inputBitRate > 0 ? min(max(inputBitRate, 32_000), 320_000) : 192_000 * pairs
            }
            if outFormat.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 {
                enc.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
            }
            try check(avcodec_open2(enc, codec, nil), output, "open encoder \(String(cString: codec.pointee.name))")
            guard let stream = avformat_new_stream(outFormat, nil) else { throw MarkerWriterError.cannotWrite(path: output, reason: "out of memory") }
            try check(avcodec_parameters_from_context(stream.pointee.codecpar, enc), output, "encoder parameters")
            stream.pointee.time_base = enc.pointee.time_base
            audioOut = Int(stream.pointee.index)
            frameSize = enc.pointee.frame_size > 0 && codec.pointee.capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE == 0
                ? Int(enc.pointee.frame_size) : 4096
            var inLayout = AVChannelLayout()
            _ = av_channel_layout_copy(&inLayout, &plainLayout)
            defer { av_channel_layout_uninit(&inLayout) }
            try check(swr_alloc_set_opts2(&toPlain, &plainLayout, AV_SAMPLE_FMT_FLT, plainRate,
                                          &inLayout, decoder!.pointee.sample_fmt, plainRate, 0, nil), input, "converter")
            try check(swr_init(toPlain), input, "converter")
            try check(swr_alloc_set_opts2(&toEncoder, &enc.pointee.ch_layout, enc.pointee.sample_fmt, rate,
                                          &plainLayout, AV_SAMPLE_FMT_FLT, plainRate, 0, nil), output, "converter")
            try check(swr_init(toEncoder), output, "converter")
            fifo = av_audio_fifo_alloc(enc.pointee.sample_fmt, enc.pointee.ch_layout.nb_channels, Int32(frameSize))
            if fifo == nil { throw MarkerWriterError.cannotWrite(path: output, reason: "out of memory") }
        }

        func copyOtherStreams(inFormat: UnsafeMutablePointer<AVFormatContext>, outFormat: UnsafeMutablePointer<AVFormatContext>) {
            let oformat = outFormat.pointee.oformat!
            for i in 0..<Int(inFormat.pointee.nb_streams) where i != audioIndex {
                let stream = inFormat.pointee.streams[i]!
                let par = stream.pointee.codecpar!
                guard par.pointee.codec_type == AVMEDIA_TYPE_VIDEO else {
                    if par.pointee.codec_type == AVMEDIA_TYPE_AUDIO { warning?("\(input): audio stream \(i) not copied (only the marked stream is written)") }
                    stream.pointee.discard = AVDISCARD_ALL
                    continue
                }
                let name = String(cString: avcodec_get_name(par.pointee.codec_id))
                let query = avformat_query_codec(oformat, par.pointee.codec_id, FF_COMPLIANCE_NORMAL)
                let fits = query == 1 || (query < 0 && oformat.pointee.video_codec != AV_CODEC_ID_NONE)
                guard fits, let out = avformat_new_stream(outFormat, nil), avcodec_parameters_copy(out.pointee.codecpar, par) >= 0 else {
                    warning?("\(output): video stream \(i) (\(name)) not copied: the container cannot hold it")
                    stream.pointee.discard = AVDISCARD_ALL
                    continue
                }
                out.pointee.codecpar.pointee.codec_tag = 0
                out.pointee.time_base = stream.pointee.time_base
                out.pointee.disposition = stream.pointee.disposition
                av_dict_copy(&out.pointee.metadata, stream.pointee.metadata, 0)
                streamMap[i] = Int(out.pointee.index)
            }
        }

        func receiveFrames() throws {
            while true {
                let got = avcodec_receive_frame(decoder, frame)
                if got < 0 { return }
                defer { av_frame_unref(frame) }
                let count = Int(frame!.pointee.nb_samples)
                guard count > 0, frame!.pointee.sample_rate == plainRate || frame!.pointee.sample_rate == 0 else {
                    if count > 0 { warning?("\(input): audio frame at another sample rate skipped") }
                    continue
                }
                let channels = Int(plainLayout.nb_channels)
                if plain.count < count * channels { plain = [Float](repeating: 0, count: count * channels) }
                let input = UnsafeMutableRawPointer(frame!.pointee.extended_data!).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                let made = plain.withUnsafeMutableBytes { raw -> Int32 in
                    var out: UnsafeMutablePointer<UInt8>? = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    return swr_convert(toPlain, &out, Int32(count), input, Int32(count))
                }
                try check(made, self.input, "convert")
                let n = Int(made)
                if lead == nil {
                    lead = leadSamples(of: frame!)
                    encodedSamples = Int64((Double(lead!) * Double(encoder!.pointee.sample_rate) / Double(plainRate)).rounded())
                }
                let offset = markedSamples + lead!
                for i in 0..<n where offset + i < mark.count {
                    let m = mark[offset + i]
                    for c in 0..<channels { plain[i * channels + c] += m }
                }
                markedSamples += n
                try plain.withUnsafeBytes { raw in
                    try convert(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: n)
                }
                try encode(flush: false)
            }
        }

        /// Samples from the container's start time to `frame`'s time stamp (0 when either is unknown or the frame is early).
        func leadSamples(of frame: UnsafeMutablePointer<AVFrame>) -> Int {
            guard let inFormat else { return 0 }
            let nopts = soundmark_av_nopts_value()
            let pts = frame.pointee.best_effort_timestamp != nopts ? frame.pointee.best_effort_timestamp : frame.pointee.pts
            guard pts != nopts else { return 0 }
            let tb = inFormat.pointee.streams[audioIndex]!.pointee.time_base
            let start = inFormat.pointee.start_time != nopts ? Double(inFormat.pointee.start_time) / 1_000_000 : 0
            let seconds = Double(pts) * Double(tb.num) / Double(tb.den) - max(0, start)
            return seconds > 0.05 ? Int((seconds * Double(plainRate)).rounded()) : 0
        }

        /// Converts interleaved float samples (nil: flush) to the encoder's format into the FIFO.
        func convert(_ samples: UnsafePointer<UInt8>?, count: Int) throws {
            let capacity = swr_get_out_samples(toEncoder, Int32(count)) + 256
            if capacity > convertedCapacity {
                if converted != nil { av_freep(&converted![0]); av_freep(&converted) }
                try check(av_samples_alloc_array_and_samples(&converted, nil, encoder!.pointee.ch_layout.nb_channels, capacity,
                                                             encoder!.pointee.sample_fmt, 0), output, "buffer")
                convertedCapacity = capacity
            }
            var source: UnsafePointer<UInt8>? = samples
            let made = samples == nil ? swr_convert(toEncoder, converted, capacity, nil, 0)
                                      : swr_convert(toEncoder, converted, capacity, &source, Int32(count))
            try check(made, output, "convert")
            if made > 0 {
                let planes = UnsafeMutableRawPointer(converted!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                try check(av_audio_fifo_write(fifo, planes, made), output, "buffer")
            }
        }

        /// Encodes whole frames from the FIFO (and, with `flush`, the rest and the encoder's delay).
        func encode(flush: Bool) throws {
            guard let enc = encoder, let outFormat else { return }
            while av_audio_fifo_size(fifo) >= Int32(frameSize) || (flush && av_audio_fifo_size(fifo) > 0) {
                let n = min(Int32(frameSize), av_audio_fifo_size(fifo))
                var out = av_frame_alloc()
                defer { av_frame_free(&out) }
                guard let f = out else { throw MarkerWriterError.cannotWrite(path: output, reason: "out of memory") }
                f.pointee.nb_samples = n
                f.pointee.format = enc.pointee.sample_fmt.rawValue
                f.pointee.sample_rate = enc.pointee.sample_rate
                _ = av_channel_layout_copy(&f.pointee.ch_layout, &enc.pointee.ch_layout)
                try check(av_frame_get_buffer(f, 0), output, "buffer")
                let planes = UnsafeMutableRawPointer(f.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
                _ = av_audio_fifo_read(fifo, planes, n)
                f.pointee.pts = encodedSamples
                encodedSamples += Int64(n)
                try check(avcodec_send_frame(enc, f), output, "encode")
                try drainPackets(enc, outFormat)
            }
            if flush {
                avcodec_send_frame(enc, nil)
                try drainPackets(enc, outFormat)
            }
        }

        func drainPackets(_ enc: UnsafeMutablePointer<AVCodecContext>, _ outFormat: UnsafeMutablePointer<AVFormatContext>) throws {
            var out = av_packet_alloc()
            defer { av_packet_free(&out) }
            while avcodec_receive_packet(enc, out) >= 0 {
                av_packet_rescale_ts(out, enc.pointee.time_base, outFormat.pointee.streams[audioOut]!.pointee.time_base)
                out!.pointee.stream_index = Int32(audioOut)
                try check(av_interleaved_write_frame(outFormat, out), output, "write")
            }
        }
    }
}
