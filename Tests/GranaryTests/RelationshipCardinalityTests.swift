import Foundation
import Testing
@testable import Granary

/// Relationship counts as Core Data enforces them when a context saves.
///
/// Apple: NSRelationshipDescription, "Cardinality" — "The maximum and minimum counts for a relationship
/// indicate the number of objects referenced (1/1 for a to-one relationship, 0 means undefined). The
/// counts are only enforced if the relationship value in the containing object is not nil. That is,
/// optional relationships may have zero objects in the relationship, which might be less than the
/// minimum count." Apple: NSRelationshipDescription.maxCount — "If you declare a relationship attribute
/// as optional …, the framework only enforces minCount and maxCount when that attribute is not nil."
@Suite struct RelationshipCardinalityTests {
    /// A team with one relationship of each kind under test, and the players they point at.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Team") {
                Attribute("name", .string)
                // Non-optional to-many with no minimum, as Xcode's model editor makes them by default.
                Relationship("players", toMany: "Player", inverse: "team", optional: false)
                Relationship("captains", toMany: "Player", inverse: "captainOf", optional: false, minCount: 1)
                Relationship("coaches", toMany: "Player", inverse: "coachOf", minCount: 2, maxCount: 3)
                Relationship("owner", to: "Player", inverse: "owned", optional: false)
                Relationship("sponsor", to: "Player", inverse: "sponsored")
            }
            Entity("Player") {
                Attribute("name", .string)
                Relationship("team", to: "Team", inverse: "players")
                Relationship("captainOf", to: "Team", inverse: "captains")
                Relationship("coachOf", to: "Team", inverse: "coaches")
                Relationship("owned", toMany: "Team", inverse: "owner")
                Relationship("sponsored", toMany: "Team", inverse: "sponsor")
            }
        }
    }

    /// Saves a team whose relationships hold the given numbers of new players, and returns the
    /// validation failures the save reported (empty when it saved).
    static func save(players: Int = 0, captains: Int = 1, coaches: Int = 0, owner: Bool = true) throws -> [ValidationError.Reason] {
        let model = try model()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait {
            func player() -> ManagedObject {
                let p = ManagedObject(entity: model.entity(named: "Player")!, insertInto: context)
                try? p.setValue("p", forKey: "name")
                return p
            }
            let team = ManagedObject(entity: model.entity(named: "Team")!, insertInto: context)
            try team.setValue("t", forKey: "name")
            try team.setValue(Set((0..<players).map { _ in player() }), forKey: "players")
            try team.setValue(Set((0..<captains).map { _ in player() }), forKey: "captains")
            try team.setValue(Set((0..<coaches).map { _ in player() }), forKey: "coaches")
            if owner { try team.setValue(player(), forKey: "owner") }
            do {
                try context.save()
                return []
            } catch ContextError.validation(let errors) {
                return errors.filter { $0.entityName == "Team" }.map(\.reason)
            }
        }
    }

    // Apple: NSRelationshipDescription, "Cardinality" — counts are enforced on a value that is not nil;
    // a to-many value is an empty set, not nil, and a minimum of 0 admits it.
    @Test func aNonOptionalToManyWithNoMinimumAcceptsAnEmptySet() throws {
        #expect(try Self.save(players: 0) == [])
        #expect(try Self.save(players: 3) == [])
    }

    // Apple: NSRelationshipDescription.minCount — "The minimum number of managed objects the relationship
    // can reference"; a non-optional to-many is held to it even when empty.
    @Test func aNonOptionalToManyIsHeldToItsMinimumEvenWhenEmpty() throws {
        #expect(try Self.save(captains: 0) == [.tooFew(count: 0, minimum: 1)])
        #expect(try Self.save(captains: 1) == [])
    }

    // Apple: NSRelationshipDescription, "Cardinality" — "optional relationships may have zero objects in
    // the relationship, which might be less than the minimum count"; once not empty, both counts hold.
    @Test func anOptionalToManyMayBeEmptyButOtherwiseKeepsItsCounts() throws {
        #expect(try Self.save(coaches: 0) == [])
        #expect(try Self.save(coaches: 1) == [.tooFew(count: 1, minimum: 2)])
        #expect(try Self.save(coaches: 2) == [])
        #expect(try Self.save(coaches: 3) == [])
        #expect(try Self.save(coaches: 4) == [.tooMany(count: 4, maximum: 3)])
    }

    // Apple: NSPropertyDescription.isOptional — "A Boolean value that indicates whether the property
    // must have a value" (NSValidationMissingMandatoryPropertyError for a nil non-optional to-one); an
    // optional to-one may be nil.
    @Test func aNonOptionalToOneMustHoldAnObjectAndAnOptionalOneNeedNot() throws {
        #expect(try Self.save(owner: false) == [.missing])
        #expect(try Self.save(owner: true) == [])
    }
}
