import Foundation
import Testing
@testable import Granary

/// A managed object (or its ID) as a predicate constant compares identity, as in Core Data.
///
/// Apple: "Predicate Programming Guide — Using Predicates with Core Data": "you can use predicates with
/// relationships … `[NSPredicate predicateWithFormat:@"department == %@", department]`"; and
/// NSFetchRequest's documentation: "a managed object or an object ID as the argument to a predicate
/// matches the object with that identity".
@Suite struct FetchingObjectArgumentTests {
    /// Two companies with employees, one employee without a company, all saved.
    struct Fixture {
        let acme: Company
        let globex: Company
        let ada: Employee, bob: Employee, cy: Employee, dee: Employee
    }

    static func populate(_ context: ManagedObjectContext) throws -> Fixture {
        let acme = Company(context: context)
        acme.name = "Acme"
        let globex = Company(context: context)
        globex.name = "Globex"
        let f = Fixture(acme: acme, globex: globex,
                        ada: makeEmployee(context, "Ada", salary: 1, company: acme),
                        bob: makeEmployee(context, "Bob", salary: 2, company: acme),
                        cy: makeEmployee(context, "Cy", salary: 3, company: globex),
                        dee: makeEmployee(context, "Dee", salary: 4))
        try context.save()
        return f
    }

    static func names(_ objects: [ManagedObject]) -> [String] {
        objects.compactMap { ($0 as? Person)?.name ?? ($0 as? Company)?.name }.sorted()
    }

    static func fetch(_ context: ManagedObjectContext, _ entity: String, _ format: String, _ args: [Any?]) throws -> [String] {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.filter = try PredicateParser.parse(format, arguments: args)
        return names(try context.fetch(request))
    }

