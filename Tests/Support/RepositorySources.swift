import Foundation

/// The repository's own files as text, for the tests that hold its house rules (where each
/// table's SQL lives, how routes and imports are written).
public enum RepositorySources {
    /// The repository's root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under `folder` (a path from the root), by its path under that folder.
    public static func swiftFiles(under folder: String) throws -> [(path: String, text: String)] {
        let start = root.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(at: start, includingPropertiesForKeys: nil)!
        return try enumerator.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }.map { url in
            (String(url.path.dropFirst(start.path.count + 1)), try String(contentsOf: url, encoding: .utf8))
        }.sorted { $0.path < $1.path }
    }

    /// The lines of `text` that are code, with their numbers: doc comments and line comments left out.
    public static func codeLines(_ text: String) -> [(number: Int, line: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            line.drop { $0 == " " }.hasPrefix("//") ? nil : (index + 1, String(line))
        }
    }
}
