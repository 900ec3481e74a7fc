/// How much a small compressed file may expand to when it is read: its DEFLATE data may inflate
/// to at most ``ratio`` times its size plus ``allowance``, and never past ``maximumBytes``. A
/// file that claims or inflates to more is a decompression bomb and is refused before the
/// inflated bytes are held (a 400 KB `.shazamcatalog` inflating to 400 MB made `signature show`
/// use 1.27 GB).
///
/// The data it bounds compresses little: a `.shazamcatalog` is mostly base64 of signatures
/// (Apple's SoundCatalogKit sample inflates 1.35 times), with media-item text that shrinks some
/// 5–10 times; a soundmark signature file's peak data is varints and bins (about 2 times).
public enum InflationBound {
    /// Times its compressed size the data may inflate to: 64.
    public static let ratio = 64
    /// Bytes the data may inflate to whatever its size, on top of ``ratio`` times its size:
    /// 1 MiB (a small catalog of a few signatures with long media items).
    public static let allowance = 1 << 20
    /// The most bytes any data may inflate to: 1 GiB.
    public static let maximumBytes = 1 << 30

    /// The most bytes `compressedBytes` bytes of DEFLATE data may inflate to:
    /// ``ratio`` × `compressedBytes` + ``allowance``, at most ``maximumBytes``.
    public static func limit(compressedBytes: Int) -> Int {
        let (scaled, overflow) = max(0, compressedBytes).multipliedReportingOverflow(by: ratio)
        return overflow ? maximumBytes : min(maximumBytes, scaled + allowance)
    }

    /// The limit as words for an error message: "N bytes (64 times its M bytes plus 1 MiB)".
    static func describe(compressedBytes: Int) -> String {
        "\(limit(compressedBytes: compressedBytes)) bytes (\(ratio) times its \(compressedBytes) bytes plus \(allowance >> 20) MiB)"
    }
}
