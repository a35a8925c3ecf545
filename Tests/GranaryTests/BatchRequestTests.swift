import Foundation
import Testing
@testable import Granary

@Suite struct BatchRequestTests {
    /// References in the store's rows that point at no row.
    static func danglingReferences(_ store: PersistentStore) throws -> [String] {
        let snapshot = store.engine.read()
        var problems: [String] = []
        for table in snapshot.tableNames {
            for (key, row) in try snapshot.rows(in: table) {
                for value in row {
                    let refs: [RowReference]
                    switch value {
                    case .reference(let ref): refs = [ref]
                    case .references(let list): refs = list
                    default: refs = []
                    }
                    for ref in refs {
                        guard let target = snapshot.tableName(for: ref.table), try snapshot.row(in: target, key: ref.key) != nil else {
                            problems.append("\(table) row \(key) points at missing row \(ref.key)")
                            continue
                        }
                    }
                }
            }
        }
        return problems
    }

    /// Every row of every table, to show that a failed batch changed nothing.
    static func contents(_ store: PersistentStore) throws -> [String: [Int64: Row]] {
        let snapshot = store.engine.read()
        var all: [String: [Int64: Row]] = [:]
        for table in snapshot.tableNames {
            all[table] = Dictionary(uniqueKeysWithValues: try snapshot.rows(in: table).map { ($0.key, $0.row) })
        }
        return all
    }

    // MARK: Insert

