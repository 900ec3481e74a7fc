import Foundation
import CFFmpeg
import CVorbisFile
#if canImport(Glibc)
import Glibc
#endif

/// An Ogg Vorbis file read with libvorbisfile: the fallback for files FFmpeg's Ogg demuxer
/// refuses (FFmpeg 5.1 rejects, e.g., an identification header longer than 30 bytes, which
/// some old encoders wrote and libvorbis reads).
final class VorbisFileReader {
    private let file: UnsafeMutablePointer<OggVorbis_File>
    /// Channels and sample rate (Hz) of the first logical stream.
    let channels: Int
    let rate: Int
    /// Vorbis comments with lowercased keys (first occurrence wins).
    let tags: [String: String]

    /// Opens `path`; `nil` when libvorbisfile cannot read it either.
    convenience init?(path: String) {
        self.init { file in ov_fopen(path, file) }
    }

    /// Reads `descriptor` (standard input or a named pipe), whose first bytes (`initial`, all
    /// that was read so far) are given back; `nil` when libvorbisfile cannot read it either.
    convenience init?(descriptor: Int32, after initial: [UInt8]) {
        let callbacks = ov_callbacks(read_func: { buffer, size, count, source -> Int in
            guard let buffer else { return 0 }
            let descriptor = Int32(Int(bitPattern: source) - 1)
            while true {
                let n = Glibc.read(descriptor, buffer, size * count)
                if n >= 0 { return n / max(size, 1) }
                if errno != EINTR { return 0 }
            }
        }, seek_func: nil, close_func: nil, tell_func: nil)
        self.init { file in
            initial.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    ov_open_callbacks(UnsafeMutableRawPointer(bitPattern: Int(descriptor) + 1), file, chars.baseAddress,
                                      chars.count, callbacks)
                }
            }
        }
    }

    /// Reads the network URL `url` (HTTP and the like) again from its start through FFmpeg's
    /// I/O layer (`avio_open2`, with `options` such as `rw_timeout`), when its first bytes are
    /// an Ogg page; `nil` when they are not or libvorbisfile cannot read it. FFmpeg's demuxer
    /// read and dropped the bytes it refused, so the stream is fetched anew. The I/O context's
    /// interrupt callback counts it against a ``GarbageBudget`` of its own (``budget``), which
    /// the reader keeps until the context is closed.
    convenience init?(networkURL url: String, options: [String: String]) {
        let budget = GarbageBudget()
        var context: UnsafeMutablePointer<AVIOContext>?
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        var callback = budget.interruptCallback
        let opened = withExtendedLifetime(budget) { avio_open2(&context, url, AVIO_FLAG_READ, &callback, &dictionary) }
        av_dict_free(&dictionary)
        guard opened >= 0, let context else { return nil }
        budget.io = context
        let close = {
            withExtendedLifetime(budget) {
                budget.io = nil
                var toClose: UnsafeMutablePointer<AVIOContext>? = context
                avio_closep(&toClose)
            }
        }
        var head = [UInt8](repeating: 0, count: 4)
        let got = head.withUnsafeMutableBufferPointer { avio_read(context, $0.baseAddress, 4) }
        guard got == 4, head == Array("OggS".utf8) else {
            close()
            return nil
        }
        let callbacks = ov_callbacks(read_func: { buffer, size, count, source -> Int in
            guard let buffer, let source, size > 0 else { return 0 }
            let n = avio_read(source.assumingMemoryBound(to: AVIOContext.self), buffer.assumingMemoryBound(to: UInt8.self),
                              Int32(clamping: size * count))
            if n == soundmark_averror_eof() { return 0 }
            if n < 0 {
                errno = EIO // libvorbisfile takes 0 with errno set as a read error, not the end
                return 0
            }
            return Int(n) / size
        }, seek_func: nil, close_func: nil, tell_func: nil)
        self.init(budget: budget, io: context, closing: close) { file in
            head.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { chars in
                    ov_open_callbacks(UnsafeMutableRawPointer(context), file, chars.baseAddress, chars.count, callbacks)
                }
            }
        }
    }

    /// What closes the reader's source after libvorbisfile lets go of it (a network stream's
    /// I/O context); `nil` for a file (closed by libvorbisfile) or a descriptor (its owner's).
    private let closeSource: (() -> Void)?
    /// A network stream's I/O context (closed by `closeSource`), for its error.
    private let io: UnsafeMutablePointer<AVIOContext>?
    /// For a network stream: what bounds the input read without audio (its interrupt callback
    /// holds this budget unretained, so the reader keeps it until the stream is closed); the
    /// decoder adds the audio decoded. `nil` for a file or a descriptor.
    let budget: GarbageBudget?

    /// FFmpeg's error code of a network stream's last failed read (`AVIOContext.error`), or
    /// `nil` when there was none (or the source is no network stream).
    var readError: Int32? {
        guard let io, io.pointee.error < 0 else { return nil }
        return io.pointee.error
    }

    private init?(budget: GarbageBudget? = nil, io: UnsafeMutablePointer<AVIOContext>? = nil,
                  closing closeSource: (() -> Void)? = nil, open: (UnsafeMutablePointer<OggVorbis_File>) -> Int32) {
        self.budget = budget
        self.io = io
        self.closeSource = closeSource
        file = .allocate(capacity: 1)
        guard open(file) == 0 else {
            file.deallocate()
            closeSource?()
            return nil
        }
        guard let info = ov_info(file, -1), info.pointee.channels > 0, info.pointee.rate > 0 else {
            ov_clear(file)
            file.deallocate()
            closeSource?()
            return nil
        }
        channels = Int(info.pointee.channels)
        rate = Int(info.pointee.rate)
        var tags: [String: String] = [:]
        if let comment = ov_comment(file, -1), let list = comment.pointee.user_comments {
            for i in 0..<Int(comment.pointee.comments) {
                guard let c = list[i] else { continue }
                let entry = String(cString: c)
                guard let eq = entry.firstIndex(of: "=") else { continue }
                let key = entry[..<eq].lowercased()
                let value = entry[entry.index(after: eq)...].trimmingCharacters(in: .whitespacesAndNewlines)
                if !value.isEmpty && tags[key] == nil { tags[key] = value }
            }
        }
        self.tags = tags
    }

    /// One block of decoded audio: `count` samples per channel in planar float channels.
    enum Block {
        case audio(channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, count: Int, channelCount: Int, rate: Int)
        /// A hole in the data (corrupt or missing pages); reading goes on.
        case hole
        case end
        /// An unrecoverable error (libvorbisfile's code).
        case failed(Int)
    }

    /// Decodes the next block (up to 4096 samples per channel). The channel pointers stay valid
    /// until the next call.
    func next() -> Block {
        var pcm: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?
        var section: Int32 = 0
        let n = ov_read_float(file, &pcm, 4096, &section)
        if n == 0 { return .end }
        if n == Int(OV_HOLE) { return .hole }
        if n < 0 { return .failed(n) }
        guard let pcm, let info = ov_info(file, -1) else { return .failed(-1) }
        return .audio(channels: pcm, count: n, channelCount: Int(info.pointee.channels), rate: Int(info.pointee.rate))
    }

    /// Whether `path` starts like an Ogg file ("OggS").
    static func looksLikeOgg(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)) == Data("OggS".utf8)
    }

    deinit {
        ov_clear(file)
        file.deallocate()
        closeSource?()
    }
}

