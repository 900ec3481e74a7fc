import Foundation
import CFFmpeg
#if canImport(Glibc)
import Glibc
#endif

/// Standard input (or a named pipe: see ``namedPipe(_:source:timeout:)``) read through a custom
/// FFmpeg I/O context that keeps a copy of the first bytes (64 KiB, or an ID3v2 tag and 8 KiB
/// after it), so that what FFmpeg only parses from a seekable file (the LAME gapless header of an
/// MP3) can be read from a pipe too.
final class StandardInput {
    /// The descriptor read: 0 for standard input, else a named pipe's, owned (closed by ``close()``).
    let descriptor: Int32
    /// The first bytes read (see ``MP3GaplessInfo/headLength(_:)``).
    private(set) var head: [UInt8] = []
    /// Bytes read from standard input so far (FFmpeg has seen them all).
    private(set) var totalRead = 0
    /// Whether ``head`` holds every byte read so far, so another reader can start over.
    var canReplay: Bool { totalRead == head.count }
    /// The I/O context handed to FFmpeg (owned here; freed by ``close()``).
    private(set) var context: UnsafeMutablePointer<AVIOContext>?

    /// Reads `descriptor` (default 0: standard input, whose bytes peeked by
    /// ``StandardInputPeek`` come first); another descriptor is closed by ``close()``.
    init(descriptor: Int32 = 0) throws {
        self.descriptor = descriptor
        let size: Int32 = 32 * 1024
        guard let buffer = av_malloc(Int(size))?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaDecodingError.readFailed(path: "-", reason: "out of memory")
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer, size, 0, opaque, { opaque, buffer, size -> Int32 in
            guard let opaque, let buffer else { return soundmark_averror(EINVAL) }
            let input = Unmanaged<StandardInput>.fromOpaque(opaque).takeUnretainedValue()
            return input.read(into: buffer, size: Int(size))
        }, nil, nil)
        if context == nil {
            av_free(buffer)
            throw MediaDecodingError.readFailed(path: "-", reason: "out of memory")
        }
    }

    private func read(into buffer: UnsafeMutablePointer<UInt8>, size: Int) -> Int32 {
        while true {
            var n = descriptor == 0 ? StandardInputPeek.take(into: buffer, size: size) : 0
            if n == 0 { n = Glibc.read(descriptor, buffer, size) }
            if n > 0 {
                totalRead += n
                let limit = MP3GaplessInfo.headLength(head)
                if head.count < limit {
                    head.append(contentsOf: UnsafeBufferPointer(start: buffer, count: n))
                    if head.count > MP3GaplessInfo.headLength(head) { head.removeLast(head.count - MP3GaplessInfo.headLength(head)) }
                }
                return Int32(n)
            }
            if n == 0 { return soundmark_averror_eof() }
            if errno == EINTR { continue }
            return soundmark_averror(errno)
        }
    }

    /// Frees the I/O context and its buffer (after `avformat_close_input`), and closes a named
    /// pipe's descriptor.
    func close() {
        guard context != nil else { return }
        av_freep(&context!.pointee.buffer)
        avio_context_free(&context)
        if descriptor != 0 { _ = Glibc.close(descriptor) }
    }

    /// Opens the named pipe (FIFO) at `path` without blocking and waits up to `timeout` seconds
    /// (0: without end) for its first bytes or its writer's close, then reads it like standard
    /// input. A plain `open` would block until some process opens the pipe for writing: with no
    /// writer, every command hung.
    /// - Throws: `MediaDecodingError.cannotOpen` naming `source` when it cannot be opened or
    ///   nothing was written to it in time.
    static func namedPipe(_ path: String, source: String, timeout: Double) throws -> StandardInput {
        let fd: Int32
        do { fd = try InputFile.openNamedPipe(path, timeout: timeout) } catch let error as InputFileError {
            throw MediaDecodingError.cannotOpen(path: source, reason: error.reason)
        }
        do { return try StandardInput(descriptor: fd) } catch { _ = Glibc.close(fd); throw error }
    }

    deinit { close() }
}

/// Looking at the first bytes of standard input before deciding how to read it (a signature
/// file or media): the bytes peeked are kept and served first to whoever reads standard input
/// next through ``MediaDecoder`` (source `-`) or ``readAll()``, so nothing is lost.
public enum StandardInputPeek {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pending: [UInt8] = []

    /// The first `count` bytes of standard input (fewer when it ends sooner), without consuming
    /// them: the next reader of standard input gets them again.
    public static func peek(_ count: Int) -> Data {
        lock.lock()
        defer { lock.unlock() }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while pending.count < count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, min(4096, count - pending.count)) }
            if n > 0 { pending += buffer[0..<n]; continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        return Data(pending.prefix(count))
    }

    /// Everything left on standard input, the peeked bytes first.
    public static func readAll() -> Data {
        lock.lock()
        let head = pending
        pending = []
        lock.unlock()
        return Data(head) + FileHandle.standardInput.readDataToEndOfFile()
    }

    /// Moves up to `size` peeked bytes into `buffer`; returns how many (0: none left).
    static func take(into buffer: UnsafeMutablePointer<UInt8>, size: Int) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let n = min(size, pending.count)
        guard n > 0 else { return 0 }
        pending.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: n) }
        pending.removeFirst(n)
        return n
    }
}

