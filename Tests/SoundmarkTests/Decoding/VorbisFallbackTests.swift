import Foundation
import XCTest
import Soundmark
#if canImport(Glibc)
import Glibc
#endif

/// Ogg Vorbis files FFmpeg 5.1 refuses but libvorbis reads (issue 9.13), made by rewriting the
/// first page of an ffmpeg-made file: an identification header one byte longer than 30 (as some
/// old encoders wrote) makes FFmpeg's Ogg demuxer fail with "Header processing failed".
final class VorbisFallbackTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = try TestSupport.temporaryDirectory(self)
    }

    /// Ogg's page CRC (polynomial 0x04C11DB7, no reflection, initial value 0).
    private func oggCRC(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes {
            crc ^= UInt32(b) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }

    /// A `seconds` (default 3) s 1 kHz Vorbis file whose identification header (alone on the
    /// first page) is padded to 31 bytes; `edit` may change the header's bytes.
    private func oldEncoderFile(_ name: String, filter: String = "anull", seconds: Int = 3,
                                edit: (inout [UInt8]) -> Void = { _ in }) throws -> String {
        let source = directory.appendingPathComponent("src-\(name)").path
        try TestSupport.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:duration=\(seconds)", "-af", filter,
                                "-c:a", "libvorbis", "-f", "ogg"], output: source)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: source)))
        let segments = Int(bytes[26])
        XCTAssertEqual(segments, 1)
        XCTAssertEqual(bytes[27], 30) // the 30-byte identification header
        var header = Array(bytes[28..<58]) + [0]
        edit(&header)
        var page = Array(bytes[0..<27]) + [31] + header
        page[22..<26] = [0, 0, 0, 0]
        let crc = oggCRC(page)
        page[22..<26] = [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24)]
        let path = directory.appendingPathComponent(name).path
        try Data(page + bytes[58...]).write(to: URL(fileURLWithPath: path))
        return path
    }

    func testOggFFmpegRefusesIsDecodedWithLibvorbisfile() throws {
        let path = try oldEncoderFile("old.ogg")
        var warnings: [String] = []
        let decoder = try MediaDecoder(source: path, sampleRate: 8000) { warnings.append($0) }
        var samples: [Float] = []
        while let chunk = try decoder.nextChunk() { samples += chunk.samples }
        XCTAssertEqual(samples.count, 3 * 8000, accuracy: 8)
        XCTAssertEqual(decoder.chosenStream.codec, "vorbis")
        XCTAssertEqual(decoder.playbackDuration ?? 0, 3, accuracy: 0.01)
        // A 1 kHz tone at 8 kHz: 1000 upward zero crossings per second.
        let middle = samples[8000..<16000]
        let crossings = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        XCTAssertEqual(crossings, 1000, accuracy: 10)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertEqual(warnings.first,
                       "\(path): FFmpeg cannot read it (ogg: Header processing failed: Invalid data found when processing input); decoding it with libvorbisfile")
    }

    func testOggFFmpegRefusesIsDecodedFromAPipeToo() throws {
        let path = try oldEncoderFile("piped.ogg")
        var warnings: [String] = []
        let samples = try TestSupport.withStandardInput(from: path) {
            try MediaDecoder.decodeAll(source: "-", sampleRate: 8000) { warnings.append($0) }
        }
        XCTAssertEqual(samples.count, 3 * 8000, accuracy: 8)
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.hasPrefix("<stdin>: FFmpeg cannot read it (ogg: Header processing failed") ?? false,
                      "\(warnings)")
    }

    /// Issue 40, item 3: such a file read from standard input decoded 0.6 s of 63.8 s, and over
    /// HTTP it was refused with no reason. From a pipe the whole 60 s is decoded; over HTTP the
    /// stream is fetched again for libvorbisfile (FFmpeg's demuxer dropped what it read) and
    /// decoded whole, with FFmpeg's reason in the warning; a stream neither reads is refused
    /// with FFmpeg's reason, as a file is.
    func testOggFFmpegRefusesIsDecodedWholeFromAPipeAndOverHTTP() throws {
        let path = try oldEncoderFile("long.ogg", seconds: 60)
        let piped = try TestSupport.withStandardInput(from: path) { try MediaDecoder.decodeAll(source: "-", sampleRate: 8000) }
        XCTAssertEqual(piped.count, 60 * 8000, accuracy: 8)
        let broken = try oldEncoderFile("broken.ogg") { header in header[7] = 1 }

        let script = directory.appendingPathComponent("serve.py")
        try """
        import http.server, os, sys
        os.chdir(sys.argv[1])
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """.write(to: script, atomically: true, encoding: .utf8)
        let (server, port) = try TestSupport.startLocalServer(script: script, arguments: [directory.path])
        defer { server.terminate(); server.waitUntilExit() }
        let base = "http://127.0.0.1:\(port)/"
        var warnings: [String] = []
        let fetched = try MediaDecoder.decodeAll(source: base + "long.ogg", sampleRate: 8000) { warnings.append($0) }
        XCTAssertEqual(fetched.count, 60 * 8000, accuracy: 8)
        XCTAssertEqual(fetched, piped)
        XCTAssertEqual(warnings, ["\(base)long.ogg: FFmpeg cannot read it (ogg: Header processing failed: Invalid data found when processing input); decoding it with libvorbisfile"])
        XCTAssertThrowsError(try MediaDecoder(source: base + (broken as NSString).lastPathComponent, sampleRate: 8000)) { error in
            XCTAssertEqual(error as? MediaDecodingError,
                           .cannotOpen(path: base + "broken.ogg", reason: "ogg: Header processing failed: Invalid data found when processing input"))
        }
    }

    /// The stream fetched again for libvorbisfile is counted against a budget of its own (the
    /// first attempt's budget counted a format context that is closed by then, and reading it
    /// crashed the tests): headers FFmpeg refuses followed by endless bytes that are no Ogg
    /// page are given up after 256 MB, with the budget's reason, instead of being read for ever.
    func testOggFetchedAgainOverHTTPHasABudgetOfItsOwn() throws {
        let path = try oldEncoderFile("headers.ogg")
        let script = directory.appendingPathComponent("garbage.py")
        try """
        import os, socket, sys
        data = open(sys.argv[1], "rb").read()
        third = data.index(b"OggS", data.index(b"OggS", 4) + 4)  # the first audio page
        headers, noise = data[:third], os.urandom(1 << 20).replace(b"OggS", b"oggs")
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        print(listener.getsockname()[1], flush=True)
        while True:
            conn, _ = listener.accept()
            conn.recv(65536)
            try:
                conn.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Type: audio/ogg\\r\\n\\r\\n" + headers)
                while True:
                    conn.sendall(noise)
            except OSError:
                conn.close()
        """.write(to: script, atomically: true, encoding: .utf8)
        let (server, port) = try TestSupport.startLocalServer(script: script, arguments: [path])
        defer { server.terminate(); server.waitUntilExit() }
        let url = "http://127.0.0.1:\(port)/noise.ogg"
        var warnings: [String] = []
        XCTAssertThrowsError(try MediaDecoder.decodeAll(source: url, sampleRate: 8000) { warnings.append($0) }) { error in
            XCTAssertEqual(error as? MediaDecodingError, .readFailed(
                path: url, reason: "gave up after 256 MB read without 1 s of decodable audio (not media, or damaged beyond use)"))
        }
        XCTAssertEqual(warnings.first, "\(url): FFmpeg cannot read it (ogg: Header processing failed: Invalid data found when processing input); decoding it with libvorbisfile")
    }

    func testSurroundChannelsKeepTheirPlaceInTheDownmix() throws {
        // 5.1 with the tone in the centre only: libvorbisfile's channel order mapped to FFmpeg's,
        // so the downmix gives the level FFmpeg gives for the same audio.
        let path = try oldEncoderFile("centre.ogg", filter: "pan=5.1|FC=c0")
        let fallback = try MediaDecoder.decodeAll(source: path, sampleRate: 8000)
        let direct = try MediaDecoder.decodeAll(source: directory.appendingPathComponent("src-centre.ogg").path, sampleRate: 8000)
        func rms(_ x: ArraySlice<Float>) -> Float { (x.reduce(0) { $0 + $1 * $1 } / Float(x.count)).squareRoot() }
        XCTAssertGreaterThan(rms(direct[4000..<20000]), 0.05)
        XCTAssertEqual(rms(fallback[4000..<20000]), rms(direct[4000..<20000]), accuracy: 0.01 * rms(direct[4000..<20000]))
    }

    func testFileNothingReadsGivesFFmpegsReason() throws {
        // Vorbis version 1 in the identification header: neither FFmpeg nor libvorbis reads it.
        let path = try oldEncoderFile("broken.ogg") { header in header[7] = 1 }
        XCTAssertThrowsError(try MediaDecoder(source: path, sampleRate: 8000)) { error in
            XCTAssertEqual(error as? MediaDecodingError,
                           .cannotOpen(path: path, reason: "ogg: Header processing failed: Invalid data found when processing input"))
        }
    }
}
