import ArgumentParser
import FlagpoleCore
import Foundation

/// A point in time given on the command line, in the forms `TimeText` reads (the API's too).
enum TimeArgument {
    /// - throws: `ValidationError` naming the accepted forms.
    static func parse(_ text: String, option: String) throws -> Date {
        if let date = TimeText.date(from: text) { return date }
        throw ValidationError("\(option) \"\(text)\" is not a time: use ISO 8601, e.g. \(TimeText.examples).")
    }
}