/// The gapless information of an MP3's Xing/Info frame with a LAME (or FFmpeg) extension.
struct MP3GaplessInfo: Equatable {
    /// Audio frames in the stream (the Info frame itself not counted).
    var frames: Int
    /// Samples per frame: 1152 (MPEG-1 Layer III) or 576 (MPEG-2/2.5).
    var samplesPerFrame: Int
    /// Encoder delay and padding, samples at the stream's rate.
    var delay: Int
    var padding: Int
    /// The stream's sample rate, Hz.
    var sampleRate: Int

    /// Samples of real audio: `frames · samplesPerFrame − delay − padding`.
    var validSamples: Int { frames * samplesPerFrame - delay - padding }

    /// How many bytes from the start of a stream the gapless header can need, given its first
    /// bytes `start`: 64 KiB, or the ID3v2 tag (cover art can make it large; up to 16 MiB) and
    /// 8 KiB after it.
    static func headLength(_ start: [UInt8]) -> Int {
        guard start.count >= 10, start[0] == 0x49, start[1] == 0x44, start[2] == 0x33 else { return 64 * 1024 }
        let size = (Int(start[6] & 0x7F) << 21) | (Int(start[7] & 0x7F) << 14) | (Int(start[8] & 0x7F) << 7) | Int(start[9] & 0x7F)
        return min(16 << 20, max(64 * 1024, 10 + size + 10 + 8192))
    }

    /// Reads the bytes ``headLength(_:)`` asks for from the start of the file at `path`.
    static func head(ofFile path: String) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let start = [UInt8]((try? handle.read(upToCount: 10)) ?? Data())
        let rest = [UInt8]((try? handle.read(upToCount: headLength(start) - start.count)) ?? Data())
        return start + rest
    }

    /// Parses the first frame of an MP3 stream (after an optional ID3v2 tag) in `bytes`.
    /// - Returns: `nil` when the first frame is no Xing/Info frame with a frame count and a
    ///   LAME/Lavf/Lavc extension.
    static func parse(_ bytes: [UInt8]) -> MP3GaplessInfo? {
        var i = 0
        if bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33 { // "ID3"
            let size = (Int(bytes[6] & 0x7F) << 21) | (Int(bytes[7] & 0x7F) << 14) | (Int(bytes[8] & 0x7F) << 7) | Int(bytes[9] & 0x7F)
            i = 10 + size + ((bytes[5] & 0x10) != 0 ? 10 : 0)
        }
        // The first frame header within a few bytes of padding.
        let searchEnd = min(bytes.count - 4, i + 8192)
        while i < searchEnd && !(bytes[i] == 0xFF && bytes[i + 1] & 0xE0 == 0xE0) { i += 1 }
        guard i < searchEnd else { return nil }
        let version = (bytes[i + 1] >> 3) & 3       // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5
        let layer = (bytes[i + 1] >> 1) & 3         // 1: Layer III
        let crc = bytes[i + 1] & 1 == 0
        let rateIndex = Int((bytes[i + 2] >> 2) & 3)
        let mono = (bytes[i + 3] >> 6) & 3 == 3
        guard version != 1, layer == 1, rateIndex < 3 else { return nil }
        let rate = [44100, 48000, 32000][rateIndex] / (version == 3 ? 1 : version == 2 ? 2 : 4)
        let sideInfo = version == 3 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        var p = i + 4 + (crc ? 2 : 0) + sideInfo
        func u32(_ at: Int) -> Int {
            (Int(bytes[at]) << 24) | (Int(bytes[at + 1]) << 16) | (Int(bytes[at + 2]) << 8) | Int(bytes[at + 3])
        }
        guard p + 8 <= bytes.count else { return nil }
        let tag = String(decoding: bytes[p..<(p + 4)], as: UTF8.self)
        guard tag == "Xing" || tag == "Info" else { return nil }
        let flags = u32(p + 4)
        p += 8
        guard flags & 1 != 0, p + 4 <= bytes.count else { return nil }
        let frames = u32(p)
        p += 4
        if flags & 2 != 0 { p += 4 }
        if flags & 4 != 0 { p += 100 }
        if flags & 8 != 0 { p += 4 }
        // LAME extension: 9-byte encoder version, then 12 bytes, then delay and padding (12 bits each).
        guard p + 24 <= bytes.count else { return nil }
        let encoder = String(decoding: bytes[p..<(p + 4)], as: UTF8.self)
        guard ["LAME", "Lavf", "Lavc"].contains(encoder) else { return nil }
        let v = (Int(bytes[p + 21]) << 16) | (Int(bytes[p + 22]) << 8) | Int(bytes[p + 23])
        let info = MP3GaplessInfo(frames: frames, samplesPerFrame: version == 3 ? 1152 : 576,
                                  delay: v >> 12, padding: v & 0xFFF, sampleRate: rate)
        return info.frames > 0 && info.validSamples > 0 ? info : nil
    }
}
