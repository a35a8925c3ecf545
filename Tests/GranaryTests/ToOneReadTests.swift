import Foundation
import Testing
@testable import Granary

/// Typed reads of to-one relationships: once a read of a property has been seen to hand out the target's
/// reference, later reads of that property skip the conversion (`ToOneReadCache`); they must still give
/// exactly what the conversion gives, for every class a target can have and for nil.
@Suite struct ToOneReadTests {
    class Pet: ManagedObject {
        @Managed var name: String
    }

    final class Dog: Pet {}

    final class Walker: ManagedObject {
        @Managed var pet: Pet?
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Pet", as: Pet.self) {
                Attribute("name", .string, defaultValue: "")
                Relationship("walkers", toMany: "Walker", inverse: "pet", deleteRule: .nullify)
            }
            Entity("Dog", as: Dog.self, parent: "Pet") {}
            Entity("Walker", as: Walker.self) {
                Relationship("pet", to: "Pet", inverse: "walkers", deleteRule: .nullify)
            }
        }
    }

    @Test func readsGiveTheTargetOfEveryClassAndNilInAnyOrder() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let pet = Pet(context: context)
            let dog = Dog(context: context)
            let walkers = (0..<6).map { _ in Walker(context: context) }
            // Nil first, then a plain pet, then a dog, then nil again: each read after the first of its
            // kind may take the remembered path.
            let targets: [Pet?] = [nil, pet, dog, nil, pet, dog]
            for round in 0..<3 {
                for (k, walker) in walkers.enumerated() {
                    let target = targets[(k + round) % targets.count]
                    walker.pet = target
                    #expect(walker.pet === target)
                    #expect((walker.pet as? Dog) === (target as? Dog))
                }
            }
            try context.save()
            // Saved and turned into faults: the targets come back as the registered objects.
            for walker in walkers { context.refresh(walker, mergeChanges: false) }
            for (k, walker) in walkers.enumerated() {
                let target = targets[(k + 2) % targets.count]
                #expect(walker.pet === target)
                #expect(try walker.value(forKey: "pet") as? Pet === target)
            }
        }
    }
}
