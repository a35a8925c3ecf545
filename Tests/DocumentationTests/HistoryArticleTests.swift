import Foundation
import Granary
import Testing

/// The code of the article "Persistent history".
@Suite struct HistoryArticleTests {
    @Test func anImporterSavesAndAReaderCatchesUpFromItsToken() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        // snippet: history-enable
        let model = try ManagedObjectModel(version: "1") {
            Entity("Note") {
                Attribute("uuid", .uuid, preservesValueInHistoryOnDeletion: true)
                Attribute("text", .string)
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url, options: .init(persistentHistoryTracking: true))
        // end-snippet

        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let printed = Printed()
        func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
        // snippet: history-save
        var lastToken = coordinator.currentPersistentHistoryToken(fromStores: nil)   // kept on disk between runs: it is Codable

        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        importer.transactionAuthor = "importer"
        let noteID = try importer.performAndWait {
            let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: importer)
            try note.setValue(UUID(), forKey: "uuid")
            try note.setValue("first draft", forKey: "text")
            try importer.save()                              // the note and its history record: one commit
            try note.setValue("second draft", forKey: "text")
            try importer.save()
            importer.delete(note)
            try importer.save()
            return note.objectID
        }
        // end-snippet

        // snippet: history-read
        var request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
        request.author = "importer"
        let transactions = try view.performAndWait { try view.execute(request).transactions }
        for transaction in transactions {
            for change in transaction.changes {
                switch change.changeType {
                case .insert: print("inserted", change.changedObjectID)
                case .update: print("changed", change.updatedProperties!.sorted())      // ["text"]
                case .delete: print("deleted note", change.tombstone!["uuid"]!)          // the UUID it had
                }
            }
            view.performAndWait { view.mergeChanges(fromContextDidSave: transaction.objectIDNotification()) }
            lastToken = transaction.token
        }
        _ = try coordinator.execute(.deleteHistory(before: lastToken))                   // what every reader has seen
        // end-snippet

        #expect(transactions.map { $0.changes.map(\.changeType) } == [[.insert], [.update], [.delete]])
        #expect(transactions.allSatisfy { $0.changes.first?.changedObjectID == noteID })
        #expect(transactions[1].changes[0].updatedProperties == ["text"])
        #expect(transactions[2].changes[0].tombstone?["uuid"] is UUID)
        #expect(lastToken == transactions.last?.token)
        #expect(printed.lines.count == 3 && printed.lines[1] == "changed [\"text\"]" && printed.lines[2].hasPrefix("deleted note "))
        #expect(try coordinator.execute(.fetchHistory(after: nil as PersistentHistoryToken?)).transactions.map(\.token) == [lastToken])
    }
}
