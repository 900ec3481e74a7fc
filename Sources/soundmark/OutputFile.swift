import Foundation

/// Writes `data` to the output file `path` (`--output`, `-o`) without ever leaving half a file:
/// into a temporary file beside it (`PATH.part`), renamed over it. A symbolic link is followed
/// (the link stays, its target is replaced); a path that exists and is no regular file (a device
/// such as `/dev/null`, a FIFO) is written into directly, never replaced by a file.
/// - Throws: ``CommandError`` "PATH: cannot write WHAT: reason" (a directory, a missing folder,
///   no permission, a full disk).
func writeOutputFile(_ data: Data, to path: String, what: String) throws {
    func failure(_ reason: String) -> CommandError { CommandError(message: "\(path): cannot write \(what): \(reason)") }
    // Follow symbolic links (a dangling one too) to the file they name.
    var target = path, link = stat()
    for _ in 0..<32 where lstat(target, &link) == 0 && link.st_mode & S_IFMT == S_IFLNK {
        guard let next = try? FileManager.default.destinationOfSymbolicLink(atPath: target) else { break }
        target = next.hasPrefix("/") ? next : URL(fileURLWithPath: target).deletingLastPathComponent().appendingPathComponent(next).path
    }
    var info = stat()
    let exists = stat(target, &info) == 0
    let kind = info.st_mode & S_IFMT
    if exists && kind == S_IFDIR { throw failure("is a directory") }
    let direct = exists && kind != S_IFREG
    let written = direct ? target : target + ".part"
    let fd = open(written, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw failure(String(cString: strerror(errno))) }
    var error = writeAll(data, to: fd)
    if close(fd) != 0 && error == 0 { error = errno }
    if error == 0 && !direct && rename(written, target) != 0 { error = errno }
    if error != 0 {
        if !direct { unlink(written) }
        throw failure(String(cString: strerror(error)))
    }
}

/// Writes `data` to standard output (`-o -`).
/// - Throws: ``CommandError`` "cannot write standard output: reason" (a full disk, a closed pipe).
func writeStandardOutput(_ data: Data) throws {
    fflush(stdout)
    let error = writeAll(data, to: STDOUT_FILENO)
    if error != 0 { throw CommandError(message: "cannot write standard output: \(String(cString: strerror(error)))") }
}

/// Writes every byte of `data` to the file descriptor `fd` (retrying short and interrupted writes).
/// - Returns: 0, or the `errno` of the write that failed.
private func writeAll(_ data: Data, to fd: Int32) -> Int32 {
    data.withUnsafeBytes { raw -> Int32 in
        var offset = 0
        while offset < raw.count {
            let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += n
        }
        return 0
    }
}
