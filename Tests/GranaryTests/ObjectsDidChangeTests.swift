import Foundation
import Testing
@testable import Granary

/// What objects-did-change events carry, as fetched-results controllers rely on it.
@Suite struct ObjectsDidChangeTests {
    /// Every event the context publishes while `body` runs.
    func events(_ context: ManagedObjectContext, _ body: () throws -> Void) rethrows -> [ContextChanges] {
        let box = EventBox()
        let subscription = context.objectsDidChangeFeed.subscribe { changes, _ in box.append(changes) }
        defer { context.objectsDidChangeFeed.unsubscribe(subscription) }
        try body()
        return box.take()
    }

    @Test func editsOfAnAnnouncedInsertAreUpdates() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            let found = events(context) {
                let e = makeEmployee(context, "A", salary: 1)
                e.salary = 2  // not yet announced: part of the insert
                context.processPendingChanges()
                e.salary = 3
                context.processPendingChanges()
            }
            #expect(found.count == 2)
            #expect(found[0].inserted.count == 1 && found[0].updated.isEmpty)
            #expect(found[1].updated == found[0].inserted && found[1].inserted.isEmpty)
        }
    }

    @Test func deletingAnAnnouncedInsertIsADeletion() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            let found = events(context) {
                let quiet = makeEmployee(context, "Q", salary: 1)
                context.delete(quiet)  // never announced: nothing to say
                let e = makeEmployee(context, "A", salary: 1)
                context.processPendingChanges()
                context.delete(e)
                context.processPendingChanges()
            }
            #expect(found.count == 2)
            #expect(found[0].inserted.count == 1 && found[0].deleted.isEmpty)
            #expect(found[1].deleted == found[0].inserted)
        }
    }

    @Test func aSaveWithNothingToWriteStillAnnouncesTheDeletionOfAnAnnouncedInsert() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = makeEmployee(context, "A", salary: 1)
            context.processPendingChanges()
            let id = e.objectID
            let found = try events(context) {
                context.delete(e)
                #expect(!context.hasChanges)
                try context.save()
            }
            #expect(found.count == 1 && found.first?.deleted == [id])
        }
    }

    @Test func rollbackRestoresDeletedObjectsWithoutReportingThemDeleted() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let e = makeEmployee(context, "A", salary: 1)
            try context.save()
            let found = events(context) {
                context.delete(e)
                let unannounced = makeEmployee(context, "B", salary: 2)
                _ = unannounced
                context.rollback()
            }
            #expect(found.count == 1)
            #expect(found[0].deleted.isEmpty && found[0].inserted.isEmpty && found[0].refreshed == [e.objectID])
            #expect(!e.isDeleted)
        }
    }

    @Test func mergesReportUpdatedObjectsTheContextDoesNotHold() throws {
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let recorder = SaveRecorder(other)
        let id: ManagedObjectID = try other.performAndWait {
            let e = makeEmployee(other, "A", salary: 1)
            try other.save()
            e.salary = 2
            try other.save()
            return e.objectID
        }
        let saves = recorder.take()
        context.performAndWait {
            #expect(context.registeredObject(for: id) == nil)
            let found = events(context) { context.mergeChanges(fromContextDidSave: saves[1]) }
            #expect(found.count == 1 && found[0].refreshed == [id])
        }
    }
}

/// Collects events from the feed, which calls back on the context's queue.
final class EventBox: @unchecked Sendable {
    // @unchecked: appended to and read on the context's queue only.
    private var events: [ContextChanges] = []
    func append(_ changes: ContextChanges) { events.append(changes) }
    func take() -> [ContextChanges] {
        defer { events = [] }
        return events
    }
}
