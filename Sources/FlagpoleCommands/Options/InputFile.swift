import ArgumentParser
import FlagpoleCore
import Foundation

/// A file named on the command line, or standard input for `-`.
struct InputFile {
    let argument: String

    /// How diagnostics name it.
    var displayName: String { argument == "-" ? "<stdin>" : argument }

    /// Where it is opened: relative to the invocation's working directory.
    private var path: String { Invocation.current.resolve(argument) }

    /// Its bytes.
    ///
    /// - throws: `ValidationError` when the file cannot be read.
    func read() throws -> [UInt8] {
        if argument == "-" { return Invocation.current.standardInput.readAll() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("Cannot read \(argument): \(unreadableReason).")
        }
        return Array(data)
    }

    /// Its bytes, refused without reading them all when there are more than `limit`: a regular
    /// file by its size, standard input or a pipe once `limit + 1` bytes have arrived.
    ///
    /// - throws: `ValidationError` when the file cannot be read, `CommandFailure` when it is too large.
    func read(atMost limit: Int) throws -> [UInt8] {
        let handle: FileHandle
        if argument == "-" {
            switch Invocation.current.standardInput {
            case .fileHandle(let input): handle = input
            case .bytes(let bytes):
                guard bytes.count <= limit else {
                    throw tooLarge(size: "over \(Self.grouped(limit)) bytes", limit: limit)
                }
                return bytes
            }
        } else {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path)
            if attributes?[.type] as? FileAttributeType == .typeRegular,
                let size = (attributes?[.size] as? NSNumber)?.intValue, size > limit
            {
                throw tooLarge(size: "\(Self.grouped(size)) bytes", limit: limit)
            }
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw ValidationError("Cannot read \(argument): \(unreadableReason).")
            }
            handle = opened
        }
        defer { if argument != "-" { try? handle.close() } }
        // Read in chunks up to one byte past the limit: a pipe or a file that grows is cut off there.
        var bytes: [UInt8] = []
        while bytes.count <= limit {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: min(1 << 20, limit + 1 - bytes.count))
            } catch {
                throw ValidationError("Cannot read \(argument): \(error.localizedDescription).")
            }
            guard let chunk, !chunk.isEmpty else { return bytes }
            bytes.append(contentsOf: chunk)
        }
        throw tooLarge(size: "over \(Self.grouped(limit)) bytes", limit: limit)
    }

    private var unreadableReason: String {
        FileManager.default.fileExists(atPath: path) ? "it is not readable" : "there is no such file"
    }

    private func tooLarge(size: String, limit: Int) -> CommandFailure {
        CommandFailure(
            """
            \(displayName) is \(size): Flagpole reads features files of at most \(Self.grouped(limit)) bytes \
            (\(limit >> 20) MiB). Nothing was read or written. Check that this is the right file; \
            an app's features.json is rarely more than a few hundred kilobytes.
            """)
    }

    /// `1234567` as `1 234 567`.
    static func grouped(_ number: Int) -> String {
        var digits = Array(String(number))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(" ", at: index)
            index -= 3
        }
        return String(digits)
    }
}
