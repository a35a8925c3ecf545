import Foundation

/// The body of `granary-crashtest sync-events`: records steps into an event store until it is killed,
/// so that the crash test can check that every kill leaves each step wholly written or not at all.
///
/// It lives here rather than in the crash-test executable because the event store is internal; the SPI
/// keeps it out of the public API.
@_spi(CrashTesting)
public enum EventStoreCrashChild {
    /// The store ID of the simulated remote device whose events the child imports and integrates.
    public static let remoteStoreText = "FFFFFFFF-0000-4000-8000-000000000000"

    /// Opens the event store in `directory` (creating it) and loops, each round `r` being three commits:
    /// local event `r` with its ledger object `Author/own-r`, local key `r` and history token `"r"`
    /// (printing `local r`); the import of remote event `r` at global count `2r + 1` (`imported r`); its
    /// integration with ledger object `Book/remote-r` and local key `1_000_000 + r` (`integrated r`).
    /// A line is printed only once its commit returned, which with `.full` durability means on disk.
    /// Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        do {
            let store = try EventStore.open(at: directory)
            let remote = StoreID(canonical: remoteStoreText)!
            while true {
                let meta = try store.nextLocalMeta()
                let round = meta.id.revision
                let own = ObjectKey("Author", "own-\(round)")
                var ownObject = LedgerObject(key: own)
                ownObject.incarnations = [Incarnation(insert: meta)]
                let event = Event(meta: meta, changes: [ObjectChange(key: own, kind: .insert, attributes: ["name": .integer(round)])])
                try store.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: [ownObject], localKeys: [own: round],
                                                                       historyToken: Data(String(round).utf8)))
                CrashChildProcess.say("local \(round)")

                let remoteMeta = EventMeta(id: EventID(store: remote, revision: round), globalCount: 2 * round + 1,
                                           vector: RevisionVector())
                let book = ObjectKey("Book", "remote-\(round)")
                try store.importEvent(Event(meta: remoteMeta, changes: [ObjectChange(key: book, kind: .insert)]))
                CrashChildProcess.say("imported \(round)")
                var bookObject = LedgerObject(key: book)
                bookObject.incarnations = [Incarnation(insert: remoteMeta)]
                try store.commit(EventStoreStep(integrated: [remoteMeta.id], ledgerObjects: [bookObject],
                                                localKeys: [book: 1_000_000 + round]))
                CrashChildProcess.say("integrated \(round)")
            }
        } catch {
            FileHandle.standardError.write(Data("sync-events child: \(error)\n".utf8))
            exit(1)
        }
    }
}
