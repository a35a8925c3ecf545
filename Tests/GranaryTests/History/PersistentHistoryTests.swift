import Foundation
import Testing
@testable import Granary
@testable import GranaryStorage

/// Behaviour of persistent history, from Apple's documentation of NSPersistentHistoryChangeRequest,
/// NSPersistentHistoryTransaction, NSPersistentHistoryChange, NSPersistentHistoryToken and
/// NSPersistentHistoryTrackingKey.
@Suite struct PersistentHistoryTests {
    // NSPersistentHistoryChange: "changeType … the type of change: insert, update or delete";
    // "changedObjectID … the object ID of the changed managed object".
    @Test func insertUpdateAndDeleteAreRecordedWithTheirObjects() throws {
        let (coordinator, context) = try HistorySupport.stack()
        let (bookID, authorID) = try context.performAndWait {
            let author = try HistorySupport.insert("Author", ["name": "Le Guin"], into: context)
            let book = try HistorySupport.insert("Book", ["title": "The Dispossessed", "author": author], into: context)
            try context.save()
            try book.setValue(387 as Int64, forKey: "pages")
            try context.save()
            context.delete(book)
            try context.save()
            return (book.objectID, author.objectID)
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.count == 3)
        let inserted = transactions[0].changes.map { ($0.changedObjectID, $0.changeType) }
        #expect(Set(inserted.map(\.0)) == [bookID, authorID])
        #expect(inserted.allSatisfy { $0.1 == .insert })
        #expect(transactions[1].changes.map(\.changedObjectID) == [bookID])
        #expect(transactions[1].changes.map(\.changeType) == [.update])
        // The delete nullifies the author's side of the relationship: an update of the author.
        let last = Dictionary(uniqueKeysWithValues: transactions[2].changes.map { ($0.changedObjectID, $0) })
        #expect(last[bookID]?.changeType == .delete)
        #expect(last[authorID]?.changeType == .update)
        #expect(last[authorID]?.updatedProperties == ["books"])
        #expect(transactions.map(\.token.transactionNumber) == [1, 2, 3])
    }

    // NSPersistentHistoryChange.updatedProperties: "the updated properties" — only those the save changed.
    @Test func updatedPropertiesNameOnlyTheChangedProperties() throws {
        let (coordinator, context) = try HistorySupport.stack()
        try context.performAndWait {
            let book = try HistorySupport.insert("Book", ["title": "Kindred", "isbn": "1", "pages": 264 as Int64], into: context)
            try context.save()
            try book.setValue("Kindred (2nd ed.)", forKey: "title")
            try book.setValue(288 as Int64, forKey: "pages")
            try context.save()
            // Setting a value to what it is changes nothing stored: nothing to record.
            try book.setValue(288 as Int64, forKey: "pages")
            try context.save()
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.count == 2)
        #expect(transactions[0].changes.first?.updatedProperties == nil, "inserts carry no updated properties")
        #expect(transactions[1].changes.first?.updatedProperties == ["title", "pages"])
    }

    // NSPersistentHistoryChange.tombstone: "the preserved attributes of a deleted object" (those marked
    // preservesValueInHistoryOnDeletion).
    @Test func aDeleteKeepsTheMarkedAttributesInItsTombstone() throws {
        let (coordinator, context) = try HistorySupport.stack()
        try context.performAndWait {
            let book = try HistorySupport.insert("Book", ["title": "Beloved", "pages": 324 as Int64], into: context)
            let author = try HistorySupport.insert("Author", ["name": "Morrison"], into: context)
            try context.save()
            context.delete(book)
            context.delete(author)
            try context.save()
        }
        let deletes = try HistorySupport.history(coordinator)[1].changes
        let book = try #require(deletes.first { $0.changedObjectID.entityName == "Book" })
        let tombstone = try #require(book.tombstone)
        #expect(tombstone["title"] as? String == "Beloved")
        #expect(tombstone["isbn"] == nil, "a nil value is left out")
        #expect(tombstone["pages"] == nil, "pages is not marked")
        #expect(deletes.first { $0.changedObjectID.entityName == "Author" }?.tombstone == nil, "Author keeps nothing")
        #expect(book.updatedProperties == nil)
    }

