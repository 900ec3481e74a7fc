import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why an input file could not be read: a short cause ("is a directory", "a named pipe (FIFO)
/// that nothing was written to within 10 s"), without the path (callers name it).
public struct InputFileError: Error, Equatable {
    /// The cause, one line.
    public let reason: String
}

/// Reading whole inputs that are not decoded as media (signature files, subtitles, timelines)
/// without hanging: a named pipe (FIFO) with no writer blocked every reader for ever, and a
/// device (`/dev/zero`) never ends.
public enum InputFile {
    /// The most a named pipe may hold for ``contents(atPath:openTimeout:)``: 1 GiB.
    public static let pipeLimit = 1 << 30

    /// The bytes of the regular file or named pipe at `path`. A named pipe is opened without
    /// blocking and waited on for up to `openTimeout` seconds (0: without end) for its first
    /// bytes or its writer's close, then read to its end (at most ``pipeLimit`` bytes).
    /// - Throws: ``InputFileError``: no such file, permission denied, a directory, a device or
    ///   socket, a named pipe nothing was written to in time or that holds too much.
    public static func contents(atPath path: String, openTimeout: Double = 10) throws -> Data {
        var info = stat()
        guard stat(path, &info) == 0 else { throw InputFileError(reason: describe(errno: errno)) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: throw InputFileError(reason: "is a directory")
        case S_IFREG:
            guard let handle = FileHandle(forReadingAtPath: path) else { throw InputFileError(reason: describe(errno: errno)) }
            defer { try? handle.close() }
            do { return try handle.readToEnd() ?? Data() } catch { throw InputFileError(reason: describe(errno: errno)) }
        case S_IFIFO:
            let fd = try openNamedPipe(path, timeout: openTimeout)
            defer { close(fd) }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n == 0 { return data }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw InputFileError(reason: describe(errno: errno))
                }
                data.append(contentsOf: buffer[..<n])
                if data.count > pipeLimit { throw InputFileError(reason: "a named pipe that holds more than \(pipeLimit >> 20) MB") }
            }
        default:
            throw InputFileError(reason: "not a regular file or named pipe (a device or socket)")
        }
    }

    /// Opens the named pipe at `path` for reading without blocking, waits up to `timeout`
    /// seconds (0: without end) for its first bytes or its writer's close, and returns the
    /// descriptor in blocking mode (the caller closes it). A plain `open` blocks until a
    /// process opens the pipe for writing: without one, for ever.
    /// - Throws: ``InputFileError`` when it cannot be opened or nothing came in time.
    public static func openNamedPipe(_ path: String, timeout: Double) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw InputFileError(reason: describe(errno: errno)) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = timeout > 0 ? max(0, Int32(min(deadline.timeIntervalSinceNow, 86_400) * 1000)) : -1
            let result = poll(&ready, 1, left)
            if result > 0 { break }
            if result < 0 && errno == EINTR { continue }
            let reason = result == 0 ? String(format: "a named pipe (FIFO) that nothing was written to within %g s", timeout)
                : describe(errno: errno)
            close(fd)
            throw InputFileError(reason: reason)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// Whether `path` is a regular file (symbolic links followed).
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    private static func describe(errno code: Int32) -> String {
        switch code {
        case ENOENT, ENOTDIR: return "no such file"
        case EACCES, EPERM: return "permission denied"
        default: return String(cString: strerror(code))
        }
    }
}