/// FFmpeg's own error messages, caught while a thread opens an input: FFmpeg's console
/// logging is silenced, but its reason for refusing a file ("ogg: Header processing failed:
/// Invalid data found when processing input") is worth passing on.
enum FFmpegLog {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var captured: [pthread_t: String] = [:]
    nonisolated(unsafe) private static var installed = false

    /// Routes FFmpeg's log to ``record(_:)`` (nothing reaches the console); errors only.
    static func install() {
        lock.lock()
        defer { lock.unlock() }
        if !installed {
            installed = true
            av_log_set_level(soundmark_av_log_error())
            av_log_set_callback { context, level, format, arguments in
                guard level <= soundmark_av_log_error(), let format, let arguments else { return }
                var buffer = [CChar](repeating: 0, count: 512)
                _ = vsnprintf(&buffer, buffer.count, format, arguments)
                var message = String(cString: buffer).trimmingCharacters(in: .whitespacesAndNewlines)
                guard !message.isEmpty else { return }
                if let context, let cls = context.assumingMemoryBound(to: UnsafePointer<AVClass>?.self).pointee,
                   let itemName = cls.pointee.item_name, let name = itemName(context) {
                    message = String(cString: name) + ": " + message
                }
                FFmpegLog.record(message)
            }
        }
    }

    /// Starts recording error messages of the calling thread (replaces an earlier recording).
    static func begin() {
        install()
        lock.lock()
        defer { lock.unlock() }
        captured[pthread_self()] = ""
    }

    private static func record(_ message: String) {
        lock.lock()
        defer { lock.unlock() }
        guard !captured.isEmpty else { return }
        let thread = pthread_self()
        if let previous = captured[thread], previous.isEmpty { captured[thread] = message } // the first is the cause
    }

    /// Stops recording for the calling thread.
    /// - Returns: the first error message FFmpeg logged since `begin()`, or `nil`.
    @discardableResult
    static func end() -> String? {
        lock.lock()
        defer { lock.unlock() }
        let message = captured.removeValue(forKey: pthread_self())
        return message?.isEmpty == false ? message : nil
    }
}
