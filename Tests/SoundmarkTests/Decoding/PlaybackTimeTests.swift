import Foundation
import XCTest
@testable import Soundmark
#if canImport(Glibc)
import Glibc
#endif

/// Times on the media's playback time line (issue 8): late audio streams, MPEG-TS start times,
/// lost packets and corrupt frames. Every test makes its media with ffmpeg: 0.5 s bursts of a
/// 1 kHz tone every 5 s, whose onsets must come out at multiples of 5 s (±20 ms).
final class PlaybackTimeTests: XCTestCase {
    private static let rate = 8000
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try TestSupport.temporaryDirectory(self)
    }

    /// Writes media made by ffmpeg from `arguments` to `name`; returns its path.
    private func make(_ name: String, _ arguments: [String]) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try TestSupport.ffmpeg(arguments, output: path)
        return path
    }

    /// lavfi source of `seconds` s at 44.1 kHz: a 0.5 s burst of 1 kHz every 5 s (from 0), silence between.
    private func bursts(_ seconds: Double) -> [String] {
        ["-f", "lavfi", "-i", "aevalsrc='if(lt(mod(t,5),0.5),0.5*sin(2*PI*1000*t),0)':s=44100:d=\(seconds)"]
    }

    private struct Decoded {
        var samples: [Float]
        var warnings: [String]
        var duration: Double?
        var audioEnd: Int64?
    }

    private func decode(_ source: String) throws -> Decoded {
        var warnings: [String] = []
        let decoder = try MediaDecoder(source: source, sampleRate: Self.rate) { warnings.append($0) }
        var samples: [Float] = []
        while let chunk = try decoder.nextChunk() {
            XCTAssertEqual(chunk.firstSample, Int64(samples.count))
            samples += chunk.samples
        }
        return Decoded(samples: samples, warnings: warnings, duration: decoder.playbackDuration, audioEnd: decoder.audioEnd)
    }

    /// Onsets (s) of tone bursts: where the 5 ms RMS rises above 0.1 after at least 1 s below it.
    private func onsets(_ samples: [Float]) -> [Double] {
        let window = Self.rate / 200
        var result: [Double] = []
        var quietSince = -Self.rate
        var i = 0
        while i + window <= samples.count {
            var sum: Float = 0
            for x in samples[i..<(i + window)] { sum += x * x }
            let loud = (sum / Float(window)).squareRoot() > 0.1
            if loud {
                if i - quietSince >= Self.rate {
                    // Refine to the first loud sample of the window.
                    let first = samples[i..<(i + window)].firstIndex { abs($0) > 0.05 } ?? i
                    result.append(Double(first) / Double(Self.rate))
                }
                quietSince = i + window
            }
            i += window / 2
        }
        return result
    }

    private func assertOnsets(_ found: [Double], _ expected: [Double], accuracy: Double = 0.02,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(found.count, expected.count, "onsets \(found)", file: file, line: line)
        for (f, e) in zip(found, expected) {
            XCTAssertEqual(f, e, accuracy: accuracy, "onsets \(found)", file: file, line: line)
        }
    }

    // MARK: - 8.4 the media's own time line

    /// Video of 10 s whose audio (bursts at 0 and 5 s of the audio) starts 4.06 s in.
    private func delayedAudio(_ name: String, audioCodec: String) throws -> String {
        try make(name, ["-f", "lavfi", "-i", "color=c=red:size=64x64:rate=10:duration=10", "-itsoffset", "4.06"]
                 + bursts(5.6) + ["-map", "0:v", "-map", "1:a", "-c:v", "mpeg4", "-c:a", audioCodec])
    }

    func testDelayedAudioInMKVIsOnThePlaybackTimeLine() throws {
        let d = try decode(try delayedAudio("late.mkv", audioCodec: "aac"))
        assertOnsets(onsets(d.samples), [4.06, 9.06])
        XCTAssertEqual(d.duration ?? 0, 10, accuracy: 0.05) // the video's length
        XCTAssertTrue(d.warnings.isEmpty, "\(d.warnings)")
    }

    func testDelayedAudioInMP4IsOnThePlaybackTimeLine() throws {
        let d = try decode(try delayedAudio("late.mp4", audioCodec: "aac"))
        assertOnsets(onsets(d.samples), [4.06, 9.06])
        XCTAssertEqual(d.duration ?? 0, 10, accuracy: 0.05)
    }

    func testDelayedAudioInMPEGTSIsOnThePlaybackTimeLine() throws {
        let d = try decode(try delayedAudio("late.ts", audioCodec: "aac"))
        assertOnsets(onsets(d.samples), [4.06, 9.06])
        XCTAssertEqual(d.duration ?? 0, 10, accuracy: 0.05)
    }

    func testAudioOnlyMPEGTSStartsAtZero() throws {
        // ffmpeg's MPEG-TS time stamps start at 1.4 s: the playback time line starts at 0.
        let d = try decode(try make("audio.ts", bursts(12) + ["-c:a", "mp2", "-f", "mpegts"]))
        assertOnsets(onsets(d.samples), [0, 5, 10])
        XCTAssertEqual(d.duration ?? 0, 12, accuracy: 0.05)
        XCTAssertEqual(Double(d.audioEnd ?? 0) / Double(Self.rate), d.duration ?? 0, accuracy: 0.001)
    }

    func testAudioFilesStartAtZero() throws {
        // Codecs whose priming the container or decoder removes: the first burst is at 0, and
        // nothing is reported.
        for (name, options) in [("a.wav", ["-c:a", "pcm_s16le"]), ("a.flac", ["-c:a", "flac"]),
                                ("a.ogg", ["-c:a", "libvorbis"]), ("a.opus", ["-c:a", "libopus"]),
                                ("opus.mkv", ["-c:a", "libopus"]), ("a.m4a", ["-c:a", "aac"]),
                                ("a.mp3", ["-c:a", "libmp3lame"])] {
            let d = try decode(try make(name, bursts(11) + options))
            XCTAssertEqual(onsets(d.samples).first ?? -1, 0, accuracy: 0.02, name)
            XCTAssertEqual(onsets(d.samples).last ?? -1, 10, accuracy: 0.02, name)
            XCTAssertEqual(d.duration ?? 0, 11, accuracy: 0.05, name)
            XCTAssertTrue(d.warnings.isEmpty, "\(name): \(d.warnings)")
        }
    }

    func testTimestampJitterInsertsNothing() throws {
        // Matroska rounds time stamps to 1 ms: 1000-sample PCM packets (22.68 ms) jitter by up to 0.5 ms.
        let d = try decode(try make("jitter.mkv", bursts(30) + ["-c:a", "pcm_s16le", "-frame_size", "1000"]))
        XCTAssertEqual(d.samples.count, 30 * Self.rate, accuracy: 2)
        assertOnsets(onsets(d.samples), [0, 5, 10, 15, 20, 25])
        XCTAssertTrue(d.warnings.isEmpty, "\(d.warnings)")
    }

    // MARK: - 8.10 lost packets

    /// Byte position (ffprobe's `pos`) of the first audio packet at or after `seconds` of `path`.
    private func position(_ path: String, at seconds: Double) throws -> Int {
        let r = try TestSupport.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries",
                                                         "packet=pts_time,pos", "-of", "csv=p=0", path])
        for line in r.stdout.split(separator: "\n") {
            let fields = line.split(separator: ",")
            guard fields.count >= 2, let t = Double(fields[0]), let pos = Int(fields[1]) else { continue }
            if t >= seconds { return pos }
        }
        throw XCTSkip("no packet at \(seconds) s in \(path)")
    }

    /// Removes the packets between `from` and `to` seconds of `path` (by their byte positions).
    private func cut(_ path: String, to name: String, from: Double, to end: Double) throws -> String {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data.removeSubrange(try position(path, at: from)..<position(path, at: end))
        let out = directory.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: out))
        return out
    }

    func testLostTransportStreamPacketsBecomeAGap() throws {
        let source = try make("whole.ts", bursts(60) + ["-c:a", "mp2", "-f", "mpegts"])
        // The packets of 51–53 s (1.4 s of stream time later: ffmpeg's TS start) removed.
        let damaged = try cut(source, to: "input.ts", from: 52.4, to: 54.4)
        let d = try decode(damaged)
        assertOnsets(onsets(d.samples), [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55])
        XCTAssertEqual(d.duration ?? 0, 60, accuracy: 0.1)
        let gap = d.warnings.first { $0.contains("of audio missing at") }
        XCTAssertNotNil(gap, "\(d.warnings)")
        XCTAssertTrue(gap?.hasPrefix("\(damaged): ") ?? false, gap ?? "")
        XCTAssertTrue(gap?.contains("2.0 s of audio missing at 51.0 s") ?? false, gap ?? "")
    }

    func testTimestampsGoingBackAreCountedThrough() throws {
        // Two MPEG-TS files joined: the time stamps restart at 1.4 s after 12 s.
        let part = try make("part.ts", bursts(12) + ["-c:a", "mp2", "-f", "mpegts"])
        let joined = directory.appendingPathComponent("joined.ts").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: part))
        try (bytes + bytes).write(to: URL(fileURLWithPath: joined))
        let d = try decode(joined)
        let alone = try decode(part) // the second part follows on from the first's last sample
        let length = Double(alone.samples.count) / Double(Self.rate)
        assertOnsets(onsets(alone.samples), [0, 5, 10])
        assertOnsets(onsets(d.samples), onsets(alone.samples) + onsets(alone.samples).map { $0 + length }, accuracy: 0.002)
        XCTAssertEqual(d.duration ?? 0, 2 * length, accuracy: 0.002)
        XCTAssertEqual(d.warnings, ["\(joined): time stamps go back 12.0 s at 12.0 s; samples counted on"])
    }

    func testLostOggPagesBecomeAGap() throws {
        let source = try make("whole.ogg", bursts(60) + ["-c:a", "libvorbis"])
        let damaged = try cut(source, to: "input.ogg", from: 26, to: 28)
        let d = try decode(damaged)
        assertOnsets(onsets(d.samples), [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55])
        XCTAssertEqual(d.duration ?? 0, 60, accuracy: 0.1)
        XCTAssertTrue(d.warnings.contains { $0.contains("of audio missing at") }, "\(d.warnings)")
    }

    func testCorruptMP3FramesKeepLaterTimes() throws {
        let source = try make("whole.mp3", bursts(30) + ["-c:a", "libmp3lame", "-b:a", "128k"])
        var data = try Data(contentsOf: URL(fileURLWithPath: source))
        // 200 bytes of noise from the middle of the file, over a few frame headers' worth of
        // data: the decoder loses the frames it cannot parse.
        var state: UInt32 = 12345
        for damage in [data.count / 2, data.count / 2 + 1000, data.count / 2 + 2600] {
            for i in damage..<(damage + 200) {
                state = state &* 1_103_515_245 &+ 12345
                data[i] = UInt8(truncatingIfNeeded: state >> 16)
            }
        }
        let damaged = directory.appendingPathComponent("input.mp3").path
        try data.write(to: URL(fileURLWithPath: damaged))
        let d = try decode(damaged)
        assertOnsets(onsets(d.samples), [0, 5, 10, 15, 20, 25])
        XCTAssertEqual(Double(d.samples.count) / Double(Self.rate), 30, accuracy: 0.03)
        XCTAssertTrue(d.warnings.contains { $0.contains("of audio missing at 15.") }, "\(d.warnings)")
    }

    /// Overwrites the bytes of the packets between `from` and `to` seconds of `path` with
    /// seeded noise (the file keeps its length: damage, not loss of bytes).
    private func overwrite(_ path: String, to name: String, from: Double, to end: Double) throws -> String {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        var state: UInt32 = 2024
        for i in try position(path, at: from)..<position(path, at: end) {
            state = state &* 1_103_515_245 &+ 12345
            data[i] = UInt8(truncatingIfNeeded: state >> 16)
        }
        let out = directory.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: out))
        return out
    }

    func testNoiseBytesInRawAACKeepLaterTimes() throws {
        // ADTS AAC carries no time stamps, and FFmpeg's ADTS demuxer skips noise bytes while it
        // looks for the next frame header without counting them in the packets' positions:
        // 2 s of noise bytes in a 48 kbit/s stream moved every later time 1.0 s early. Quiet
        // hiss between the bursts gives the encoder real frames to write there.
        let source = ["-f", "lavfi", "-i",
                      "aevalsrc='if(lt(mod(t,5),0.5),0.5*sin(2*PI*1000*t),0)+0.02*(2*random(0)-1)':s=44100:d=30"]
        for bitRate in ["48k", "128k"] {
            let whole = try make("whole-\(bitRate).aac", source + ["-c:a", "aac", "-b:a", bitRate, "-f", "adts"])
            let damaged = try overwrite(whole, to: "input-\(bitRate).aac", from: 11, to: 13.5)
            let d = try decode(damaged)
            let found = onsets(d.samples)
            // Relative to the first burst: ADTS does not signal the encoder's 1,024 priming samples.
            assertOnsets(found.map { $0 - (found.first ?? 0) }, [0, 5, 10, 15, 20, 25])
            XCTAssertEqual(Double(d.samples.count) / Double(Self.rate), 30.02, accuracy: 0.05, bitRate)
            XCTAssertTrue(d.warnings.contains { $0.contains("of audio missing at 11.") }, "\(bitRate): \(d.warnings)")
        }
    }

    // MARK: - 8.5 MP3 from a pipe

    /// Decodes `path` fed through standard input (`-`).
    private func decodeThroughStandardInput(_ path: String) throws -> Decoded {
        return try TestSupport.withStandardInput(from: path) { try decode("-") }
    }

    func testMP3FromAPipeMatchesTheFile() throws {
        // 44.1 kHz (1152-sample frames) and 8 kHz (576-sample frames) MP3s, bursts to the end;
        // one with 140 KB of cover art in its ID3 tag before the LAME header.
        let cover = try make("cover.png", ["-f", "lavfi", "-i", "nullsrc=s=320x320,geq=random(1)*255:128:128",
                                           "-frames:v", "1"])
        for (name, options) in [("gapless.mp3", ["-c:a", "libmp3lame"]),
                                ("gapless8k.mp3", ["-ar", "8000", "-c:a", "libmp3lame", "-b:a", "32k"]),
                                ("cover.mp3", ["-i", cover, "-map", "0:a", "-map", "1:v", "-c:a", "libmp3lame",
                                               "-c:v", "png", "-disposition:v", "attached_pic"])] {
            let path = try make(name, bursts(10.3) + options)
            let file = try decode(path)
            let piped = try decodeThroughStandardInput(path)
            XCTAssertEqual(Double(file.samples.count), 10.3 * Double(Self.rate), accuracy: 20, name)
            XCTAssertEqual(piped.samples.count, file.samples.count, name)
            XCTAssertEqual(piped.duration ?? 0, file.duration ?? 1, accuracy: 0.001, name)
            // Aligned within 1 ms: the same onsets, and the same samples.
            assertOnsets(onsets(piped.samples), onsets(file.samples), accuracy: 0.001)
            // The same samples, but for the resampler's last few (FFmpeg cuts a file's padding
            // before resampling, we cut a pipe's after).
            let n = min(file.samples.count, piped.samples.count) - 16
            let difference = zip(file.samples[..<n], piped.samples[..<n]).map { abs($0 - $1) }.max() ?? 1
            XCTAssertLessThan(difference, 1e-4, name)
        }
    }

    func testConcatenatedMP3sAreNotCutAtTheFirstHeader() throws {
        let one = try make("part.mp3", bursts(5.6) + ["-c:a", "libmp3lame"])
        let joined = directory.appendingPathComponent("joined.mp3").path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: one))
        try (bytes + bytes).write(to: URL(fileURLWithPath: joined))
        let file = try decode(joined)
        let piped = try decodeThroughStandardInput(joined)
        XCTAssertGreaterThanOrEqual(file.samples.count, 2 * Int(5.6 * Double(Self.rate)))
        XCTAssertEqual(piped.samples.count, file.samples.count)
        let found = onsets(piped.samples) // the second part's bursts follow the first's last within 1 s
        XCTAssertEqual(found.count, 3, "\(found)")
        XCTAssertGreaterThan(found.last ?? 0, 10.6)
    }

    func testGaplessHeaderIsParsed() throws {
        let path = try make("header.mp3", bursts(3) + ["-c:a", "libmp3lame"])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let info = try XCTUnwrap(MP3GaplessInfo.parse(bytes))
        XCTAssertEqual(info.sampleRate, 44100)
        XCTAssertEqual(info.samplesPerFrame, 1152)
        XCTAssertEqual(info.validSamples, 3 * 44100)
        XCTAssertNil(MP3GaplessInfo.parse(Array(bytes.dropFirst(400))))
    }

    // MARK: - PlaybackClock rules

    func testClockFillsTheLeadAndHolesAndCountsThroughJitter() {
        var clock = PlaybackClock(rate: 8000)
        XCTAssertEqual(clock.sample(timestamp: 5_449_089, timeBase: (1, 1_000_000), origin: 1.4), 32393)
        XCTAssertEqual(clock.place(position: 32480, count: 0), .init(fill: 32480))        // late start: silence
        XCTAssertEqual(clock.place(position: 40_100, count: 40_000), .init())             // 12.5 ms jitter: counted
        XCTAssertEqual(clock.place(position: 39_700, count: 40_000), .init())             // backwards jitter too
        XCTAssertEqual(clock.place(position: 416_000, count: 400_000),
                       .init(fill: 16000, warning: "2.0 s of audio missing at 50.0 s"))
    }

    func testClockRebasesOnBackwardAndHugeJumps() {
        var clock = PlaybackClock(rate: 8000)
        XCTAssertEqual(clock.place(position: 0, count: 0), .init())
        XCTAssertEqual(clock.place(position: 10_000, count: 80_000),
                       .init(warning: "time stamps go back 8.8 s at 10.0 s; samples counted on"))
        // Re-based: the next frames follow on from the count.
        XCTAssertEqual(clock.place(position: 10_800, count: 80_800), .init())
        let far = Int64(8000 * 700)
        XCTAssertEqual(clock.place(position: 10_800 + far, count: 80_800).fill, 0)
        XCTAssertEqual(clock.place(position: 11_600 + far, count: 81_600), .init())
    }
}
