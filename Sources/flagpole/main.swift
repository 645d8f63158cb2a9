import FlagpoleCommands
import Foundation

// The command tree lives in FlagpoleCommands, where tests run it in process; the binary only
// hands it the process's arguments (as bytes: FlagpoleCommands refuses any that isn't UTF-8),
// variables and streams.
let arguments = (1..<Int(CommandLine.argc)).map { index in
    CommandLine.unsafeArgv[index].map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) } ?? []
}
exit(await Flagpole.run(argumentBytes: arguments, in: .process))
