import Foundation
import Soundmark

/// One row of a `catalog add --metadata` file: a media file and the metadata to store with it.
/// `nil` fields were not given (empty cell or missing key) and take their defaults.
struct MetadataRow {
    /// Where the row is: `FILE:LINE` for CSV, `FILE: entry N` for JSON.
    var location: String
    /// The media file, resolved against the metadata file's folder when relative.
    var path: String
    var id: String?
    var title: String?
    var subtitle: String?
    var artist: String?
    var properties: [String: String]?
    /// An annotation file (SRT, WebVTT, ASS/SSA or JSON), resolved like `path`.
    var annotations: String?
}

/// The columns (CSV) or keys (JSON) of a metadata file.
let metadataColumns = ["path", "id", "title", "subtitle", "artist", "properties", "annotations"]

/// Parses `properties` cells: `key=value;key=value` (the first `=` splits; keys are trimmed,
/// values kept as written; a key or value cannot contain `;`). Empty items are ignored.
func parseMetadataProperties(_ text: String, location: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for item in text.split(separator: ";", omittingEmptySubsequences: true) {
        if item.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
        guard let eq = item.firstIndex(of: "=") else {
            throw CommandError(message: "\(location): property '\(item)' is not key=value (properties are key=value;key=value)")
        }
        let key = item[..<eq].trimmingCharacters(in: .whitespaces)
        guard !key.isEmpty else { throw CommandError(message: "\(location): property '\(item)' has an empty key") }
        result[key] = String(item[item.index(after: eq)...])
    }
    return result
}

/// Splits RFC 4180 CSV text into records with the 1-based line each starts on: fields
/// separated by commas, records by CRLF or LF; a field in double quotes may hold commas, line
/// breaks and doubled quotes (`""`). A leading UTF-8 byte-order mark is dropped.
/// - Throws: ``CommandError`` naming `name` and the line of an unterminated quoted field or
///   of text after a closing quote.
func parseCSV(_ text: String, name: String) throws -> [(line: Int, fields: [String])] {
    var records: [(line: Int, fields: [String])] = []
    var fields: [String] = []
    var field = String.UnicodeScalarView()
    var scalars = Array(text.unicodeScalars)
    if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
    var i = 0, line = 1, recordLine = 1
    var quoted = false, quoteLine = 0, afterQuote = false
    func endRecord() {
        fields.append(String(field)); field = .init()
        if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
        fields = []
    }
    while i < scalars.count {
        let c = scalars[i]
        if quoted {
            if c == "\"" {
                if i + 1 < scalars.count && scalars[i + 1] == "\"" { field.append("\""); i += 2; continue }
                quoted = false; afterQuote = true; i += 1; continue
            }
            if c == "\n" || (c == "\r" && (i + 1 >= scalars.count || scalars[i + 1] != "\n")) { line += 1 }
            field.append(c); i += 1; continue
        }
        switch c {
        case "\"" where field.isEmpty && !afterQuote:
            quoted = true; quoteLine = line
        case ",":
            fields.append(String(field)); field = .init(); afterQuote = false
        case "\r", "\n":
            if c == "\r" && i + 1 < scalars.count && scalars[i + 1] == "\n" { i += 1 }
            endRecord(); afterQuote = false
            line += 1; recordLine = line
        default:
            if afterQuote {
                throw CommandError(message: "\(name):\(line): text after a closing quote (a quote inside a quoted field is written \"\")")
            }
            field.append(c)
        }
        i += 1
    }
    if quoted { throw CommandError(message: "\(name):\(quoteLine): quoted field never closed") }
    if !field.isEmpty || !fields.isEmpty || afterQuote { endRecord() }
    return records
}

