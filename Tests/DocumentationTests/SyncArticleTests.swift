import Foundation
import Granary
import GranarySync
import Testing

// The README's "Sync in one minute": the seed's notes app (an entity with a `uniqueIdentifier` set when
// it is first inserted), two devices syncing through one shared folder.
// snippet: sync-one-minute-class
final class Memo: ManagedObject {
    @Managed var name: String
    @Managed var uniqueIdentifier: String
    @Managed var creationDate: Date

    override func awakeFromInsert() {
        super.awakeFromInsert()
        uniqueIdentifier = UUID().uuidString          // what makes one object of two devices' copies
        creationDate = Date()
    }
}
// end-snippet

func memosModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Memo", as: Memo.self) {
            Attribute("name", .string)
            Attribute("uniqueIdentifier", .string)
            Attribute("creationDate", .date)
        }
    }
}

/// Merges what the ensemble saved into the app's view context, as the seed's stack does.
final class ViewContextMerger: PersistentStoreEnsembleDelegate {
    let viewContext: ManagedObjectContext
    init(viewContext: ManagedObjectContext) { self.viewContext = viewContext }

    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, didSaveMergeChangesWith changes: ContextChanges) {
        viewContext.performAndWait { viewContext.mergeChanges(fromContextDidSave: changes) }
    }
}

@Suite struct SyncArticleTests {
    func names(in context: ManagedObjectContext) throws -> [String] {
        try context.performAndWait { try context.fetch(FetchRequest<Memo>(entityName: "Memo")).map(\.name).sorted() }
    }

    func addEntry(_ name: String, to coordinator: PersistentStoreCoordinator) throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            Memo(context: context).name = name
            try context.save()
        }
    }

    @Test func syncInOneMinute() async throws {
        let root = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let sharedFolderURL = root.appendingPathComponent("Shared", isDirectory: true)   // Dropbox, Syncthing, NFS…
        try FileManager.default.createDirectory(at: sharedFolderURL, withIntermediateDirectories: true)
        let laptopURL = root.appendingPathComponent("laptop/Memos.granary", isDirectory: true)
        let phoneURL = root.appendingPathComponent("phone/Memos.granary", isDirectory: true)
        let model = try memosModel()

        // snippet: sync-one-minute
        let folder = LocalDirectoryFileSystem(rootDirectory: sharedFolderURL)
        func openDevice(at url: URL) throws -> (PersistentStoreCoordinator, PersistentStoreEnsemble) {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try coordinator.addPersistentStore(type: .durable, at: url,
                                                           options: .init(persistentHistoryTracking: true))
            let ensemble = try PersistentStoreEnsemble(
                ensembleIdentifier: "Memos", persistentStore: store, managedObjectModel: model, cloudFileSystem: folder,
                configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
            return (coordinator, ensemble)
        }
        let (laptop, laptopSync) = try openDevice(at: laptopURL)
        var (phone, phoneSync) = try openDevice(at: phoneURL)
        let phoneView = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: phone)
        let merger = ViewContextMerger(viewContext: phoneView)
        phoneSync.delegate = merger                             // merges arrive in the phone's view context

        try await laptopSync.leech()                            // enable sync on both
        try await phoneSync.leech()
        try addEntry("Buy bread", to: laptop)                   // an ordinary save
        try await laptopSync.merge()                            // sends it
        try await phoneSync.merge()                             // receives it
        #expect(try names(in: phoneView) == ["Buy bread"])

        try await phoneSync.deleech()                           // disable sync on the phone
        phoneSync.dismantle()
        try phone.remove(phone.persistentStores[0])
        try FileManager.default.removeItem(at: phoneURL)        // delete the phone's store…
        (phone, phoneSync) = try openDevice(at: phoneURL)       // …open it again, empty
        try await phoneSync.leech()                             // and resync: the entry comes back
        try await phoneSync.merge()
        // end-snippet
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: phone)
        #expect(try names(in: fresh) == ["Buy bread"])
        withExtendedLifetime(merger) {}
    }
}