    // NSPersistentHistoryTransaction: "author … the author for the transaction", "contextName … the name
    // of the context that made the transaction"; NSManagedObjectContext.transactionAuthor.
    @Test func authorAndContextNameAreRecordedAndFilterTheFetch() throws {
        let (coordinator, importer) = try HistorySupport.stack()
        importer.name = "import queue"
        importer.transactionAuthor = "importer"
        let editor = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        editor.transactionAuthor = "editor"
        try importer.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "A"], into: importer)
            try importer.save()
        }
        try editor.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "B"], into: editor)
            try editor.save()
        }
        let all = try HistorySupport.history(coordinator)
        #expect(all.map(\.author) == ["importer", "editor"])
        #expect(all.map(\.contextName) == ["import queue", nil])
        var request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        request.author = "editor"
        let edits = try editor.performAndWait { try editor.execute(request).transactions }
        #expect(edits.map(\.token) == [all[1].token])
    }

    // NSPersistentHistoryChangeRequest.fetchHistory(after:) with a token, a date and a transaction.
    @Test func fetchesAfterATokenADateOrATransaction() throws {
        let (coordinator, context) = try HistorySupport.stack()
        var middle = Date()
        for i in 0..<4 {
            if i == 2 {
                Thread.sleep(forTimeInterval: 0.01)
                middle = Date()
                Thread.sleep(forTimeInterval: 0.01)
            }
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "\(i)"], into: context)
                try context.save()
            }
        }
        let all = try HistorySupport.history(coordinator)
        #expect(all.count == 4)
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: all[1].token)).map(\.token) == [all[2].token, all[3].token])
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: all[2])).map(\.token) == [all[3].token])
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: middle)).map(\.token) == [all[2].token, all[3].token])
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: all[3].token)).isEmpty)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == all[3].token)
        var limited = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        limited.fetchLimit = 1
        #expect(try HistorySupport.history(coordinator, limited).map(\.token) == [all[0].token])
    }

    // NSPersistentHistoryChangeRequest.deleteHistory(before:): "deletes the persistent history before a
    // token" — the token's own transaction stays, and the counter never goes back.
    @Test func deleteBeforeATokenOrDateKeepsTheRestAndTheCounter() throws {
        let (coordinator, context) = try HistorySupport.stack()
        for i in 0..<5 {
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "\(i)"], into: context)
                try context.save()
            }
        }
        let all = try HistorySupport.history(coordinator)
        let deleted = try coordinator.execute(.deleteHistory(before: all[2].token)).deletedTransactionCount
        #expect(deleted == 2)
        #expect(try HistorySupport.history(coordinator).map(\.token) == Array(all[2...].map(\.token)))
        #expect(try coordinator.execute(.deleteHistory(before: Date.distantFuture)).deletedTransactionCount == 3)
        #expect(try HistorySupport.history(coordinator).isEmpty)
        try context.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "after"], into: context)
            try context.save()
        }
        #expect(try HistorySupport.history(coordinator).map(\.token.transactionNumber) == [6])
    }

    // NSPersistentHistoryTokenExpiredError: fetching after a token whose following transactions were
    // purged is an error, not a silent gap.
    @Test func aTokenPurgedPastIsExpired() throws {
        let (coordinator, context) = try HistorySupport.stack()
        for i in 0..<4 {
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "\(i)"], into: context)
                try context.save()
            }
        }
        let all = try HistorySupport.history(coordinator)
        _ = try coordinator.execute(.deleteHistory(before: all[2].token))
        // A reader at #2 saw everything purged: it reads on from #3.
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: all[1].token)).map(\.token) == [all[2].token, all[3].token])
        // A reader at #1 missed #2.
        #expect(throws: PersistentHistoryError.self) { try coordinator.execute(.fetchHistory(after: all[0].token)) }
        // A reader at the newest token has missed nothing, even once everything is purged.
        _ = try coordinator.execute(.deleteHistory(before: nil as PersistentHistoryToken?))
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: all[3].token)).isEmpty)
        #expect(throws: PersistentHistoryError.self) { try coordinator.execute(.fetchHistory(after: all[2].token)) }
    }

    // NSPersistentHistoryToken: "NSSecureCoding" — here Codable, through JSON and back.
    @Test func aTokenSurvivesEncodingAndComparesByItsCounter() throws {
        let store = UUID()
        let token = PersistentHistoryToken(storeIdentifier: store, transactionNumber: 42)
        let data = try JSONEncoder().encode(token)
        #expect(try JSONDecoder().decode(PersistentHistoryToken.self, from: data) == token)
        #expect(token < PersistentHistoryToken(storeIdentifier: store, transactionNumber: 43))
        #expect(!(token < token))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PersistentHistoryToken.self, from: Data("{\"storeIdentifier\":1}".utf8)) }
    }

    // NSPersistentHistoryToken: tokens of one store increase; the counter is the store's, so it goes on
    // after reopening.
    @Test func aReopenedStoreGoesOnCountingFromItsLastToken() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        var tokens: [PersistentHistoryToken] = []
        for _ in 0..<2 {
            let (coordinator, context) = try HistorySupport.stack(.durable, at: url)
            for _ in 0..<3 {
                try context.performAndWait {
                    _ = try HistorySupport.insert("Book", ["title": "t"], into: context)
                    try context.save()
                }
            }
            tokens += try HistorySupport.history(coordinator, .fetchHistory(after: tokens.last)).map(\.token)
            // Purged down to the last one: the counter must not fall back to the largest key left.
            _ = try coordinator.execute(.deleteHistory(before: tokens.last))
            for store in coordinator.persistentStores { try store.engine.checkpoint() }
            try coordinator.remove(coordinator.persistentStores[0])
        }
        #expect(tokens.map(\.transactionNumber) == [1, 2, 3, 4, 5, 6])
    }

    // NSPersistentHistoryTrackingKey: history is recorded only for stores that ask for it.
    @Test func aStoreWithoutTrackingRecordsNothing() throws {
        let (coordinator, context) = try HistorySupport.stack(tracking: false)
        try context.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "untracked"], into: context)
            try context.save()
        }
        let store = coordinator.persistentStores[0]
        #expect(!store.engine.read().tableNames.contains(HistoryTable.name), "no history table is even created")
        #expect(coordinator.currentPersistentHistoryToken(fromStores: nil) == nil)
        #expect(try HistorySupport.history(coordinator).isEmpty)
        var request = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        request.affectedStores = [store]
        #expect(throws: PersistentHistoryError.self) { try coordinator.execute(request) }
    }

    // Batch requests write to the store directly; Core Data records them in the history too.
    @Test func batchInsertUpdateAndDeleteAreRecorded() throws {
        let (coordinator, context) = try HistorySupport.stack()
        context.transactionAuthor = "batch"
        let inserted = try context.performAndWait {
            try context.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "x", "pages": 1 as Int64], ["title": "y"]],
                                                   resultType: .objectIDs))
        }
        try context.performAndWait {
            _ = try context.execute(BatchUpdateRequest(entityName: "Book", propertiesToUpdate: ["pages": 9 as Int64]))
            _ = try context.execute(BatchDeleteRequest(entityName: "Book"))
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.count == 3)
        #expect(transactions.allSatisfy { $0.author == "batch" })
        let ids = Set(inserted.objectIDs)
        #expect(ids.count == 2)
        #expect(Set(transactions[0].changes.map(\.changedObjectID)) == ids)
        #expect(transactions[0].changes.allSatisfy { $0.changeType == .insert })
        // "y" had 0 pages, "x" 1: both change to 9.
        #expect(transactions[1].changes.map(\.updatedProperties) == [["pages"], ["pages"]])
        #expect(transactions[2].changes.allSatisfy { $0.changeType == .delete })
        #expect(Set(transactions[2].changes.compactMap { $0.tombstone?["title"] as? String }) == ["x", "y"])
    }

    // NSPersistentHistoryTransaction.objectIDNotification(): "a notification that can be consumed by a
    // context to merge changes".
    @Test func aTransactionMergesIntoAnotherContext() throws {
        let (coordinator, writer) = try HistorySupport.stack()
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        reader.automaticallyMergesChangesFromParent = false
        let id = try writer.performAndWait {
            let book = try HistorySupport.insert("Book", ["title": "old"], into: writer)
            try writer.save()
            return book.objectID
        }
        let before = try reader.performAndWait { try reader.existingObject(with: id).value(forKey: "title") as? String }
        #expect(before == "old")
        let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
        try writer.performAndWait {
            try writer.existingObject(with: id).setValue("new", forKey: "title")
            try writer.save()
        }
        let transactions = try HistorySupport.history(coordinator, .fetchHistory(after: token))
        #expect(transactions.count == 1)
        let changes = transactions[0].objectIDNotification()
        #expect(changes.updated == [id])
        let after = try reader.performAndWait {
            reader.mergeChanges(fromContextDidSave: changes)
            return try reader.existingObject(with: id).value(forKey: "title") as? String
        }
        #expect(after == "new")
    }

    // Two coordinators on one store (`addPersistentStore(sharing:)`): the saves of both are recorded in
    // the one history.
    @Test func twoCoordinatorsSharingAStoreAreBothRecorded() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (first, firstContext) = try HistorySupport.stack(.durable, at: url)
        let second = PersistentStoreCoordinator(managedObjectModel: first.managedObjectModel)
        try second.addPersistentStore(sharing: first.persistentStores[0])
        let secondContext = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        firstContext.transactionAuthor = "first"
        secondContext.transactionAuthor = "second"
        for context in [firstContext, secondContext, firstContext] {
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "t"], into: context)
                try context.save()
            }
        }
        #expect(try HistorySupport.history(first).map(\.author) == ["first", "second", "first"])
        #expect(try HistorySupport.history(second).map(\.token) == HistorySupport.history(first).map(\.token))
    }

    @Test func aTokenOfAnotherStoreIsATypedError() throws {
        let (coordinator, _) = try HistorySupport.stack()
        let stranger = PersistentHistoryToken(storeIdentifier: UUID(), transactionNumber: 1)
        #expect(throws: PersistentHistoryError.self) { try coordinator.execute(.fetchHistory(after: stranger)) }
        #expect(throws: PersistentHistoryError.self) { try coordinator.execute(.deleteHistory(before: stranger)) }
    }

    // The history table is the store's own: not an entity, carried over by migration, and read back
    // through a model that adds an attribute.
    @Test func theHistoryTableSurvivesAMigration() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            let (coordinator, context) = try HistorySupport.stack(.durable, at: url)
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "before migrating"], into: context)
                try context.save()
            }
            try coordinator.remove(coordinator.persistentStores[0])
        }
        let v2 = try HistorySupport.model(version: 2)
        let (coordinator, context) = try HistorySupport.stack(.durable, at: url, model: v2)
        #expect(coordinator.persistentStores[0].migrationReport != nil)
        try context.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "after", "subtitle": "s"], into: context)
            try context.save()
        }
        #expect(try HistorySupport.history(coordinator).map(\.token.transactionNumber) == [1, 2])
    }
}

