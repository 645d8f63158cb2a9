import Foundation

/// An app's version as apps write it: `5.2`, `5.2.1`, `5.2.1 (123)`, `v5.2.0-beta.2`.
///
/// Compared as people read them, not only as strict semver: numeric parts compare as numbers and
/// missing ones count as zero (`5.2` = `5.2.0`), a pre-release (`-beta.2`) comes before its
/// release, and a build number (`(123)` or `+123`) breaks ties between equal versions, but only
/// when both name one: `5.2.1 (123)` equals `5.2.1` (either way round) and is above `5.2.1 (122)`.
public struct AppVersion: Hashable, Sendable, CustomStringConvertible {
    /// The numeric parts, as written.
    public let parts: [Int]
    /// The pre-release identifiers after `-`; empty for a release.
    public let preRelease: [String]
    /// The build number, when one is written.
    public let build: Int?
    public let description: String

    /// The most numeric parts a version may have, and the longest text: bounds the work an
    /// attribute sent by anyone can cause.
    public static let maximumParts = 8
    public static let maximumLength = 64

    public init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength else { return nil }
        // Trimmed by hand: rules parse an app's version for every clause on it, and Foundation's
        // trimming was most of that cost.
        var rest = Self.trimmed(Substring(text))
        // Most attributes are no versions ("DE", "pro"): refused before anything is allocated.
        guard let first = rest.utf8.first,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) || first == UInt8(ascii: "v")
                || first == UInt8(ascii: "V")
        else { return nil }
        description = String(rest)
        if rest.first == "v" || rest.first == "V" { rest = rest.dropFirst() }
        var build: Int?
        if rest.hasSuffix(")"), let open = rest.lastIndex(of: "(") {
            guard let number = Self.number(rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]) else {
                return nil
            }
            build = number
            rest = Self.trimmed(rest[..<open])
        } else if let plus = rest.firstIndex(of: "+") {
            guard let number = Self.number(rest[rest.index(after: plus)...]) else { return nil }
            build = number
            rest = rest[..<plus]
        }
        var preRelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            preRelease = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false)
                .map(String.init)
            guard
                preRelease.allSatisfy({ identifier in
                    !identifier.isEmpty
                        && identifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
                })
            else { return nil }
            rest = rest[..<dash]
        }
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false).map(Self.number)
        guard !parts.isEmpty, parts.count <= Self.maximumParts, parts.allSatisfy({ $0 != nil }) else { return nil }
        self.parts = parts.map { $0! }
        self.preRelease = preRelease
        self.build = build
    }

    /// The same version with `build` (none when `nil`).
    func withBuild(_ build: Int?) -> AppVersion {
        let text =
            parts.map(String.init).joined(separator: ".")
            + (preRelease.isEmpty ? "" : "-" + preRelease.joined(separator: ".")) + (build.map { " (\($0))" } ?? "")
        return AppVersion(text) ?? self
    }

    /// `text` without the spaces and tabs at either end.
    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }) else { return text[text.endIndex...] }
        let last = text.lastIndex(where: { !isBlank($0) })!
        return text[first...last]
    }

    /// Digits only, at most 9 of them (no overflow, no sign, no spaces).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// How `self` compares with `other`: `-1`, `0` or `1`. Builds count only when both have one,
    /// whichever side the rule's version is on.
    public func compare(to other: AppVersion) -> Int {
        for index in 0..<max(parts.count, other.parts.count) {
            let (mine, theirs) = (
                index < parts.count ? parts[index] : 0, index < other.parts.count ? other.parts[index] : 0
            )
            if mine != theirs { return mine < theirs ? -1 : 1 }
        }
        let preReleaseOrder = Self.comparePreRelease(preRelease, other.preRelease)
        if preReleaseOrder != 0 { return preReleaseOrder }
        guard let mine = build, let theirs = other.build else { return 0 }
        return mine == theirs ? 0 : mine < theirs ? -1 : 1
    }

    /// Semver's order: a release is above its pre-releases; identifiers compare one by one,
    /// numbers as numbers and below words; a longer list wins a tie.
    private static func comparePreRelease(_ mine: [String], _ theirs: [String]) -> Int {
        if mine.isEmpty || theirs.isEmpty { return mine.isEmpty == theirs.isEmpty ? 0 : mine.isEmpty ? 1 : -1 }
        for (a, b) in zip(mine, theirs) where a != b {
            switch (Int(a), Int(b)) {
            case (let x?, let y?): return x < y ? -1 : 1
            case (.some, nil): return -1
            case (nil, .some): return 1
            case (nil, nil): return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
            }
        }
        return mine.count == theirs.count ? 0 : mine.count < theirs.count ? -1 : 1
    }
}
