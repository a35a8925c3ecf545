import Foundation
import Testing
@testable import Granary

/// An object moved out of a to-many relationship and the relationship's owner deleted in the same save:
/// the owner's delete rule applies to its relationship as the context left it, so the moved object is
/// not cascaded, nullified or counted against a deny rule. ("Relationship Delete Rules", Core Data
/// Programming Guide: the rule applies to "the objects at the destination of the relationship" when the
/// source is deleted, which by then no longer include the moved object.)
@Suite struct DeleteRuleMoveTests {
    func employee(_ name: String, in context: ManagedObjectContext) throws -> Employee {
        try #require(try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.name == name })).first)
    }

    func badge(_ title: String, in context: ManagedObjectContext) throws -> Badge? {
        try context.fetch(FetchRequest<Badge>(predicate: #Predicate { $0.title == title })).first
    }

    /// Employees a and b, saved; a holds badges "gold" and "silver" (cascade from employee to badges).
    func setup(_ type: PersistentStore.StoreType = .inMemory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, context) = try makeStack(type)
        try context.performAndWait {
            let a = Employee(context: context)
            a.name = "a"
            let b = Employee(context: context)
            b.name = "b"
            for title in ["gold", "silver"] {
                let badge = Badge(context: context)
                badge.title = title
                badge.holder = a
            }
            try context.save()
        }
        return (coordinator, context)
    }

    /// What a fresh context reads: each badge's holder, and each employee's badges.
    func stored(_ coordinator: PersistentStoreCoordinator) throws -> (holders: [String: String?], badges: [String: Set<String>]) {
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try fresh.performAndWait {
            var holders: [String: String?] = [:]
            for badge in try fresh.fetch(FetchRequest<Badge>()) { holders[badge.title] = badge.holder?.name }
            var badges: [String: Set<String>] = [:]
            for e in try fresh.fetch(FetchRequest<Employee>()) { badges[e.name] = Set(e.badges.map(\.title)) }
            return (holders, badges)
        }
    }

    @Test(arguments: [PersistentStore.StoreType.inMemory, .durable])
    func aBadgeMovedByItsToOneSurvivesTheCascadeOfItsOldHolder(type: PersistentStore.StoreType) throws {
        let (coordinator, context) = try setup(type)
        let gold = try context.performAndWait { () throws -> Badge in
            let gold = try #require(try badge("gold", in: context))
            gold.holder = try employee("b", in: context)
            context.delete(try employee("a", in: context))
            try context.save()
            #expect(!gold.isDeleted)
            return gold
        }
        let (holders, badges) = try stored(coordinator)
        #expect(holders == ["gold": "b"])
        #expect(badges == ["b": ["gold"]])
        // The moved badge is an ordinary live object: a later edit saves without a conflict.
        try context.performAndWait {
            gold.title = "platinum"
            try context.save()
        }
        #expect(try stored(coordinator).holders == ["platinum": "b"])
    }

    @Test func aBadgeMovedThroughTheSetsSurvivesTheCascadeOfItsOldHolder() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            let a = try employee("a", in: context)
            let b = try employee("b", in: context)
            let gold = try #require(try badge("gold", in: context))
            a.badges = a.badges.filter { $0.title != "gold" }
            b.badges.append(gold)
            context.delete(a)
            try context.save()
        }
        let (holders, badges) = try stored(coordinator)
        #expect(holders == ["gold": "b"])
        #expect(badges == ["b": ["gold"]])
    }

    @Test func aMemberMovedOutDoesNotCountAgainstADenyRule() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "acme"
            let initech = Company(context: context)
            initech.name = "initech"
            let e = Employee(context: context)
            e.name = "e"
            e.company = acme
            try context.save()
            // Company.employees is deny: once e has moved, acme has no employees left to deny its deletion.
            e.company = initech
            context.delete(acme)
            try context.save()
        }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try fresh.performAndWait {
            let companies = try fresh.fetch(FetchRequest<Company>())
            #expect(companies.map(\.name) == ["initech"])
            #expect(companies.first?.employees.map(\.name) == ["e"])
        }
    }

    @Test func aMoveSavedByAnotherContextIsSeenByTheDeletingOne() throws {
        let (coordinator, context) = try setup()
        context.mergePolicy = .mergeByPropertyObjectTrump
        context.automaticallyMergesChangesFromParent = true
        // This context loads a with its badges, then another context moves gold to b and saves; the
        // move is merged into this context, as an app keeps its contexts fresh.
        let a = try context.performAndWait { () throws -> Employee in
            let a = try employee("a", in: context)
            #expect(a.badges.count == 2)
            return a
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            try #require(try badge("gold", in: other)).holder = try employee("b", in: other)
            try other.save()
        }
        try context.performAndWait {
            #expect(a.badges.map(\.title) == ["silver"])
            context.delete(a)
            try context.save()
        }
        let (holders, badges) = try stored(coordinator)
        #expect(holders == ["gold": "b"])
        #expect(badges == ["b": ["gold"]])
    }

    /// A child context's save hands its changes to the parent, which applies the deleted objects' rules
    /// again. It used to do so against its own copy of the deleted object, which still listed the member
    /// the child had moved out: the parent cascaded the moved badge. (Found by DeleteRulePropertyTests.)
    @Test func aBadgeMovedInAChildContextSurvivesTheCascadeOfItsOldHolderInTheParent() throws {
        let (coordinator, context) = try setup()
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: context)
        try child.performAndWait {
            try #require(try badge("gold", in: child)).holder = try employee("b", in: child)
            child.delete(try employee("a", in: child))
            try child.save()
        }
        try context.performAndWait {
            #expect(try badge("gold", in: context)?.isDeleted == false)
            try context.save()
        }
        let (holders, badges) = try stored(coordinator)
        #expect(holders == ["gold": "b"])
        #expect(badges == ["b": ["gold"]])
    }

    /// The parent's copy of the deleted company still held the employee the child had moved out, so the
    /// parent's save failed on the deny rule.
    @Test func aMemberMovedOutInAChildContextDoesNotCountAgainstADenyRuleInTheParent() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "acme"
            Company(context: context).name = "initech"
            let e = Employee(context: context)
            e.name = "e"
            e.company = acme
            try context.save()
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: context)
        try child.performAndWait {
            let companies = try child.fetch(FetchRequest<Company>())
            // first(where:) spelled out: with Swift 6.3.1, a trailing-closure `first { }` right after a
            // `#require(… first { })` returned the earlier match.
            let acme = try #require(companies.first(where: { $0.name == "acme" }))
            try employee("e", in: child).company = companies.first(where: { $0.name == "initech" })
            child.delete(acme)
            try child.save()
        }
        try context.performAndWait { try context.save() }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try fresh.performAndWait {
            let companies = try fresh.fetch(FetchRequest<Company>())
            #expect(companies.map(\.name) == ["initech"])
            #expect(companies.first?.employees.map(\.name) == ["e"])
        }
    }

    @Test func aMemberStillInTheSetIsCascadedWhileTheMovedOneIsNot() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            try #require(try badge("gold", in: context)).holder = try employee("b", in: context)
            context.delete(try employee("a", in: context))
            try context.save()
            #expect(try badge("silver", in: context) == nil)
        }
        #expect(try stored(coordinator).holders == ["gold": "b"])
    }
}
