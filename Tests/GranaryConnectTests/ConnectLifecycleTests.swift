import Foundation
import Granary
import GranaryConnect
import GranaryStack
import Testing

/// §4.1 and Coherence's state tests: start, stop, start again; attach before and after start; a
/// connect is a `PersistentStack`.
@Suite struct ConnectLifecycleTests {
    @Test func startTwiceLeavesOneStoreAndStopDetachesThem() throws {
        let connect = GenericConnect<MixedStrategy>(name: "Shop", managedObjectModel: ConnectTestModel.model,
                                                    options: ConnectOptions(stack: StackOptions(storeDirectory: ConnectTestModel.scratchDirectory())))
        #expect(!connect.isSuspended)
        try connect.start()
        try connect.start()
        #expect(connect.persistentStores.count == 1)
        #expect(!connect.isSuspended)
        try connect.stop()
        #expect(connect.persistentStores.isEmpty)
        #expect(!connect.isStarted)
        #expect(throws: ConnectError.notStarted) { try connect.execute(CustomerAction()) }
        try connect.stop()
        try connect.start()
        #expect(connect.persistentStores.count == 1)
        #expect(connect.managedEntityNames.contains("Customer"))
        try connect.close()
    }

    @Test func startAndStopWithABlockReportOnAnotherQueue() async throws {
        let connect = GenericConnect<NestedStrategy>(name: "Shop", managedObjectModel: ConnectTestModel.model,
                                                     options: ConnectOptions(stack: StackOptions(storeDirectory: ConnectTestModel.scratchDirectory())))
        let started: (any Error)? = await withCheckedContinuation { continuation in connect.start { continuation.resume(returning: $0) } }
        #expect(started == nil)
        #expect(connect.persistentStores.count == 1)
        let stopped: (any Error)? = await withCheckedContinuation { continuation in connect.stop { continuation.resume(returning: $0) } }
        #expect(stopped == nil)
        #expect(connect.persistentStores.isEmpty, "stopping with a block leaves no store")
    }

    @Test func storesAttachBeforeAndAfterStart() throws {
        let model = try ManagedObjectModel {
            Entity("Item") { Attribute("id", .integer64); Unique("id") }
            Entity("Setting") { Attribute("key", .string); Unique("key") }
            Configuration("Cache", entities: "Item")
            Configuration("User", entities: "Setting")
        }
        let directory = ConnectTestModel.scratchDirectory()
        let connect = GenericConnect<DirectStrategy>(name: "Two", managedObjectModel: model,
                                                     options: ConnectOptions(stack: StackOptions(storeDirectory: directory)))
        try connect.attachPersistentStore(for: StoreConfiguration(name: "Cache", type: .inMemory))
        try connect.start()
        try connect.attachPersistentStore(at: directory.appendingPathComponent("alice"), for: StoreConfiguration(name: "User"))
        #expect(connect.persistentStores.count == 2)
        #expect(connect.managedEntityKeys == ["Item": ["id"], "Setting": ["key"]])
        try connect.close()
    }

    @Test func aConnectMadeByNameWithoutAModelFailsAtStart() {
        let connect = GenericConnect<MixedStrategy>(name: "NoSuchModel-\(UUID().uuidString)", models: ModelRegistry())
        #expect(throws: StackError.self) { try connect.start() }
    }

    @Test func aConnectMadeByNameFindsARegisteredModel() throws {
        let registry = ModelRegistry()
        registry.register(ConnectTestModel.model, named: "ShopModel")
        let connect = GenericConnect<MixedStrategy>(name: "ShopModel", options: ConnectOptions(stack: StackOptions(storeDirectory: ConnectTestModel.scratchDirectory())),
                                                    models: registry)
        try connect.start()
        #expect(connect.managedEntityNames.contains("Customer"))
        try connect.close()
    }

    @Test func aConnectIsAPersistentStack() async throws {
        func count(in stack: some PersistentStack) async throws -> Int {
            try await stack.performBackgroundTask { context in
                Customer(context: context).uuid = "via-stack"
                try context.save()
                return try context.count(for: Customer.fetchRequest())
            }
        }
        let connect = try ConnectTestModel.makeConnect()
        #expect(try await count(in: connect) == 1)
        try connect.close()
    }
}
