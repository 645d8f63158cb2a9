/// Shares of users as people read them in messages and listings.
public enum Percent {
    /// `value` rounded to `digits` decimals, without a trailing fraction when integral: `33.33 %`.
    public static func format(_ value: Double, digits: Int = 2) -> String {
        number(value, digits: digits) + " %"
    }

    /// The number alone, rounded to `digits` decimals.
    public static func number(_ value: Double, digits: Int = 2) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return JSONWriter.format((value * scale).rounded() / scale)
    }
}