    // Apple: Predicate Programming Guide, "Using Predicates with Core Data" — `department == %@` with a
    // managed object matches the objects related to it.
    @Test func formatStringComparesAnObjectOrItsIDByIdentity() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            #expect(try Self.fetch(context, "Employee", "company == %@", [f.acme]) == ["Ada", "Bob"])
            #expect(try Self.fetch(context, "Employee", "company == %@", [f.globex.objectID]) == ["Cy"])
            #expect(try Self.fetch(context, "Employee", "%@ == company", [f.globex]) == ["Cy"])
            // != is the negation of ==: an employee without a company is not at Acme.
            #expect(try Self.fetch(context, "Employee", "company != %@", [f.acme]) == ["Cy", "Dee"])
            #expect(try Self.fetch(context, "Employee", "company == nil", []) == ["Dee"])
            #expect(try Self.fetch(context, "Employee", "company IN %@", [[f.acme, f.globex]]) == ["Ada", "Bob", "Cy"])
            #expect(try Self.fetch(context, "Employee", "company IN %@", [Set([f.globex.objectID])]) == ["Cy"])
            #expect(try Self.fetch(context, "Employee", "NOT (company IN %@)", [[f.acme]]) == ["Cy", "Dee"])
            // To-many: ANY employees == %@ finds the companies that have the employee.
            #expect(try Self.fetch(context, "Company", "ANY employees == %@", [f.cy]) == ["Globex"])
            #expect(try Self.fetch(context, "Company", "ANY employees IN %@", [[f.ada, f.cy]]) == ["Acme", "Globex"])
            #expect(try Self.fetch(context, "Company", "NONE employees == %@", [f.cy]) == ["Acme"])
            #expect(try Self.fetch(context, "Company", "employees CONTAINS %@", [f.bob]) == ["Acme"])
            // Through a to-one chain and inside ANY.
            f.bob.manager = f.ada
            f.cy.manager = f.ada
            try context.save()
            #expect(try Self.fetch(context, "Employee", "manager.company == %@", [f.acme]) == ["Bob", "Cy"])
            #expect(try Self.fetch(context, "Employee", "ANY reports.company == %@", [f.globex]) == ["Ada"])
            // SELF: the object itself.
            #expect(try Self.fetch(context, "Employee", "SELF == %@", [f.bob]) == ["Bob"])
            #expect(try Self.fetch(context, "Employee", "SELF IN %@", [[f.bob.objectID, f.dee.objectID]]) == ["Bob", "Dee"])
            // Ordering an object makes no sense: a typed error, not a crash.
            #expect(throws: PredicateParseError.self) { try PredicateParser.parse("company < %@", arguments: [f.acme]) }
        }
    }

    // Apple: NSFetchRequest.includesPendingChanges — "unsaved changes in the managed object context are
    // included in the result"; an unsaved object matches pending objects in memory only.
    @Test func pendingChangesAndUnsavedObjectsMatchInMemory() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            let initech = Company(context: context)
            initech.name = "Initech"
            #expect(initech.objectID.isTemporaryID)
            let eve = makeEmployee(context, "Eve", salary: 5, company: initech)
            f.dee.company = f.acme
            #expect(try Self.fetch(context, "Employee", "company == %@", [initech]) == ["Eve"])
            #expect(try Self.fetch(context, "Employee", "company == %@", [f.acme]) == ["Ada", "Bob", "Dee"])
            #expect(try Self.fetch(context, "Company", "ANY employees == %@", [eve]) == ["Initech"])
            var stored = FetchRequest<ManagedObject>(entityName: "Employee")
            stored.filter = try PredicateParser.parse("company == %@", arguments: [initech])
            stored.includesPendingChanges = false
            #expect(try context.fetch(stored).isEmpty, "an unsaved object matches no stored row")
            stored.filter = try PredicateParser.parse("company == %@", arguments: [f.acme])
            #expect(Self.names(try context.fetch(stored)) == ["Ada", "Bob"], "the store's answer ignores the unsaved edit")
        }
    }

    @Test func anObjectFromAnotherContextMatchesByItsID() throws {
        let (coordinator, context) = try makeStack()
        let acmeID = try context.performAndWait { try Self.populate(context).acme.objectID }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let acme = try other.existingObject(with: acmeID)
            #expect(try Self.fetch(other, "Employee", "company == %@", [acme]) == ["Ada", "Bob"])
        }
        // An unsaved object of another context is unknown here: it matches nothing.
        let stranger = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let temporary = stranger.performAndWait { () -> ManagedObjectID in
            let c = Company(context: stranger)
            c.name = "Nowhere"
            return c.objectID
        }
        try context.performAndWait { () throws -> Void in
            #expect(try Self.fetch(context, "Employee", "company == %@", [temporary]).isEmpty)
            #expect(try Self.fetch(context, "Employee", "company != %@", [temporary]) == ["Ada", "Bob", "Cy", "Dee"])
        }
    }

    @Test func fetchPredicateComparesObjects() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            func run(_ entity: String, _ p: FetchPredicate) throws -> [String] {
                var request = FetchRequest<ManagedObject>(entityName: entity)
                request.filter = p.node
                return Self.names(try context.fetch(request))
            }
            #expect(try run("Employee", FetchKey("company") == f.acme) == ["Ada", "Bob"])
            #expect(try run("Employee", FetchKey("company") == f.globex.objectID) == ["Cy"])
            #expect(try run("Employee", FetchKey("company") != f.acme) == ["Cy", "Dee"])
            #expect(try run("Employee", FetchKey("company").isIn([f.acme, f.globex])) == ["Ada", "Bob", "Cy"])
            #expect(try run("Employee", FetchKey("company").isIn([f.globex.objectID])) == ["Cy"])
            #expect(try run("Company", FetchKey("employees").contains(f.cy)) == ["Globex"])
            let none: Company? = nil
            #expect(try run("Employee", FetchKey("company") == none) == ["Dee"])
            #expect(try run("Employee", FetchKey("company") == nil) == ["Dee"])
        }
    }

    // `#Predicate` captures only Codable and Sendable values, which a managed object is not: it captures
    // the object's ID and compares `objectID`, as SwiftData compares `persistentModelID`.
    @Test func hashPredicateComparesCapturedObjectIDs() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            let acme: ManagedObjectID? = f.acme.objectID
            let request = FetchRequest<Employee>(predicate: #Predicate { $0.company?.objectID == acme })
            #expect(Self.names(try context.fetch(request)) == ["Ada", "Bob"])
            // Lowered onto the store, not evaluated on objects.
            let lowered = try #require(PredicateNode.lower(request.predicate!, keyPathName: {
                KeyPathProbe.components(of: $0, entity: context.model!.entity(named: "Employee")!, model: context.model!)
            }))
            #expect(lowered == .objects(["company"], [f.acme.objectID]))
            let before = coordinator.fetchStatistics
            _ = try context.fetch(request)
            #expect(coordinator.fetchStatistics.rowsExamined > before.rowsExamined)
            let notAcme = FetchRequest<Employee>(predicate: #Predicate { $0.company?.objectID != acme })
            #expect(Self.names(try context.fetch(notAcme)) == ["Cy", "Dee"])
            let nobody = FetchRequest<Employee>(predicate: #Predicate { $0.company == nil })
            #expect(Self.names(try context.fetch(nobody)) == ["Dee"])
            let cy = f.cy.objectID
            let having = FetchRequest<Company>(predicate: #Predicate { $0.employees.contains { $0.objectID == cy } })
            #expect(Self.names(try context.fetch(having)) == ["Globex"])
            let bob = f.bob.objectID
            let me = FetchRequest<Employee>(predicate: #Predicate { $0.objectID == bob })
            #expect(Self.names(try context.fetch(me)) == ["Bob"])
            let bosses: [ManagedObjectID?] = [f.globex.objectID]
            let inList = FetchRequest<Employee>(predicate: #Predicate { bosses.contains($0.company.flatMap { $0.objectID }) })
            #expect(Self.names(try context.fetch(inList)) == ["Cy"])
        }
    }

    /// Without an index on the to-one, the store reads the rows the object's inverse to-many lists, by
    /// key: Core Data indexes every to-one's foreign key; Granary has the inverse, which lists the same
    /// rows, and changing the storage format to add indexes would break every existing store.
    @Test func withoutAnIndexTheInverseRelationshipListsTheRows() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            for i in 0..<40 { makeEmployee(context, "X\(i)", salary: 10 + i, company: i % 2 == 0 ? f.globex : nil) }
            try context.save()
            var request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.filter = try PredicateParser.parse("company == %@ AND NOT name CONTAINS 'x'", arguments: [f.acme])
            request.sortKeys = [SortKey("name", ascending: false)]
            let plan = try context.explain(request)
            #expect(plan.explain.hasPrefix("ROWS LISTED BY Company.employees (2)"), "\(plan)")
            let before = coordinator.fetchStatistics
            #expect(try context.fetch(request).compactMap { ($0 as? Person)?.name } == ["Bob", "Ada"], "sorted in memory")
            let after = coordinator.fetchStatistics
            #expect(after.fullScans == before.fullScans)
            #expect(after.rowsExamined - before.rowsExamined == 2, "the two listed rows, and no others")
            // An index on another field of the predicate is the planner's to choose.
            request.filter = try PredicateParser.parse("company == %@ AND salary < 2", arguments: [f.acme])
            #expect(try context.explain(request).explain.hasPrefix("INDEX Employee_bySalary"))
            #expect(Self.names(try context.fetch(request)) == ["Ada"])
            request.filter = try PredicateParser.parse("company IN %@", arguments: [[f.acme, f.globex]])
            #expect(try context.explain(request).explain.hasPrefix("ROWS LISTED BY Company.employees (23)"))
            #expect(try context.count(for: request) == 23)
            request.fetchLimit = 2
            #expect(try context.fetch(request).count == 2)
            // A temporary ID lists nothing in the store.
            let unsaved = Company(context: context)
            unsaved.name = "New"
            request.fetchLimit = 0
            request.filter = try PredicateParser.parse("company == %@", arguments: [unsaved])
            request.includesPendingChanges = false
            #expect(try context.explain(request).explain.hasPrefix("ROWS LISTED BY Company.employees (0)"))
            #expect(try context.fetch(request).isEmpty)
        }
    }

    /// `SELF IN %@` reads the listed objects' own rows by key (Core Data apps fetch known objects this
    /// way, in batches): no scan, whatever the table's size.
    @Test func selfInReadsTheObjectsRowsByKey() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let f = try Self.populate(context)
            for i in 0..<40 { makeEmployee(context, "X\(i)", salary: 10 + i, company: f.globex) }
            try context.save()
            var all = FetchRequest<ManagedObject>(entityName: "Employee")
            all.sortKeys = [SortKey("name", ascending: true)]
            let employees = try context.fetch(all)
            let chosen = [employees[3], employees[17], employees[30]]
            var request = FetchRequest<ManagedObject>(entityName: "Employee")
            request.filter = try PredicateParser.parse("SELF IN %@", arguments: [chosen.map(\.objectID)])
            request.sortKeys = [SortKey("name", ascending: true)]
            #expect(try context.explain(request).explain.hasPrefix("ROWS BY KEY (3)"))
            let before = coordinator.fetchStatistics
            let found = try context.fetch(request)
            let after = coordinator.fetchStatistics
            #expect(found.map(\.objectID) == chosen.map(\.objectID))
            #expect(after.fullScans == before.fullScans)
            #expect(after.rowsExamined - before.rowsExamined == 3, "the three listed rows, and no others")
            // Combined with another term, which is checked on those rows only.
            request.filter = try PredicateParser.parse("SELF IN %@ AND salary >= 20", arguments: [chosen.map(\.objectID)])
            let salaries = try context.fetch(request).compactMap { ($0 as? Employee).map(\.salary) }
            #expect(salaries.allSatisfy { $0 >= 20 })
            #expect(salaries.count == chosen.filter { (($0 as? Employee)?.salary ?? 0) >= 20 }.count)
            // Objects of another entity or not saved yet name no row of this table.
            request.filter = try PredicateParser.parse("SELF == %@", arguments: [f.acme])
            #expect(try context.fetch(request).isEmpty)
        }
    }

    /// A model whose to-one relationship has an index, to see the planner use it.
    final class Order: ManagedObject {
        @Managed var number: Int
        @Managed var customer: Customer?
    }
    final class Customer: ManagedObject {
        @Managed var name: String
        @Managed var orders: Set<Order>
    }

    @Test func anObjectComparisonIsPlannedOntoTheRelationshipsIndex() throws {
        let model = try ManagedObjectModel {
            Entity("Customer", as: Customer.self) {
                Attribute("name", .string)
                Relationship("orders", toMany: "Order", inverse: "customer")
            }
            Entity("Order", as: Order.self) {
                Attribute("number", .integer64)
                Relationship("customer", to: "Customer", inverse: "orders")
                Index("byCustomer", "customer")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let customers = (0..<3).map { i -> Customer in
                let c = Customer(context: context)
                c.name = "C\(i)"
                return c
            }
            for n in 0..<30 {
                let o = Order(context: context)
                o.number = n
                o.customer = customers[n % 3]
            }
            try context.save()
            var request = FetchRequest<Order>(entityName: "Order")
            request.filter = try PredicateParser.parse("customer == %@", arguments: [customers[1]])
            let plan = try context.explain(request)
            #expect(plan.explain.hasPrefix("INDEX Order_byCustomer"), "\(plan)")
            #expect(plan.residual == nil)
            let before = coordinator.fetchStatistics
            let orders = try context.fetch(request)
            #expect(orders.map(\.number).sorted() == Array(stride(from: 1, to: 30, by: 3)))
            #expect(coordinator.fetchStatistics.fullScans == before.fullScans)
            #expect(coordinator.fetchStatistics.rowsExamined - before.rowsExamined == 10)
            let customer: ManagedObjectID? = customers[2].objectID
            let typed = FetchRequest<Order>(predicate: #Predicate { $0.customer?.objectID == customer })
            #expect(try context.explain(typed).explain.hasPrefix("INDEX Order_byCustomer"))
            #expect(try context.fetch(typed).count == 10)
            request.filter = try PredicateParser.parse("customer IN %@", arguments: [[customers[0], customers[2]]])
            #expect(try context.explain(request).explain.contains("UNION OF 2 SCANS OF INDEX Order_byCustomer"))
            #expect(try context.fetch(request).count == 20)
        }
    }
}
