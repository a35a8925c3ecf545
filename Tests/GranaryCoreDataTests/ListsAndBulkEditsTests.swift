// Core Data code of a list screen and its bulk edits, as apps write it: an `NSFetchedResultsController`
// with a delegate class, an `NSBatchUpdateRequest` that marks many objects at once, `NSPredicate`s
// evaluated on objects in hand, and the context settings such code sets first.
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData` and `@NSManaged` → `@Managed`:
// - the table-view calls inside the delegate methods (UIKit is not on Linux); the methods themselves,
//   their signatures and the controller's set-up are unchanged;
// - a delegate that compares `controller === self.controller` compares the typed controller with its
//   untyped view: compare `fetchRequest`s, or keep one delegate per controller;
// - `NSBatchUpdateRequest.propertiesToUpdate` values are constants: `NSExpression`s go;
// - `context.undo()` and `context.redo()` throw (a context without an undo manager): add `try`.
import GranaryCoreData
import Testing

/// A Core Data app's list delegate, as written for UIKit, with the table-view calls recorded instead.
final class QuakeListDelegate: NSObject, NSFetchedResultsControllerDelegate {
    var log: [String] = []

    func controllerWillChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        log.append("begin")
    }

    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange anObject: Any, at indexPath: IndexPath?,
                    for type: NSFetchedResultsChangeType, newIndexPath: IndexPath?) {
        let code = (anObject as? Quake)?.code ?? "?"
        switch type {
        case .insert: log.append("insert \(code) at \(newIndexPath!.item)")
        case .delete: log.append("delete \(code) from \(indexPath!.item)")
        case .move: log.append("move \(code) \(indexPath!.item)→\(newIndexPath!.item)")
        case .update: log.append("update \(code) at \(indexPath!.item)")
        @unknown default: fatalError()
        }
    }

    func controller(_ controller: NSFetchedResultsController<NSFetchRequestResult>, didChange sectionInfo: NSFetchedResultsSectionInfo,
                    atSectionIndex sectionIndex: Int, for type: NSFetchedResultsChangeType) {
        log.append("section \(type == .insert ? "insert" : "delete") \(sectionInfo.name) at \(sectionIndex)")
    }

    func controllerDidChangeContent(_ controller: NSFetchedResultsController<NSFetchRequestResult>) {
        log.append("end \(controller.fetchedObjects?.count ?? -1)")
    }
}

@Suite struct ListsAndBulkEditsTests {
    func loadedContext(_ count: Int = 5) throws -> NSManagedObjectContext {
        registerEarthquakesModel()
        let container = NSPersistentContainer(name: "Earthquakes")
        container.persistentStoreDescriptions.first!.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in precondition(error == nil) }
        let context = container.viewContext
        try context.performAndWait {
            for values in feedRecords(1...count) {
                let quake = Quake(context: context)
                for (key, value) in values { try quake.setValue(value, forKey: key) }
            }
            try context.save()
        }
        return context
    }

    // Apple: NSFetchedResultsControllerDelegate — controllerWillChangeContent(_:), then
    // controller(_:didChange:at:for:newIndexPath:) per changed object, controllerDidChangeContent(_:).
    @Test func aCoreDataDelegateClassHearsInsertsDeletesAndUpdates() throws {
        let context = try loadedContext(3)
        let delegate = QuakeListDelegate()
        let log = try context.performAndWait {
            let request: NSFetchRequest<Quake> = NSFetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                        sectionNameKeyPath: nil, cacheName: nil)
            #expect(controller.fetchedObjects == nil)
            controller.delegate = delegate
            try controller.performFetch()
            #expect(controller.fetchedObjects?.map(\.code) == ["ci1", "ci2", "ci3"])
            #expect(controller.sections?.first?.numberOfObjects == 3)
            let fresh = Quake(context: context)
            fresh.code = "ci0"
            fresh.place = "here"
            fresh.time = Date(timeIntervalSince1970: 0)
            let second = controller.object(at: IndexPath(item: 1, section: 0))
            context.delete(second)
            controller.fetchedObjects?.last?.place = "moved"
            try context.save()
            #expect(controller.indexPath(forObject: fresh) == IndexPath(item: 0, section: 0))
            return delegate.log
        }
        #expect(log == ["begin", "delete ci2 from 1", "insert ci0 at 0", "update ci3 at 2", "end 3"])
    }

    // Apple: NSFetchedResultsControllerDelegate controller(_:didChange:atSectionIndex:for:) — a section
    // appears when its first object does.
    @Test func sectionChangesReachTheDelegateWithSectionInfo() throws {
        let context = try loadedContext(2)
        let delegate = QuakeListDelegate()
        let log = try context.performAndWait {
            let request = NSFetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [NSSortDescriptor(key: "place", ascending: true)]
            let controller = NSFetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                        sectionNameKeyPath: "place", cacheName: "Quakes")
            controller.delegate = delegate
            try controller.performFetch()
            #expect(controller.sections?.map(\.name) == ["1 km N of Ridgecrest", "2 km N of Ridgecrest"])
            let quake = Quake(context: context)
            quake.code = "x"
            quake.place = "Anchorage"
            quake.time = Date()
            context.processPendingChanges()
            return delegate.log
        }
        #expect(log == ["begin", "section insert Anchorage at 2", "insert x at 0", "end 3"])
    }

    // Apple: NSBatchUpdateRequest — propertiesToUpdate set on the objects the predicate matches, and
    // resultType .updatedObjectsCountResultType / .updatedObjectIDsResultType / .statusOnlyResultType.
    @Test func aBatchUpdateReportsCountIDsOrStatus() throws {
        let context = try loadedContext(10)
        try context.performAndWait {
            let request = NSBatchUpdateRequest(entityName: "Quake")
            request.predicate = NSPredicate(format: "magnitude >= %@", NSNumber(value: 4))
            request.propertiesToUpdate = ["place": "reviewed"]
            request.resultType = .updatedObjectsCountResultType
            let counted = try context.execute(request) as? NSBatchUpdateResult
            #expect(counted?.result as? Int == 3)

            request.resultType = .updatedObjectIDsResultType
            let ids = try #require(try context.execute(request) as? NSBatchUpdateResult).result as? [NSManagedObjectID]
            #expect(ids?.count == 3)
            NSManagedObjectContext.mergeChanges(fromRemoteContextSave: [NSUpdatedObjectsKey: ids ?? []], into: [context])

            request.resultType = .statusOnlyResultType
            request.predicate = NSPredicate(format: "code == %@", "ci1")
            request.propertiesToUpdate = ["magnitude": NSNumber(value: 9.5)]
            #expect((try context.execute(request) as? NSBatchUpdateResult)?.result as? Bool == true)

            let fetch = NSFetchRequest<Quake>(entityName: "Quake")
            fetch.predicate = NSPredicate(format: "place == %@", "reviewed")
            #expect(try context.count(for: fetch) == 3)
            fetch.predicate = NSPredicate(format: "magnitude > 9")
            #expect(try context.fetch(fetch).map(\.code) == ["ci1"])
        }
    }

    // Apple: NSBatchUpdateRequest — an entity the model lacks is an error, not an empty update.
    @Test func aBatchUpdateOfAnUnknownEntityThrows() throws {
        let context = try loadedContext(1)
        context.performAndWait {
            let request = NSBatchUpdateRequest(entityName: "Earthquake")
            request.propertiesToUpdate = ["place": "x"]
            #expect(throws: ContextError.self) { try context.execute(request) }
        }
    }

    // Apple: NSPredicate.evaluate(with:) — "Returns a Boolean value that indicates whether a given object
    // matches the conditions specified by the predicate"; NSCompoundPredicate combines predicates.
    @Test func predicatesEvaluateOnObjectsInHandUnsavedChangesIncluded() throws {
        let context = try loadedContext(3)
        try context.performAndWait {
            let request = NSFetchRequest<Quake>(entityName: "Quake")
            request.sortDescriptors = [NSSortDescriptor(key: "code", ascending: true)]
            let quakes = try context.fetch(request)
            let strong = NSPredicate(format: "magnitude >= %@", NSNumber(value: 2))
            #expect(quakes.map { strong.evaluate(with: $0) } == [false, true, true])
            quakes[0].magnitude = 7
            #expect(strong.evaluate(with: quakes[0]))
            let both = NSCompoundPredicate(andPredicateWithSubpredicates: [strong, NSPredicate(format: "code BEGINSWITH %@", "ci2")])
            #expect(quakes.map { both.evaluate(with: $0) } == [false, true, false])
            let either = NSCompoundPredicate(orPredicateWithSubpredicates: [both, NSPredicate(format: "code == 'ci3'")])
            #expect(quakes.map { either.evaluate(with: $0) } == [false, true, true])
            #expect(quakes.map { NSCompoundPredicate(notPredicateWithSubpredicate: either).evaluate(with: $0) } == [true, false, false])
            // Where Core Data raises: an unknown key, or an object that is not a managed object.
            #expect(!NSPredicate(format: "nosuchkey == 1").evaluate(with: quakes[0]))
            #expect(!strong.evaluate(with: "a string"))
        }
    }

    // Apple: NSManagedObjectContext.undoManager — "Enable undo support for a context by setting this
    // property to an instance of UndoManager"; undo() reverses "the latest uncommitted changes".
    @Test func anUndoManagerOnTheViewContextUndoesAnEdit() throws {
        let context = try loadedContext(1)
        try context.performAndWait {
            context.undoManager = UndoManager()
            let quake = try #require(try context.fetch(NSFetchRequest<Quake>(entityName: "Quake")).first)
            let magnitude = quake.magnitude
            quake.magnitude = magnitude + 1
            context.undoManager?.setActionName("Edit Magnitude")
            #expect(context.undoManager?.undoActionName == "Edit Magnitude")
            try context.undo()
            #expect(quake.magnitude == magnitude && context.undoManager?.canRedo == true)
        }
    }

    // The settings Core Data code sets on a new context compile; the fault and memory options are
    // Granary's own (ContextOptionsTests checks what they do).
    @Test func routineContextSettingsAreAccepted() throws {
        let context = try loadedContext(1)
        context.undoManager = nil
        context.shouldDeleteInaccessibleFaults = false
        context.stalenessInterval = -1
        context.retainsRegisteredObjects = true
        #expect(context.undoManager == nil)
        #expect(!context.shouldDeleteInaccessibleFaults)
        #expect(context.stalenessInterval == -1)
        #expect(context.retainsRegisteredObjects)
    }
}
