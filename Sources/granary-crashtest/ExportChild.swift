import Foundation
@_spi(CrashTesting) import GranarySync

/// The sync export crash child: records local events into a GranarySync event store and exports them
/// into a shared folder until killed (see `ExportCrashChild.run(directory:)`).
///
/// `granary-crashtest sync-export <directory>`
func runExportChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-export <directory>\n".utf8))
        exit(2)
    }
    ExportCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
