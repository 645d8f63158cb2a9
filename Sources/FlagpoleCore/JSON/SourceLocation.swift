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
        let offset = min(max(offset, 0), bytes.count)
        // The last line start at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        var start = lineStarts[low]
        if low == 0, bytes.starts(with: JSONParser.byteOrderMark) {
            start = min(3, offset)
        }
        // Columns count characters, not bytes: skip UTF-8 continuation bytes.
        let column = bytes[start..<offset].reduce(1) { count, byte in
            byte & 0xC0 == 0x80 ? count : count + 1
        }
        return SourceLocation(line: low + 1, column: column)
    }
}
