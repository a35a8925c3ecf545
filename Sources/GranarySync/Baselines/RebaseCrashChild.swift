import Foundation

/// The body of `granary-crashtest sync-rebase`: one device that records, exports and rebases in a loop
/// until it is killed, so that the crash test can check §12.7 after kills at any point of a rebase.
///
/// It lives here rather than in the crash-test executable because the event store and the rebaser are
/// internal; the SPI keeps it out of the public API.
@_spi(CrashTesting)
public enum RebaseCrashChild {
    /// The ensemble identifier of the child's cloud directory.
    public static let ensemble = "rebase"
    /// The payload limit of the child's baseline parts: small, so that baselines have several parts and a
    /// kill can fall between two part uploads.
    public static let partPayload = 1500

    /// Opens (or creates) the event store `directory/events.granary` and the shared folder
    /// `directory/cloud`, then loops: exports every unexported event (`exported r`), records local event
    /// `r` (`recorded r`: inserts `Book/own-r`, and every third round deletes `Book/own-(r-2)` and retitles
    /// `Book/own-(r-1)`), exports it, and rebases with the cutoff of a lone device, everything it has
    /// integrated (`rebased r`). Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        CrashChildProcess.run("sync-rebase child") { try await loop(directory: directory) }
    }

    private static func loop(directory: URL) async throws {
        let store = try EventStore.open(at: directory.appendingPathComponent("events.granary"))
        let cloudRoot = directory.appendingPathComponent("cloud")
        let upload = directory.appendingPathComponent("upload")
        try FileManager.default.createDirectory(at: cloudRoot, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: upload, withIntermediateDirectories: true)
        let cloud = LocalDirectoryFileSystem(rootDirectory: cloudRoot)
        let layout = try CloudLayout(ensembleIdentifier: ensemble)
        try await cloud.connect()
        for path in layout.directories { try await cloud.createDirectory(atPath: path) }
        let rebaser = Rebaser(fileSystem: cloud, layout: layout, eventStore: store, transitDirectory: upload,
                              maximumPartPayload: partPayload)

        func export() async throws {
            for event in try store.events(withStatus: .localUnexported) {
                let name = CloudFileName.event(globalCount: event.meta.globalCount, store: event.id.store, revision: event.id.revision, part: nil)
                let url = upload.appendingPathComponent(name.fileName)
                try EventPayloadCoding.file(.eventPart, of: event).write(to: url)
                try await cloud.uploadLocalFile(at: url, toPath: layout.path(for: name))
                try FileManager.default.removeItem(at: url)
                try store.markExported([event.id])
                CrashChildProcess.say("exported \(event.id.revision)")
            }
        }

        while true {
            try await export()
            let meta = try store.nextLocalMeta()
            let round = meta.id.revision
            var changes = [ObjectChange(key: ObjectKey("Book", "own-\(round)"), kind: .insert, attributes: ["title": .string("r\(round)")])]
            if round % 3 == 0 {
                changes.append(ObjectChange(key: ObjectKey("Book", "own-\(round - 2)"), kind: .delete))
                changes.append(ObjectChange(key: ObjectKey("Book", "own-\(round - 1)"), kind: .update, attributes: ["title": .string("again \(round)")]))
            }
            let event = Event(meta: meta, changes: changes)
            var ledger = try store.loadLedger()
            LedgerIntegrator.apply(event, to: &ledger)
            let touched = Set(changes.map(\.key)).compactMap { ledger.object($0) }
            try store.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: touched))
            CrashChildProcess.say("recorded \(round)")
            try await export()

            let events = try await cloud.contentsOfDirectory(atPath: layout.eventsDirectory).compactMap { try? CloudFileName.parse($0.name) }
            let baselines = try await cloud.contentsOfDirectory(atPath: layout.baselinesDirectory).compactMap { try? CloudFileName.parse($0.name) }
            _ = try await rebaser.rebase(cutoff: try store.state().integrated, eventNames: events, baselineNames: baselines)
            CrashChildProcess.say("rebased \(round)")
        }
    }
}
