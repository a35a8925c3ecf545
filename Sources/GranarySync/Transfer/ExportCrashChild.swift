import Foundation

/// The body of `granary-crashtest sync-export`: records local events and exports them into a shared
/// folder until it is killed, so that the crash test can check that a kill at any point — mid-upload,
/// between an upload and its commit — leaves nothing lost, altered or duplicated once the next export
/// has run (§12.4).
///
/// It lives here rather than in the crash-test executable because the transfer types are internal; the
/// SPI keeps it out of the public API.
@_spi(CrashTesting)
public enum ExportCrashChild {
    /// Opens (creating) the event store `<directory>/events.granary`, leeches it on the folder
    /// `<directory>/cloud` (which must exist) the first time, then loops: records a local event, with a
    /// large value travelling as a data file at every even revision (printing `recorded <revision>`), exports everything unexported in batches of one (printing
    /// `exported <revision>` for each once its commit returned). Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        CrashChildProcess.run("sync-export child") { try await loop(directory: directory) }
    }

    /// The large value (a data file, M15) of every even revision's event, distinct per revision.
    static func cover(revision: Int64) -> Data {
        var bytes = Data(repeating: UInt8(truncatingIfNeeded: revision), count: SyncConstants.inlineDataLimit + 2_000)
        withUnsafeBytes(of: revision.littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        return bytes
    }

    private static func loop(directory: URL) async throws {
        let store = try EventStore.open(at: directory.appendingPathComponent("events.granary"))
        let fileSystem = LocalDirectoryFileSystem(rootDirectory: directory.appendingPathComponent("cloud"))
        let layout = try CloudLayout(ensembleIdentifier: "crash")
        let transit = TransitDirectories(root: directory.appendingPathComponent("transit"))
        try transit.prepare()
        let checks = CloudChecks(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit)
        if try store.state().leechState == .notLeeched {
            try await checks.prepareForLeech()
            try store.setLeechState(.leeched)
        }
        guard case .ok = try await checks.beforeMerge() else { throw SyncError.cloudIdentityChanged }
        let exporter = Exporter(fileSystem: fileSystem, layout: layout, eventStore: store, transit: transit, batchSize: 1)
        while true {
            let meta = try store.nextLocalMeta()
            let key = ObjectKey("Book", "crash-\(meta.id.revision)")
            var change = ObjectChange(key: key, kind: .insert, attributes: ["title": .string(String(repeating: "x", count: 200))])
            if meta.id.revision % 2 == 0 { change.attributes["cover"] = .data(cover(revision: meta.id.revision)) }
            let (changes, files) = LargeValues.extract([change], writer: meta.id.store)
            try store.recordLocalEvent(Event(meta: meta, changes: changes), with: EventStoreStep(dataFiles: files))
            CrashChildProcess.say("recorded \(meta.id.revision)")
            let report = try await exporter.export(against: CloudSnapshot.take(of: fileSystem, layout: layout))
            for id in report.exported { CrashChildProcess.say("exported \(id.revision)") }
        }
    }
}
