import Foundation

/// The body of `granary-crashtest sync-download`: downloads the events of a shared folder into an event
/// store, one commit per file, so that the crash test can kill it between any two steps and check that
/// each import and the record of its file name were one commit (§12.3, first row).
///
/// It lives here rather than in the crash-test executable because the transfer types are internal; the
/// SPI keeps it out of the public API.
@_spi(CrashTesting)
public enum DownloadCrashChild {
    /// The ensemble identifier the child and its test use.
    public static let ensembleIdentifier = "library"

    /// Opens (creating) the event store `<directory>/events.granary`, prints `started`, downloads every
    /// event file of the ensemble in the folder `<directory>/cloud` (batches of one file), prints `done`
    /// and then waits to be killed. Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        CrashChildProcess.run("sync-download child") {
            let store = try EventStore.open(at: directory.appendingPathComponent("events.granary"))
            let fileSystem = LocalDirectoryFileSystem(rootDirectory: directory.appendingPathComponent("cloud"))
            try await fileSystem.connect()
            let layout = try CloudLayout(ensembleIdentifier: ensembleIdentifier)
            let transit = TransitDirectories(root: directory.appendingPathComponent("transit"))
            try transit.prepare()
            let downloader = Downloader(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit, batchSize: 1)
            CrashChildProcess.say("started")
            _ = try await downloader.download(CloudSnapshot.take(of: fileSystem, layout: layout))
            CrashChildProcess.say("done")
            while true { try await Task.sleep(for: .seconds(60)) }
        }
    }
}
