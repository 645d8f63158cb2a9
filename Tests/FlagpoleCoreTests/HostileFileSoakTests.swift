import FlagpoleCore
import Foundation
import Testing

/// A file at a size no app ships, read whole in time and memory bounded by its size; seconds of
/// work, so the soak lane's (CONTRIBUTING.md, "Lanes").
@Suite("Hostile files, at scale")
struct HostileFileSoakTests {
    @Test("100 000 features decode without a diagnostic, render and read back as the same document")
    func hundredThousandFeatures() throws {
        let features = (0..<100_000).map {
            #"{"name": "f\#($0)", "test-variations": ["A", "B"], "test-biases": [10, 90]}"#
        }
        let decoded = TestSupport.decode(#"{"features": ["# + features.joined(separator: ",\n") + "]}")
        #expect(decoded.diagnostics.isEmpty)
        let document = try #require(decoded.document)
        #expect(document.features.count == 100_000)
        #expect(DocumentDecoder.decode(document.rendered(.compact)).document == document)
    }
}
