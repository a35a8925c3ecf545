import Foundation
@_spi(CrashTesting) import GranarySync

/// The capture crash child: saves into a store with history and captures each save into a GranarySync
/// event store until killed (see `CaptureCrashChild.run(directory:)`).
///
/// `granary-crashtest sync-capture <directory>`
func runCaptureChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-capture <directory>\n".utf8))
        exit(2)
    }
    CaptureCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
