import Foundation
import Granary
import GranaryRecords
import GranaryStack
import Logging
import Synchronization
import Testing

/// A persistable class whose ID attribute has no uniqueness constraint in `looseModel`.
final class Tag: ManagedObject, Persistable {
    @Managed var slug: String
    static var idKeyPath: ReferenceWritableKeyPath<Tag, String> { \.slug }
}

/// Collects the messages a swift-log handler receives.
struct CollectingHandler: LogHandler {
    let sink: Probe
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { sink.record("\(event.level) \(event.message)") }
}

@Suite(.serialized) struct StoreManagerSetupTests {
    static let looseModel: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(version: "1") {
                Entity("Tag", as: Tag.self) { Attribute("slug", .string) }
            }
        } catch {
            fatalError("the loose model does not build: \(error)")
        }
    }()

    /// A run-time model of one entity; `required` adds a non-optional attribute without a default,
    /// which lightweight migration cannot fill in for the stored rows.
    static func thingModel(required: Bool) throws -> ManagedObjectModel {
        try ManagedObjectModel(version: required ? "2" : "1") {
            Entity("Thing") {
                Attribute("name", .string)
                if required { Attribute("weight", .integer64) }
            }
        }
    }

    // The ID attribute must be unique in the model: checked at start, the error names the entity.
    @Test func anIDWithoutUniquenessConstraintIsRefusedNamingTheEntity() throws {
        #expect {
            try StoreManager(name: "Loose", model: Self.looseModel, location: .inMemory)
        } throws: { error in
            guard case RecordsError.idNotUnique(let entity, let attribute) = error else { return false }
            return entity == "Tag" && attribute == "slug" && "\(error)".contains("'Tag'")
        }
        #expect(throws: Never.self) { try StoreManager(name: "Shop", model: RecordsTestModel.model, location: .inMemory) }
    }

    // The manager made from a registered model opens its store where it is told.
    @Test func aManagerFromARegisteredModelOpensItsStoreInTheGivenDirectory() async throws {
        let registry = ModelRegistry()
        registry.register(RecordsTestModel.model, named: "Shop")
        let directory = RecordsTestModel.scratchDirectory()
        let manager = try StoreManager(modelNamed: "Shop", registry: registry, location: .directory(directory))
        try await User.create(in: manager) { user, _ in user.uuid = "u1" }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Shop.granary").path))
        #expect(throws: RecordsError.self) { try StoreManager(modelNamed: "Nope", registry: registry, location: .inMemory) }
    }

    // The default manager serves calls that name none; without one, the services throw.
    @Test func theDefaultManagerServesCallsThatNameNone() async throws {
        let manager = try RecordsTestModel.makeManager()
        StoreManager.default = manager
        let id = try await Order.create { order, _ in order.orderID = 42 }
        let main = StoreManager.default.mainContext
        let found = try await main.perform { try Order.get(entityID: 42)?.objectID }
        #expect(found == id)
    }

    // B: an incompatible store is never deleted silently; with the opt-in, every file goes, the store is
    // made again and handleMigration is called.
    @Test func anIncompatibleStoreIsRecreatedOnlyWhenAskedTo() async throws {
        let directory = RecordsTestModel.scratchDirectory()
        do {
            let old = try StoreManager(name: "Things", model: Self.thingModel(required: false), location: .directory(directory))
            try await old.stack.performBackgroundTask { context in
                let thing = ManagedObject(entity: context.model!.entity(named: "Thing")!, insertInto: context)
                try thing.setValue("kept?", forKey: "name")
                try context.save()
            }
            try old.stack.close()
        }
        let storeURL = directory.appendingPathComponent("Things.granary")
        let stray = storeURL.appendingPathComponent("stray-file")
        _ = FileManager.default.createFile(atPath: stray.path, contents: Data([1]))
        let newModel = try Self.thingModel(required: true)
        #expect(throws: RecordsError.self) { try StoreManager(name: "Things", model: newModel, location: .directory(directory)) }
        #expect(FileManager.default.fileExists(atPath: stray.path))

        let called = Probe()
        let manager = try StoreManager(name: "Things", model: newModel, location: .directory(directory),
                                       options: .recreatesIncompatibleStore, handleMigration: { called.record("migration") })
        #expect(called.all == ["migration"])
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        let context = manager.newBackgroundContext()
        let count = try await context.perform { try context.count(for: FetchRequest<ManagedObject>(entityName: "Thing")) }
        #expect(count == 0)
    }

    // A compatible change is migrated (lightweight), not recreated: the rows stay, handleMigration is not called.
    @Test func aMigratableStoreIsMigratedNotRecreated() async throws {
        let directory = RecordsTestModel.scratchDirectory()
        do {
            let old = try StoreManager(name: "Things", model: Self.thingModel(required: false), location: .directory(directory))
            try await old.stack.performBackgroundTask { context in
                let thing = ManagedObject(entity: context.model!.entity(named: "Thing")!, insertInto: context)
                try thing.setValue("kept", forKey: "name")
                try context.save()
            }
            try old.stack.close()
        }
        let newModel = try ManagedObjectModel(version: "3") {
            Entity("Thing") {
                Attribute("name", .string)
                Attribute("note", .string, optional: true)
            }
        }
        let called = Probe()
        let manager = try StoreManager(name: "Things", model: newModel, location: .directory(directory),
                                       options: .recreatesIncompatibleStore, handleMigration: { called.record("migration") })
        #expect(called.all.isEmpty)
        let context = manager.newBackgroundContext()
        let count = try await context.perform { try context.count(for: FetchRequest<ManagedObject>(entityName: "Thing")) }
        #expect(count == 1)
    }

    // Logging: swift-log with a pluggable handler; saves logged at verbose, nothing below the level.
    @Test func messagesGoToThePluggedHandlerAtTheLevelSet() async throws {
        let sink = Probe()
        RecordsLog.setHandler { _ in CollectingHandler(sink: sink) }
        defer {
            RecordsLog.level = .warning
            RecordsLog.setHandler { label in StreamLogHandler.standardError(label: label) }
        }
        let manager = try RecordsTestModel.makeManager()
        RecordsLog.level = .error
        try await User.create(in: manager) { user, _ in user.uuid = "quiet" }
        #expect(!sink.all.contains { $0.contains("saved create User") })
        RecordsLog.level = .verbose
        try await User.create(in: manager) { user, _ in user.uuid = "loud" }
        #expect(sink.all.contains { $0.hasPrefix("debug") && $0.contains("saved create User") })
        RecordsLog.level = .off
        await #expect(throws: RecordsError.self) {
            try await User.create(in: manager, updateIfEntityExists: false) { user, _ in user.uuid = "loud" }
        }
        #expect(!sink.all.contains { $0.contains("updateIfEntityExists") })
    }
}
