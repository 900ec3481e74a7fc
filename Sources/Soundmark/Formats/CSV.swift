import Foundation

// RFC 4180 CSV: written by CueWriter.csv.

// MARK: - Writing (RFC 4180 CSV)

extension CueWriter {
    /// RFC 4180 CSV: the header row (omitted when empty) then the rows, every record ended
    /// by CRLF. A field containing `,`, `"`, CR or LF is enclosed in double quotes with inner
    /// quotes doubled; other fields are written as they are.
    public static func csv(header: [String], rows: [[String]]) -> String {
        var out = ""
        for record in (header.isEmpty ? [] : [header]) + rows {
            out += record.map(csvField).joined(separator: ",") + "\r\n"
        }
        return out
    }

    static func csvField(_ field: String) -> String {
        guard field.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" }) else {
            return field
        }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
