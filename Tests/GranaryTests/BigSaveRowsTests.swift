import Foundation
@_spi(GranaryRecords) @testable import Granary
import Testing

/// A save of at least `SaveRows.parallelThreshold` rows encodes them in parts on two threads. It
/// must write exactly what a save encoding row after row writes, and fail as it fails: a bad row in
/// any part stops the whole save, and nothing is written.
@Suite struct BigSaveRowsTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Node") {
                Attribute("n", .integer64)
                Attribute("label", .string, defaultValue: "")
                Relationship("next", to: "Node", inverse: "previous", deleteRule: .nullify)
                Relationship("previous", toMany: "Node", inverse: "next", deleteRule: .nullify)
                // No inverse: setting it changes the one row, so a bad link fails that row alone.
                Relationship("peer", to: "Node", deleteRule: .nullify)
            }
            Configuration("Local", entities: "Node")
            Configuration("Shared", entities: "Node")
        }
    }

    /// A durable store of nodes at `url`, a context on it, and the node entity.
    static func durableStack(at url: URL) throws -> (PersistentStoreCoordinator, ManagedObjectContext, EntityDescription) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return (coordinator, context, try #require(coordinator.managedObjectModel.entity(named: "Node")))
    }

    /// Node numbers and labels, and each node's `next` by number, as a fresh context reads them.
    static func stored(_ coordinator: PersistentStoreCoordinator) throws -> [Int64: (label: String, next: Int64?)] {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            var nodes: [Int64: (label: String, next: Int64?)] = [:]
            for node in try context.fetch(FetchRequest<ManagedObject>(entityName: "Node")) {
                let next = try node.value(forKey: "next") as? ManagedObject
                nodes[try node.value(forKey: "n") as! Int64] = (try node.value(forKey: "label") as! String, try next?.value(forKey: "n") as? Int64)
            }
            return nodes
        }
    }

    /// A save of `BackgroundRelease.threshold` rows and more frees its rows and the values it replaced on
    /// another thread. The objects go on being read and edited at once, and saved again: every value must
    /// be as set (under ThreadSanitizer, the hand-off must not race with that use).
    @Test func aSaveThatFreesItsRowsElsewhereKeepsEveryValue() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (coordinator, context, entity) = try Self.durableStack(at: url)
        let count = BackgroundRelease.threshold + 500
        try context.performAndWait {
            var nodes: [ManagedObject] = []
            for n in 0..<count {
                let node = ManagedObject(entity: entity, insertInto: context)
                try node.setValue(Int64(n), forKey: "n")
                try node.setValue("v0 \(n)", forKey: "label")
                nodes.append(node)
            }
            try context.save()
            for (n, node) in nodes.enumerated() { try node.setValue("v1 \(n)", forKey: "label") }
            try context.save()
            for (n, node) in nodes.enumerated() {
                #expect(try node.value(forKey: "label") as? String == "v1 \(n)")
                try node.setValue("v2 \(n)", forKey: "label")
            }
            try context.save()
        }
        let stored = try Self.stored(coordinator)
        #expect(stored.count == count)
        for n in Int64(0)..<Int64(count) where stored[n]?.label != "v2 \(n)" {
            Issue.record("node \(n) holds \(String(describing: stored[n]?.label))")
        }
    }

    @Test func aBigSaveOfInsertsAndUpdatesWritesWhatASmallOneWould() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (coordinator, context, entity) = try Self.durableStack(at: url)
        try context.performAndWait {
            // 3,000 nodes, each linked to the one after it.
            var nodes: [ManagedObject] = []
            for n in 0..<3_000 {
                let node = ManagedObject(entity: entity, insertInto: context)
                try node.setValue(Int64(n), forKey: "n")
                try node.setValue("v0", forKey: "label")
                nodes.append(node)
            }
            for n in 0..<2_999 { try nodes[n].setValue(nodes[n + 1], forKey: "next") }
            try context.save()
            // One save of 6,000 rows: 3,000 updates (relabelled, every third relinked backwards) and
            // 3,000 inserts, each new node linked to an old one.
            for n in 0..<3_000 {
                try nodes[n].setValue("v1", forKey: "label")
                if n % 3 == 0 && n > 0 { try nodes[n].setValue(nodes[n - 1], forKey: "next") }
            }
            for n in 3_000..<6_000 {
                let node = ManagedObject(entity: entity, insertInto: context)
                try node.setValue(Int64(n), forKey: "n")
                try node.setValue("new", forKey: "label")
                try node.setValue(nodes[n - 3_000], forKey: "next")
            }
            #expect(context.insertedObjects.count + context.updatedObjects.count >= SaveRows.parallelThreshold)
            try context.save()
        }
        let stored = try Self.stored(coordinator)
        #expect(stored.count == 6_000)
        for n in Int64(0)..<3_000 {
            let expectedNext: Int64? = n % 3 == 0 && n > 0 ? n - 1 : (n == 2_999 ? nil : n + 1)
            #expect(stored[n]?.label == "v1" && stored[n]?.next == expectedNext, "node \(n)")
        }
        for n in Int64(3_000)..<6_000 { #expect(stored[n]?.label == "new" && stored[n]?.next == n - 3_000, "node \(n)") }
    }

    /// In the first part, in a middle one (`SaveRows.partSize` rows a part) and in the last.
    @Test(arguments: [100, 2_500, 4_500])
    func aBadRowInAnyPartFailsTheWholeSave(bad: Int) throws {
        let localURL = scratchURL("local-\(bad)"), sharedURL = scratchURL("shared-\(bad)")
        defer {
            try? FileManager.default.removeItem(at: localURL)
            try? FileManager.default.removeItem(at: sharedURL)
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        // New objects go to the first store attached, and a save applies its stores in identifier order.
        // The stores are attached so that the first also sorts first: then the big store's error is the
        // one thrown (the other store's row changes too, through the hidden inverse). A store keeps its
        // identifier when added again.
        var first = try coordinator.addPersistentStore(type: .durable, configuration: "Local", at: localURL)
        var second = try coordinator.addPersistentStore(type: .durable, configuration: "Shared", at: sharedURL)
        if second.identifier.uuidString < first.identifier.uuidString {
            try coordinator.remove(first)
            try coordinator.remove(second)
            first = try coordinator.addPersistentStore(type: .durable, configuration: "Shared", at: sharedURL)
            second = try coordinator.addPersistentStore(type: .durable, configuration: "Local", at: localURL)
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let entity = try #require(coordinator.managedObjectModel.entity(named: "Node"))
        try context.performAndWait {
            let elsewhere = ManagedObject(entity: entity, insertInto: context)
            try elsewhere.setValue(Int64(-1), forKey: "n")
            try context.assign(elsewhere, to: second)
            try context.save()
            // 5,000 new nodes in the first store; one of them links to the node of the other store, which
            // a row cannot reference (through a relationship without inverse, so no row of the other
            // store changes and the error is this store's, from whichever part holds it).
            for n in 0..<5_000 {
                let node = ManagedObject(entity: entity, insertInto: context)
                try node.setValue(Int64(n), forKey: "n")
                if n == bad { try node.setValue(elsewhere, forKey: "peer") }
            }
            #expect {
                try context.save()
            } throws: { error in
                guard case .wrongValueType(_, let key, _, let reason) = error as? ContextError else { return false }
                return key == "peer" && reason.contains("cannot cross stores")
            }
        }
        let stored = try Self.stored(coordinator)
        #expect(stored.count == 1 && stored[-1] != nil, "nothing of the failed save is written")
    }
}
