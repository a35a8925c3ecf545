import Foundation
import Testing
@testable import Granary

/// A context's undo manager, written from Apple's documentation: `NSManagedObjectContext.undoManager`
/// (nil by default; set one to enable undo support), `NSManagedObjectContext.undo()` ("reverse the latest
/// uncommitted changes applied to objects in the object graph"), `redo()`,
/// `NSManagedObjectContext.processPendingChanges()` ("causes changes to registered managed objects to be
/// recorded with the undo manager", at the end of each event), `rollback()` ("removes everything from the
/// undo stack"), `reset()`, `NSSnapshotEventType`, and the Core Data Programming Guide's "Change
/// Management" chapter (undo groups per event, the undo stack kept across saves).
@Suite struct UndoManagerTests {
    /// A company with a boss, Ada (reporting to the boss, with a report of her own and two badges,
    /// ordered, that cascade with her), all saved, and an undo manager set afterwards.
    struct Office {
        let coordinator: PersistentStoreCoordinator
        let context: ManagedObjectContext
        let acme: Company
        let boss: Employee
        let ada: Employee
        let report: Employee
        let first: Badge
        let second: Badge
        let manager: ContextUndoManager
    }

    func makeOffice() throws -> Office {
        let (coordinator, context) = try makeStack()
        return try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let boss = makeEmployee(context, "Boss", salary: 3, company: acme)
            let ada = makeEmployee(context, "Ada", salary: 2, company: acme)
            let report = makeEmployee(context, "Rep", salary: 1, company: acme)
            ada.manager = boss
            report.manager = ada
            let first = Badge(context: context)
            first.title = "first"
            let second = Badge(context: context)
            second.title = "second"
            ada.badges = [first, second]
            try context.save()
            let manager = ContextUndoManager()
            context.undoManager = manager
            return Office(coordinator: coordinator, context: context, acme: acme, boss: boss, ada: ada, report: report,
                          first: first, second: second, manager: manager)
        }
    }

    /// What a fresh context reads from the store: each employee's name, salary, manager, company and
    /// badges, by name.
    func stored(_ coordinator: PersistentStoreCoordinator) throws -> [String: String] {
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try fresh.performAndWait {
            var rows: [String: String] = [:]
            for e in try fresh.fetch(FetchRequest<Employee>()) {
                rows[e.name] = "\(e.salary) \(e.manager?.name ?? "-") \(e.company?.name ?? "-") \(e.badges.map(\.title))"
            }
            return rows
        }
    }

    // MARK: The manager's presence

    @Test func aContextHasNoUndoManagerByDefaultAndRecordsNothing() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            #expect(context.undoManager == nil)
            let ada = makeEmployee(context, "Ada", salary: 1)
            try context.save()
            ada.salary = 2
            #expect(context.pendingUndo.isEmpty && !context.recordsUndo)
            context.processPendingChanges()
            // A manager set now has nothing of the edit made before it.
            context.undoManager = ContextUndoManager()
            #expect(context.undoManager?.canUndo == false)
            try context.undo()
            #expect(ada.salary == 2)
        }
    }

    @Test func undoAndRedoWithoutAManagerThrowTypedErrors() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            _ = makeEmployee(context, "Ada", salary: 1)
            #expect {
                try context.undo()
            } throws: { error in
                guard case ContextError.noUndoManager(let named)? = error as? ContextError else { return false }
                return named == context.description
            }
            #expect {
                try context.redo()
            } throws: { error in
                if case ContextError.noUndoManager? = error as? ContextError { return true }
                return false
            }
            #expect(context.insertedObjects.count == 1, "the failed undo changed the context")
        }
    }

    @Test func undoWithNestedGroupsOpenThrowsInsteadOfStopping() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            office.manager.beginUndoGrouping()
            office.ada.salary = 10
            office.manager.beginUndoGrouping()
            #expect(throws: ContextError.self) { try office.context.undo() }
            office.manager.endUndoGrouping()
            try office.context.undo()  // one group open: closed, then undone
            #expect(office.ada.salary == 2)
        }
    }

    // MARK: Inserts, deletes, edits

    @Test func undoingAnInsertionTakesTheObjectOutAndRedoPutsItBack() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            let newcomer = makeEmployee(context, "New", salary: 5, company: office.acme)
            newcomer.manager = office.ada
            try context.undo()
            #expect(!newcomer.isInserted && newcomer.managedObjectContext == nil)
            #expect(context.insertedObjects.isEmpty && context.registeredObject(for: newcomer.objectID) == nil)
            #expect(!office.acme.employees.contains(newcomer) && !office.ada.reports.contains(newcomer))
            try context.redo()
            #expect(newcomer.isInserted && newcomer.managedObjectContext === context)
            #expect(newcomer.name == "New" && newcomer.salary == 5 && newcomer.manager === office.ada)
            #expect(office.acme.employees.contains(newcomer) && office.ada.reports.contains(newcomer))
            try context.save()
            #expect(try stored(office.coordinator)["New"] == "5 Ada Acme []")
        }
    }

    @Test func undoingADeletionRestoresWhatItsCascadeAndNullifyRulesChanged() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let (context, ada) = (office.context, office.ada)
            context.delete(ada)
            // The rules ran: the badges cascaded, the other ends were nullified.
            #expect(office.first.isDeleted && office.second.isDeleted)
            #expect(office.report.manager == nil && !office.boss.reports.contains(ada) && !office.acme.employees.contains(ada))
            try context.undo()
            #expect(!ada.isDeleted && !office.first.isDeleted && !office.second.isDeleted && context.deletedObjects.isEmpty)
            #expect(ada.badges == [office.first, office.second] && office.first.holder === ada && office.second.holder === ada)
            #expect(office.report.manager === ada && ada.reports == [office.report])
            #expect(ada.manager === office.boss && office.boss.reports == [ada])
            #expect(ada.company === office.acme && office.acme.employees.contains(ada))
            try context.redo()
            #expect(ada.isDeleted && office.first.isDeleted && office.report.manager == nil)
            try context.save()
            #expect(try stored(office.coordinator) == ["Boss": "3 - Acme []", "Rep": "1 - Acme []"])
        }
    }

    @Test func undoingAnEditRestoresTheValueAndRedoReappliesIt() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            office.ada.name = "Ada L."
            office.ada.salary = 20
            try office.context.undo()
            #expect(office.ada.name == "Ada" && office.ada.salary == 2)
            try office.context.redo()
            #expect(office.ada.name == "Ada L." && office.ada.salary == 20)
        }
    }

    // MARK: Relationships

    @Test func undoingAToOneChangeRestoresBothEnds() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            let globex = Company(context: context)
            globex.name = "Globex"
            context.processPendingChanges()
            office.ada.company = globex
            office.report.manager = office.boss
            #expect(!office.acme.employees.contains(office.ada) && office.boss.reports.count == 2)
            try context.undo()
            #expect(office.ada.company === office.acme && office.acme.employees.contains(office.ada) && globex.employees.isEmpty)
            #expect(office.report.manager === office.ada && office.boss.reports == [office.ada] && office.ada.reports == [office.report])
            try context.undo()
            #expect(globex.managedObjectContext == nil)
        }
    }

    @Test func undoingToManyChangesRestoresMembersAndOrder() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            let third = Badge(context: context)
            third.title = "third"
            context.processPendingChanges()
            // Ordered: a new member in front, the order reversed.
            office.ada.badges = [third, office.second, office.first]
            context.processPendingChanges()
            // Unordered, through the other end's set: the boss takes the report.
            office.boss.reports.insert(office.report)
            #expect(office.ada.reports.isEmpty)
            try context.undo()
            #expect(office.boss.reports == [office.ada] && office.ada.reports == [office.report] && office.report.manager === office.ada)
            try context.undo()
            #expect(office.ada.badges == [office.first, office.second] && third.holder == nil)
            try context.redo()
            #expect(office.ada.badges == [third, office.second, office.first] && third.holder === office.ada)
            try context.redo()
            #expect(office.report.manager === office.boss)
        }
    }

    // MARK: Groups and events

    @Test func changesOfOneEventAreOneUndoStep() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            office.ada.salary = 10
            office.ada.name = "Ada L."
            context.processPendingChanges()  // the end of the event
            office.ada.salary = 11
            try context.undo()
            #expect(office.ada.salary == 10 && office.ada.name == "Ada L.")
            try context.undo()
            #expect(office.ada.salary == 2 && office.ada.name == "Ada")
            #expect(office.manager.canUndo == false)
        }
    }

    @Test func anExplicitGroupMakesSeveralEventsOneUndoStep() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            office.manager.beginUndoGrouping()
            office.ada.salary = 10
            context.processPendingChanges()
            office.ada.name = "Ada L."
            context.delete(office.report)
            try context.save()  // a save ends an event, not the group
            office.manager.endUndoGrouping()
            office.manager.setActionName("Reorganize")
            #expect(office.manager.undoActionName == "Reorganize")
            try context.undo()
            #expect(office.ada.salary == 2 && office.ada.name == "Ada" && office.ada.reports == [office.report])
            #expect(office.report.managedObjectContext === context && !office.report.isDeleted)
            #expect(office.manager.redoActionName == "Reorganize" && !office.manager.canUndo)
        }
    }

    @Test func aNewChangeAfterAnUndoEmptiesTheRedoStack() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            office.ada.salary = 10
            try office.context.undo()
            #expect(office.manager.canRedo)
            office.ada.salary = 12
            #expect(!office.manager.canRedo, "canRedo takes the context's pending change first")
            try office.context.redo()
            #expect(office.ada.salary == 12)
        }
    }

    @Test func changesMadeWhileRegistrationIsDisabledAreNotUndone() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            office.ada.salary = 10
            office.manager.disableUndoRegistration()
            office.ada.name = "Ada L."
            office.manager.enableUndoRegistration()
            try office.context.undo()
            #expect(office.ada.salary == 2 && office.ada.name == "Ada L.")
        }
    }

    // MARK: Saves, rollback, reset

    @Test func undoAfterASaveMakesTheContextDirtyAgainAndSavesBack() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            office.ada.salary = 10
            let newcomer = makeEmployee(context, "New", salary: 5, company: office.acme)
            try context.save()
            #expect(!context.hasChanges && office.manager.canUndo)
            try context.undo()
            #expect(context.hasChanges && office.ada.salary == 2)
            #expect(newcomer.isDeleted, "a saved insertion undone is a deletion")
            try context.save()
            #expect(try stored(office.coordinator)["Ada"] == "2 Boss Acme [\"first\", \"second\"]")
            #expect(try stored(office.coordinator)["New"] == nil)
            try context.redo()
            try context.save()
            #expect(try stored(office.coordinator)["New"] == "5 - Acme []")
            #expect(try stored(office.coordinator)["Ada"] == "10 Boss Acme [\"first\", \"second\"]")
        }
    }

    @Test func undoingASavedDeletionInsertsTheObjectsAgainWithTheirRelationships() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let (context, ada) = (office.context, office.ada)
            context.delete(ada)
            try context.save()
            #expect(ada.managedObjectContext == nil && office.first.managedObjectContext == nil)
            try context.undo()
            #expect(ada.isInserted && office.first.isInserted && office.second.isInserted)
            #expect(ada.name == "Ada" && ada.salary == 2 && ada.badges == [office.first, office.second])
            #expect(office.report.manager === ada && office.boss.reports == [ada] && office.acme.employees.contains(ada))
            try context.save()
            let rows = try stored(office.coordinator)
            #expect(rows["Ada"] == "2 Boss Acme [\"first\", \"second\"]" && rows["Rep"] == "1 Ada Acme []")
        }
    }

    @Test func undoingASavedDeletionRestoresTheReferencesItsSaveDropped() throws {
        // Under a no-action rule the other end keeps pointing at the deleted object until the save,
        // whose store drops the reference: the undo puts it back with the object.
        let (coordinator, context) = try makeRuleStack()
        try context.performAndWait {
            let owner = RuleOwner(context: context)
            owner.name = "owner"
            let item = RuleItem(context: context)
            item.name = "item"
            item.noActionOwner = owner
            try context.save()
            context.undoManager = ContextUndoManager()
            context.delete(owner)
            #expect(item.noActionOwner === owner, "no action: the reference stays until the save")
            try context.save()
            #expect(item.noActionOwner == nil)
            try context.undo()
            #expect(item.noActionOwner === owner && owner.noActionItems == [item] && owner.isInserted)
            try context.save()
            let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try fresh.performAndWait {
                let stored = try #require(try fresh.fetch(FetchRequest<RuleItem>()).first)
                #expect(stored.noActionOwner?.name == "owner")
            }
        }
    }

    @Test func relationshipsRecordedBeforeASaveFindTheSavedObjectsPermanentIDs() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            let newcomer = makeEmployee(context, "New", salary: 5)
            context.processPendingChanges()
            newcomer.manager = office.ada
            context.processPendingChanges()
            newcomer.manager = office.boss  // recorded with the newcomer's temporary ID in Ada's reports
            try context.save()
            #expect(!newcomer.objectID.isTemporaryID)
            try context.undo()
            #expect(office.ada.reports.contains(newcomer) && newcomer.manager === office.ada && !office.boss.reports.contains(newcomer))
            try context.save()
            #expect(try stored(office.coordinator)["New"] == "5 Ada - []")
        }
    }

    @Test func whatUndoKeepsOfSavesIsLetGoOnceNoActionIsLeft() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            _ = makeEmployee(context, "New", salary: 5)
            context.delete(office.report)
            try context.save()
            #expect(!context.permanentIDsForUndo.isEmpty && !context.savedDeletionsForUndo.isEmpty)
            office.manager.removeAllActions()
            context.processPendingChanges()
            #expect(context.permanentIDsForUndo.isEmpty && context.savedDeletionsForUndo.isEmpty)
        }
    }

    @Test func rollbackAndResetEmptyTheUndoStack() throws {
        let office = try makeOffice()
        try office.context.performAndWait {
            let context = office.context
            office.ada.salary = 10
            context.processPendingChanges()
            office.ada.salary = 11
            context.rollback()
            #expect(!office.manager.canUndo && office.ada.salary == 2)
            office.ada.salary = 12
            try context.undo()
            #expect(office.manager.canRedo)
            context.reset()
            #expect(!office.manager.canUndo && !office.manager.canRedo && context.pendingUndo.isEmpty)
        }
    }

    // MARK: What observers and objects are told

    @Test func objectsDidChangeReportsWhatAnUndoChanged() throws {
        let office = try makeOffice()
        let box = EventBox()
        let observer = NotificationCenter.default.addObserver(forName: .managedObjectContextObjectsDidChange, object: office.context, queue: nil) {
            if let changes = $0.userInfo?[ContextChanges.userInfoKey] as? ContextChanges { box.append(changes) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try office.context.performAndWait {
            let context = office.context
            let newcomer = makeEmployee(context, "New", salary: 5)
            context.delete(office.report)
            context.processPendingChanges()
            office.ada.salary = 10
            context.processPendingChanges()
            _ = box.take()
            try context.undo()
            let edit = box.take()
            #expect(edit.count == 1 && edit.first?.updated == [office.ada.objectID])
            try context.undo()
            let structural = try #require(box.take().last)
            #expect(structural.deleted == [newcomer.objectID], "an undone insertion is reported deleted")
            #expect(structural.inserted == [office.report.objectID], "an undone deletion is reported inserted")
        }
    }

    @Test func objectsAreToldOfUndoneInsertionsDeletionsAndUpdates() throws {
        let (_, context) = try makeNotesStack()
        try context.performAndWait {
            let saved = Note(context: context)
            saved.title = "Saved"
            let doomed = Note(context: context)
            doomed.title = "Doomed"
            try context.save()
            context.undoManager = ContextUndoManager()
            saved.events = []
            doomed.events = []
            let fresh = Note(context: context)
            fresh.title = "Fresh"
            saved.revision = 2
            context.delete(doomed)
            fresh.events = []
            try context.undo()
            #expect(fresh.events == ["awake(undoInsertion)"])
            #expect(doomed.events.last == "awake(undoDeletion)")
            #expect(saved.events == ["awake(undoUpdate)"])
            try context.redo()
            #expect(fresh.events.last == "awake(undoDeletion)" && doomed.events.last == "awake(undoInsertion)")
        }
    }

    @Test func whatAwakeFromFetchSetsIsNotUndoable() throws {
        let (coordinator, context) = try makeNotesStack()
        try context.performAndWait {
            let note = Note(context: context)
            note.title = "Plan"
            try context.save()
        }
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try other.performAndWait {
            other.undoManager = ContextUndoManager()
            let note = try #require(try other.fetch(FetchRequest<Note>()).first)
            #expect(note.summary == "about Plan")  // set by awakeFromFetch as the fault filled
            #expect(other.undoManager?.canUndo == false)
        }
    }
}
