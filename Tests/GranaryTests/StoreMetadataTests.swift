import Foundation
@testable import Granary
import Testing

/// Store metadata read before a store is added, as Apple documents it on the "NSPersistentStoreCoordinator"
/// reference page (`metadataForPersistentStore(type:at:options:)`: "Returns a dictionary containing the
/// metadata stored in the persistent store at a given URL") and on "NSManagedObjectModel"
/// (`isConfiguration(withName:compatibleWithStoreMetadata:)`: "Returns a Boolean value that indicates
/// whether a given configuration in the model is compatible with given metadata from a persistent
/// store"), the pair the "Core Data Model Versioning and Data Migration" guide uses to decide whether
/// a store needs migrating.
@Suite struct StoreMetadataTests {
    static func version1() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Note") {
                Attribute("title", .string)
                Index("byTitle", "title")
            }
            Entity("Tag") { Attribute("name", .string) }
            Configuration("Notes", entities: "Note")
        }
    }

    static func version2() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "2") {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("pinned", .boolean, defaultValue: false)
                Index("byTitle", "title")
            }
            Entity("Tag") { Attribute("name", .string) }
            Configuration("Notes", entities: "Note")
        }
    }

    @Test func theMetadataIsReadBeforeTheStoreIsOpenedAndTellsWhetherItNeedsMigrating() throws {
        let v1 = try Self.version1()
        let v2 = try Self.version2()
        let harness = MigrationHarness()
        let identifier = try harness.write(v1) { context in
            try context.insert("Note", ["title": "first"])
            return context.persistentStoreCoordinator!.persistentStores[0].identifier
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: v1)
        try coordinator.setMetadata(["owner": "me"], for: coordinator.addPersistentStore(type: .durable, at: harness.url))
        try coordinator.remove(coordinator.persistentStores[0])
        let files = try harness.files()

        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(type: .durable, at: harness.url)
        #expect(metadata[PersistentStore.MetadataKey.storeUUID] as? String == identifier.uuidString)
        #expect(metadata[PersistentStore.MetadataKey.storeType] as? String == "durable")
        #expect(metadata[PersistentStore.MetadataKey.modelVersionHashes] as? [String: String] == v1.entityVersionHashes)
        #expect(metadata[PersistentStore.MetadataKey.modelVersionIdentifiers] as? [String] == ["1"])
        #expect(metadata[PersistentStore.MetadataKey.modelVersionHash] as? String == v1.versionHash)
        #expect(metadata["owner"] as? String == "me")
        #expect(try harness.files() == files, "reading the metadata wrote nothing")

        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(v1.isConfiguration(withName: "Notes", compatibleWithStoreMetadata: metadata))
        #expect(!v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        #expect(!v2.isConfiguration(withName: "Notes", compatibleWithStoreMetadata: metadata))
        #expect(!v1.isConfiguration(withName: "Unknown", compatibleWithStoreMetadata: metadata))

        // The app decides to migrate; afterwards the store is the new model's.
        try harness.open(v2) { store, _ in #expect(store.migrationReport != nil) }
        let migrated = try PersistentStoreCoordinator.metadataForPersistentStore(at: harness.url)
        #expect(v2.isConfiguration(withName: nil, compatibleWithStoreMetadata: migrated))
        #expect(!v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: migrated))
    }

    /// Whole-model hashes: opening migrates a store whose recorded model differs in any entity, so a
    /// change outside the configuration makes the store incompatible too (Core Data would say compatible).
    @Test func aChangeOutsideTheConfigurationStillNeedsMigrating() throws {
        let v1 = try Self.version1()
        let tagChanged = try ManagedObjectModel(version: "1b") {
            Entity("Note") {
                Attribute("title", .string)
                Index("byTitle", "title")
            }
            Entity("Tag") { Attribute("label", .string) }
            Configuration("Notes", entities: "Note")
        }
        let harness = MigrationHarness()
        try harness.write(v1) { context in try context.insert("Note", ["title": "first"]) }
        let metadata = try PersistentStoreCoordinator.metadataForPersistentStore(at: harness.url)
        #expect(!tagChanged.isConfiguration(withName: "Notes", compatibleWithStoreMetadata: metadata))
        // Opening it unmigrated is refused, as the answer said.
        var options = PersistentStore.Options()
        options.migration.shouldMigrateStoreAutomatically = false
        #expect(throws: MigrationError.self) { try harness.open(tagChanged, options: options) { _, _ in } }

        // Metadata carrying only the entity hashes (no whole-model hash) is compared entity by entity.
        var entityHashesOnly = metadata
        entityHashesOnly[PersistentStore.MetadataKey.modelVersionHash] = nil
        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: entityHashesOnly))
        #expect(!tagChanged.isConfiguration(withName: nil, compatibleWithStoreMetadata: entityHashesOnly))
        #expect(!v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: [:]))
    }

    @Test func anAttachedStoresMetadataIsTheSameDictionary() throws {
        let v1 = try Self.version1()
        let url = scratchURL()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: v1)
        let store = try coordinator.addPersistentStore(type: .durable, at: url)
        defer { try? coordinator.remove(store) }
        let metadata = coordinator.metadata(for: store)
        #expect(metadata[PersistentStore.MetadataKey.storeUUID] as? String == store.identifier.uuidString)
        #expect(v1.isConfiguration(withName: nil, compatibleWithStoreMetadata: metadata))
        // Open for writing here, the store cannot be read from outside.
        do {
            _ = try PersistentStoreCoordinator.metadataForPersistentStore(at: url)
            Issue.record("read the metadata of a store open for writing")
        } catch {
            guard case .storage(.lockHeld) = error else { throw error }
        }
    }

    @Test func aMissingStoreOrAnInMemoryTypeIsATypedError() throws {
        let missing = scratchURL()
        do {
            _ = try PersistentStoreCoordinator.metadataForPersistentStore(type: .durable, at: missing)
            Issue.record("read the metadata of nothing")
        } catch {
            guard case .storeDoesNotExist(missing) = error else { throw error }
            #expect(error.description.contains(missing.path))
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path), "reading created nothing")
        #expect(throws: ContextError.self) { try PersistentStoreCoordinator.metadataForPersistentStore(type: .inMemory, at: missing) }

        let notAStore = scratchURL()
        try FileManager.default.createDirectory(at: notAStore, withIntermediateDirectories: true)
        do {
            _ = try PersistentStoreCoordinator.metadataForPersistentStore(at: notAStore)
            Issue.record("read the metadata of an empty directory")
        } catch {
            guard case .storage(.invalidArgument) = error else { throw error }
        }
    }
}
