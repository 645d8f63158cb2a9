import Foundation
import Testing

/// The relative links of README.md, CONTRIBUTING.md and docs/*.md lead to files of the repository,
/// and none leaves it; a link's `#anchor` names a heading of the Markdown file it leads to. The docs
/// must read the same in any clone, on GitHub and offline.
@Suite struct DocumentationLinkTests {
    /// The repository's root, found from this file's own path.
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .standardizedFileURL

    /// README.md, CONTRIBUTING.md and every Markdown file of docs/, relative to the root.
    static var documents: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md", "CONTRIBUTING.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    @Test func thereAreDocumentsToCheck() {
        #expect(Self.documents.contains("CONTRIBUTING.md"))
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

    /// What is wrong with the relative `link` of `file`: it leaves the repository, names nothing, or
    /// names a Markdown file (`#anchor` alone: `file` itself) without a heading of its `#anchor`.
    /// A link that starts with `/` is read from the repository's root, as GitHub reads it.
    static func problem(of link: String, in file: URL) -> String? {
        let path = String(link.prefix { $0 != "#" && $0 != "?" })
        var target = file
        if !path.isEmpty {
            let decoded = path.removingPercentEncoding ?? path
            let base = decoded.hasPrefix("/") ? root : file.deletingLastPathComponent()
            target = base.appendingPathComponent(decoded).standardizedFileURL
            guard target.path == root.path || target.path.hasPrefix(root.path + "/") else {
                return "points outside the repository, to \(target.path)"
            }
            guard FileManager.default.fileExists(atPath: target.path) else { return "no such file: \(target.path)" }
        }
        guard let hash = link.firstIndex(of: "#"), target.pathExtension == "md" else { return nil }
        let fragment = String(link[link.index(after: hash)...])
        let anchor = fragment.removingPercentEncoding ?? fragment
        guard let text = try? String(contentsOf: target, encoding: .utf8) else { return "unreadable: \(target.path)" }
        guard MarkdownLinks.anchors(in: text).contains(anchor) else {
            return "no heading of \(target.lastPathComponent) has the anchor #\(anchor)"
        }
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
        // From the repository's root, wherever the file is; still never above it.
        let overview = Self.root.appendingPathComponent("docs/OVERVIEW.md")
        #expect(Self.problem(of: "/README.md#clients", in: overview) == nil)
        #expect(Self.problem(of: "/../README.md", in: overview) != nil)
        #expect(!MarkdownLinks.isRelative("https://example.com") && !MarkdownLinks.isRelative("mailto:a@b.c"))
    }

    /// Anchors are GitHub's: a missing one is caught, in another file or the same one; a present one
    /// passes, a second heading of one name as `-1`, punctuation dropped, letters of any script kept;
    /// a heading inside a code fence is none.
    @Test func anchorsAreChecked() {
        let text = """
            # Guide
            ## 4. Buckets & points
            ## Setup
            ### Setup ##
            ## A delivery: `GET /t/{tenant}/{env}/features.json`
            ## See [FORMAT.md](FORMAT.md) — §5, Größe_2
            ```sh
            # not a heading
            ## Setup
            ```
            #hashtag, not a heading
            """
        #expect(
            MarkdownLinks.anchors(in: text) == [
                "guide", "4-buckets--points", "setup", "setup-1", "a-delivery-get-ttenantenvfeaturesjson",
                "see-formatmd--5-größe_2",
            ])
        let readme = Self.root.appendingPathComponent("README.md")
        #expect(Self.problem(of: "docs/FORMAT.md#4-biases", in: readme) == nil)
        #expect(Self.problem(of: "docs/FORMAT.md#e100--not-strict-json", in: readme) == nil)
        #expect(Self.problem(of: "docs/FORMAT.md#not-a-section", in: readme) != nil)
        #expect(Self.problem(of: "#documentation", in: readme) == nil)
        #expect(Self.problem(of: "#not-a-section", in: readme) != nil)
    }
}

/// The link targets of a Markdown text: inline `[text](target "title")` and reference
/// definitions `[label]: target`, outside code blocks and code spans; and the anchors of its headings.
enum MarkdownLinks {
    static func targets(in markdown: String) -> [String] {
        var targets: [String] = []
        for line in linesOutsideFences(of: markdown) {
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

    /// The anchors GitHub gives the headings (`#` to `######`) outside code blocks, in order: the
    /// heading's text as shown, lowercased, without anything but letters, digits, spaces, hyphens
    /// and underscores, its spaces hyphens; a slug taken already gets `-1`, `-2`…
    static func anchors(in markdown: String) -> [String] {
        var anchors: [String] = []
        var occurrences: [String: Int] = [:]
        for line in linesOutsideFences(of: markdown) {
            guard let heading = headingText(of: line) else { continue }
            let slug = self.slug(of: heading)
            var anchor = slug
            while occurrences[anchor] != nil {
                occurrences[slug, default: 0] += 1
                anchor = "\(slug)-\(occurrences[slug, default: 0])"
            }
            occurrences[anchor] = 0
            anchors.append(anchor)
        }
        return anchors
    }

    /// The text of an ATX heading (`## Text ##`) as shown, links by their text; nil for any other line.
    private static func headingText(of line: Substring) -> String? {
        let indent = line.prefix { $0 == " " }
        guard indent.count <= 3 else { return nil }
        let marks = line.dropFirst(indent.count).prefix { $0 == "#" }
        let rest = line.dropFirst(indent.count + marks.count)
        guard (1...6).contains(marks.count), rest.isEmpty || rest.first == " " || rest.first == "\t" else {
            return nil
        }
        var text = rest.trimmingCharacters(in: .whitespaces)
        let closing = text.reversed().prefix { $0 == "#" }.count
        if closing == text.count {
            text = ""
        } else if closing > 0, text.dropLast(closing).last == " " {
            text = text.dropLast(closing).trimmingCharacters(in: .whitespaces)
        }
        return shown(text)
    }

    /// `text` with each link shown as its text: `[FORMAT.md](FORMAT.md) §5` is `FORMAT.md §5`.
    private static func shown(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "[") {
            guard let close = rest[open...].firstIndex(of: "]"), rest[rest.index(after: close)...].first == "(",
                let end = rest[close...].firstIndex(of: ")")
            else {
                result += rest[...open]
                rest = rest[rest.index(after: open)...]
                continue
            }
            result += rest[..<open] + rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// GitHub's slug of a heading's text.
    private static func slug(of text: String) -> String {
        var slug = ""
        for character in text.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character.isLetter || character.isNumber || character == "-" || character == "_" {
                slug.append(character)
            }
        }
        return slug
    }

    /// The lines of `markdown` outside fenced code blocks (between lines that start with three backticks).
    private static func linesOutsideFences(of markdown: String) -> [Substring] {
        var lines: [Substring] = []
        var isInFence = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                isInFence.toggle()
            } else if !isInFence {
                lines.append(line)
            }
        }
        return lines
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