/// Reads a metadata file for `catalog add --metadata`: CSV (RFC 4180, a header row naming the
/// columns `path` (required), `id`, `title`, `subtitle`, `artist`, `properties`,
/// `annotations` in any order) or JSON (`[{"path":…, "id":…, "properties":{"k":"v"} or
/// "k=v;…"}]`, or `{"references":[…]}`), chosen by the `.json` extension or a leading `[`/`{`.
/// Relative paths are taken from the metadata file's folder.
/// - Throws: ``CommandError`` naming the file (and line or entry) for an unreadable file, a
///   missing `path` column, an unknown column, a row with too many fields, an empty path,
///   two rows for one file or one id.
func readMetadata(_ file: String) throws -> [MetadataRow] {
    let text = try readTextInput(file)
    let folder = parentDirectory(of: file)
    func resolve(_ p: String) -> String {
        p.hasPrefix("/") || p.contains("://") || folder.isEmpty ? p : folder + "/" + p
    }
    let trimmed = text.drop(while: { $0 == "\u{FEFF}" || $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" })
    var rows: [MetadataRow] = []
    if file.lowercased().hasSuffix(".json") || trimmed.hasPrefix("[") || trimmed.hasPrefix("{") {
        let root: Any
        do { root = try JSONSerialization.jsonObject(with: Data(text.utf8)) } catch {
            throw CommandError(message: "\(file): not valid JSON metadata: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "syntax error")")
        }
        guard let entries = (root as? [Any]) ?? ((root as? [String: Any])?["references"] as? [Any]) else {
            throw CommandError(message: "\(file): JSON metadata must be an array of objects (or {\"references\": […]})")
        }
        for (n, entry) in entries.enumerated() {
            let location = "\(file): entry \(n + 1)"
            guard let object = entry as? [String: Any] else { throw CommandError(message: "\(location): not an object") }
            if let unknown = object.keys.sorted().first(where: { !metadataColumns.contains($0) }) {
                throw CommandError(message: "\(location): unknown key '\(unknown)' (known: \(metadataColumns.joined(separator: ", ")))")
            }
            func string(_ key: String) throws -> String? {
                switch object[key] {
                case nil, is NSNull: return nil
                case let s as String: return s.isEmpty ? nil : s
                default: throw CommandError(message: "\(location): \"\(key)\" must be a string")
                }
            }
            guard let path = try string("path") else { throw CommandError(message: "\(location): missing \"path\"") }
            var properties: [String: String]?
            switch object["properties"] {
            case nil, is NSNull: properties = nil
            case let s as String: properties = try parseMetadataProperties(s, location: location)
            case let d as [String: Any]:
                properties = try d.mapValues { v in
                    guard let s = v as? String else { throw CommandError(message: "\(location): property values must be strings") }
                    return s
                }
            default: throw CommandError(message: "\(location): \"properties\" must be an object or \"key=value;…\"")
            }
            rows.append(MetadataRow(location: location, path: resolve(path), id: try string("id"), title: try string("title"),
                                    subtitle: try string("subtitle"), artist: try string("artist"), properties: properties,
                                    annotations: try string("annotations").map(resolve)))
        }
    } else {
        let records = try parseCSV(text, name: file)
        guard let header = records.first else { throw CommandError(message: "\(file): empty metadata file") }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let unknown = names.first(where: { !metadataColumns.contains($0) }) {
            throw CommandError(message: "\(file):\(header.line): unknown column '\(unknown)' (known: \(metadataColumns.joined(separator: ", ")))")
        }
        guard let pathColumn = names.firstIndex(of: "path") else {
            throw CommandError(message: "\(file):\(header.line): no 'path' column in the header (columns: \(metadataColumns.joined(separator: ", ")))")
        }
        for record in records.dropFirst() {
            let location = "\(file):\(record.line)"
            guard record.fields.count <= names.count else {
                throw CommandError(message: "\(location): \(record.fields.count) fields, the header has \(names.count)")
            }
            func cell(_ column: String) -> String? {
                guard let k = names.firstIndex(of: column), k < record.fields.count, !record.fields[k].isEmpty else { return nil }
                return record.fields[k]
            }
            guard pathColumn < record.fields.count, !record.fields[pathColumn].isEmpty else {
                throw CommandError(message: "\(location): empty path")
            }
            rows.append(MetadataRow(location: location, path: resolve(record.fields[pathColumn]), id: cell("id"), title: cell("title"),
                                    subtitle: cell("subtitle"), artist: cell("artist"),
                                    properties: try cell("properties").map { try parseMetadataProperties($0, location: location) },
                                    annotations: cell("annotations").map(resolve)))
        }
    }
    var byPath: [String: String] = [:], byID: [String: String] = [:]
    for row in rows {
        let key = absolutePath(row.path)
        if let other = byPath[key] { throw CommandError(message: "\(row.location): \(row.path) already has a row (\(other))") }
        byPath[key] = row.location
        if let id = row.id {
            if let other = byID[id] { throw CommandError(message: "\(row.location): id '\(id)' already used (\(other))") }
            byID[id] = row.location
        }
    }
    return rows
}

/// `path` made absolute against the working directory, with `.`, `..` and repeated slashes
/// resolved by string rules (no symbolic links followed); URLs and `-` unchanged.
func absolutePath(_ path: String) -> String {
    if path == "-" || path.contains("://") { return path }
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    var parts: [Substring] = []
    for part in full.split(separator: "/") {
        if part == "." { continue }
        if part == ".." { _ = parts.popLast(); continue }
        parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
}
