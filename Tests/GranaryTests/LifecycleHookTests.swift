import Foundation
import Testing
@testable import Granary

/// The lifecycle hooks of `ManagedObject`, called at the moments Apple's NSManagedObject documentation
/// gives.
@Suite struct LifecycleHookTests {
    // Apple: NSManagedObject.awakeFromInsert() — "You typically use this method to initialize special
    // default property values. This method is invoked only once in the object's lifetime."
    @Test func awakeFromInsertRunsOnceAndItsValuesAreSaved() throws {
        let (coordinator, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "First"
            #expect(note.events == ["awakeFromInsert"])
            #expect(note.isInserted)
            let uid = try #require(note.uid)
            // Inserting again, or after a rollback took it out, is not a first insertion.
            context.insert(note)
            context.rollback()
            context.insert(note)
            #expect(note.events.filter { $0 == "awakeFromInsert" }.count == 1)
            note.title = "First"
            try context.save()
            #expect(note.uid == uid)

            let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try other.performAndWait {
                let fetched = try #require(try other.fetch(FetchRequest<Note>()).first)
                #expect(fetched.uid == uid)
                #expect(!fetched.events.contains("awakeFromInsert"))
            }
        }
    }

    // Apple: NSManagedObject.awakeFromInsert() — "invoked only once in the object's lifetime": a child
    // context's save hands the object to its parent without awaking it there again.
    @Test func awakeFromInsertIsNotCalledAgainWhenAChildSavesIntoItsParent() throws {
        let (_, parent) = try makeNotesStack()
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        let (id, uid) = try child.performAndWait {
            let note = Note(context: child)
            note.title = "Draft"
            try child.save()
            return (note.objectID, note.uid)
        }
        try parent.performAndWait {
            let copy = try #require(parent.registeredObject(for: id) as? Note)
            #expect(copy.events.isEmpty)
            #expect(copy.uid == uid)
            try parent.save()
            #expect(copy.events == ["willSave", "validateForInsert", "didSave"])
        }
    }

    // Apple: NSManagedObject.awakeFromFetch() — "The managed object context's change processing is
    // explicitly disabled around this method so that you can use public setters to establish transient
    // values and other caches without dirtying the object or its context."
    @Test func awakeFromFetchRunsWhenAFaultIsFilledAndRecordsNoChange() throws {
        let (coordinator, context) = try makeNotesStack()
        let id = try context.performAndWait {
            let note = Note(context: context)
            note.title = "Kept"
            try context.save()
            return note.objectID
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let changesSeen = HookJournal()
        let observer = NotificationCenter.default.addObserver(forName: .managedObjectContextObjectsDidChange, object: reader, queue: nil) {
            let changes = $0.userInfo?[ContextChanges.userInfoKey] as! ContextChanges
            if !changes.updated.isEmpty { changesSeen.lines.append("updated") }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try reader.performAndWait {
            let note = try #require(reader.object(with: id) as? Note)
            #expect(note.isFault)
            #expect(note.events.isEmpty)
            #expect(note.title == "Kept")
            #expect(note.events == ["awakeFromFetch"])
            #expect(note.summary == "about Kept")
            #expect(!note.hasChanges && !note.isUpdated)
            #expect(!reader.hasChanges && reader.updatedObjects.isEmpty)
            reader.processPendingChanges()
            #expect(changesSeen.lines.isEmpty)
            // A fetch fills faults too.
            reader.refresh(note, mergeChanges: false)
            _ = try reader.fetch(FetchRequest<Note>())
            #expect(note.events.filter { $0 == "awakeFromFetch" }.count == 2)
        }
    }

    // Apple: NSManagedObject.awakeFromFetch() — "when fulfilling it from a fault": a child context's
    // faults are filled from its parent.
    @Test func awakeFromFetchRunsWhenAChildFillsAFaultFromItsParent() throws {
        let (_, parent) = try makeNotesStack()
        let id = parent.performAndWait {
            let note = Note(context: parent)
            note.title = "Unsaved in parent"
            return note.objectID
        }
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        try child.performAndWait {
            let note = try #require(child.object(with: id) as? Note)
            #expect(note.title == "Unsaved in parent")
            #expect(note.events == ["awakeFromFetch"])
            #expect(!child.hasChanges)
        }
    }

    // Apple: NSManagedObject.prepareForDeletion() — "perform any operations required before the object is
    // deleted, such as custom propagation before relationships are torn down".
    // Apple: NSManagedObject.isDeleted — true "if Core Data will ask the persistent store to delete the
    // object during the next save operation".
    @Test func prepareForDeletionSeesTheRelationshipsBeforeTheDeleteRules() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let folder = Folder(context: context)
            folder.name = "Inbox"
            let first = Note(context: context)
            first.title = "First"
            first.folder = folder
            let second = Note(context: context)
            second.title = "Second"
            second.folder = folder
            try context.save()

            context.delete(first)
            // Told with isDeleted already true, and its nullify rule not yet applied.
            #expect(first.events.last == "prepareForDeletion(deleted)")
            #expect(first.folderSeenInPrepareForDeletion === folder)
            #expect(folder.notes == [second])

            context.delete(folder)
            #expect(folder.events == ["prepareForDeletion with 1 notes"])
            // The cascade deletes the second note, which is told too.
            #expect(second.events.last == "prepareForDeletion(deleted)")
            #expect(second.isDeleted)
        }
    }