/// `granary info` and `granary dump` list entity tables; the history table only with `--internal`.
@Suite struct PersistentHistoryCommandLineTests {
    @Test func theHistoryTableIsListedOnlyWhenAskedFor() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            let (coordinator, context) = try HistorySupport.stack(.durable, at: url)
            try context.performAndWait {
                _ = try HistorySupport.insert("Book", ["title": "listed"], into: context)
                try context.save()
            }
            try coordinator.remove(coordinator.persistentStores[0])
        }
        let info = try ChildProcess.run("granary", ["info", url.path])
        #expect(info.status == 0)
        #expect(info.out.contains("table Book: 1 rows"))
        #expect(!info.out.contains(HistoryTable.name))
        #expect(info.out.contains("1 internal table(s) not listed"))
        let all = try ChildProcess.run("granary", ["info", url.path, "--internal"])
        #expect(all.out.contains("table \(HistoryTable.name): 1 rows"))
        let dump = try ChildProcess.run("granary", ["dump", url.path])
        #expect(dump.status == 0 && dump.out.contains("listed") && !dump.out.contains(HistoryTable.name))
        let dumpAll = try ChildProcess.run("granary", ["dump", url.path, "--internal"])
        #expect(dumpAll.out.contains(HistoryTable.name))
    }
}

