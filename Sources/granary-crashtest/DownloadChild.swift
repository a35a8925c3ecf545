import Foundation
@_spi(CrashTesting) import GranarySync

/// The sync download crash child: downloads a shared folder's events into a GranarySync event store
/// until killed (see `DownloadCrashChild.run(directory:)`).
///
/// `granary-crashtest sync-download <directory>`
func runDownloadChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-download <directory>\n".utf8))
        exit(2)
    }
    DownloadCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
