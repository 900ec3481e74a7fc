/// Fast text for times and fixed-point numbers in reports (no `String(format:)`, which costs
/// microseconds per call on Linux: a year's report writes millions of fields).
public enum TimeText {
    private static let scales: [Double] = [1, 10, 100, 1000, 10000, 100_000, 1_000_000]

    /// `value` with exactly `decimals` (0…6) digits after the point, rounded half away from
    /// zero; `-0.000` is written `0.000`. Values beyond ±10¹² (or not finite) as Swift writes them.
    public static func fixed(_ value: Double, _ decimals: Int) -> String {
        let d = max(0, min(6, decimals))
        guard value.isFinite, abs(value) < 1e12 else { return "\(value)" }
        let scaled = Int((abs(value) * scales[d]).rounded())
        let unit = Int(scales[d])
        var s = value < 0 && scaled > 0 ? "-" : ""
        s += String(scaled / unit)
        if d > 0 {
            s += "."
            s += pad(scaled % unit, d)
        }
        return s
    }

    /// `v` as at least `width` digits with leading zeros (v ≥ 0).
    public static func pad(_ v: Int, _ width: Int) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// `hh:mm:ss` (rounded to the second) or `hh:mm:ss.mmm`; negative times get a sign; not
    /// finite or beyond 10¹² s as plain seconds.
    public static func clock(_ seconds: Double, milliseconds: Bool = false) -> String {
        guard seconds.isFinite, abs(seconds) < 1e12 else { return "\(seconds) s" }
        let ms = Int((abs(seconds) * 1000).rounded())
        let whole = milliseconds ? ms / 1000 : Int(abs(seconds).rounded())
        var text = seconds < 0 && (milliseconds ? ms > 0 : whole > 0) ? "-" : ""
        text += pad(whole / 3600, 2) + ":" + pad(whole / 60 % 60, 2) + ":" + pad(whole % 60, 2)
        if milliseconds { text += "." + pad(ms % 1000, 3) }
        return text
    }

    /// ISO-8601 UTC with milliseconds (`2026-12-01T08:00:00.000Z`) of Unix seconds.
    public static func iso(_ unixSeconds: Double) -> String {
        guard unixSeconds.isFinite, abs(unixSeconds) < 1e12 else { return "\(unixSeconds)" }
        let total = Int((unixSeconds * 1000).rounded())
        let day = total >= 0 ? total / 86_400_000 : (total - 86_399_999) / 86_400_000
        let ms = total - day * 86_400_000
        let c = Library.civil(day)
        return pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2) + "T" + pad(ms / 3_600_000, 2) + ":"
            + pad(ms / 60000 % 60, 2) + ":" + pad(ms / 1000 % 60, 2) + "." + pad(ms % 1000, 3) + "Z"
    }
}