/// Xcode's "Preserve After Deletion" checkbox (`preserveAfterDeletion="YES"`) is Core Data's
/// `preservesValueInHistoryOnDeletion`.
@Suite struct PersistentHistoryXcodeModelTests {
    @Test func preserveAfterDeletionIsRead() throws {
        let contents = XcodeFixtures.model(entity: """
                    <attribute name="kept" optional="YES" attributeType="String" preserveAfterDeletion="YES"/>
                    <attribute name="dropped" optional="YES" attributeType="String"/>
            """)
        let package = try XcodeFixtures.writePackage(contents, named: "Preserve", in: XcodeFixtures.scratchDirectory())
        let model = try ManagedObjectModel(contentsOf: package)
        let thing = try #require(model.entity(named: "Thing"))
        #expect(thing.attributesByName["kept"]?.preservesValueInHistoryOnDeletion == true)
        #expect(thing.attributesByName["dropped"]?.preservesValueInHistoryOnDeletion == false)
    }
}

/// Saves that race or fail: every committed save has exactly one transaction, numbered without gaps,
/// and a save that fails leaves no record.
@Suite struct PersistentHistoryConcurrencyTests {
    @Test func concurrentSavesGetOneTransactionEachWithoutGaps() async throws {
        let (coordinator, _) = try HistorySupport.stack()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                    context.transactionAuthor = "worker \(worker)"
                    for i in 0..<25 {
                        try context.performAndWait {
                            _ = try HistorySupport.insert("Book", ["title": "\(worker).\(i)"], into: context)
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.map(\.token.transactionNumber) == (1...100).map { Int64($0) })
        for worker in 0..<4 { #expect(transactions.filter { $0.author == "worker \(worker)" }.count == 25) }
        #expect(Set(transactions.flatMap { $0.changes.map(\.changedObjectID) }).count == 100)
    }

    @Test func aSaveThatFailsRecordsNothing() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Tag") {
                Attribute("code", .integer64)
                Unique("code")
            }
        }
        let (coordinator, context) = try HistorySupport.stack(model: model)
        try context.performAndWait {
            _ = try HistorySupport.insert("Tag", ["code": 1 as Int64], into: context)
            try context.save()
            // A duplicate of a stored tag with the error merge policy: the save fails inside its write, so
            // nothing of it (rows or record) is committed.
            context.mergePolicy = .error
            let duplicate = try HistorySupport.insert("Tag", ["code": 1 as Int64], into: context)
            #expect(throws: ContextError.self) { try context.save() }
            context.delete(duplicate)
            _ = try HistorySupport.insert("Tag", ["code": 2 as Int64], into: context)
            try context.save()
        }
        let transactions = try HistorySupport.history(coordinator)
        #expect(transactions.map(\.token.transactionNumber) == [1, 2], "the failed save took no number")
        #expect(transactions.allSatisfy { $0.changes.count == 1 && $0.changes[0].changeType == .insert })
    }
}

