/// Splits a migration file into its statements: PostgreSQL's extended protocol, which the driver
/// speaks, runs one statement at a time.
///
/// A semicolon ends a statement unless it is inside a string, a quoted name, a comment or a
/// dollar-quoted body (`$$ … $$`, `$tag$ … $tag$`: a trigger function's).
enum SQLScript {
    static func statements(_ sql: String) -> [String] {
        let scalars = Array(sql.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0

        func take(_ count: Int) {
            current.append(contentsOf: scalars[index..<min(index + count, scalars.count)])
            index += count
        }
        func starts(with text: String, at position: Int) -> Bool {
            let pattern = Array(text.unicodeScalars)
            return position + pattern.count <= scalars.count
                && Array(scalars[position..<position + pattern.count]) == pattern
        }
        /// Copies up to and including the next `terminator`, or to the end.
        func takeThrough(_ terminator: String) {
            while index < scalars.count, !starts(with: terminator, at: index) { take(1) }
            take(terminator.unicodeScalars.count)
        }

        while index < scalars.count {
            let scalar = scalars[index]
            if starts(with: "--", at: index) {
                takeThrough("\n")
            } else if starts(with: "/*", at: index) {
                take(2)
                takeThrough("*/")
            } else if scalar == "'" || scalar == "\"" {
                // A doubled quote inside reads as the end and a new start: the same text results.
                take(1)
                takeThrough(String(scalar))
            } else if scalar == "$", let tag = dollarTag(scalars, at: index) {
                take(tag.unicodeScalars.count)
                takeThrough(tag)
            } else if scalar == ";" {
                index += 1
                appendStatement(String(current), to: &statements)
                current = String.UnicodeScalarView()
            } else {
                take(1)
            }
        }
        appendStatement(String(current), to: &statements)
        return statements
    }

    /// `$tag$` starting at `position`, when one does (a `$1` parameter is not a tag).
    private static func dollarTag(_ scalars: [Unicode.Scalar], at position: Int) -> String? {
        var end = position + 1
        while end < scalars.count,
            scalars[end] == "_" || scalars[end].properties.isAlphabetic
                || (end > position + 1 && ("0"..."9").contains(scalars[end]))
        {
            end += 1
        }
        guard end < scalars.count, scalars[end] == "$" else { return nil }
        return String(String.UnicodeScalarView(scalars[position...end]))
    }

    /// Keeps a statement that holds more than comments and blanks.
    private static func appendStatement(_ text: String, to statements: inout [String]) {
        let code = text.split(separator: "\n").filter {
            !$0.trimmingPrefix(while: \.isWhitespace).hasPrefix("--")
        }.joined().trimmingPrefix(while: \.isWhitespace)
        if !code.isEmpty { statements.append(text.trimmingPrefix(while: \.isNewline).description) }
    }
}
