import Foundation

/// The folder part of a path, by string rules alone: `""` for a bare name (`a`, `-`, `~`),
/// `/` for a name in the root, else everything before the last `/` (trailing slashes of the
/// path are ignored). Unlike `NSString.deletingLastPathComponent`, which traps on
/// one-character paths in swift-corelibs-foundation, it never traps.
public func parentDirectory(of path: String) -> String {
    var p = Substring(path)
    while p.count > 1, p.hasSuffix("/") { p = p.dropLast() }
    guard let slash = p.lastIndex(of: "/") else { return "" }
    if slash == p.startIndex { return "/" }
    var folder = p[..<slash]
    while folder.count > 1, folder.hasSuffix("/") { folder = folder.dropLast() }
    return String(folder)
}
