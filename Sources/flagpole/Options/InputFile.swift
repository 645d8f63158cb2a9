import ArgumentParser
import Foundation

/// A file named on the command line, or standard input for `-`.
struct InputFile {
    let argument: String

    /// How diagnostics name it.
    var displayName: String { argument == "-" ? "<stdin>" : argument }

    /// Its bytes.
    ///
    /// - throws: `ValidationError` when the file cannot be read.
    func read() throws -> [UInt8] {
        if argument == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: argument) else {
            let reason = FileManager.default.fileExists(atPath: argument) ? "it is not readable" : "there is no such file"
            throw ValidationError("Cannot read \(argument): \(reason).")
        }
        return Array(data)
    }
}
