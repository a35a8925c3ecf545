import Foundation
import Granary
import GranaryStack
import Testing

@Suite struct ImportingContainerTests {
    func makeContainer(_ directory: URL = scratchDirectory(), readOnlyView: Bool = false, errors: ErrorLog? = nil) throws -> ImportingContainer {
        try ImportingContainer(name: "Importing", model: stackModel, isViewContextReadOnly: readOnlyView,
                               options: options(directory, errors: errors)).start()
    }

    /// Imports notes through an importer context.
    @discardableResult
    func importNotes(_ titles: [String], into container: ImportingContainer) async throws -> [ManagedObjectID] {
        let importer = container.importerContext()
        return try await importer.perform {
            let notes = titles.map { title -> Note in
                let note = Note(context: importer)
                note.title = title
                return note
            }
            try importer.save()
            return notes.map(\.objectID)
        }
    }

    @Test func contextsHaveTheirDocumentedCoordinatorsQueuesAndPolicies() throws {
        let container = try makeContainer()
        #expect(container.viewContext.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(container.viewContext.mergePolicy == .mergeByPropertyStoreTrump && !container.viewContext.isReadOnly)
        #expect(container.viewContext.concurrencyType == .mainQueue)
        let importer = container.importerContext()
        #expect(importer.persistentStoreCoordinator === container.writerCoordinator && importer.parent == nil)
        #expect(importer.concurrencyType == .privateQueue && importer.mergePolicy == .mergeByPropertyObjectTrump)
        #expect(container.newBackgroundContext().persistentStoreCoordinator === container.writerCoordinator)
        let temporary = container.temporaryContext()
        #expect(temporary.persistentStoreCoordinator === container.persistentStoreCoordinator)
        #expect(temporary.mergePolicy == .rollback && temporary.isReadOnly)
        let editor = container.editorContext()
        #expect(editor.parent === container.viewContext && editor.mergePolicy == .overwrite)
        #expect(container.writerCoordinator !== container.persistentStoreCoordinator)
        #expect(container.writerCoordinator.persistentStores.map(\.identifier) == container.persistentStoreCoordinator.persistentStores.map(\.identifier))
    }

