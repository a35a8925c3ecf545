import Foundation
@testable import Granary
import Testing

/// Typed to-many edits, standing in for the accessors Xcode generates for Core Data classes
/// ("Core Data Programming Guide > Managed Object Accessor Methods": `add<Key>Object:`,
/// `remove<Key>Object:`, `insertObject:in<Key>AtIndex:`, `removeObjectFrom<Key>AtIndex:`).
@Suite struct ToManyEditingTests {
    @Test func addingAndRemovingOneMemberKeepsTheInverse() throws {
        let (_, context) = try makeStack()
        try context.performAndWait { () throws in
            let acme = Company(context: context), initech = Company(context: context)
            acme.name = "Acme"
            initech.name = "Initech"
            let alice = Employee(context: context), bob = Employee(context: context)
            alice.name = "Alice"
            bob.name = "Bob"
            try acme.add(alice, to: \.employees)
            try acme.add(contentsOf: [alice, bob], to: \.employees)
            #expect(acme.employees == [alice, bob])
            #expect(alice.company === acme && bob.company === acme)
            // Moving a member: the old owner loses it, as through the inverse.
            try initech.add(bob, to: \.employees)
            #expect(acme.employees == [alice])
            #expect(bob.company === initech)
            try acme.remove(alice, from: \.employees)
            #expect(acme.employees.isEmpty && alice.company == nil)
            try acme.remove(bob, from: \.employees)
            #expect(initech.employees == [bob], "removing a non-member changes nothing")
            try context.save()
        }
    }

    @Test func orderedRelationshipsInsertMoveAndRemoveByIndex() throws {
        let (_, context) = try makeStack()
        try context.performAndWait { () throws in
            let alice = Employee(context: context)
            alice.name = "Alice"
            let badges = (0..<4).map { i -> Badge in
                let badge = Badge(context: context)
                badge.title = "b\(i)"
                return badge
            }
            for badge in badges.prefix(3) { try alice.add(badge, to: \.badges) }
            #expect(alice.badges.map(\.title) == ["b0", "b1", "b2"])
            try alice.insert(badges[3], at: 1, into: \.badges)
            #expect(alice.badges.map(\.title) == ["b0", "b3", "b1", "b2"])
            try alice.insert(badges[0], at: 3, into: \.badges)
            #expect(alice.badges.map(\.title) == ["b3", "b1", "b2", "b0"], "inserting a member moves it")
            let removed = try alice.removeMember(at: 1, from: \.badges)
            #expect(removed === badges[1] && removed.holder == nil)
            try alice.remove(badges[2], from: \.badges)
            #expect(alice.badges.map(\.title) == ["b3", "b0"])
            #expect(badges[3].holder === alice)
            #expect(throws: ContextError.self) { try alice.insert(badges[1], at: 5, into: \.badges) }
            #expect(throws: ContextError.self) { try alice.removeMember(at: 2, from: \.badges) }
        }
    }

    @Test func oneEditLeavesTheOtherMembersFaults() throws {
        let (coordinator, companyID, _) = try RelationshipFaultTests.savedCompany()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let company = try #require(context.object(with: companyID) as? Company)
            let newcomer = Employee(context: context)
            newcomer.name = "Newcomer"
            try company.add(newcomer, to: \.employees)
            let ids = try company.objectIDs(forRelationshipNamed: "employees")
            #expect(ids.count == 4)
            #expect(ids.filter { $0 != newcomer.objectID }.allSatisfy { context.registeredObject(for: $0)?.isFault ?? true },
                    "the other members were not loaded")
            try context.save()
        }
    }

    @Test func membersOfAnotherContextAreRefused() throws {
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait { () throws in
            let acme = Company(context: context)
            let stranger = other.performAndWait { Employee(context: other) }
            #expect {
                try acme.add(stranger, to: \.employees)
            } throws: { error in
                guard case ContextError.foreignObject(entity: "Company", key: "employees", _) = error else { return false }
                return true
            }
            #expect(acme.employees.isEmpty)
        }
    }
}
