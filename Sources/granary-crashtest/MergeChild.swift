import Foundation
@_spi(CrashTesting) import GranarySync

/// The merge crash child: integrates remote events into a store that tracks history until killed (see
/// `MergeCrashChild.run(directory:)`).
///
/// `granary-crashtest sync-merge <directory>`
func runMergeChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-merge <directory>\n".utf8))
        exit(2)
    }
    MergeCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
