import Foundation
import Granary

/// The body of `granary-crashtest sync-capture`: saves into a store with persistent history and
/// captures after each save until it is killed, so that the crash test can check that a kill at any
/// moment loses no save and captures none twice (§12.2).
///
/// It lives here rather than in the crash-test executable because the recorder is internal; the SPI keeps
/// it out of the public API.
@_spi(CrashTesting)
public enum CaptureCrashChild {
    /// Authors and their books, each named by `uniqueIdentifier`.
    public static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "capture-crash") {
            Entity("Author") {
                Attribute("uniqueIdentifier", .string, optional: true)
                Attribute("name", .string, optional: true)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute("uniqueIdentifier", .string, optional: true)
                Attribute("title", .string, optional: true)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }

    /// The app's store in `directory`.
    public static func storeURL(in directory: URL) -> URL { directory.appendingPathComponent("App.granary") }

    /// The event store in `directory`.
    public static func eventStoreURL(in directory: URL) -> URL { directory.appendingPathComponent("events.granary") }

    /// Opens the store and event store in `directory` (creating them) and loops: save `n` inserts Author
    /// `a-n` with Book `b-n`, renames Author `a-(n−1)` and deletes Book `b-(n−2)` (printing `saved n` once
    /// the save returned), then captures (printing `captured r` for event revision `r`). `n` continues from
    /// the Authors already in the store. Exits with status 1 on any error.
    public static func run(directory: URL) -> Never {
        do {
            let model = try model()
            let app = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try app.addPersistentStore(type: .durable, at: storeURL(in: directory),
                                                   options: .init(durability: .full, persistentHistoryTracking: true))
            let sync = PersistentStoreCoordinator(managedObjectModel: model)
            let shared = try sync.addPersistentStore(sharing: store)
            let eventStore = try EventStore.open(at: eventStoreURL(in: directory))
            let configuration = EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier")
            let recorder = LocalChangeRecorder(
                coordinator: sync, store: shared, eventStore: eventStore,
                schema: LedgerSchema(model: model, configuration: configuration),
                identifiers: try GlobalIdentifierSource(model: model, attribute: configuration.globalIdentifierAttribute, delegate: nil))
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: app)
            guard let authorEntity = model.entity(named: "Author"), let bookEntity = model.entity(named: "Book") else {
                throw SyncError.dataCorruption("the crash child's model lacks its entities")
            }
            var n = try context.performAndWait { try context.count(for: FetchRequest<ManagedObject>(entityName: "Author")) }
            while true {
                n += 1
                let round = n
                try context.performAndWait {
                    let author = ManagedObject(entity: authorEntity, insertInto: context)
                    try author.setValue("a-\(round)", forKey: "uniqueIdentifier")
                    try author.setValue("\(round)", forKey: "name")
                    let book = ManagedObject(entity: bookEntity, insertInto: context)
                    try book.setValue("b-\(round)", forKey: "uniqueIdentifier")
                    try book.setValue(author, forKey: "author")
                    if let previous = try find("Author", "a-\(round - 1)", in: context) {
                        try previous.setValue("renamed \(round)", forKey: "name")
                    }
                    if let old = try find("Book", "b-\(round - 2)", in: context) { context.delete(old) }
                    try context.save()
                }
                CrashChildProcess.say("saved \(round)")
                if let event = try recorder.capture() { CrashChildProcess.say("captured \(event.id.revision)") }
            }
        } catch {
            FileHandle.standardError.write(Data("sync-capture child: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func find(_ entity: String, _ gid: String, in context: ManagedObjectContext) throws -> ManagedObject? {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.filter = try PredicateParser.parse("uniqueIdentifier == %@", arguments: [gid])
        return try context.fetch(request).first
    }
}