    @Test func batchInsertWritesRowsWithDefaultsAndReturnsTheirIDs() throws {
        let (coordinator, context) = try makeStack()
        let result = try coordinator.execute(BatchInsertRequest(entityName: "Employee", objects: [
            ["name": "Ada", "salary": 100, "email": "ada@x.io"],
            ["name": "Bob", "hired": Date(timeIntervalSince1970: 0)],
        ], resultType: .objectIDs))
        #expect(result.count == 2 && result.objectIDs.count == 2)
        #expect(result.changes.inserted == Set(result.objectIDs) && result.changes.updated.isEmpty)
        try context.performAndWait {
            let all = try context.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]))
            #expect(all.map(\.name) == ["Ada", "Bob"])
            #expect(all[0].salary == 100 && all[0].email == "ada@x.io")
            #expect(all[1].salary == 0 && all[1].email == nil && all[1].hired == Date(timeIntervalSince1970: 0))
            #expect(Set(all.map(\.objectID)) == Set(result.objectIDs))
            // Objects saved later get keys after the batch's.
            let later = makeEmployee(context, "Cy", salary: 1)
            try context.save()
            #expect(later.objectID.primaryKey! > result.objectIDs.compactMap(\.primaryKey).max()!)
        }
        let counted = try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Badge", objects: [["title": "Gold"]]))
        }
        #expect(counted.count == 1 && counted.objectIDs.isEmpty && counted.changes.isEmpty)
    }

    /// Dictionaries with their keys in different sets and orders, and values of other Swift types
    /// than their attributes' own (Int32 for an integer64, Substring for a string, NSNull), are stored
    /// exactly as the same values set on managed objects by a handler request: same columns, defaults
    /// and empty relationships.
    // Apple: NSBatchInsertRequest — "A request that inserts objects into a persistent store directly, without loading them into memory."
    @Test func batchInsertDictionariesOfMixedShapesStoreWhatManagedObjectsStore() throws {
        let (coordinator, _) = try makeStack()
        let date = Date(timeIntervalSince1970: 1_000)
        let dictionaries: [[String: Any]] = [
            ["name": "Ada", "salary": 100, "email": "ada@x.io"],
            ["email": NSNull(), "hired": date, "name": Substring("Bob")],
            ["salary": Int32(7), "name": "Cy"],
            ["name": "Di", "salary": Int64(9), "hired": date, "email": "di@x.io"],
            ["name": "Ed"],
        ]
        let viaDictionaries = try coordinator.execute(BatchInsertRequest(entityName: "Employee", objects: dictionaries, resultType: .objectIDs))
        var next = 0
        let viaObjects = try coordinator.execute(BatchInsertRequest(entityName: "Employee", resultType: .objectIDs) { object in
            guard next < dictionaries.count else { return true }
            for (key, value) in dictionaries[next] {
                var plain: Any? = value
                if value is NSNull { plain = nil }
                if let s = value as? Substring { plain = String(s) }
                if let i = value as? Int32 { plain = Int64(i) }
                do { try object.setValue(plain, forKey: key) } catch { Issue.record(error) }
            }
            next += 1
            return false
        })
        let store = try #require(coordinator.persistentStores.first)
        let snapshot = store.engine.read()
        let table = try store.entityMapping("Employee").tableName
        #expect(viaDictionaries.count == 5 && viaObjects.count == 5)
        for (a, b) in zip(viaDictionaries.objectIDs, viaObjects.objectIDs) {
            let (keyA, keyB) = (try #require(a.primaryKey), try #require(b.primaryKey))
            let rowA = try snapshot.row(in: table, key: keyA)
            let rowB = try snapshot.row(in: table, key: keyB)
            #expect(rowA != nil)
            #expect(rowA == rowB)
        }
    }

    @Test func batchInsertRejectsBadKeysAndValuesAndWritesNothing() throws {
        let (coordinator, _) = try makeStack()
        let store = coordinator.persistentStores[0]
        let before = try Self.contents(store)
        func failure(_ objects: [[String: Any]], entity: String = "Employee") -> ContextError? {
            let error = #expect(throws: ContextError.self) { try coordinator.execute(BatchInsertRequest(entityName: entity, objects: objects)) }
            if case .invalidBatchObject(objects.count - 1, let inner)? = error { return inner }
            return error
        }
        let good: [String: Any] = ["name": "Ok", "email": "ok@x.io"]
        guard case .unknownKey(let entity, let key)? = failure([good, ["name": "X", "wage": 3]]) else {
            Issue.record("an unknown key was accepted")
            return
        }
        #expect(entity == "Employee" && key == "wage")
        guard case .wrongValueType(let e2, let k2, let v2, _)? = failure([good, ["name": "X", "salary": "lots"]]) else {
            Issue.record("a string was accepted as an integer")
            return
        }
        #expect(e2 == "Employee" && k2 == "salary" && v2 == "lots")
        guard case .wrongValueType(_, "name", "nil", _)? = failure([good, ["salary": 3]]) else {
            Issue.record("a missing required attribute was accepted")
            return
        }
        guard case .wrongValueType(_, "company", _, let reason)? = failure([["name": "X", "company": NSNull()]]) else {
            Issue.record("a relationship was accepted")
            return
        }
        #expect(reason.contains("relationships"))
        guard case .invalidRequest("Person", _)? = failure([["name": "X"]], entity: "Person") else {
            Issue.record("an abstract entity was accepted")
            return
        }
        #expect(throws: ContextError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Nope", objects: [])) }
        #expect(try Self.contents(store) == before)
    }

    // MARK: Update

    @Test func batchUpdateChangesMatchingRowsAndMergedContextsSeeIt() throws {
        let (coordinator, context) = try makeStack()
        let watcher = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let originals: [Employee] = try context.performAndWait {
            let list = (0..<6).map { i in makeEmployee(context, "E\(i)", salary: i * 10) }
            try context.save()
            return list
        }
        let ids = context.performAndWait { originals.map(\.objectID) }
        // The watcher holds two loaded objects and follows the results with a controller.
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Employee>(predicate: #Predicate { $0.salary >= 1000 }, sortBy: [SortDescriptor(\.name)]),
            managedObjectContext: watcher)
        let held: [Employee] = try watcher.performAndWait {
            try controller.performFetch()
            #expect(controller.fetchedObjects.isEmpty)
            return try [ids[1], ids[4]].map { try #require(try watcher.existingObject(with: $0) as? Employee) }
        }
        let result = try coordinator.execute(BatchUpdateRequest(for: Employee.self, predicate: #Predicate { $0.salary >= 30 },
                                                                propertiesToUpdate: ["salary": 1000, "hired": NSNull()], resultType: .objectIDs))
        #expect(result.count == 3 && Set(result.objectIDs) == Set(ids[3...]))
        #expect(result.changes.updated == Set(ids[3...]))
        try watcher.performAndWait {
            #expect(held[1].salary == 40)  // not merged yet
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [watcher])
            #expect(held[1].salary == 1000 && held[0].salary == 10)
            #expect(controller.fetchedObjects.map(\.name) == ["E3", "E4", "E5"])
            // The row version moved on, so the merged object saves without a conflict.
            held[1].name = "E4'"
            try watcher.save()
        }
        // A context that did not merge has a stale version: its save is a conflict, as after any save.
        context.performAndWait {
            let stale = originals[5]
            #expect(stale.salary == 50)
            stale.name = "late"
            #expect(throws: ContextError.self) { try context.save() }
            context.rollback()
        }
        // The string-keyed form.
        let renamed = try coordinator.execute(BatchUpdateRequest(entityName: "Person", predicate: try PredicateParser.parse("name BEGINSWITH 'E1'"),
                                                                 propertiesToUpdate: ["email": "one@x.io"]))
        #expect(renamed.count == 1 && renamed.changes.isEmpty)
    }

    @Test func failedBatchUpdatesChangeNothing() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            for i in 0..<3 { makeEmployee(context, "E\(i)", salary: i) }
            try context.save()
        }
        let store = coordinator.persistentStores[0]
        let before = try Self.contents(store)
        // Type errors name entity, key and value.
        let typeError = #expect(throws: ContextError.self) {
            try coordinator.execute(BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["salary": 5, "hired": "yesterday"]))
        }
        guard case .wrongValueType("Employee", "hired", "yesterday", _)? = typeError else {
            Issue.record("unexpected \(String(describing: typeError))")
            return
        }
        // A required attribute cannot be cleared; a key of a sub-entity is unknown to its parent.
        #expect(throws: ContextError.self) { try coordinator.execute(BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["name": NSNull()])) }
        #expect(throws: ContextError.self) { try coordinator.execute(BatchUpdateRequest(entityName: "Person", propertiesToUpdate: ["salary": 1])) }
        // One uniqueness violation fails the batch.
        let unique = #expect(throws: ContextError.self) {
            try coordinator.execute(BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["email": "same@x.io"]))
        }
        guard case .constraintViolation? = unique else {
            Issue.record("unexpected \(String(describing: unique))")
            return
        }
        // Validation rules are not checked (salary's range is 0...1_000_000), as in Core Data.
        #expect(try Self.contents(store) == before)
        let unchecked = try coordinator.execute(BatchUpdateRequest(entityName: "Employee", propertiesToUpdate: ["salary": -5]))
        #expect(unchecked.count == 3)
    }

    // MARK: Delete

    @Test func batchDeleteNullifiesInversesCascadesAndMergedContextsDropTheObjects() throws {
        let (coordinator, context) = try makeStack()
        let store = coordinator.persistentStores[0]
        let live = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let (companyID, bossID, workerIDs): (ManagedObjectID, ManagedObjectID, [ManagedObjectID]) = try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let boss = makeEmployee(context, "Boss", salary: 500, company: acme)
            let workers = (0..<3).map { i -> Employee in
                let w = makeEmployee(context, "W\(i)", salary: i, company: acme)
                w.manager = boss
                let badge = Badge(context: context)
                badge.title = "B\(i)"
                w.badges = [badge]
                return w
            }
            try context.save()
            return (acme.objectID, boss.objectID, workers.map(\.objectID))
        }
        // A live context holds the graph, and a controller lists the workers.
        let controller = FetchedResultsController(fetchRequest: FetchRequest<Employee>(predicate: #Predicate { $0.salary < 100 },
                                                                                      sortBy: [SortDescriptor(\.name)]),
                                                  managedObjectContext: live)
        let delegate = RecordingDelegate<Employee> { $0.name }
        let (company, boss): (Company, Employee) = try live.performAndWait {
            controller.delegate = delegate
            try controller.performFetch()
            let company = try #require(try live.existingObject(with: companyID) as? Company)
            let boss = try #require(try live.existingObject(with: bossID) as? Employee)
            #expect(company.employees.count == 4 && boss.reports.count == 3)
            return (company, boss)
        }

        var request = FetchRequest<Employee>(predicate: #Predicate { $0.salary < 2 })
        request.sortDescriptors = [SortDescriptor(\.salary)]
        let result = try coordinator.execute(BatchDeleteRequest(fetchRequest: request, resultType: .objectIDs))
        #expect(result.count == 2 && Set(result.objectIDs) == Set(workerIDs[0...1]))
        // Their badges went by cascade; the company and the boss lost them.
        #expect(result.changes.deleted.count == 4 && result.changes.deleted.isSuperset(of: workerIDs[0...1]))
        #expect(result.changes.updated == [companyID, bossID])
        #expect(try Self.danglingReferences(store).isEmpty)
        #expect(try store.engine.read().count(in: "Badge") == 1)

        try live.performAndWait {
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [live])
            for id in workerIDs[0...1] { #expect(live.registeredObject(for: id) == nil) }
            #expect(company.employees.map(\.name).sorted() == ["Boss", "W2"])
            #expect(boss.reports.map(\.name) == ["W2"])
            #expect(controller.fetchedObjects.map(\.name) == ["W2"])
            #expect(delegate.take() == ["will", "delete W0 0.0->-", "delete W1 0.1->-", "did"])
            // The live context keeps working on the merged graph.
            boss.name = "Chief"
            try live.save()
        }

        // A fresh context reads the same graph from the store.
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try fresh.performAndWait {
            let company = try #require(try fresh.existingObject(with: companyID) as? Company)
            #expect(company.employees.map(\.name).sorted() == ["Chief", "W2"])
            #expect(try fresh.count(for: FetchRequest<Badge>()) == 1)
        }
    }

    @Test func denyRulesFailTheWholeBatchUnlessTheDestinationsGoToo() throws {
        let (coordinator, context) = try makeStack()
        let store = coordinator.persistentStores[0]
        try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let empty = Company(context: context)
            empty.name = "Empty"
            makeEmployee(context, "Ann", salary: 1, company: acme)
            try context.save()
        }
        let before = try Self.contents(store)
        let denied = #expect(throws: ContextError.self) { try coordinator.execute(BatchDeleteRequest(entityName: "Company")) }
        guard case .deleteDenied("Company", "employees", _, 1)? = denied else {
            Issue.record("unexpected \(String(describing: denied))")
            return
        }
        #expect(try Self.contents(store) == before)  // not even the empty company went

        #expect(try coordinator.execute(BatchDeleteRequest(entityName: "Person")).count == 1)
        let result = try coordinator.execute(BatchDeleteRequest(entityName: "Company", predicate: nil, resultType: .objectIDs))
        #expect(result.count == 2 && result.changes.updated.isEmpty)
        #expect(try store.engine.read().count(in: "Company") == 0)
        #expect(try Self.danglingReferences(store).isEmpty)
    }

    @Test func batchDeleteRejectsPredicatesTheStoreCannotRun() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            makeEmployee(context, "Ann", salary: 1)
            try context.save()
        }
        // Arithmetic has no store translation.
        let request = FetchRequest<Employee>(predicate: #Predicate { $0.salary + 1 > 1 })
        let error = #expect(throws: ContextError.self) { try coordinator.execute(BatchDeleteRequest(fetchRequest: request)) }
        guard case .invalidRequest("Employee", _)? = error else {
            Issue.record("unexpected \(String(describing: error))")
            return
        }
        #expect(try coordinator.persistentStores[0].engine.read().count(in: "Person") == 1)
    }

    @Test func batchInsertsMergedIntoALiveContextAppearInItsController() throws {
        let (_, context) = try makeStack()
        let controller = FetchedResultsController(fetchRequest: FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]),
                                                  managedObjectContext: context)
        try context.performAndWait {
            makeEmployee(context, "B", salary: 1)
            try context.save()
            try controller.performFetch()
            let result = try context.execute(BatchInsertRequest(entityName: "Employee", objects: [["name": "A"], ["name": "C"], ["name": "Zed"]],
                                                                resultType: .objectIDs))
            #expect(controller.fetchedObjects.map(\.name) == ["B"])
            ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [context])
            #expect(controller.fetchedObjects.map(\.name) == ["A", "B", "C", "Zed"])
        }
    }
}
