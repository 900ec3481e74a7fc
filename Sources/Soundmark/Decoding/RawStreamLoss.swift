import Foundation

/// Estimates the audio a damaged raw elementary stream (MP3, ADTS AAC, AC-3, …) lost, from the
/// bytes the damage took: such streams carry no time stamps (FFmpeg's count frames), so
/// ``MediaDecoder`` turns lost bytes into lost seconds and the ``PlaybackClock`` fills them.
///
/// Lost bytes come from two places:
/// - the gap between the end of the last good frame's packet and the start (`pkt_pos`) of the
///   next good frame's packet: undecodable packets and bytes skipped between them;
/// - bytes a demuxer skipped while looking for the next frame header *without* counting them in
///   the packets' positions (FFmpeg 5.1's ADTS demuxer does: 2 s of noise bytes in a 48 kbit/s
///   stream showed as a 1.0 s gap in `pkt_pos`, the other half only here). They show as a lasting
///   rise of the **read-ahead**: the input's read position (`avio_seek(pb, 0, SEEK_CUR)`) minus the
///   end of the packet just read. Demuxers that read fixed blocks of input (MP3, AC-3: 1,024
///   bytes) have a read-ahead that wanders over the block from packet to packet, so it is
///   compared as its minimum over ``window`` good frames before the damage and as many after
///   it; a hole is therefore decided ``window`` good frames after it (``frame(position:size:readAhead:seconds:damaged:)``
///   says when it opens and when it is decided).
///
/// Bytes become seconds at the byte rate of the ``window`` good frames either side of the hole:
/// a variable bit rate follows the music, so the frames around a hole tell its rate better than
/// the last frame alone or the whole stream (2 s of noise bytes in a VBR MP3 at 103 s: the bytes
/// held 1.92 s; the neighbours say 1.9 s, the whole stream's mean 2.1 s).
struct RawStreamLoss {
    /// Good frames over which the read-ahead's minimum is taken, before and after damage: 16
    /// (0.37 s of AAC, 0.42 s of MP3 at 44.1 kHz).
    static let window = 16

    /// What a good frame means for the stream's damage accounting.
    enum Event: Equatable {
        /// The first good frame after damage: the hole lies just before this frame.
        case opened
        /// The hole opened earlier is decided: this many seconds were lost in it.
        case decided(seconds: Double)
    }

    /// One good frame: its packet's size (bytes), duration (s) and read-ahead (bytes).
    private struct Good {
        var bytes: Int64
        var seconds: Double
        var readAhead: Int64?
    }

    /// A hole being measured: bytes known lost so far, the read-ahead floors around it, and the
    /// good frames after it.
    private struct Hole {
        var bytes: Int64
        var floorBefore: Int64?
        var before: (bytes: Int64, seconds: Double)
        var floorAfter: Int64 = .max
        var after: (bytes: Int64, seconds: Double) = (0, 0)
        var frames = 0
    }

    /// The last ``window`` good frames (oldest first).
    private var recent: [Good] = []
    /// End (byte position) of the last good frame's packet, −1 before the first.
    private var lastFrameEnd: Int64 = -1
    private var hole: Hole?

    /// Whether a hole is open (decided only after ``window`` more good frames or at ``finish()``).
    var isMeasuring: Bool { hole != nil }

    /// Accounts one good (decoded) frame.
    /// - Parameters:
    ///   - position: byte position of the frame's packet (`pkt_pos`), −1 when unknown.
    ///   - size: the packet's size in bytes.
    ///   - readAhead: the input's read position minus the packet's end, in bytes, when known.
    ///   - seconds: the frame's duration in seconds.
    ///   - damaged: whether a packet or frame failed to decode since the last good frame.
    /// - Returns: `.opened` for the first good frame after damage, `.decided` once the hole's
    ///   loss is known, else `nil`.
    mutating func frame(position: Int64, size: Int, readAhead: Int64?, seconds: Double, damaged: Bool) -> Event? {
        var event: Event?
        if damaged {
            let gap = lastFrameEnd >= 0 && position > lastFrameEnd ? position - lastFrameEnd : 0
            if var open = hole {
                // More damage before the last was decided: one hole, measured after the last damage.
                open.bytes += gap
                open.floorAfter = .max
                open.frames = 0
                hole = open
            } else {
                let before = recent.filter { $0.bytes > 0 && $0.seconds > 0 }
                hole = Hole(bytes: gap, floorBefore: recent.compactMap(\.readAhead).min(),
                            before: (before.reduce(0) { $0 + $1.bytes }, before.reduce(0) { $0 + $1.seconds }))
                event = .opened
            }
        }
        let good = Good(bytes: Int64(max(size, 0)), seconds: seconds, readAhead: readAhead)
        recent.append(good)
        if recent.count > Self.window { recent.removeFirst() }
        if position >= 0 && size > 0 { lastFrameEnd = position + Int64(size) }
        if var open = hole {
            if let ahead = readAhead { open.floorAfter = min(open.floorAfter, ahead) }
            if good.bytes > 0 && seconds > 0 { open.after = (open.after.bytes + good.bytes, open.after.seconds + seconds) }
            open.frames += 1
            hole = open
            if open.frames >= Self.window, let lost = finish() { event = .decided(seconds: lost) }
        }
        return event
    }

    /// Decides the open hole with the good frames seen after it (at the end of the input, or
    /// after ``window`` of them).
    /// - Returns: the seconds lost, or `nil` when no hole is open or no good frame followed it.
    mutating func finish() -> Double? {
        guard let open = hole else { return nil }
        hole = nil
        let rateBytes = open.before.bytes + open.after.bytes, rateSeconds = open.before.seconds + open.after.seconds
        guard open.frames > 0, rateBytes > 0, rateSeconds > 0 else { return nil }
        var bytes = open.bytes
        if let before = open.floorBefore, open.floorAfter != .max, open.floorAfter > before {
            bytes += open.floorAfter - before
        }
        return Double(bytes) * rateSeconds / Double(rateBytes)
    }
}
