import Foundation
import GranaryStorage
import Testing

@testable import Granary

/// The store turns rows into objects along several paths: a full scan decodes whole rows, an index scan
/// decodes each row's values straight from its bytes (or through a reused row when a residual predicate
/// needs one), and faulting looks rows up by key in groups. They must agree, also on rows written before
/// their table gained columns.
@Suite struct RowDecodingTests {
    /// Every saved value of an object, relationships as IDs, worded so that two reads compare.
    private static func saved(_ object: ManagedObject) -> [String] {
        object.committedValues(forKeys: nil).map { "\($0.key)=\(String(describing: $0.value))" }.sorted()
    }

    /// The person called `name` read along each path, each in a new context so that nothing is reused.
    private static func readings(of name: String, id: ManagedObjectID, on coordinator: PersistentStoreCoordinator) throws -> [String: [String]] {
        func inNewContext(_ body: (ManagedObjectContext) throws -> ManagedObject?) throws -> [String] {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            return try context.performAndWait {
                guard let object = try body(context) else { return ["(not found)"] }
                return saved(object)
            }
        }
        var result: [String: [String]] = [:]
        result["full scan"] = try inNewContext { context in
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Person")).first { ($0 as? Person)?.name == name }
        }
        result["index"] = try inNewContext { context in
            let request = FetchRequest<Person>(predicate: #Predicate { $0.name == name })
            #expect(try context.explain(request).residual == nil)
            return try context.fetch(request).first
        }
        result["index and residual"] = try inNewContext { context in
            let request = FetchRequest<Person>(predicate: #Predicate { $0.name == name && $0.email != "" })
            #expect(try context.explain(request).residual != nil)
            return try context.fetch(request).first
        }
        result["fault"] = try inNewContext { context in
            let object = try context.existingObject(with: id)
            object.fireFaultIfNeeded()
            return object
        }
        return result
    }

    @Test func everyPathFromRowToObjectReadsTheSameValuesAlsoFromRowsShorterThanTheirTable() throws {
        let (coordinator, context) = try makeStack(.durable)
        let (ada, cy) = try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let ada = Employee(context: context)
            ada.name = "Ada"
            ada.email = "ada@acme.example"
            ada.salary = 120
            ada.hired = Date(timeIntervalSince1970: 1_000_000)
            ada.company = acme
            let badge = Badge(context: context)
            badge.title = "first"
            badge.holder = ada
            let cy = Contractor(context: context)
            cy.name = "Cy"
            cy.email = "cy@acme.example"
            cy.rate = 3.5
            try context.save()
            return (ada.objectID, cy.objectID)
        }
        for (name, id) in [("Ada", ada), ("Cy", cy)] {
            let readings = try Self.readings(of: name, id: id, on: coordinator)
            #expect(readings["full scan"]!.contains("name=Optional(\"\(name)\")"), "\(readings)")
            for (path, values) in readings { #expect(values == readings["full scan"], "\(name) by \(path)") }
        }
        let before = try Self.readings(of: "Ada", id: ada, on: coordinator)["full scan"]!
        #expect(before.contains("salary=Optional(120)") && before.contains { $0.hasPrefix("company=Optional(") }, "\(before)")

        // Ada's row as a store written before the table had its later columns would hold it.
        let store = coordinator.persistentStores[0]
        let table = try #require(store.engine.read().tableName(for: store.engine.read().tableID(of: "Person")))
        let key = try #require(ada.primaryKey)
        let full = try #require(try store.engine.read().row(in: table, key: key))
        let columns = try store.engine.read().schema(of: table).columns.map(\.name)
        let kept = try #require(columns.firstIndex(of: "name")) + 1
        #expect(kept < columns.count)
        try store.engine.write { tx in try tx.update(Row(Array(full.values.prefix(kept))), in: table, key: key) }

        let readings = try Self.readings(of: "Ada", id: ada, on: coordinator)
        for (path, values) in readings { #expect(values == readings["full scan"], "Ada by \(path)") }
        let shortened = readings["full scan"]!
        #expect(shortened.contains("name=Optional(\"Ada\")"), "\(shortened)")
        for missing in ["salary=nil", "company=nil", "badges=Optional([])"] { #expect(shortened.contains(missing), "\(shortened)") }
    }

    /// A full scan of every row makes its records' value arrays ahead, for the fetched entity; rows of
    /// a sub-entity in the same table (more properties) must not take them, and rows of the entity
    /// must get their transient defaults and stored values whatever their order.
    @Test func aFullScanOverAnEntityAndItsSubEntitiesReadsEachRowAsItsOwnEntity() throws {
        let model = try ManagedObjectModel {
            Entity("Item") {
                Attribute("label", .string)
                Attribute("note", .string, defaultValue: "none", transient: true)
            }
            Entity("Special", parent: "Item") {
                Attribute("level", .integer64)
                Attribute("since", .date, optional: true)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: scratchURL())
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.performAndWait {
            for i in 0..<40 {
                let special = i % 3 == 1
                let object = ManagedObject(entity: model.entitiesByName[special ? "Special" : "Item"]!, insertInto: writer)
                try object.setValue("L\(i)", forKey: "label")
                if special {
                    try object.setValue(Int64(i * 10), forKey: "level")
                    try object.setValue(Date(timeIntervalSince1970: Double(i)), forKey: "since")
                }
            }
            try writer.save()
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let request = FetchRequest<ManagedObject>(entityName: "Item")
            let plan = try reader.explain(request)
            #expect(plan.access == .fullScan && plan.residual == nil)
            let objects = try reader.fetch(request)
            #expect(objects.count == 40)
            for object in objects {
                let label = try #require(try object.value(forKey: "label") as? String)
                let i = try #require(Int(label.dropFirst()))
                #expect(try object.value(forKey: "note") as? String == "none", "\(label)")
                if i % 3 == 1 {
                    #expect(object.entity.name == "Special", "\(label)")
                    #expect(try object.value(forKey: "level") as? Int64 == Int64(i * 10), "\(label)")
                    #expect(try object.value(forKey: "since") as? Date == Date(timeIntervalSince1970: Double(i)), "\(label)")
                } else {
                    #expect(object.entity.name == "Item", "\(label)")
                }
            }
        }
    }

    /// A transient attribute has no column, so a decoded record starts it at its default value, along
    /// every path, while the stored attributes next to it come from the row.
    @Test func transientAttributesReadTheirDefaultAlongEveryPath() throws {
        let model = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, indexed: true)
                Attribute("draft", .string, defaultValue: "scratch", transient: true)
                Attribute("pages", .integer64)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: scratchURL())
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let id = try writer.performAndWait {
            let note = ManagedObject(entity: model.entitiesByName["Note"]!, insertInto: writer)
            try note.setValue("Plans", forKey: "title")
            try note.setValue("edited, never saved", forKey: "draft")
            try note.setValue(Int64(7), forKey: "pages")
            try writer.save()
            return note.objectID
        }
        let paths: [(String, (ManagedObjectContext) throws -> ManagedObject?)] = [
            ("full scan", { try $0.fetch(FetchRequest<ManagedObject>(entityName: "Note")).first }),
            ("index", { context in
                var request = FetchRequest<ManagedObject>(entityName: "Note")
                request.filter = .compare(["title"], .equal, .value(.string("Plans")))
                #expect(try context.explain(request).residual == nil)
                return try context.fetch(request).first
            }),
            ("fault", { context in
                let object = try context.existingObject(with: id)
                object.fireFaultIfNeeded()
                return object
            }),
        ]
        for (path, read) in paths {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.performAndWait {
                let note = try #require(try read(context), "\(path)")
                #expect(try note.value(forKey: "draft") as? String == "scratch", "\(path)")
                #expect(try note.value(forKey: "title") as? String == "Plans", "\(path)")
                #expect(try note.value(forKey: "pages") as? Int64 == 7, "\(path)")
            }
        }
    }
}
