import Foundation
import Granary
@testable import GranaryStack
import Testing

/// `PersistentStoreDescription` as Apple's "NSPersistentStoreDescription" reference page describes it:
/// `init(url:)`, `url`, `type`, `configuration`, `isReadOnly`, `timeout`, `shouldAddStoreAsynchronously`,
/// `shouldMigrateStoreAutomatically`, `shouldInferMappingModelAutomatically` (the last two "true by
/// default"), `options` and `setOption(_:forKey:)` ("If a value was previously set for the given option,
/// that value is replaced"); and `NSPersistentContainer.defaultDirectoryURL()`.
@Suite struct PersistentStoreDescriptionTests {
    @Test func aNewDescriptionHasCoreDatasDefaults() {
        let url = URL(fileURLWithPath: "/tmp/Model.granary")
        let description = PersistentStoreDescription(url: url)
        #expect(description.url == url)
        #expect(description.type == .durable)
        #expect(description.configuration == nil)
        #expect(!description.isReadOnly)
        #expect(description.timeout == 240)
        #expect(!description.shouldAddStoreAsynchronously)
        #expect(description.shouldMigrateStoreAutomatically)
        #expect(description.shouldInferMappingModelAutomatically)
        #expect(Set(description.options.keys) == [PersistentStoreDescription.OptionKey.migrateStoreAutomatically,
                                                  PersistentStoreDescription.OptionKey.inferMappingModelAutomatically])
        #expect(description.storeOptions == PersistentStore.Options())
        #expect(PersistentStoreDescription().url == nil)
    }

    @Test func coreDataPropertiesAndTheirOptionsAreOneSetting() {
        let description = PersistentStoreDescription()
        description.setOption(false as NSNumber, forKey: PersistentStoreDescription.OptionKey.migrateStoreAutomatically)
        #expect(!description.shouldMigrateStoreAutomatically)
        description.setOption("YES", forKey: PersistentStoreDescription.OptionKey.readOnly)
        #expect(description.isReadOnly)
        description.setOption(nil, forKey: PersistentStoreDescription.OptionKey.readOnly)
        #expect(!description.isReadOnly)
        description.setOption(NSNumber(value: 5.5), forKey: PersistentStoreDescription.OptionKey.timeout)
        #expect(description.timeout == 5.5)

        description.shouldInferMappingModelAutomatically = false
        #expect(description.options[PersistentStoreDescription.OptionKey.inferMappingModelAutomatically] as? Bool == false)
        description.isReadOnly = true
        #expect(description.options[PersistentStoreDescription.OptionKey.readOnly] as? Bool == true)
        description.setOption("kept", forKey: "SomeOtherKey")
        #expect(description.options["SomeOtherKey"] as? String == "kept")
    }

    @Test func theStoreOptionsFollowTheDescription() throws {
        let older = try ManagedObjectModel(version: "0") { Entity("Note") { Attribute("title", .string) } }
        let description = PersistentStoreDescription()
        description.isReadOnly = true
        description.shouldMigrateStoreAutomatically = false
        description.durability = .normal(milliseconds: 50)
        description.recovery = .keepConsistentPrefix
        var migration = description.migrationOptions
        migration.versions = [older]
        migration.destroyAndRecreateOnIncompatibleModel = true
        description.migrationOptions = migration

        let options = description.storeOptions
        #expect(options.isReadOnly)
        #expect(options.durability == .normal(milliseconds: 50))
        #expect(options.recovery == .keepConsistentPrefix)
        #expect(!options.migration.shouldMigrateStoreAutomatically && options.migration.shouldInferMappingModelAutomatically)
        #expect(options.migration.versions.map(\.versionHash) == [older.versionHash])
        #expect(options.migration.destroyAndRecreateOnIncompatibleModel)

        migration.shouldInferMappingModelAutomatically = false
        description.migrationOptions = migration
        #expect(!description.shouldInferMappingModelAutomatically)
    }

    @Test func devNullMeansInMemory() throws {
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
        #expect(description.isInMemory)
        let request = try description.storeRequest(container: "Notes")
        #expect(request.configuration.type == .inMemory && request.url == nil)
        #expect(description.description.contains("inMemory"))
        let durable = PersistentStoreDescription(url: URL(fileURLWithPath: "/tmp/Notes.granary"))
        #expect(!durable.isInMemory)
        #expect(try durable.storeRequest(container: "Notes").url == URL(fileURLWithPath: "/tmp/Notes.granary"))
    }

    // NSPersistentContainer: "By default, the provided name value is used to name the persistent store",
    // in defaultDirectoryURL().
    @Test func theDefaultDescriptionIsOneDurableStoreNamedAfterTheContainer() {
        let coreData = PersistentContainer(name: "Model", managedObjectModel: stackModel)
        #expect(coreData.persistentStoreDescriptions.count == 1)
        let description = coreData.persistentStoreDescriptions[0]
        #expect(description.url == PersistentContainer.defaultDirectoryURL().appendingPathComponent("Model.granary", isDirectory: true))
        #expect(description.type == .durable && description.configuration == nil)
        #expect(coreData.storeDirectory == PersistentContainer.defaultDirectoryURL())
        #expect(PersistentContainer.defaultDirectoryURL() == StoreDirectory.defaultURL(for: ProcessInfo.processInfo.processName))

        let granary = PersistentContainer(name: "Notes", model: stackModel, options: options(scratchDirectory()))
        #expect(granary.persistentStoreDescriptions.map(\.url) == [defaultStoreURL("Notes", in: granary.storeDirectory)])
    }

    @Test func changingTheFirstDescriptionInPlaceChangesWhatLoads() {
        let container = PersistentContainer(name: "Model", managedObjectModel: stackModel)
        container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")
        #expect(container.persistentStoreDescriptions[0].isInMemory)
    }
}
