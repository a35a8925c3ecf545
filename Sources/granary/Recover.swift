import ArgumentParser
import Foundation
import GranaryStorage

/// `granary recover`: salvages a damaged store into a new one, as SQLite's `.recover` does.
struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy every intact commit of a damaged store into a new store, and list what could not be.",
        discussion: """
            The damaged store is only read. Exit status 0 when everything its files held was salvaged, \
            2 when the new store was written but is missing what the report lists, 1 when nothing could \
            be written.
            """)
    @Argument(help: "The damaged store directory.")
    var path: String
    @Option(name: .customLong("to"), help: "Where to create the salvaged store (must not exist).")
    var destination: String

    func run() throws {
        var complete = false
        try reportingFailures {
            guard FileManager.default.fileExists(atPath: path) else { throw Failure("no store at \(path): the path does not exist") }
            let report = try Engine.salvage(URL(fileURLWithPath: path), into: URL(fileURLWithPath: destination))
            print(report)
            print("salvaged store written to \(destination)")
            complete = report.isComplete
        }
        if !complete { throw ExitCode(2) }
    }
}
