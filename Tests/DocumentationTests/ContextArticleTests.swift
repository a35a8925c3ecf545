import Foundation
import Granary
import Testing

/// The code of the article "Concurrency and contexts".
@Suite struct ContextArticleTests {
    @Test func objectIDsCrossContextsAndChildrenSaveIntoTheirParent() async throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        // snippet: contexts-perform
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let id = try await background.perform {
            let author = Author(context: background)
            author.name = "Ursula K. Le Guin"
            try background.save()
            return author.objectID                    // IDs cross queues and contexts; objects do not
        }
        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let name = try await view.perform { (try view.existingObject(with: id) as? Author)?.name }
        // end-snippet
        #expect(name == "Ursula K. Le Guin")
        #expect(!id.isTemporaryID)

        // snippet: contexts-child
        let editor = ManagedObjectContext(concurrencyType: .privateQueue, parent: view)
        try editor.performAndWait {
            let author = try editor.existingObject(with: id) as! Author
            author.name = "Ursula Kroeber Le Guin"
            try editor.save()                          // into `view`, not into the store
        }
        try view.performAndWait { try view.save() }    // now into the store
        // end-snippet
        let stored = try await background.perform {
            background.refreshAllObjects()
            return (try background.existingObject(with: id) as? Author)?.name
        }
        #expect(stored == "Ursula Kroeber Le Guin")
    }

    @Test func aStaleSaveConflictsUnlessAPolicyMerges() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let stale = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let request = FetchRequest<Book>(predicate: #Predicate { $0.title == "Solaris" })
        try stale.performAndWait { try stale.fetch(request).first?.year = 1962 }
        try other.performAndWait {
            try other.fetch(request).first?.title = "Solaris (1961)"
            try other.save()
        }
        // snippet: contexts-conflict
        do {
            try stale.performAndWait { try stale.save() }
        } catch ContextError.mergeConflicts(let conflicts) {
            for conflict in conflicts { print(conflict) }   // "<ID> is at version 2 in the store but 1 in the context"
        }
        // end-snippet
        var reported: [MergeConflict] = []
        do {
            try stale.performAndWait { try stale.save() }
        } catch ContextError.mergeConflicts(let conflicts) {
            reported = conflicts
        }
        #expect(reported.count == 1)
        #expect(reported.first?.storeVersion == reported.first.map { $0.expectedVersion + 1 })

        // snippet: contexts-merge-policy
        stale.performAndWait {
            stale.mergePolicy = .mergeByPropertyStoreTrump   // the store's changed properties win, the rest is kept
            stale.automaticallyMergesChangesFromParent = true // other contexts' saves merge in as they happen
        }
        // end-snippet
        try stale.performAndWait { try stale.save() }
        let fresh = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let book = try fresh.performAndWait { try fresh.fetch(FetchRequest<Book>(predicate: #Predicate { $0.year == 1962 })).map(\.title) }
        #expect(book == ["Solaris (1961)"])
    }

    @Test func constrainedInsertsAreUpsertsUnderObjectTrump() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let setup = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let lemID = try #require(try setup.performAndWait { try setup.fetch(FetchRequest<Author>()).first?.objectID })
        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        // snippet: contexts-constrained-upsert
        try importer.performAndWait {
            importer.mergePolicy = .mergeByPropertyObjectTrump
            let again = Author(context: importer)
            again.name = "Stanisław Lem"                 // already stored: `name` is unique
            let book = Book(context: importer)
            book.title = "The Cyberiad"
            book.year = 1965
            book.author = again
            try importer.save()                          // merged into the stored author; `again` leaves the context
            print(book.author?.objectID == lemID)        // true
        }
        // end-snippet
        try importer.performAndWait {
            let authors = try importer.fetch(FetchRequest<Author>())
            #expect(authors.map(\.objectID) == [lemID] && authors[0].books.map(\.title).sorted() == ["Fiasco", "Solaris", "The Cyberiad", "The Cyberiad"])
        }
        // snippet: contexts-batch-upsert
        let feed: [(name: String, born: Int)] = [("Stanisław Lem", 1921), ("Ursula K. Le Guin", 1929)]
        var next = 0
        let result = try coordinator.execute(BatchInsertRequest(entityName: "Author", dictionaryHandler: { author in
            guard next < feed.count else { return true }   // true: no more objects
            author["name"] = feed[next].name
            next += 1
            return false
        }))
        print(result.count)                                // 2: one author updated, one inserted
        // end-snippet
        #expect(result.count == 2)
        #expect(try importer.performAndWait { try importer.count(for: FetchRequest<Author>()) } == 2)
    }

    @Test func aDidSaveNotificationMergesIntoAnotherContext() async throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let held = Held()  // the view holds the book, as a screen would; a merge refreshes it in place
        try await view.perform { held.book = try view.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == "Solaris" })).first }
        // snippet: contexts-notifications
        let observer = NotificationCenter.default.addObserver(
            forName: .managedObjectContextDidSave, object: background, queue: nil
        ) { notification in
            guard let changes = notification.userInfo?[ContextChanges.userInfoKey] as? ContextChanges else { return }
            view.schedule { view.mergeChanges(fromContextDidSave: changes) }   // on the view context's queue
        }
        // end-snippet
        defer { NotificationCenter.default.removeObserver(observer) }
        try await background.perform {
            try background.fetch(FetchRequest<Book>(predicate: #Predicate { $0.title == "Solaris" })).first?.year = 1962
            try background.save()
        }
        // The notification was posted inside save(), so the merge is already queued before this block.
        let year = try await view.perform { held.book?.year }
        #expect(year == 1962)
    }
}

/// An object kept alive across `perform` calls, used only on its context's queue.
final class Held: @unchecked Sendable {
    var book: Book?
}
