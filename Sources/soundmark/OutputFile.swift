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

/// `-o/--output FILE` of a command that prints its output: what it would print goes to FILE.
let standardOutputFileOption = OptionSpec(name: "output", value: "FILE",
                                          help: "write the output to FILE instead of standard output (-: standard output)",
                                          short: "o", redirectsStandardOutput: true)

/// `spec` with ``standardOutputFileOption`` when it has `--format` and no `-o/--output` of its
/// own: every command that writes a format takes `-o/--output` the same way.
func withOutputOption(_ spec: CommandSpec) -> CommandSpec {
    guard spec.options.contains(where: { $0.name == "format" }), !spec.options.contains(where: { $0.name == "output" }) else {
        return spec
    }
    return CommandSpec(words: spec.words, usage: spec.usage, summary: spec.summary, details: spec.details,
                       options: spec.options + [standardOutputFileOption], positional: spec.positional, run: spec.run,
                       streamsOutput: spec.streamsOutput)
}

/// Refuses an `-o/--output` file that is also a file the command reads or writes: any other
/// option's value or argument (a catalog, a library, a recording), or a catalog's companion
/// files (`.index`, `-wal`, `-shm`, `-journal`). Written over, the catalog, the library or the
/// recording was lost (`catalog list --catalog v.db -o v.db` replaced the catalog with its listing).
/// Files are the same when they are one inode, or name the same absolute path when not there yet.
/// - Throws: ``CommandError`` "PATH: cannot write the output: it is also an input (OPTION)".
func refuseOutputOverAnInput(_ path: String, _ parsed: ParsedArguments) throws {
    func absolute(_ p: String) -> String {
        URL(fileURLWithPath: p, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
    }
    func identity(_ p: String) -> (dev: UInt64, ino: UInt64)? {
        var st = stat()
        return stat(p, &st) == 0 ? (UInt64(st.st_dev), UInt64(st.st_ino)) : nil
    }
    let target = absolute(path), targetIdentity = identity(path)
    var inputs: [(String, String)] = parsed.positional.filter { $0 != "-" }.map { ("argument", $0) }
    for (name, values) in parsed.values where name != "output" { inputs += values.map { ("--" + name, $0) } }
    for (what, value) in inputs {
        for candidate in [value] + ["-wal", "-shm", "-journal", ".index"].map({ value + $0 }) {
            let same: Bool
            if let a = targetIdentity, let b = identity(candidate) { same = a == b } else { same = absolute(candidate) == target }
            if same {
                throw CommandError(message: "\(path): cannot write the output: it is also an input (\(what) \(value))")
            }
        }
    }
}

/// Runs `body` with its standard output going to the file `path` (`-o/--output`). Whole
/// (default): the output is collected in a temporary file and written by
/// ``writeOutputFile(_:to:what:)`` when `body` returns other than ``Exit/error``, so a failed command
/// leaves no file;
/// `streamed` (monitor): written into `path` as it comes.
/// - Returns: `body`'s exit code.
/// - Throws: what `body` throws (nothing is written then); ``CommandError`` "PATH: cannot write
///   the output: reason" when `path` cannot be written (checked before `body` runs).
func runWritingStandardOutput(to path: String, streamed: Bool, _ body: () throws -> Int32) throws -> Int32 {
    func failure(_ reason: String) -> CommandError { CommandError(message: "\(path): cannot write the output: \(reason)") }
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { throw failure("is a directory") }
    let folder = (path as NSString).deletingLastPathComponent
    if access(path, F_OK) != 0 && access(folder.isEmpty ? "." : folder, W_OK) != 0 { throw failure(String(cString: strerror(errno))) }
    if streamed { return try runStreamingStandardOutput(to: path, body) }
    let fd: Int32, temporary: String?
    do {
        var template = Array((NSTemporaryDirectory() + "/soundmark-output-XXXXXX").utf8CString)
        fd = mkstemp(&template)
        temporary = String(cString: template)
    }
    guard fd >= 0 else { throw failure(String(cString: strerror(errno))) }
    defer { close(fd); if let temporary { unlink(temporary) } }
    let status = try withStandardOutput(redirectedTo: fd, failure: failure) { () throws -> Int32 in
        let status = try body()
        guard fflush(stdout) == 0 else { throw failure(String(cString: strerror(errno))) }
        return status
    }
    // An error (exit 2) leaves no file; no match or a partly failed batch (exit 1) is still output.
    guard status != Exit.error else { return status }
    lseek(fd, 0, SEEK_SET)
    let data = FileHandle(fileDescriptor: fd, closeOnDealloc: false).readDataToEndOfFile()
    try writeOutputFile(data, to: path, what: "the output")
    return status
}

/// ``runWritingStandardOutput(to:streamed:_:)`` for output written as it comes (monitor): standard
/// output goes through a pipe to a thread that creates (or empties) `path` when the first byte
/// arrives and appends every byte after it, so a run that fails before writing anything (a source
/// or catalog that cannot be opened) leaves an existing `path` as it was.
/// - Throws: what `body` throws; ``CommandError`` "PATH: cannot write the output: reason".
private func runStreamingStandardOutput(to path: String, _ body: () throws -> Int32) throws -> Int32 {
    func failure(_ reason: String) -> CommandError { CommandError(message: "\(path): cannot write the output: \(reason)") }
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw failure(String(cString: strerror(errno))) }
    let (readEnd, writeEnd) = (ends[0], ends[1])
    final class Copy: @unchecked Sendable { var error: Int32 = 0 }
    let copy = Copy()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        var fd: Int32 = -1
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            if fd < 0 && copy.error == 0 {
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                if fd < 0 { copy.error = errno }
            }
            guard fd >= 0 else { continue }
            let failed = buffer.withUnsafeBytes { writeAll(Data($0.prefix(n)), to: fd) }
            if failed != 0 && copy.error == 0 { copy.error = failed }
        }
        if fd >= 0 { close(fd) }
        close(readEnd)
        done.signal()
    }
    thread.start()
    let result: Result<Int32, Error>
    do {
        // Standard output holds the pipe's only write end once redirected: restoring it ends the copy.
        result = try withStandardOutput(redirectedTo: writeEnd, failure: failure) { close(writeEnd); return Result { try body() } }
    } catch {
        close(writeEnd)
        done.wait()
        throw error
    }
    done.wait()
    let status = try result.get()
    if copy.error != 0 { throw failure(String(cString: strerror(copy.error))) }
    return status
}

/// Runs `body` with standard output (file descriptor 1 and `stdout`, flushed before and after)
/// redirected to `fd`, then puts the original standard output back, whether `body` returns or throws.
/// - Throws: `failure(reason)` when the redirection cannot be made (`fd` is then left open); what `body` throws.
private func withStandardOutput<T>(redirectedTo fd: Int32, failure: (String) -> CommandError,
                                   _ body: () throws -> T) throws -> T {
    fflush(stdout)
    let saved = dup(STDOUT_FILENO)
    guard saved >= 0, dup2(fd, STDOUT_FILENO) >= 0 else {
        let reason = String(cString: strerror(errno))
        if saved >= 0 { close(saved) }
        throw failure(reason)
    }
    defer {
        fflush(stdout)
        dup2(saved, STDOUT_FILENO)
        close(saved)
    }
    return try body()
}
