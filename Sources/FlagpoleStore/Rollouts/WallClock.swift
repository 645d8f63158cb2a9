import Foundation

/// The time that scheduled work goes by: the system's, or, to rehearse a ramp or to test one, an
/// instant written in a file (`FLAGPOLE_CLOCK_FILE` on the command line, ISO 8601), read again at every look so that
/// a test moves a running server's time by rewriting the file. A week's ramp then runs in
/// seconds, and no test of time sleeps.
public struct WallClock: Sendable {
    private let read: @Sendable () -> Date

    /// The system's clock.
    public static let system = WallClock { Date() }

    /// The clock whose time is the instant written in the file at `path`; the system's time while
    /// the file is missing or holds no instant.
    public static func file(_ path: String) -> WallClock {
        WallClock {
            guard let data = FileManager.default.contents(atPath: path),
                let text = String(data: data, encoding: .utf8),
                let date = try? Date(text.trimmingCharacters(in: .whitespacesAndNewlines), strategy: .iso8601)
            else { return Date() }
            return date
        }
    }

    public init(_ read: @escaping @Sendable () -> Date) {
        self.read = read
    }

    public var now: Date { read() }
}
