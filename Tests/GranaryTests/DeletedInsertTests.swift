import Foundation
import Testing
@testable import Granary

/// An object inserted and deleted before a save leaves its context at once, but the deny and no-action
/// rules of its relationships leave their other ends pointing at it until the save, as for any deleted
/// object. The save treats it as deleted: a deny rule still holds while it has members, and the
/// references that remain are dropped (what the store does for a deleted row's no-action rule; the store
/// never sees this object). Until then the other ends still reach it: moving a member out of it frees
/// its deny rule, and a relationship read back and assigned keeps it. (Found by
/// DeleteRulePropertyTests: such saves failed with "relationships cannot cross stores", and reading the
/// relationship gave a fault that could never load.)
@Suite struct DeletedInsertTests {
    func owner(_ name: String, in context: ManagedObjectContext) throws -> RuleOwner {
        try #require(try context.fetch(FetchRequest<RuleOwner>(predicate: #Predicate { $0.name == name })).first)
    }

    func item(_ name: String, in context: ManagedObjectContext) throws -> RuleItem {
        try #require(try context.fetch(FetchRequest<RuleItem>(predicate: #Predicate { $0.name == name })).first)
    }

    /// Owners o and p, item i, saved and unlinked.
    func setup() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let (coordinator, context) = try makeRuleStack()
        try context.performAndWait {
            for name in ["o", "p"] { RuleOwner(context: context).name = name }
            RuleItem(context: context).name = "i"
            try context.save()
        }
        return (coordinator, context)
    }

    /// What a fresh context reads: each owner's items in `key`.
    func stored(_ key: String, _ coordinator: PersistentStoreCoordinator) throws -> [String: [String]] {
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try fresh.performAndWait {
            var members: [String: [String]] = [:]
            for owner in try fresh.fetch(FetchRequest<RuleOwner>()) {
                let value = try owner.value(forKey: key)
                let objects = value as? [ManagedObject] ?? (value as? Set<ManagedObject>).map(Array.init) ?? []
                members[owner.name] = try objects.map { try $0.value(forKey: "name") as? String ?? "?" }.sorted()
            }
            return members
        }
    }

    @Test func aNoActionReferenceToAnObjectInsertedAndDeletedIsDroppedAtSave() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            let o = try owner("o", in: context)
            let j = RuleItem(context: context)
            j.name = "j"
            // Item.nullifyOwner has no action: deleting j leaves o.nullifyItems holding it.
            j.nullifyOwner = o
            context.delete(j)
            #expect(j.managedObjectContext == nil)
            #expect(o.nullifyItems.map(\.name) == ["j"])
            try context.save()
            #expect(o.nullifyItems.isEmpty)
        }
        #expect(try stored("nullifyItems", coordinator) == ["o": [], "p": []])
    }

    @Test func anObjectInsertedAndDeletedIsDeniedWhileItHasMembersAndFreedByMovingThemOut() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            let i = try item("i", in: context)
            let q = RuleOwner(context: context)
            q.name = "q"
            q.denyItems = [i]
            context.delete(q)
            #expect(i.denyOwner === q)
            let denied = #expect(throws: ContextError.self) { try context.save() }
            guard case .deleteDenied("Owner", "denyItems", _, 1)? = denied else {
                Issue.record("unexpected \(String(describing: denied))")
                return
            }
            // Moved out by its to-one: q no longer holds it, so q may go.
            i.denyOwner = try owner("p", in: context)
            #expect(q.denyItems.isEmpty)
            try context.save()
        }
        #expect(try stored("denyItems", coordinator) == ["o": [], "p": ["i"]])
    }

    /// Permanent IDs obtained after the delete reach the discarded object's references too: it named its
    /// parent by the parent's temporary ID, so the parent's cascade no longer cleared it, and its deny
    /// rule refused the save.
    @Test func anObjectInsertedAndDeletedFollowsItsParentToAPermanentID() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            let o = try owner("o", in: context)
            let parent = RuleItem(context: context)
            parent.name = "parent"
            parent.cascadeOwner = o
            let child = RuleItem(context: context)
            child.name = "child"
            child.parent = parent
            // Item.parent is deny: the deleted child still has its parent.
            context.delete(child)
            try context.obtainPermanentIDs(for: [parent])
            // o's cascade takes the parent, whose cascade clears the child's parent: nothing is denied.
            context.delete(o)
            try context.save()
        }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try fresh.performAndWait { () throws in
            #expect(try fresh.fetch(FetchRequest<RuleItem>()).map(\.name) == ["i"])
            #expect(try fresh.fetch(FetchRequest<RuleOwner>()).map(\.name) == ["p"])
        }
    }

    @Test func aRelationshipReadBackWithAnObjectInsertedAndDeletedCanBeAssigned() throws {
        let (coordinator, context) = try setup()
        try context.performAndWait {
            let o = try owner("o", in: context)
            let i = try item("i", in: context)
            let j = RuleItem(context: context)
            j.name = "j"
            o.tags = [i, j]
            // Item.taggedBy has no action: o.tags keeps j.
            context.delete(j)
            #expect(Set(o.tags.map(\.name)) == ["i", "j"])
            o.tags = o.tags.filter { $0.name != "i" }
            try context.save()
            #expect(o.tags.isEmpty && i.taggedBy.isEmpty)
        }
        #expect(try stored("tags", coordinator) == ["o": [], "p": []])
    }

    /// A required to-one left pointing at an object inserted and deleted is missing: the save would drop
    /// the reference, so validation must not count it.
    @Test func aRequiredReferenceToAnObjectInsertedAndDeletedIsMissing() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Stem") {
                Attribute("name", .string)
                Relationship("leaves", toMany: "Leaf", inverse: "stem", deleteRule: .noAction)
            }
            Entity("Leaf") {
                Attribute("name", .string)
                Relationship("stem", to: "Stem", inverse: "leaves", optional: false)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            func make(_ entity: String, _ name: String) throws -> ManagedObject {
                let object = ManagedObject(entity: try #require(model.entity(named: entity)), insertInto: context)
                try object.setValue(name, forKey: "name")
                return object
            }
            let leaf = try make("Leaf", "l")
            try leaf.setValue(try make("Stem", "s"), forKey: "stem")
            try context.save()
            let stem = try make("Stem", "t")
            try leaf.setValue(stem, forKey: "stem")
            // Stem.leaves has no action: the leaf still points at the stem.
            context.delete(stem)
            let error = #expect(throws: ContextError.self) { try context.save() }
            guard case .validation(let errors)? = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(errors.map(\.propertyName) == ["stem"] && errors.map(\.reason) == [.missing])
        }
    }
}
