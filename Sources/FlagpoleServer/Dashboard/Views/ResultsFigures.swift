import FlagpoleCore
import Foundation

/// How the results page writes a goal's figures, so that the verdict and the table print the
/// same text for the same figure: rates in %, differences of rates in percentage points, other
/// means as numbers; three significant digits, a real minus sign, intervals as "low to high".
struct ResultsFigures: Sendable {
    /// Rates and their differences are shown ×100, in % and points.
    let isRate: Bool

    init(_ goal: Goal) {
        isRate = goal.kind == .conversion
    }

    /// A variation's rate ("24.1 %") or mean per user ("3.21").
    func value(_ mean: Double) -> String {
        isRate ? Self.plain(mean * 100) + " %" : Self.plain(mean)
    }

    /// A difference against the control: "+4.02 pts", "−0.31".
    func difference(_ difference: Double) -> String {
        isRate ? Self.signed(difference * 100) + " pts" : Self.signed(difference)
    }

    /// A difference's interval: "+1.2 to +6.8 pts".
    func interval(_ interval: Interval) -> String {
        let scale = isRate ? 100.0 : 1
        return Self.signed(interval.low * scale) + " to " + Self.signed(interval.high * scale) + (isRate ? " pts" : "")
    }

    /// A relative difference: "+20.1 %".
    static func relative(_ ratio: Double) -> String {
        signed(ratio * 100) + " %"
    }

    /// A relative difference's interval: "+5.2 to +35.0 %".
    static func relativeInterval(_ interval: Interval) -> String {
        signed(interval.low * 100) + " to " + signed(interval.high * 100) + " %"
    }

    /// Three significant digits, never in scientific notation; "−" for negative numbers.
    static func plain(_ value: Double) -> String {
        guard value.isFinite else { return value > 0 ? "∞" : "−∞" }
        let magnitude = abs(value)
        let decimals = magnitude == 0 ? 0 : min(6, max(0, 2 - Int(log10(magnitude).rounded(.down))))
        let text = String(format: "%.\(decimals)f", magnitude)
        // A value that rounds to zero shows no sign.
        return value < 0 && Double(text) != 0 ? "−" + text : text
    }

    /// `plain`, with "+" before positive numbers.
    static func signed(_ value: Double) -> String {
        let text = plain(value)
        return value > 0 && Double(text) != 0 ? "+" + text : text
    }
}
