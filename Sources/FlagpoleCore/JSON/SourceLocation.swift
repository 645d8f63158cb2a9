/// A position in a source file, 1-based, as editors show it.
public struct SourceLocation: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The line, counting from 1.
    public var line: Int
    /// The column, counting characters (Unicode scalars) from 1.
    public var column: Int

    /// Creates a location from a line and a column, both 1-based.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`, as compilers and editors write a position.
    public var description: String { "\(line):\(column)" }
}

/// Turns byte offsets of a source into lines and columns.
///
/// Built only when a diagnostic needs a location, so valid files never pay for the line table.
public struct SourceLocator: Sendable {
    private let bytes: [UInt8]
    private let lineStarts: [Int]

    /// Indexes the line starts of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(offset + 1)
        }
        self.lineStarts = starts
    }

    /// The line and column of the byte at `offset`.
    public func location(of offset: Int) -> SourceLocation {
        locations(of: [offset])[0]
    }

    /// The lines and columns of many offsets, in their order: one pass over the bytes in offset
    /// order, so that thousands of diagnostics on one long line (a minified file) cost no more
    /// than reading that line once, where locating each alone would read it again every time.
    public func locations(of offsets: [Int]) -> [SourceLocation] {
        var result = Array(repeating: SourceLocation(line: 1, column: 1), count: offsets.count)
        var line = -1
        var cursor = 0
        var column = 1
        for index in offsets.indices.sorted(by: { offsets[$0] < offsets[$1] }) {
            let offset = min(max(offsets[index], 0), bytes.count)
            let lineIndex = self.lineIndex(of: offset)
            if lineIndex != line {
                line = lineIndex
                // A byte-order mark is not a column of the first line.
                cursor = lineIndex == 0 && bytes.starts(with: JSONParser.byteOrderMark) ? 3 : lineStarts[lineIndex]
                column = 1
            }
            // Columns count characters, not bytes: skip UTF-8 continuation bytes.
            if offset > cursor {
                for byte in bytes[cursor..<offset] where byte & 0xC0 != 0x80 { column += 1 }
                cursor = offset
            }
            result[index] = SourceLocation(line: lineIndex + 1, column: column)
        }
        return result
    }

    /// The index in `lineStarts` of the last line start at or before `offset`.
    private func lineIndex(of offset: Int) -> Int {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