/// One-sided relationships keep a hidden inverse at their destination: changing the relationship records
/// no update of the destination, whose visible properties did not change.
@Suite struct PersistentHistoryOneSidedTests {
    @Test func aHiddenInverseIsNotAnUpdatedProperty() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Tag") { Attribute("name", .string) }
            Entity("Note") {
                Attribute("title", .string)
                Relationship("tag", to: "Tag")
            }
        }
        let (coordinator, context) = try HistorySupport.stack(model: model)
        let (noteID, tagID) = try context.performAndWait {
            let tag = try HistorySupport.insert("Tag", ["name": "red"], into: context)
            let note = try HistorySupport.insert("Note", ["title": "n"], into: context)
            try context.save()
            try note.setValue(tag, forKey: "tag")
            try context.save()
            return (note.objectID, tag.objectID)
        }
        let linked = try HistorySupport.history(coordinator)[1].changes
        #expect(linked.map(\.changedObjectID) == [noteID])
        #expect(linked.first?.updatedProperties == ["tag"])
        #expect(!linked.contains { $0.changedObjectID == tagID })
    }
}

/// A coordinator with two stores: each records the part of a save it holds, tokens name their store,
/// and requests cover the stores that track history.
@Suite struct PersistentHistoryTwoStoreTests {
    @Test func eachStoreRecordsItsPartOfASave() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Book") { Attribute("title", .string) }
            Entity("Note") { Attribute("text", .string) }
            Configuration("Books", entities: "Book")
            Configuration("Notes", entities: "Note")
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let books = try coordinator.addPersistentStore(type: .inMemory, configuration: "Books", options: .init(persistentHistoryTracking: true))
        let notes = try coordinator.addPersistentStore(type: .inMemory, configuration: "Notes", options: .init(persistentHistoryTracking: true))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            _ = try HistorySupport.insert("Book", ["title": "b"], into: context)
            _ = try HistorySupport.insert("Note", ["text": "n"], into: context)
            try context.save()
            _ = try HistorySupport.insert("Note", ["text": "m"], into: context)
            try context.save()
        }
        let all = try HistorySupport.history(coordinator)
        #expect(all.count == 3)
        #expect(all.filter { $0.storeID == books.identifier }.map(\.token.transactionNumber) == [1])
        #expect(all.filter { $0.storeID == notes.identifier }.map(\.token.transactionNumber) == [1, 2])
        #expect(all.allSatisfy { transaction in transaction.changes.allSatisfy { $0.changedObjectID.persistentStoreIdentifier == transaction.storeID } })
        // A token reads on in its own store only.
        let notesFirst = try #require(all.first { $0.storeID == notes.identifier })
        #expect(try HistorySupport.history(coordinator, .fetchHistory(after: notesFirst.token)).map(\.storeID) == [notes.identifier])
        #expect(coordinator.currentPersistentHistoryToken(fromStores: [notes])?.transactionNumber == 2)
        #expect(coordinator.currentPersistentHistoryToken(fromStores: [books])?.transactionNumber == 1)
        var onlyBooks = PersistentHistoryChangeRequest.fetchHistory(after: nil as PersistentHistoryToken?)
        onlyBooks.affectedStores = [books]
        #expect(try coordinator.execute(onlyBooks).transactions.count == 1)
    }
}
