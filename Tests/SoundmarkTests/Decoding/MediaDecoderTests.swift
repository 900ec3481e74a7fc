import Foundation
import XCTest
import Soundmark
#if canImport(Glibc)
import Glibc
#endif

/// Tests for `MediaDecoder`. Every test generates its own media with the `ffmpeg` CLI
/// (lavfi sine/color sources) in a temporary directory.
final class MediaDecoderTests: XCTestCase {
    /// Collects warning callback messages.
    final class WarningLog { var messages: [String] = [] }

    private static let directory: URL = FileManager.default.temporaryDirectory
        .appendingPathComponent("soundmark-decoder-tests-\(UUID().uuidString)")
    private static let rate = 8000

    override class func setUp() {
        super.setUp()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override class func tearDown() {
        try? FileManager.default.removeItem(at: directory)
        super.tearDown()
    }

    override func setUpWithError() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.ffmpegPath) else {
            throw XCTSkip("ffmpeg CLI not found at \(Self.ffmpegPath)")
        }
    }

    // MARK: - Helpers

    private static let ffmpegPath = "/usr/bin/ffmpeg"

    /// Runs ffmpeg with `arguments` writing `name` in the temp dir; returns its path.
    @discardableResult
    private func generate(_ name: String, _ arguments: [String],
                          file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let output = Self.directory.appendingPathComponent(name).path
        if FileManager.default.fileExists(atPath: output) { return output }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ffmpegPath)
        process.arguments = ["-hide_banner", "-nostdin", "-loglevel", "error", "-y"] + arguments + [output]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            XCTFail("ffmpeg failed for \(name): \(String(decoding: message, as: UTF8.self))",
                    file: file, line: line)
            throw XCTSkip("cannot generate \(name)")
        }
        return output
    }

    /// lavfi sine source arguments.
    private func sine(_ frequency: Int, rate: Int = 44100, seconds: Double = 3) -> [String] {
        ["-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=\(rate):duration=\(seconds)"]
    }

    private func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// Goertzel power of `frequency` (Hz) in `samples` at `rate` (Hz), normalised by length.
    private func power(_ samples: ArraySlice<Float>, at frequency: Double, rate: Int) -> Double {
        let w = 2 * Double.pi * frequency / Double(rate)
        let coefficient = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = Double(x) + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let p = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        return p / Double(samples.count * samples.count)
    }

    /// Frequency (Hz) estimated from upward zero crossings.
    private func zeroCrossingFrequency(_ samples: ArraySlice<Float>, rate: Int) -> Double {
        var crossings = 0
        var previous = samples.first ?? 0
        for x in samples.dropFirst() {
            if previous < 0 && x >= 0 { crossings += 1 }
            previous = x
        }
        return Double(crossings) * Double(rate) / Double(samples.count)
    }

    /// Asserts `samples` is a clean tone of `frequency` Hz lasting `seconds` (± `tolerance` s).
    private func assertTone(_ samples: [Float], frequency: Double, seconds: Double,
                            tolerance: Double = 0.1, rate: Int = MediaDecoderTests.rate,
                            minimumRMS: Double = 0.03,
                            file: StaticString = #filePath, line: UInt = #line) {
        let duration = Double(samples.count) / Double(rate)
        XCTAssertEqual(duration, seconds, accuracy: tolerance, "duration", file: file, line: line)
        guard samples.count > rate / 2 else { return XCTFail("too few samples", file: file, line: line) }
        // Skip the edges (encoder ramps, resampler settling).
        let middle = samples[(samples.count / 8)..<(samples.count * 7 / 8)]
        XCTAssertGreaterThan(rms(middle), minimumRMS, "level", file: file, line: line)
        XCTAssertEqual(zeroCrossingFrequency(middle, rate: rate), frequency,
                       accuracy: frequency * 0.02, "zero-crossing frequency", file: file, line: line)
        let atTone = power(middle, at: frequency, rate: rate)
        for other in [frequency * 0.7, frequency * 1.4] {
            XCTAssertGreaterThan(atTone, 100 * power(middle, at: other, rate: rate),
                                 "tone dominates \(other) Hz", file: file, line: line)
        }
    }

    private func decode(_ path: String, rate: Int = MediaDecoderTests.rate, stream: Int? = nil,
                        warnings: WarningLog? = nil) throws -> [Float] {
        try MediaDecoder.decodeAll(source: path, sampleRate: rate, streamIndex: stream) { message in
            warnings?.messages.append(message)
        }
    }

    private func assertCannotOpen(_ path: String, reason: String,
                                  file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: 8000), file: file, line: line) { error in
            XCTAssertEqual(error as? MediaDecodingError, .cannotOpen(path: path, reason: reason), file: file, line: line)
            let text = (error as? LocalizedError)?.errorDescription ?? ""
            XCTAssertTrue(text.contains(path) && text.contains(reason), text, file: file, line: line)
            XCTAssertFalse(text.contains("\n"), file: file, line: line)
        }
    }

    // MARK: - Containers and codecs

    func testMP3() throws {
        let path = try generate("tone.mp3", sine(1000) + ["-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(decoder.inputDescription, "mp3, 44100 Hz, 2 channels")
        XCTAssertEqual(decoder.streamIndex, 0)
        var samples: [Float] = []
        while let chunk = try decoder.nextChunk() { samples += chunk.samples }
        assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.03)
    }

    func testAACInM4A() throws {
        let path = try generate("tone.m4a", sine(1000) + ["-c:a", "aac", "-b:a", "96k"])
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.05)
    }

    func testOpusInMKV() throws {
        let path = try generate("tone.mkv", sine(1000, rate: 48000) + ["-c:a", "libopus", "-b:a", "64k"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertTrue(decoder.inputDescription.hasPrefix("opus, 48000 Hz"), decoder.inputDescription)
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.03)
    }

    func testOggVorbisAndStreamTags() throws {
        let path = try generate("tone.ogg", sine(1000) + ["-c:a", "libvorbis", "-q:a", "4",
                                                          "-metadata", "title=Ogg Title",
                                                          "-metadata", "ARTIST=Ogg Artist"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        // Vorbis comments live on the stream; they fill in for the (empty) container tags.
        XCTAssertEqual(decoder.tags["title"], "Ogg Title")
        XCTAssertEqual(decoder.tags["artist"], "Ogg Artist")
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.03)
    }

    func testFLAC96kHz() throws {
        let path = try generate("tone96k.flac", sine(1000, rate: 96000) + ["-c:a", "flac"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(decoder.inputDescription, "flac, 96000 Hz, 1 channel")
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.005)
    }

    func testWAVPCM16() throws {
        let path = try generate("tone_s16.wav", sine(1000) + ["-c:a", "pcm_s16le"])
        let samples = try decode(path)
        XCTAssertEqual(samples.count, 24000, accuracy: 2)
        assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.001)
        // Sine source amplitude is 1/8 full scale: RMS = 0.125 / sqrt(2).
        XCTAssertEqual(rms(samples[4000..<20000]), 0.125 / 2.0.squareRoot(), accuracy: 0.005)
    }

    func testWAVMuLaw8kHz() throws {
        let path = try generate("tone_mulaw.wav", sine(1000, rate: 8000) + ["-c:a", "pcm_mulaw"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(decoder.inputDescription, "pcm_mulaw, 8000 Hz, 1 channel")
        let samples = try decode(path)
        XCTAssertEqual(samples.count, 24000) // same rate: sample-exact
        assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.001)
    }

    func testMPEGTS() throws {
        let path = try generate("tone.ts", sine(1000) + ["-c:a", "aac", "-b:a", "96k", "-f", "mpegts"])
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.1)
    }

    func testMP4WithVideoTrack() throws {
        let path = try generate("video.mp4", ["-f", "lavfi", "-i", "color=c=red:size=64x64:rate=10:duration=3"]
                                + sine(1000) + ["-map", "0:v", "-map", "1:a", "-c:v", "mpeg4",
                                                "-c:a", "aac", "-shortest"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(decoder.streamIndex, 1)
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: Self.rate, streamIndex: 0)) {
            XCTAssertEqual($0 as? MediaDecodingError, .streamNotAudio(path: path, index: 0))
        }
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.1)
    }

    func testMP3WithCoverArtAndTags() throws {
        let cover = try generate("cover.png", ["-f", "lavfi", "-i", "color=c=blue:size=32x32",
                                               "-frames:v", "1"])
        // The mp3 demuxer lists the audio first (stream 0) and the ID3 APIC picture as stream 1.
        let path = try generate("cover.mp3", ["-i", cover] + sine(1000)
                                + ["-map", "0:v", "-map", "1:a", "-c:v", "png", "-c:a", "libmp3lame",
                                   "-disposition:v", "attached_pic", "-id3v2_version", "3",
                                   "-metadata", "title=Cover Song", "-metadata", "artist=Tester",
                                   "-metadata", "album=Tests"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(decoder.streamIndex, 0)
        XCTAssertEqual(decoder.tags["title"], "Cover Song")
        XCTAssertEqual(decoder.tags["artist"], "Tester")
        XCTAssertEqual(decoder.tags["album"], "Tests")
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: Self.rate, streamIndex: 1)) {
            XCTAssertEqual($0 as? MediaDecodingError, .streamNotAudio(path: path, index: 1))
        }
        assertTone(try decode(path), frequency: 1000, seconds: 3, tolerance: 0.03)
    }

    // MARK: - Channels and rates

    func testCentreOnly51KeepsLevel() throws {
        // Reference: the same full-level tone in both stereo channels (downmixes 3 dB hotter).
        let stereo = try generate("stereo.wav", sine(1000, rate: 48000)
                                  + ["-af", "pan=stereo|FL=c0|FR=c0", "-c:a", "pcm_s16le"])
        let centre = try generate("centre51.flac", sine(1000, rate: 48000)
                                  + ["-af", "pan=5.1|FC=c0", "-c:a", "flac"])
        // Same, but with no channel layout stored (6 unspecified channels, centre = 3rd).
        let unknown = try generate("centre6c.wav", sine(1000, rate: 48000)
                                   + ["-af", "pan=6c|c2=c0", "-c:a", "pcm_s16le"])
        let stereoSamples = try decode(stereo)
        let reference = rms(stereoSamples[4000..<20000])
        XCTAssertEqual(reference, 0.125, accuracy: 0.01)
        for path in [centre, unknown] {
            let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
            XCTAssertTrue(decoder.inputDescription.hasSuffix("6 channels"), decoder.inputDescription)
            let samples = try decode(path)
            assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.005)
            let level = rms(samples[4000..<20000])
            XCTAssertEqual(level, 0.125 / 2.0.squareRoot(), accuracy: 0.01, "centre passes at unity")
            let difference = 20 * log10(level / reference)
            XCTAssertLessThan(abs(difference), 4.5, "\(path): \(difference) dB vs stereo")
        }
    }

    func test192kHz() throws {
        let path = try generate("tone192k.wav", sine(1000, rate: 192000) + ["-c:a", "pcm_s24le"])
        let samples = try decode(path)
        XCTAssertEqual(samples.count, 24000, accuracy: 5)
        assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.001)
        // Also at a high analysis rate.
        let high = try decode(path, rate: 48000)
        assertTone(high, frequency: 1000, seconds: 3, tolerance: 0.001, rate: 48000)
    }

    func testSampleCountIsExactAfterResampling() throws {
        let path = try generate("ten.wav", sine(440, rate: 44100, seconds: 10) + ["-c:a", "pcm_s16le"])
        let samples = try decode(path)
        XCTAssertEqual(samples.count, 80000, accuracy: 100)
        assertTone(samples, frequency: 440, seconds: 10, tolerance: 0.0125)
    }

    func testChunksAreContiguousAndSized() throws {
        let path = try generate("chunks.flac", sine(1000, rate: 44100, seconds: 4.3) + ["-c:a", "flac"])
        let decoder = try MediaDecoder(source: path, sampleRate: Self.rate)
        var chunks: [AudioChunk] = []
        while let chunk = try decoder.nextChunk() { chunks.append(chunk) }
        XCTAssertNil(try decoder.nextChunk())
        XCTAssertEqual(chunks.count, 5)
        var expected: Int64 = 0
        for (i, chunk) in chunks.enumerated() {
            XCTAssertEqual(chunk.firstSample, expected)
            if i < chunks.count - 1 { XCTAssertEqual(chunk.samples.count, Self.rate) }
            expected += Int64(chunk.samples.count)
        }
        XCTAssertEqual(decoder.samplesProduced, expected)
        XCTAssertEqual(Double(expected), 4.3 * 8000, accuracy: 10)
    }

    func testDominantFrequencySurvivesResampling() throws {
        let path = try generate("tone2500.flac", sine(2500, rate: 44100) + ["-c:a", "flac"])
        let samples = try decode(path, rate: 11025)
        assertTone(samples, frequency: 2500, seconds: 3, tolerance: 0.005, rate: 11025)
    }

    func testFormatChangeMidStreamRebuildsResampler() throws {
        let first = try generate("part1.mp3", sine(1000, rate: 44100, seconds: 2)
                                 + ["-ac", "2", "-c:a", "libmp3lame", "-write_xing", "0"])
        let second = try generate("part2.mp3", sine(1000, rate: 22050, seconds: 2)
                                  + ["-ac", "1", "-c:a", "libmp3lame", "-write_xing", "0"])
        let joined = Self.directory.appendingPathComponent("joined.mp3")
        try (Data(contentsOf: URL(fileURLWithPath: first)) + Data(contentsOf: URL(fileURLWithPath: second)))
            .write(to: joined)
        let samples = try decode(joined.path)
        assertTone(samples, frequency: 1000, seconds: 4, tolerance: 0.15)
        // Both halves carry the tone.
        XCTAssertGreaterThan(rms(samples[2000..<14000]), 0.05)
        XCTAssertGreaterThan(rms(samples[18000..<30000]), 0.05)
    }

    // MARK: - Stream selection

    func testSecondAudioStreamSelection() throws {
        let path = try generate("two.mkv", sine(440, rate: 44100, seconds: 2) + sine(1000, rate: 44100, seconds: 2)
                                + ["-map", "0:a", "-map", "1:a", "-c:a", "flac"])
        let best = try MediaDecoder(source: path, sampleRate: Self.rate)
        XCTAssertEqual(best.streamIndex, 0)
        assertTone(try decode(path), frequency: 440, seconds: 2, tolerance: 0.005)
        let second = try MediaDecoder(source: path, sampleRate: Self.rate, streamIndex: 1)
        XCTAssertEqual(second.streamIndex, 1)
        assertTone(try decode(path, stream: 1), frequency: 1000, seconds: 2, tolerance: 0.005)
        for bad in [2, -1, 99] {
            XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: Self.rate, streamIndex: bad)) {
                XCTAssertEqual($0 as? MediaDecodingError, .streamNotAudio(path: path, index: bad))
            }
        }
    }

    func testVideoOnlyFileHasNoAudioStream() throws {
        let path = try generate("silent.mp4", ["-f", "lavfi", "-i", "color=c=red:size=64x64:rate=10:duration=1",
                                               "-c:v", "mpeg4"])
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: Self.rate)) {
            XCTAssertEqual($0 as? MediaDecodingError, .noAudioStream(path: path))
        }
    }

    // MARK: - stdin

    func testStandardInputPipe() throws {
        let path = try generate("pipe.mp3", sine(1000) + ["-c:a", "libmp3lame"])
        let samples = try TestSupport.withStandardInput(from: path) { try MediaDecoder.decodeAll(source: "-", sampleRate: Self.rate) }
        // The LAME gapless header is read from the pipe too: exactly 3 s.
        assertTone(samples, frequency: 1000, seconds: 3, tolerance: 0.1)
        XCTAssertEqual(samples.count, 3 * Self.rate)
    }

    // MARK: - Errors and damaged input

    func testMissingFile() {
        assertCannotOpen(Self.directory.appendingPathComponent("nope.mp3").path, reason: "no such file")
    }

    func testEmptyFile() throws {
        let path = Self.directory.appendingPathComponent("empty.mp3").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        assertCannotOpen(path, reason: "empty file")
    }

    func testTextFiles() throws {
        let short = Self.directory.appendingPathComponent("notes.mp3").path
        try "hello, this is not audio\n".write(toFile: short, atomically: true, encoding: .utf8)
        assertCannotOpen(short, reason: "not a media file or unsupported format")
        // A .txt file is claimed by FFmpeg's "tty" (ANSI art) demuxer: still not media.
        let long = Self.directory.appendingPathComponent("notes.txt").path
        try (1...5000).map { "line \($0)" }.joined(separator: "\n")
            .write(toFile: long, atomically: true, encoding: .utf8)
        assertCannotOpen(long, reason: "not a media file or unsupported format")
    }

    func testDirectory() {
        assertCannotOpen(Self.directory.path, reason: "is a directory")
    }

    func testUnknownCodecIsDecoderUnavailable() throws {
        let path = try generate("unknown-src.wav", sine(1000) + ["-c:a", "pcm_s16le"])
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(data[20], 1) // WAVE_FORMAT_PCM
        data[20] = 0x34; data[21] = 0x12 // unregistered format tag 0x1234
        let unknown = Self.directory.appendingPathComponent("unknown.wav").path
        try data.write(to: URL(fileURLWithPath: unknown))
        XCTAssertThrowsError(try MediaDecoder(source: unknown, sampleRate: 8000)) {
            XCTAssertEqual($0 as? MediaDecodingError, .decoderUnavailable(path: unknown, codec: "none"))
        }
    }

    func testInvalidSampleRate() throws {
        let path = try generate("tone_s16.wav", sine(1000) + ["-c:a", "pcm_s16le"])
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: 0)) {
            guard case .cannotOpen = $0 as? MediaDecodingError else { return XCTFail("\($0)") }
        }
    }

    func testTruncatedMP3DecodesFirstPart() throws {
        let path = try generate("long.mp3", sine(1000, rate: 44100, seconds: 4) + ["-c:a", "libmp3lame"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let truncated = Self.directory.appendingPathComponent("truncated.mp3")
        try data.prefix(data.count / 2 + 7).write(to: truncated) // cut mid-frame
        let warnings = WarningLog()
        let samples = try decode(truncated.path, warnings: warnings)
        assertTone(samples, frequency: 1000, seconds: 2, tolerance: 0.3)
    }

    func testTruncatedFLACAndM4ADoNotThrow() throws {
        // faststart: the m4a index (moov) comes first, so a cut loses only audio data.
        for (name, codec) in [("cut.flac", ["flac"]), ("cut.m4a", ["aac", "-movflags", "+faststart"])] {
            let path = try generate("full-" + name, sine(1000, rate: 44100, seconds: 4) + ["-c:a"] + codec)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let truncated = Self.directory.appendingPathComponent(name)
            try data.prefix(data.count * 6 / 10).write(to: truncated)
            let samples = try decode(truncated.path)
            XCTAssertGreaterThan(samples.count, 8000, name)
            XCTAssertLessThan(samples.count, 4 * 8000, name)
        }
    }

    func testStalledHTTPServerEndsTheInputAfterTheNetworkTimeout() throws {
        // A server that sends the first half of an MP3 (Content-Length of the whole file) and
        // then keeps the connection open without sending anything more.
        let path = try generate("stall.mp3", sine(1000, rate: 44100, seconds: 4) + ["-c:a", "libmp3lame"])
        let script = Self.directory.appendingPathComponent("stall.py")
        try """
        import socket, sys, time
        data = open(sys.argv[1], "rb").read()
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        print(srv.getsockname()[1], flush=True)
        conn, _ = srv.accept()
        request = b""
        while b"\\r\\n\\r\\n" not in request:
            request += conn.recv(4096)
        head = "HTTP/1.1 200 OK\\r\\nContent-Type: audio/mpeg\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(data)
        conn.sendall(head.encode() + data[:len(data) // 2])
        time.sleep(60)
        """.write(to: script, atomically: true, encoding: .utf8)
        let (server, port) = try TestSupport.startLocalServer(script: script, arguments: [path])
        defer { server.terminate(); server.waitUntilExit() }
        let url = "http://127.0.0.1:\(port)/stall.mp3"

        // Decode on another thread, so a hang fails the test instead of blocking it.
        final class Outcome: @unchecked Sendable { var samples: [Float] = []; var warnings: [String] = []; var error: Error? }
        let outcome = Outcome(), done = DispatchSemaphore(value: 0)
        Thread {
            do {
                let decoder = try MediaDecoder(source: url, sampleRate: Self.rate, warning: { outcome.warnings.append($0) },
                                               networkTimeout: 1)
                while let chunk = try decoder.nextChunk() { outcome.samples += chunk.samples }
            } catch { outcome.error = error }
            done.signal()
        }.start()
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "the decoder still waits for a stalled server after 30 s")
        XCTAssertNil(outcome.error)
        // About the first half (2 s) of the tone, then a warning that the input ended early.
        XCTAssertEqual(Double(outcome.samples.count) / Double(Self.rate), 2, accuracy: 0.3)
        XCTAssertTrue(outcome.warnings.contains { $0.contains("ended early") && $0.contains("no data for 1 s") }, "\(outcome.warnings)")
        // Warnings name the input.
        XCTAssertTrue(outcome.warnings.allSatisfy { $0.hasPrefix(url + ": ") }, "\(outcome.warnings)")
    }

    func testCorruptMiddleIsSkipped() throws {
        let path = try generate("corrupt-src.mp3", sine(1000, rate: 44100, seconds: 4) + ["-c:a", "libmp3lame"])
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        var generator = SystemRandomNumberGenerator()
        let start = data.count / 2
        for i in start..<(start + 3000) { data[i] = UInt8.random(in: 0...255, using: &generator) }
        let corrupt = Self.directory.appendingPathComponent("corrupt.mp3")
        try data.write(to: corrupt)
        let warnings = WarningLog()
        let samples = try decode(corrupt.path, warnings: warnings)
        // The damaged ~0.2 s (and the frames depending on it) may be dropped.
        XCTAssertEqual(Double(samples.count) / Double(Self.rate), 4, accuracy: 0.6)
        guard samples.count > 26000 else { return XCTFail("too short: \(samples.count)") }
        XCTAssertGreaterThan(rms(samples[2000..<12000]), 0.05)   // before the damage
        XCTAssertGreaterThan(rms(samples[(samples.count - 6000)...]), 0.05)  // after the damage
        XCTAssertTrue(warnings.messages.allSatisfy { !$0.contains("\n") })
    }
}
