import Foundation
@_spi(CrashTesting) import GranarySync

/// The rebase crash child: records, exports and rebases on a shared folder until killed (see
/// `RebaseCrashChild.run(directory:)`).
///
/// `granary-crashtest sync-rebase <directory>`
func runRebaseChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-rebase <directory>\n".utf8))
        exit(2)
    }
    RebaseCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
