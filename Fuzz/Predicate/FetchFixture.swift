import Foundation
import Granary

/// A few employees in an in-memory store, for fetching with the predicates the fuzzer writes: the planner
/// picks an index or a scan for each, and the evaluator runs it on every kind of value, relationships
/// (to-one, to-many, dangling) and nil included.
struct FetchFixture {
    let context: ManagedObjectContext

    init() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Employee") {
                Attribute("name", .string, optional: true)
                Attribute("age", .integer64, optional: true)
                Attribute("salary", .double, optional: true)
                Attribute("price", .decimal, optional: true)
                Attribute("flag", .boolean, optional: true)
                Attribute("born", .date, optional: true)
                Attribute("id", .uuid, optional: true)
                Attribute("blob", .binaryData, optional: true)
                Relationship("manager", to: "Employee", inverse: "reports", deleteRule: .nullify)
                Relationship("reports", toMany: "Employee", inverse: "manager", deleteRule: .nullify)
                Index("byAge", "age")
                Index("byNameAndSalary", .ascending("name"), .descending("salary"))
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        _ = try coordinator.addPersistentStore(type: .inMemory)
        context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let context = context
        try context.performAndWait {
            guard let entity = model.entity(named: "Employee") else { return }
            let people: [(String?, Int?, Double?, String?, Bool?)] = [
                ("Ada", 36, 9000.5, "10.50", true), ("Bob", 30, 3000, "9.75", false), ("Émile", 41, nil, "100", nil),
                ("carl", nil, -0.0, nil, true), (nil, Int(Int64.min), .infinity, "-1", false), ("", 0, .nan, "0", nil),
            ]
            var made: [ManagedObject] = []
            for (i, p) in people.enumerated() {
                let e = ManagedObject(entity: entity, insertInto: context)
                try e.setValue(p.0, forKey: "name")
                try e.setValue(p.1.map { Int64($0) }, forKey: "age")
                try e.setValue(p.2, forKey: "salary")
                try e.setValue(p.3.flatMap { Decimal(string: $0) }, forKey: "price")
                try e.setValue(p.4, forKey: "flag")
                try e.setValue(i % 2 == 0 ? Date(timeIntervalSinceReferenceDate: Double(i) * 86_400) : nil, forKey: "born")
                try e.setValue(i == 1 ? UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") : nil, forKey: "id")
                try e.setValue(i == 2 ? Data([1, 2, 0xFF]) : nil, forKey: "blob")
                if i > 0 { try e.setValue(made[(i - 1) / 2], forKey: "manager") }
                made.append(e)
            }
            try context.save()
        }
    }

    /// Fetches, counts and explains `predicate`; errors are expected (a key the entity lacks, a value of
    /// the wrong type), traps are not.
    func fetch(_ predicate: PredicateNode) {
        context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.filter = predicate
            let fetched = Result { try context.fetch(request).count }
            _ = try? context.count(for: request)
            if ProcessInfo.processInfo.environment["FUZZ_VERBOSE"] != nil { print("\(predicate): \(fetched)") }
            request.sortKeys = [SortKey("age"), SortKey("name", ascending: false)]
            request.fetchLimit = 2
            _ = try? context.fetch(request)
            _ = try? context.explain(request)
        }
    }
}
