import Foundation
import Granary

/// The body of `granary-crashtest sync-merge`: integrates remote events into a durable store until it is
/// killed, so that the crash test can check that recovery (§12.3) after any kill leaves the store equal
/// to the ledger's projection, with nothing lost and nothing duplicated.
///
/// It lives here rather than in the crash-test executable because the merge is internal; the SPI keeps
/// it out of the public API.
@_spi(CrashTesting)
public enum MergeCrashChild {
    /// The store ID of the simulated remote device whose events the child integrates.
    public static let remoteStoreText = "EEEEEEEE-0000-4000-8000-000000000000"
    static let ownStoreText = "DDDDDDDD-0000-4000-8000-000000000000"

    /// Authors with books; each remote event inserts an author and a book and renames the author before.
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Author") {
                Attribute("name", .string, optional: true)
                Relationship("books", toMany: "Book", inverse: "author", deleteRule: .cascade)
            }
            Entity("Book") {
                Attribute("title", .string, optional: true)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }

    /// Remote event `round`: inserts `Author/a-round` with `Book/b-round`, renames `Author/a-(round-1)`.
    static func event(_ round: Int64) -> Event {
        let remote = StoreID(canonical: remoteStoreText)!
        let author = ObjectKey("Author", "a-\(round)"), book = ObjectKey("Book", "b-\(round)")
        var changes = [ObjectChange(key: author, kind: .insert, attributes: ["name": .string("author \(round)")]),
                       ObjectChange(key: book, kind: .insert, attributes: ["title": .string("book \(round)")], toOnes: ["author": author])]
        if round > 1 {
            changes.append(ObjectChange(key: ObjectKey("Author", "a-\(round - 1)"), kind: .update,
                                        attributes: ["name": .string("renamed by \(round)")]))
        }
        return Event(meta: EventMeta(id: EventID(store: remote, revision: round), globalCount: round, vector: RevisionVector()),
                     changes: changes)
    }

    /// Opens the store in `directory/App.granary` and the event store in `directory/events.granary`,
    /// recovers (printing `recovered <outcome>`), then loops: imports the next remote event and
    /// integrates every downloaded one, printing `pending r`, `saved r` and `merged r` as each step of
    /// the merge of event `r` returns (pausing 50 ms after the first two, for kills aimed at them).
    /// Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        do {
            let model = try model()
            let app = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try app.addPersistentStore(type: .durable, at: directory.appendingPathComponent("App.granary"),
                                                   options: .init(persistentHistoryTracking: true))
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let shared = try coordinator.addPersistentStore(sharing: store)
            let events = try EventStore.open(at: directory.appendingPathComponent("events.granary"),
                                             creatingWith: StoreID(canonical: ownStoreText))
            let recovered = try MergeRecovery.recover(events, coordinator: coordinator, store: shared)
            CrashChildProcess.say("recovered \(recovered)")
            var integrator = MergeIntegrator(eventStore: events, coordinator: coordinator, store: shared, schema: LedgerSchema(model: model))
            let remote = StoreID(canonical: remoteStoreText)!
            while true {
                let downloaded = try events.events(withStatus: .downloaded)
                let round = max(try events.state().integrated[remote], downloaded.map(\.id.revision).max() ?? 0) + 1
                try events.importEvent(event(round))
                // A pause after each named point, so that a kill sent on the line lands between the steps.
                integrator.afterPendingRecord = { CrashChildProcess.say("pending \(round)"); Thread.sleep(forTimeInterval: 0.05) }
                integrator.afterStoreSave = { CrashChildProcess.say("saved \(round)"); Thread.sleep(forTimeInterval: 0.05) }
                _ = try integrator.integrate(try events.events(withStatus: .downloaded))
                CrashChildProcess.say("merged \(round)")
            }
        } catch {
            FileHandle.standardError.write(Data("sync-merge child: \(error)\n".utf8))
            exit(1)
        }
    }
}
