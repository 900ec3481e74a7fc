import Foundation
import CFFmpeg

/// How much input a ``MediaDecoder`` reads without audio coming out of it before it gives up:
/// an unbounded stream of garbage (`ln -s /dev/urandom r.mp3`, a pipe or a server sending noise)
/// was read for ever, a warning per packet. Every ``windowBytes`` read must yield at least
/// ``minimumAudioSeconds`` of decoded audio; real media holds far more (even video at 2 Gbit/s
/// carries 1 s of audio per 256 MB), while random bytes taken for MP3 decode a stray frame now
/// and then (0.5 s in 700 MB). Read FFmpeg's byte count (`bytes_read`, not the position, which
/// a seek to a file's end moves) from the interrupt callback, which the file and network
/// protocols call before every read (so a demuxer that loops inside one `av_read_frame`, e.g.
/// MP3 resynchronising over zeros, is stopped too), and after each packet (custom I/O).
///
/// A budget is reached from FFmpeg's callbacks through an unretained pointer: whoever hands out
/// ``interruptCallback`` keeps the budget alive, and the context it counts open, for as long as
/// FFmpeg may call it, and clears ``format`` / ``io`` before that context is freed.
final class GarbageBudget {
    /// Input bytes in one window: 256 MiB (about 3 s of `/dev/urandom`).
    static let windowBytes: Int64 = 256 << 20
    /// Decoded audio each window must yield, seconds.
    static let minimumAudioSeconds = 1.0

    /// The format context whose I/O is counted (set once it is allocated; `nil` once it is
    /// freed, so that no callback reaches a closed context).
    var format: UnsafeMutablePointer<AVFormatContext>?
    /// The I/O context counted when no format context reads it (a network stream fetched again
    /// for libvorbisfile); takes precedence over ``format``; `nil` once it is closed.
    var io: UnsafeMutablePointer<AVIOContext>?
    private var windowStart: Int64 = 0
    private var audioSeconds = 0.0
    /// Whether the budget ran out (the reads were interrupted).
    private(set) var exceeded = false

    /// The one-line reason given when the budget ran out.
    static var reason: String {
        "gave up after \(windowBytes >> 20) MB read without \(Int(minimumAudioSeconds)) s of decodable audio (not media, or damaged beyond use)"
    }

    /// Counts `seconds` of audio decoded.
    func add(seconds: Double) { audioSeconds += seconds }

    /// Whether to give up now: a window of input was read with too little audio from it.
    func check() -> Bool {
        if exceeded { return true }
        guard let pb = io ?? format?.pointee.pb else { return false }
        let read = pb.pointee.bytes_read
        guard read - windowStart >= Self.windowBytes else { return false }
        if audioSeconds < Self.minimumAudioSeconds {
            exceeded = true
            return true
        }
        windowStart = read
        audioSeconds = 0
        return false
    }

    /// The interrupt callback for `format.interrupt_callback` (opaque: this budget, unretained).
    var interruptCallback: AVIOInterruptCB {
        AVIOInterruptCB(callback: { opaque in
            guard let opaque else { return 0 }
            return Unmanaged<GarbageBudget>.fromOpaque(opaque).takeUnretainedValue().check() ? 1 : 0
        }, opaque: Unmanaged.passUnretained(self).toOpaque())
    }
}
