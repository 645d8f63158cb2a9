import FlagpoleCore
import Foundation
import Testing

/// A line and column in a source file (FlagpoleCore's, not Swift Testing's).
typealias Position = FlagpoleCore.SourceLocation

/// Shared helpers of the FlagpoleCore tests.
enum TestSupport {
    /// The marker placed by hand in a test source where a diagnostic is expected; it is
    /// removed before the text is decoded.
    static let marker: Character = "‸"

    /// Decodes `text` as UTF-8.
    static func decode(_ text: String) -> DecodedDocument {
        DocumentDecoder.decode(Array(text.utf8))
    }

    /// Decodes `text` with its markers removed, and returns where each marker stood,
    /// in order, as 1-based line and character column.
    static func decodeMarked(_ text: String) -> (decoded: DecodedDocument, marks: [Position]) {
        let (clean, marks) = strippingMarkers(text)
        return (decode(clean), marks)
    }

    /// `text` without its markers, and the line and column of each marker.
    static func strippingMarkers(_ text: String) -> (String, [Position]) {
        var clean = ""
        var marks: [Position] = []
        var line = 1
        var column = 1
        for scalar in text.unicodeScalars {
            if Character(scalar) == marker {
                marks.append(Position(line: line, column: column))
                continue
            }
            clean.unicodeScalars.append(scalar)
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return (clean, marks)
    }

    /// A one-feature document `{"features": [{"name": "f", <members>}]}`.
    static func document(feature members: String) -> String {
        members.isEmpty ? #"{"features": [{"name": "f"}]}"# : #"{"features": [{"name": "f", "# + members + "}]}"
    }

    /// The only feature of a valid one-feature document, or a test failure.
    static func onlyFeature(
        _ members: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> Feature {
        let decoded = decode(document(feature: members))
        #expect(decoded.isValid, "\(decoded.diagnostics)", sourceLocation: sourceLocation)
        let document = try #require(decoded.document, sourceLocation: sourceLocation)
        try #require(document.features.count == 1, sourceLocation: sourceLocation)
        return document.features[0]
    }

    /// The codes of `diagnostics`, sorted, for set-like comparisons.
    static func codes(_ diagnostics: [Diagnostic]) -> [String] {
        diagnostics.map(\.code.rawValue).sorted()
    }

    /// Whether two doubles agree to within rounding.
    static func isClose(_ lhs: Double, _ rhs: Double, tolerance: Double = 1e-9) -> Bool {
        abs(lhs - rhs) <= tolerance
    }

    /// Whether two arrays of doubles agree element by element to within rounding.
    static func isClose(_ lhs: [Double], _ rhs: [Double], tolerance: Double = 1e-9) -> Bool {
        lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { isClose($0, $1, tolerance: tolerance) }
    }

    // MARK: Fixtures

    /// `Tests/Fixtures/real`, found from this file's own path.
    static let realFixturesDirectory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
        .appendingPathComponent("real")

    /// The one real fixture that holds a `/* */` comment.
    static let commentedFixtureName = "vantientu1703-f305791-Features-with-comment.json"

    /// The file names of every real fixture, sorted.
    static var realFixtureNames: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: realFixturesDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
    }

    /// The real fixtures the client accepts.
    static var validRealFixtureNames: [String] {
        realFixtureNames.filter { $0 != commentedFixtureName }
    }

    /// The bytes of a real fixture.
    static func realFixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: realFixturesDirectory.appendingPathComponent(name)))
    }

    // MARK: Pointers

    /// The byte offset of the value `pointer` designates in `bytes`, or of its nearest
    /// existing ancestor when the pointer names something absent (a missing `name`).
    static func offset(of pointer: JSONPointer, in bytes: [UInt8]) throws -> Int {
        var node = try JSONParser.parse(bytes)
        let tokens = pointer.description.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
        for token in tokens {
            switch node.content {
            case .object:
                guard let member = node.member(token) else { return node.offset }
                node = member.node
            case .array(let elements):
                guard let index = Int(token), elements.indices.contains(index) else { return node.offset }
                node = elements[index]
            default:
                return node.offset
            }
        }
        return node.offset
    }
}

/// A test case named by its own text, so that parameterised results read well.
struct Input: Sendable, CustomTestStringConvertible, ExpressibleByStringLiteral {
    var text: String

    init(_ text: String) {
        self.text = text
    }

    init(stringLiteral value: String) {
        self.text = value
    }

    var testDescription: String { text }
}
