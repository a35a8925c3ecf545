import Foundation
@testable import Granary
import Testing

/// `objectIDs(forRelationshipNamed:)` and `hasFault(forRelationshipNamed:)`, as Apple's documentation of
/// NSManagedObject describes them: IDs without firing the destinations; whether a relationship is
/// still a fault.
@Suite struct RelationshipFaultTests {
    /// A saved company with three employees (one of them managing the other two), and its IDs.
    static func savedCompany() throws -> (PersistentStoreCoordinator, company: ManagedObjectID, employees: [ManagedObjectID]) {
        let (coordinator, context) = try makeStack(.durable)
        let ids: (ManagedObjectID, [ManagedObjectID]) = try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            let people = (0..<3).map { i -> Employee in
                let employee = Employee(context: context)
                employee.name = "e\(i)"
                employee.company = company
                return employee
            }
            people[1].manager = people[0]
            people[2].manager = people[0]
            try context.save()
            return (company.objectID, people.map(\.objectID))
        }
        return (coordinator, ids.0, ids.1)
    }

    @Test func theIDsOfAToManyComeWithoutLoadingItsMembers() throws {
        let (coordinator, companyID, employeeIDs) = try Self.savedCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let company = context.object(with: companyID)
            #expect(company.isFault)
            #expect(try company.hasFault(forRelationshipNamed: "employees"))
            let ids = try company.objectIDs(forRelationshipNamed: "employees")
            #expect(Set(ids) == Set(employeeIDs))
            #expect(ids.allSatisfy { context.registeredObject(for: $0) == nil }, "no member was loaded")
            #expect(try company.hasFault(forRelationshipNamed: "employees"), "the members are still not loaded")

            // Loading the members (and keeping them: the context holds its objects weakly) clears the fault.
            let members = try ids.map { try context.existingObject(with: $0) }
            for member in members { _ = try member.value(forKey: "name") }
            #expect(try !company.hasFault(forRelationshipNamed: "employees"))
            withExtendedLifetime(members) {}
        }
    }

    @Test func aToOneGivesItsTargetsIDOrNone() throws {
        let (coordinator, _, employeeIDs) = try Self.savedCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let report = context.object(with: employeeIDs[1])
            #expect(try report.objectIDs(forRelationshipNamed: "manager") == [employeeIDs[0]])
            #expect(try report.hasFault(forRelationshipNamed: "manager"), "the manager is not loaded")
            let boss = context.object(with: employeeIDs[0])
            #expect(try boss.objectIDs(forRelationshipNamed: "manager") == [])
            #expect(try !boss.hasFault(forRelationshipNamed: "manager"), "a loaded object's empty to-one is no fault")
            #expect(Set(try boss.objectIDs(forRelationshipNamed: "reports")) == Set(employeeIDs[1...]))
        }
    }

    @Test func anOrderedToManyKeepsItsOrderAndUnsavedChangesCount() throws {
        let (_, context) = try makeStack(.durable)
        try context.performAndWait { () throws in
            let employee = Employee(context: context)
            employee.name = "holder"
            let badges = (0..<3).map { i -> Badge in
                let badge = Badge(context: context)
                badge.title = "b\(i)"
                return badge
            }
            employee.badges = [badges[2], badges[0], badges[1]]
            #expect(try employee.objectIDs(forRelationshipNamed: "badges") == [badges[2], badges[0], badges[1]].map(\.objectID))
            #expect(try !employee.hasFault(forRelationshipNamed: "badges"))
        }
    }

    @Test func aKeyThatIsNoRelationshipIsATypedError() throws {
        let (coordinator, companyID, _) = try Self.savedCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.performAndWait {
            let company = context.object(with: companyID)
            #expect { try company.objectIDs(forRelationshipNamed: "name") } throws: { error in
                guard case .unknownKey("Company", "name")? = error as? ContextError else { return false }
                return true
            }
            #expect { try company.hasFault(forRelationshipNamed: "staff") } throws: { error in
                guard case .unknownKey("Company", "staff")? = error as? ContextError else { return false }
                return true
            }
        }
    }
}
