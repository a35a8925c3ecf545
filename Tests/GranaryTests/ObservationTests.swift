import Foundation
@testable import Granary
import Observation
import Synchronization
import Testing

final class ObservedNote: ManagedObject, Observable {
    @Managed var title: String
    @Managed var stars: Int
    @Managed var tags: Set<ObservedTag>
}

final class ObservedTag: ManagedObject, Observable {
    @Managed var name: String
    @Managed var notes: Set<ObservedNote>
}

/// Managed objects of classes that declare `Observable`, tracked with Swift's Observation framework
/// (`withObservationTracking(_:onChange:)`, Apple's Observation documentation): every change of a
/// property read is reported, whatever made it, and nothing else is.
@Suite struct ObservationTests {
    static func stack() throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note", as: ObservedNote.self) {
                Attribute("title", .string, defaultValue: "")
                Attribute("stars", .integer64, defaultValue: 0)
                Relationship("tags", toMany: "Tag", inverse: "notes")
            }
            Entity("Tag", as: ObservedTag.self) {
                Attribute("name", .string, defaultValue: "")
                Relationship("notes", toMany: "Note", inverse: "tags")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .inMemory)
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }

    /// Runs `read` under observation tracking and returns a flag that turns true on the first change.
    static func track(_ read: @escaping () -> Void) -> Flag {
        let changed = Flag()
        withObservationTracking(read) { changed.set() }
        return changed
    }

    final class Flag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    @Test func aWriteOfATrackedPropertyIsReportedAndOthersAreNot() throws {
        let (_, context) = try Self.stack()
        try context.performAndWait { () throws in
            let note = ObservedNote(context: context)
            note.title = "draft"
            let titleChanged = Self.track { _ = note.title }
            note.stars = 3
            #expect(!titleChanged.isSet, "a property that was not read changed")
            note.title = "final"
            #expect(titleChanged.isSet)
            let byKey = Self.track { _ = note.stars }
            try note.setValue(4, forKey: "stars")
            #expect(byKey.isSet, "a key-value write is reported too")
        }
    }

    @Test func theOtherEndOfARelationshipIsReported() throws {
        let (_, context) = try Self.stack()
        try context.performAndWait { () throws in
            let note = ObservedNote(context: context), tag = ObservedTag(context: context)
            let tagNotes = Self.track { _ = tag.notes }
            try note.add(tag, to: \.tags)
            #expect(tagNotes.isSet, "the inverse changed")
            #expect(tag.notes == [note])
        }
    }

    @Test func mergesRefreshesAndRollbacksAreReported() throws {
        let (coordinator, context) = try Self.stack()
        let id = try context.performAndWait {
            let note = ObservedNote(context: context)
            note.title = "one"
            try context.save()
            return note.objectID
        }
        try context.performAndWait { () throws in
            let note = try #require(try context.existingObject(with: id) as? ObservedNote)
            let merged = Self.track { _ = note.title }
            let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let recorder = SaveRecorder(other)
            try other.performAndWait { () throws in
                let mine = try #require(try other.existingObject(with: id) as? ObservedNote)
                mine.title = "two"
                try other.save()
            }
            for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
            #expect(merged.isSet)
            #expect(note.title == "two")

            note.title = "unsaved"
            let rolledBack = Self.track { _ = note.title }
            context.rollback()
            #expect(rolledBack.isSet)
            #expect(note.title == "two")
        }
    }

    @Test func classesThatDoNotDeclareObservableAreNotTracked() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            let changed = Self.track { _ = company.name }
            company.name = "Initech"
            #expect(!changed.isSet)
            #expect(!EntityLayout.of(company.entity).isObservable)
        }
    }
}