    // Apple: NSManagedObject.willSave() — "The sense of 'save' in the method name is that of a database
    // commit statement and so applies to deletions as well as to updates to objects ... You can find out
    // if an object is marked for deletion with isDeleted."
    // Apple: NSManagedObject.didSave() — "after the managed object's context completes a save operation".
    // Apple: NSManagedObjectContext.delete(_:) — "When changes are committed, object will be removed from
    // the uniquing tables."
    @Test func willSaveAndDidSaveReachInsertedUpdatedAndDeletedObjects() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let kept = Note(context: context)
            kept.title = "Kept"
            let gone = Note(context: context)
            gone.title = "Gone"
            try context.save()
            #expect(kept.events == ["awakeFromInsert", "willSave", "validateForInsert", "didSave"])
            kept.events = []
            gone.events = []

            kept.title = "Kept, edited"
            context.delete(gone)
            let fresh = Note(context: context)
            fresh.title = "Fresh"
            fresh.events = []
            try context.save()
            #expect(kept.events == ["willSave", "validateForUpdate", "didSave"])
            #expect(fresh.events == ["willSave", "validateForInsert", "didSave"])
            // The deletion: told at save with isDeleted true, then turned into a fault outside the context.
            #expect(gone.events == ["prepareForDeletion(deleted)", "willSave(deleted)", "validateForDelete", "didSave(deleted)",
                                    "willTurnIntoFault", "didTurnIntoFault"])
            #expect(gone.managedObjectContext == nil && !gone.isDeleted && gone.isFault)
            #expect(context.registeredObject(for: gone.objectID) == nil)
        }
    }

    // Apple: NSManagedObject.willSave() — "This method can have 'side effects' on persistent values ...
    // If you change property values using standard accessor methods, Core Data will observe the resultant
    // change notification and so invoke willSave again before saving".
    @Test func changesMadeInWillSaveAreSavedAndCallWillSaveAgain() throws {
        let (coordinator, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Stamped"
            try context.save()
            note.events = []
            note.summarizesInWillSave = true
            note.revision = 2
            try context.save()
            // Changed in the first call, so called again; the second call changes nothing.
            #expect(note.events == ["willSave", "willSave", "validateForUpdate", "didSave"])
            #expect(!context.hasChanges)
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let revision = try reader.performAndWait { try reader.fetch(FetchRequest<Note>()).first?.revision }
        #expect(revision == 2)
    }

    // Apple: NSManagedObject.willSave() — "If you continue to modify a value in willSave, willSave will
    // continue to be called until your program crashes." Granary stops with a typed error instead.
    @Test func aWillSaveThatNeverSettlesFailsTheSaveWithATypedError() throws {
        let (_, context) = try makeNotesStack()
        context.performAndWait {
            let note = Note(context: context)
            note.title = "Restless"
            note.changesOnEveryWillSave = true
            #expect {
                try context.save()
            } throws: { error in
                guard case .willSaveKeepsChanging(let entity, let object) = error as? ContextError else { return false }
                return entity == "Note" && object == note.objectID && "\(error)".contains("Note")
            }
            #expect(note.events.count(where: { $0 == "willSave" }) == ManagedObjectContext.willSaveRoundLimit)
            #expect(note.isInserted)
        }
    }

    // Apple: NSManagedObject.willSave() — a timestamp is best computed "once for all the objects being
    // saved (for example, in response to an NSManagedObjectContextWillSaveNotification)": the notification
    // comes before the objects' willSave(), and the objects' didSave() before the did-save notification.
    @Test func notificationsFrameTheObjectsHooks() throws {
        let (_, context) = try makeNotesStack()
        let journal = HookJournal()
        let observers = [Notification.Name.managedObjectContextWillSave, .managedObjectContextDidSave].map { name in
            NotificationCenter.default.addObserver(forName: name, object: context, queue: nil) { note in
                journal.lines.append(note.name == .managedObjectContextWillSave ? "will-save notification" : "did-save notification")
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        try context.performAndWait {
            let a = Note(context: context)
            a.title = "A"
            a.label = "a"
            a.journal = journal
            try context.save()
        }
        #expect(journal.lines == ["will-save notification", "a willSave", "a validateForInsert", "a didSave", "did-save notification"])
    }

    // Apple: NSManagedObjectContext.refresh(_:mergeChanges:) with false turns the object into a fault;
    // Apple: NSManagedObject.willTurnIntoFault() / didTurnIntoFault() — before and after "converting it to
    // a fault".
    @Test func refreshingWithoutMergingTurnsTheObjectIntoAFault() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Refreshed"
            try context.save()
            note.events = []
            note.title = "Unsaved edit"
            context.refresh(note, mergeChanges: false)
            #expect(note.events == ["willTurnIntoFault", "didTurnIntoFault"])
            // Already a fault: nothing to turn.
            context.refresh(note, mergeChanges: false)
            #expect(note.events.count == 2)
            #expect(note.title == "Refreshed")
            #expect(note.events.last == "awakeFromFetch")
        }
    }

    // Apple: NSSnapshotEventType.refresh and NSManagedObject.awake(fromSnapshotEvents:) — "when
    // fulfilling it from a snapshot"; a refresh that merges changes and a merge of another context's save.
    @Test func refreshingWithMergeAwakesFromARefreshSnapshot() throws {
        let (coordinator, context) = try makeNotesStack()
        context.performAndWait { context.automaticallyMergesChangesFromParent = false }
        let note: Note = try context.performAndWait {
            let note = Note(context: context)
            note.title = "Mine"
            try context.save()
            note.events = []
            return note
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let changes: ContextChanges = try other.performAndWait {
            let theirs = try #require(other.object(with: note.objectID) as? Note)
            theirs.revision = 7
            try other.save()
            return ContextChanges(updated: [theirs.objectID])
        }
        context.performAndWait {
            context.refresh(note, mergeChanges: true)
            #expect(note.events == ["awake(refresh)"])
            #expect(note.revision == 7)
            note.events = []
            context.mergeChanges(fromContextDidSave: changes)
            #expect(note.events == ["awake(refresh)"])
        }
    }

    // Apple: NSSnapshotEventType.rollback — the object's values were put back by a rollback.
    @Test func rollbackAwakesTheObjectsItRestores() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let edited = Note(context: context)
            edited.title = "Saved"
            let deleted = Note(context: context)
            deleted.title = "Deleted"
            try context.save()
            edited.events = []
            deleted.events = []
            edited.title = "Unsaved"
            context.delete(deleted)
            let inserted = Note(context: context)
            inserted.title = "Never saved"
            context.rollback()
            #expect(edited.events == ["awake(rollback)"])
            #expect(edited.title == "Saved")
            #expect(deleted.events == ["prepareForDeletion(deleted)", "awake(rollback)"])
            #expect(!inserted.events.contains { $0.hasPrefix("awake(") })
        }
    }

    // Apple: NSSnapshotEventType.mergePolicy — the object's state was settled by a merge policy.
    @Test func aMergePolicyResolvingAConflictAwakesTheObject() throws {
        let (coordinator, context) = try makeNotesStack()
        let note: Note = try context.performAndWait {
            let note = Note(context: context)
            note.title = "Contested"
            try context.save()
            return note
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            let theirs = try #require(other.object(with: note.objectID) as? Note)
            theirs.revision = 1
            try other.save()
        }
        try context.performAndWait {
            context.mergePolicy = .mergeByPropertyObjectTrump
            note.events = []
            note.title = "Mine wins"
            try context.save()
            #expect(note.events.contains("awake(mergePolicy)"))
            #expect(note.revision == 1 && note.title == "Mine wins")
        }
    }

    // Apple: NSManagedObject.didTurnIntoFault() — after "converting it to a fault"; a batched fetch turns
    // objects it no longer keeps back into faults.
    @Test func aBatchedFetchEvictingObjectsTurnsThemIntoFaults() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            for i in 0..<40 {
                let note = Note(context: context)
                note.title = "Note \(i)"
            }
            try context.save()
            context.reset()
            var request = FetchRequest<Note>(sortBy: [SortDescriptor(\.title)])
            request.fetchBatchSize = 5
            let notes = try context.fetch(request)
            for note in notes { _ = note.title }
            #expect(notes[0].isFault)
            #expect(notes[0].events == ["awakeFromFetch", "willTurnIntoFault", "didTurnIntoFault"])
            #expect(!notes[39].isFault)
        }
    }
}
