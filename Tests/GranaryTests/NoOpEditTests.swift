import Foundation
import Testing
@testable import Granary

/// Setting a property to its saved value is no persistent change.
@Suite struct NoOpEditTests {
    // Apple: NSManagedObject.hasPersistentChangedValues — "A Boolean value that indicates whether the
    // managed object has persistent property values that have been changed"; Apple:
    // NSManagedObject.changedValues() — "changes to properties that are defined as persistent properties
    // of the receiver, not changes to transient properties"; Apple: NSManagedObject.isUpdated stays true
    // for an object with unsaved changes.
    @Test func assigningTheSavedValueIsNoPersistentChange() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Same"
            note.summary = "transient"
            #expect(note.hasPersistentChangedValues)
            #expect(Set(note.changedValues().keys) == ["title", "uid", "created", "revision", "folder"])
            try context.save()

            note.title = "Same"
            note.summary = "changed, but transient"
            #expect(note.isUpdated)
            #expect(!note.hasPersistentChangedValues)
            #expect(note.changedValues().isEmpty)

            note.title = "Other"
            #expect(note.hasPersistentChangedValues)
            #expect(Set(note.changedValues().keys) == ["title"])
            note.title = "Same"
            #expect(!note.hasPersistentChangedValues)
        }
    }

    // No row rewritten (the row version stays), no update notification, no merge conflict: a no-op edit
    // is not written.
    @Test func aNoOpEditIsNotWrittenNotReportedAndCausesNoConflict() throws {
        let (coordinator, context) = try makeNotesStack()
        let note: Note = try context.performAndWait {
            let note = Note(context: context)
            note.title = "Stable"
            try context.save()
            return note
        }
        let versionBefore = try #require(try coordinator.rowVersion(of: note.objectID))
        // Another context changes the row: an edit here that was written would conflict.
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let theirs = try #require(other.object(with: note.objectID) as? Note)
            theirs.revision = 9
            try other.save()
        }
        let saves = HookJournal()
        let observer = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) {
            let changes = $0.userInfo?[ContextChanges.userInfoKey] as! ContextChanges
            saves.lines.append("updated \(changes.updated.count)")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.performAndWait {
            #expect(context.mergePolicy == .error)
            note.title = "Stable"
            note.revision = 0
            try context.save()
            #expect(!context.hasChanges)
        }
        #expect(saves.lines == ["updated 0"])
        #expect(try coordinator.rowVersion(of: note.objectID) == versionBefore + 1)
        let revision = try other.performAndWait { () throws -> Int in
            other.reset()
            return try other.fetch(FetchRequest<Note>()).first?.revision ?? -1
        }
        #expect(revision == 9)
    }

    // A to-many relationship whose members were removed and added back holds its saved value.
    @Test func aRelationshipGivenBackItsMembersIsNoChange() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let folder = Folder(context: context)
            folder.name = "F"
            let a = Note(context: context)
            a.title = "A"
            let b = Note(context: context)
            b.title = "B"
            folder.notes = [a, b]
            try context.save()
            try folder.remove([a], fromRelationship: "notes")
            try folder.add([a], toRelationship: "notes")
            a.folder = folder
            #expect(folder.isUpdated)
            #expect(!folder.hasPersistentChangedValues && !a.hasPersistentChangedValues)
        }
    }

    // A child context's no-op edit is not handed to its parent as a change.
    @Test func aChildsNoOpEditLeavesItsParentUnchanged() throws {
        let (_, parent) = try makeNotesStack()
        let id = try parent.performAndWait {
            let note = Note(context: parent)
            note.title = "Parent's"
            try parent.save()
            return note.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            let note = try #require(child.object(with: id) as? Note)
            note.title = "Parent's"
            try child.save()
        }
        parent.performAndWait { #expect(!parent.hasChanges) }
    }
}
