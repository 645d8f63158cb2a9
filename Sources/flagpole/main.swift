import FlagpoleCommands
import Foundation

// The command tree lives in FlagpoleCommands, where tests run it in process; the binary only
// hands it the process's arguments, variables and streams.
exit(await Flagpole.run(Array(CommandLine.arguments.dropFirst()), in: .process))