    @Test func importsSaveStraightToTheStoreAndOnlyLoadedObjectsAreRefreshed() async throws {
        let directory = scratchDirectory()
        let container = try makeContainer(directory)
        let view = container.viewContext
        let ids = try await importNotes(["a", "b", "c"], into: container)
        // Visible through the main coordinator at once.
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a", "b", "c"])
        let holder = try await load([ids[0]], into: view)

        let importer = container.importerContext()
        let newIDs: [ManagedObjectID] = try await importer.perform {
            for (id, title) in zip(ids, ["A", "B", "C"]) { try #require(try importer.existingObject(with: id) as? Note).title = title }
            let d = Note(context: importer)
            d.title = "d"
            try importer.save()
            return [d.objectID]
        }
        try await container.flush()
        // The loaded object is refreshed; nothing else was loaded into the view context.
        #expect(try await loadedTitle(ids[0], in: view) == "A")
        let registered = try await view.perform { Set(view.registeredObjects.map(\.objectID)) }
        #expect(registered == [ids[0]])
        #expect(!registered.contains(newIDs[0]))
        _ = holder

        try container.detach(persistentStores: container.persistentStores)
        #expect(try titlesOnDisk(at: defaultStoreURL("Importing", in: directory)) == ["A", "B", "C", "d"])
    }

    @Test func theSmartMergeCanBeTurnedOff() async throws {
        let container = try makeContainer()
        #expect(container.shouldMergeIncomingSavedObjects)
        let ids = try await importNotes(["a"], into: container)
        let holder = try await load(ids, into: container.viewContext)
        container.shouldMergeIncomingSavedObjects = false
        let importer = container.importerContext()
        try await importer.perform {
            try #require(try importer.existingObject(with: ids[0]) as? Note).title = "b"
            try importer.save()
        }
        try await container.flush()
        #expect(try await loadedTitle(ids[0], in: container.viewContext) == "a")
        container.shouldMergeIncomingSavedObjects = true
        try await importer.perform {
            try #require(try importer.existingObject(with: ids[0]) as? Note).title = "c"
            try importer.save()
        }
        try await container.flush()
        #expect(try await loadedTitle(ids[0], in: container.viewContext) == "c")
        _ = holder
    }

    @Test func onlySavesFromTheWriterCoordinatorTriggerTheMerge() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        let holder = try await load(ids, into: container.viewContext)
        // Another context on the main coordinator saves: the view context is not told.
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: container.persistentStoreCoordinator)
        try await other.perform {
            try #require(try other.existingObject(with: ids[0]) as? Note).title = "main"
            try other.save()
        }
        try await container.flush()
        #expect(try await loadedTitle(ids[0], in: container.viewContext) == "a")
        _ = holder
    }

    @Test func theViewContextResolvesConflictsWithImportsStoreTrump() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        let view = container.viewContext
        let importer = container.importerContext()
        let outcome: String = try await view.perform {
            let note = try #require(try view.existingObject(with: ids[0]) as? Note)
            note.title = "view"
            note.rank = 3
            // The import lands while the view context holds stale values: the conflict is seen across
            // coordinators through the row versions.
            try importer.performAndWait {
                try #require(try importer.existingObject(with: ids[0]) as? Note).title = "import"
                try importer.save()
            }
            try view.save()
            return "\(note.title) \(note.rank)"
        }
        #expect(outcome == "import 3")
        #expect(try storedTitles(container.writerCoordinator) == ["import"])
    }

    @Test func anImporterEditOfARowTheViewChangedIsAConflictItWinsObjectTrump() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        let importer = container.importerContext()
        let title: String = try await importer.perform {
            let note = try #require(try importer.existingObject(with: ids[0]) as? Note)
            note.title = "import"
            let view = container.viewContext
            try view.performAndWait {
                try #require(try view.existingObject(with: ids[0]) as? Note).rank = 9
                try view.save()
            }
            try importer.save()
            return "\(note.title) \(note.rank)"
        }
        #expect(title == "import 9")
    }

    @Test func aReadOnlyViewContextNeverWritesAndYieldsToTheStore() async throws {
        let container = try makeContainer(readOnlyView: true)
        #expect(container.isViewContextReadOnly)
        let view = container.viewContext
        #expect(view.isReadOnly && view.mergePolicy == .rollback)
        let ids = try await importNotes(["a"], into: container)
        let failed: Bool = try await view.perform {
            try #require(try view.existingObject(with: ids[0]) as? Note).title = "edited in view"
            Note(context: view).title = "inserted in view"
            do {
                try view.save()
                return false
            } catch ContextError.readOnlyContext {
                return true
            }
        }
        #expect(failed)
        // An editor's save lands in the view context and stays there.
        let editor = container.editorContext()
        try await editor.perform {
            Note(context: editor).title = "from editor"
            try editor.save()
        }
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])
        // Imports still refresh it: its unsaved edits stay on top, as for any merge.
        let importer = container.importerContext()
        try await importer.perform {
            try #require(try importer.existingObject(with: ids[0]) as? Note).rank = 4
            try importer.save()
        }
        try await container.flush()
        let state = try await view.perform { () -> String in
            let note = try #require(view.registeredObject(for: ids[0]) as? Note)
            return "\(note.title) \(note.rank)"
        }
        #expect(state == "edited in view 4")
    }

    @Test func nothingInATemporaryContextIsEverStored() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        let temporary = container.temporaryContext()
        let outcome: String = try await temporary.perform {
            // It reads the store like any context on the main coordinator.
            let note = try #require(try temporary.existingObject(with: ids[0]) as? Note)
            note.title = "scratch"
            Note(context: temporary).title = "scratch too"
            do {
                try temporary.save()
                return "saved"
            } catch let error as ContextError {
                return error.description
            }
        }
        #expect(outcome.contains("Importing.temporary") && outcome.contains("read-only"))
        try await container.flush()
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])
    }

    @Test func anEditorsSavePushesThroughTheViewContextToTheStore() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        let view = container.viewContext
        let holder = try await load(ids, into: view)
        let editor = container.editorContext()
        let newID: ManagedObjectID = try await editor.perform {
            try #require(try editor.existingObject(with: ids[0]) as? Note).title = "edited"
            let note = Note(context: editor)
            note.title = "new"
            try editor.save()
            return note.objectID
        }
        // Pushed into the view context at once…
        #expect(try await loadedTitle(ids[0], in: view) == "edited")
        // …and saved by it right after.
        try await container.flush()
        #expect(try storedTitles(container.writerCoordinator) == ["edited", "new"])
        #expect(try await view.perform { !view.hasChanges })
        // The editor can go on editing what it inserted.
        try await editor.perform {
            try #require(try editor.existingObject(with: newID) as? Note).title = "newer"
            try editor.save()
        }
        try await container.flush()
        #expect(try storedTitles(container.writerCoordinator) == ["edited", "newer"])
        _ = holder
    }

    @Test func discardingAnEditorDiscardsEverything() async throws {
        let container = try makeContainer()
        let ids = try await importNotes(["a"], into: container)
        do {
            let editor = container.editorContext()
            try await editor.perform {
                try #require(try editor.existingObject(with: ids[0]) as? Note).title = "never"
                Note(context: editor).title = "never either"
            }
            // Dropped without saving.
        }
        let editor = container.editorContext()
        try await editor.perform {
            try #require(try editor.existingObject(with: ids[0]) as? Note).title = "rolled back"
            editor.rollback()
            try editor.save()
        }
        try await container.flush()
        #expect(try await container.viewContext.perform { !container.viewContext.hasChanges })
        #expect(try storedTitles(container.persistentStoreCoordinator) == ["a"])
    }

    @Test func bothCoordinatorsShareOneStoreAndItsFilesCloseWithTheLastDetach() async throws {
        let directory = scratchDirectory()
        let container = ImportingContainer(name: "Importing", model: stackModel, options: options(directory))
        let global = try container.attachPersistentStore(for: StoreConfiguration(name: "Global"))
        try container.start()
        let user = try container.attachPersistentStore(at: directory.appendingPathComponent("me"), for: StoreConfiguration(name: "User"))
        #expect(container.writerCoordinator.persistentStores.count == 2)
        try await importNotes(["a"], into: container)
        try container.detach(persistentStore: user)
        #expect(container.writerCoordinator.persistentStores.map(\.identifier) == [global.identifier])
        #expect(try titlesOnDisk(at: directory.appendingPathComponent("me/User.granary")) == ["a"])
        // An importer of a detached store's entity gets the stack's error.
        await #expect(throws: StackError.self) { try await importNotes(["b"], into: container) }
    }

    @Test func beforeStartNothingIsReachable() async throws {
        let container = ImportingContainer(name: "Importing", model: stackModel, options: options(scratchDirectory()))
        do {
            try await importNotes(["a"], into: container)
            Issue.record("imported before start")
        } catch let error as StackError {
            guard case .notStarted("Importing", "Note") = error else { throw error }
        }
    }
}
