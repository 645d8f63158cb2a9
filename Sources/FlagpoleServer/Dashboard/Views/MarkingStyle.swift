import FlagpoleCore
import FlagpoleStore
import Foundation

/// The stylesheet that paints each environment's marking in its colour. The pages allow no
/// inline style (the CSP), so the colours, which are the tenant's to choose, come as rules of a
/// stylesheet of the dashboard's own origin.
struct MarkingStyle: Sendable {
    var environments: [Environment]

    /// Two rules per coloured environment: its marking (the badge in the header) and the band
    /// under the header. Names are slugs and colours `#rrggbb`, so neither can break out of a rule.
    var css: String {
        var lines = ["/* The colours of this tenant's environments (flagpole env mark, the settings page). */"]
        for environment in environments {
            guard let colour = environment.marking.colour else { continue }
            let name = environment.path.environment.rawValue
            lines.append(
                ".marking[data-environment=\"\(name)\"] { background-color: \(colour.rawValue); color: \(Self.text(on: colour)); }"
            )
            lines.append("header.top[data-environment=\"\(name)\"] { border-bottom: .5rem solid \(colour.rawValue); }")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Black or white, whichever contrasts more with `colour`: at least 4.58:1 for any colour,
    /// since the two ratios meet at a luminance of 0.179 (WCAG 2's relative luminance).
    static func text(on colour: EnvironmentColour) -> String {
        luminance(colour) > 0.179 ? "#000000" : "#ffffff"
    }

    /// WCAG 2's relative luminance, 0 (black) to 1 (white).
    static func luminance(_ colour: EnvironmentColour) -> Double {
        let (red, green, blue) = colour.components
        let linear = { (channel: Int) -> Double in
            let value = Double(channel) / 255
            return value <= 0.03928 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// The contrast ratio of two luminances, 1 to 21.
    static func contrast(_ first: Double, _ second: Double) -> Double {
        (max(first, second) + 0.05) / (min(first, second) + 0.05)
    }
}
