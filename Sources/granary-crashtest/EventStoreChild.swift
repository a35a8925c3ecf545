import Foundation
@_spi(CrashTesting) import GranarySync

/// The event-store crash child: records local events, imports and integrations into a GranarySync
/// event store until killed (see `EventStoreCrashChild.run(directory:)` for what each round writes).
///
/// `granary-crashtest sync-events <event-store-directory>`
func runEventStoreChild(_ args: [String]) -> Never {
    guard args.count == 1 else {
        FileHandle.standardError.write(Data("usage: granary-crashtest sync-events <event-store-directory>\n".utf8))
        exit(2)
    }
    EventStoreCrashChild.run(directory: URL(fileURLWithPath: args[0]))
}
