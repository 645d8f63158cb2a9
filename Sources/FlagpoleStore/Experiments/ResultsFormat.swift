import FlagpoleCore
import Foundation

/// Figures of a readout as the command line and the dashboard write them: four significant
/// digits, signed differences, p-values in scientific notation below 0.0001.
public enum ResultsFormat {
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "∞" }
        return String(format: "%.4g", value)
    }

    public static func signed(_ value: Double) -> String {
        (value >= 0 ? "+" : "") + number(value)
    }

    public static func interval(_ interval: Interval?, scale: Double = 1, unit: String = "") -> String {
        guard let interval else { return "–" }
        return "[\(number(interval.low * scale))\(unit), \(number(interval.high * scale))\(unit)]"
    }

    public static func pValue(_ value: Double?) -> String {
        guard let value else { return "–" }
        return value < 0.0001 ? String(format: "%.1e", value) : String(format: "%.4f", value)
    }
}
