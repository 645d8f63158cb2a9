import Foundation
import Testing

/// The relative links of README.md and docs/*.md lead to files of the repository, and none
/// leaves it: the docs must read the same in any clone, on GitHub and offline.
@Suite struct DocumentationLinkTests {
    /// The repository's root, found from this file's own path.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .standardizedFileURL

    /// README.md and every Markdown file of docs/, relative to the root.
    static var documents: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func thereAreDocumentsToCheck() {
        #expect(Self.documents.contains("docs/FORMAT.md"))
        #expect(Self.documents.contains("docs/ARCHITECTURE.md"))
    }

    @Test(arguments: documents)
    func relativeLinksResolveInsideTheRepository(_ path: String) throws {
        let file = Self.root.appendingPathComponent(path)
        let text = try String(contentsOf: file, encoding: .utf8)
        for link in MarkdownLinks.targets(in: text) where MarkdownLinks.isRelative(link) {
            #expect(Self.problem(of: link, in: file) == nil, "\(path): \(link)")
        }
    }

    /// What is wrong with the relative `link` of `file`: it leaves the repository or names nothing.
    static func problem(of link: String, in file: URL) -> String? {
        let path = String(link.prefix { $0 != "#" && $0 != "?" })
        guard !path.isEmpty else { return nil }  // An anchor in the same file.
        let decoded = path.removingPercentEncoding ?? path
        let target = file.deletingLastPathComponent().appendingPathComponent(decoded).standardizedFileURL
        guard target.path == root.path || target.path.hasPrefix(root.path + "/") else {
            return "points outside the repository, to \(target.path)"
        }
        guard FileManager.default.fileExists(atPath: target.path) else { return "no such file: \(target.path)" }
        return nil
    }

    /// The checks can fail: a missing file and a way out of the repository are both caught.
    @Test func brokenLinksAreCaught() {
        let readme = Self.root.appendingPathComponent("README.md")
        let text =
            "[a](docs/NOPE.md) [b](../elsewhere/FORMAT.md \"title\") [c](https://example.com) [d](#x)\n[e]: <docs/FORMAT.md>"
        let links = MarkdownLinks.targets(in: text)
        #expect(links == ["docs/NOPE.md", "../elsewhere/FORMAT.md", "https://example.com", "#x", "docs/FORMAT.md"])
        #expect(Self.problem(of: "docs/NOPE.md", in: readme) != nil)
        #expect(Self.problem(of: "../elsewhere/FORMAT.md", in: readme) != nil)
        #expect(Self.problem(of: "../README.md", in: readme) != nil)
        #expect(Self.problem(of: "../\(Self.root.lastPathComponent)/README.md", in: readme) == nil)
        #expect(Self.problem(of: "docs/FORMAT.md#7-diagnostics", in: readme) == nil)
        #expect(!MarkdownLinks.isRelative("https://example.com") && !MarkdownLinks.isRelative("mailto:a@b.c"))
    }
}

/// The link targets of a Markdown text: inline `[text](target "title")` and reference
/// definitions `[label]: target`, outside code blocks and code spans.
enum MarkdownLinks {
    static func targets(in markdown: String) -> [String] {
        var targets: [String] = []
        var isInFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                isInFence.toggle()
                continue
            }
            guard !isInFence else { continue }
            let characters = Array(withoutCodeSpans(String(line)))
            var index = 0
            while index < characters.count - 1 {
                if characters[index] == "]" && characters[index + 1] == "(" {
                    var end = index + 2
                    var depth = 1
                    while end < characters.count {
                        if characters[end] == "(" { depth += 1 }
                        if characters[end] == ")" {
                            depth -= 1
                            if depth == 0 { break }
                        }
                        end += 1
                    }
                    targets.append(cleaned(String(characters[(index + 2)..<min(end, characters.count)])))
                    index = end
                }
                index += 1
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("["), let close = trimmed.range(of: "]: ") {
                targets.append(cleaned(String(trimmed[close.upperBound...])))
            }
        }
        return targets
    }

    /// Whether `target` names a place in the repository rather than a URL with a scheme.
    static func isRelative(_ target: String) -> Bool {
        guard let colon = target.firstIndex(of: ":") else { return true }
        let scheme = target[..<colon]
        return scheme.isEmpty || !scheme.allSatisfy { $0.isLetter || $0.isNumber || "+.-".contains($0) }
    }

    /// A target without its title and angle brackets.
    private static func cleaned(_ raw: String) -> String {
        var target = raw.trimmingCharacters(in: .whitespaces)
        if target.hasPrefix("<"), let close = target.firstIndex(of: ">") {
            return String(target[target.index(after: target.startIndex)..<close])
        }
        if let space = target.firstIndex(of: " ") { target = String(target[..<space]) }
        return target
    }

    /// `line` with the text of its code spans removed (a `[a](b)` in backticks is not a link).
    private static func withoutCodeSpans(_ line: String) -> String {
        var result = ""
        var isInSpan = false
        for character in line {
            if character == "`" {
                isInSpan.toggle()
            } else if !isInSpan {
                result.append(character)
            }
        }
        return result
    }
}
