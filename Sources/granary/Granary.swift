import ArgumentParser
import Foundation
import GranaryStorage

@main
struct GranaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "granary",
        abstract: "Inspect, check and maintain Granary stores.",
        subcommands: [Demo.self, Info.self, Verify.self, Checkpoint.self, Dump.self, Recover.self, Migrate.self, ModelCommand.self],
        defaultSubcommand: Demo.self)
}

/// Options shared by the commands that open an existing store.
struct StoreArgument: ParsableArguments {
    @Argument(help: "The store directory (e.g. Library.granary).")
    var path: String

    /// Opens the store, turning every failure into a one-line message and exit status 1.
    func open(readOnly: Bool) throws -> Engine {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw Failure("no store at \(path): the path does not exist")
        }
        guard isDirectory.boolValue else { throw Failure("\(path) is a file, not a store directory") }
        do {
            return try Engine.open(.directory(URL(fileURLWithPath: path)),
                                   options: .init(durability: .full, readOnly: readOnly, createIfMissing: false))
        } catch let error as StorageError {
            throw Failure("cannot open \(path): \(error)")
        }
    }
}

/// An error whose message is printed as is, without a stack trace.
struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

extension ParsableCommand {
    /// Runs `body`, printing failures as `granary: message` and exiting with status 1.
    func reportingFailures(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("granary: \(failure)\n".utf8))
            throw ExitCode.failure
        } catch let error as StorageError {
            FileHandle.standardError.write(Data("granary: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}

func formatBytes(_ n: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB"]
    var value = Double(n)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
}
