import Foundation
import Testing
@testable import Granary

/// Two coordinators on one store in one process, through `addPersistentStore(sharing:)`.
@Suite struct SharedStoreTests {
    private func twoCoordinators(_ type: PersistentStore.StoreType = .durable) throws
        -> (first: PersistentStoreCoordinator, second: PersistentStoreCoordinator, url: URL?)
    {
        let model = try makeCompanyModel()
        let url = type == .durable ? scratchURL() : nil
        let first = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try first.addPersistentStore(type: type, at: url)
        let second = PersistentStoreCoordinator(managedObjectModel: model)
        let shared = try second.addPersistentStore(sharing: store)
        #expect(shared.identifier == store.identifier && shared.url == store.url && shared.type == store.type)
        return (first, second, url)
    }

    @Test func aSecondOpenOfALockedDirectoryFailsButSharingWorks() throws {
        let (first, _, url) = try twoCoordinators()
        let third = PersistentStoreCoordinator(managedObjectModel: first.managedObjectModel)
        #expect(throws: ContextError.self) { try third.addPersistentStore(type: .durable, at: url) }
    }

    @Test(arguments: [PersistentStore.StoreType.durable, .inMemory])
    func savesOfOneCoordinatorAreVisibleInTheOtherAtOnce(type: PersistentStore.StoreType) throws {
        let (first, second, _) = try twoCoordinators(type)
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: first)
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        let id: ManagedObjectID = try writer.performAndWait {
            let ada = Employee(context: writer)
            ada.name = "Ada"
            try writer.save()
            return ada.objectID
        }
        try reader.performAndWait {
            let ada = try #require(try reader.existingObject(with: id) as? Employee)
            #expect(ada.name == "Ada")
            #expect(try reader.count(for: FetchRequest<Employee>()) == 1)
            ada.salary = 10
            try reader.save()
        }
        try writer.performAndWait {
            let ada = try #require(try writer.existingObject(with: id) as? Employee)
            #expect(ada.salary == 10)
        }
    }

    @Test func optimisticLockingDetectsConflictsAcrossCoordinators() throws {
        let (first, second, _) = try twoCoordinators()
        let a = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: first)
        let b = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        let id: ManagedObjectID = try a.performAndWait {
            let ada = Employee(context: a)
            ada.name = "Ada"
            try a.save()
            return ada.objectID
        }
        try a.performAndWait {
            let mine = try #require(try a.existingObject(with: id) as? Employee)
            try b.performAndWait {
                let theirs = try #require(try b.existingObject(with: id) as? Employee)
                theirs.salary = 200
                try b.save()
            }
            mine.salary = 300
            #expect(throws: ContextError.self) { try a.save() }
            a.mergePolicy = .mergeByPropertyStoreTrump
            try a.save()
            #expect(mine.salary == 200)
        }
    }

    @Test func theFilesCloseWhenTheLastSharerRemovesItsStore() throws {
        let (first, second, url) = try twoCoordinators()
        try first.remove(first.persistentStores[0])
        // The second coordinator still works on the open engine.
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        try context.performAndWait {
            _ = Badge(context: context).title = "still open"
            try context.save()
        }
        let third = PersistentStoreCoordinator(managedObjectModel: first.managedObjectModel)
        #expect(throws: ContextError.self) { try third.addPersistentStore(type: .durable, at: url) }
        try second.remove(second.persistentStores[0])
        try third.addPersistentStore(type: .durable, at: url)
        let reopened = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: third)
        let found = try reopened.performAndWait { try reopened.fetch(FetchRequest<Badge>()).map(\.title) }
        #expect(found == ["still open"])
    }

    @Test func droppingASharerWithoutRemovingItGivesTheEngineBack() throws {
        let model = try makeCompanyModel()
        let url = scratchURL()
        let first = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try first.addPersistentStore(type: .durable, at: url)
        do {
            let second = PersistentStoreCoordinator(managedObjectModel: model)
            try second.addPersistentStore(sharing: store)
        }
        try first.remove(store)
        let again = PersistentStoreCoordinator(managedObjectModel: model)
        try again.addPersistentStore(type: .durable, at: url)
    }

    @Test func sharingARemovedStoreOrTheSameCoordinatorTwiceIsAnError() throws {
        let (first, second, _) = try twoCoordinators()
        let store = first.persistentStores[0]
        #expect(throws: ContextError.self) { try second.addPersistentStore(sharing: store) }
        try first.remove(store)
        let third = PersistentStoreCoordinator(managedObjectModel: first.managedObjectModel)
        do {
            try third.addPersistentStore(sharing: store)
            Issue.record("a removed store was shared")
        } catch let error as ContextError {
            #expect(error.description.contains("removed"))
        }
    }

    @Test func aSharerMayUseAnotherConfiguration() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Company", as: Company.self) {
                Attribute("name", .string)
            }
            Entity("Badge", as: Badge.self) {
                Attribute("title", .string)
            }
            Configuration("Companies", entities: "Company")
            Configuration("Badges", entities: "Badge")
        }
        let first = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try first.addPersistentStore(type: .durable, configuration: "Companies", at: scratchURL())
        let second = PersistentStoreCoordinator(managedObjectModel: model)
        try second.addPersistentStore(sharing: store, configuration: "Badges")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        try context.performAndWait {
            _ = Badge(context: context).title = "b"
            try context.save()
            #expect(throws: ContextError.self) { try context.fetch(FetchRequest<Company>()) }
        }
    }
}

/// `missingStoreDiagnosis` lets a layer above explain why no store is attached.
@Suite struct MissingStoreDiagnosisTests {
    struct NotStarted: Error {}
    struct Gone: Error { var entity: String; var id: ManagedObjectID? }

    @Test func fetchesAndSavesThrowTheDiagnosedError() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel())
        coordinator.missingStoreDiagnosis = { entity, id in Gone(entity: entity, id: id) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            #expect(throws: Gone.self) { try context.fetch(FetchRequest<Employee>()) }
            _ = Badge(context: context).title = "b"
            do {
                try context.save()
                Issue.record("saved without a store")
            } catch let error as Gone {
                #expect(error.entity == "Badge" && error.id == nil)
            }
        }
    }

    @Test func objectsOfARemovedStoreAreDiagnosedWithTheirID() throws {
        let (coordinator, context) = try makeStack()
        let id: ManagedObjectID = try context.performAndWait {
            let b = Badge(context: context)
            b.title = "b"
            try context.save()
            return b.objectID
        }
        try coordinator.remove(coordinator.persistentStores[0])
        coordinator.missingStoreDiagnosis = { entity, id in id == nil ? nil : Gone(entity: entity, id: id) }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            do {
                _ = try other.existingObject(with: id)
                Issue.record("found an object of a removed store")
            } catch let error as Gone {
                #expect(error.id == id)
            }
            // nil keeps the coordinator's own error.
            #expect(throws: ContextError.self) { try other.fetch(FetchRequest<Badge>()) }
        }
    }
}
