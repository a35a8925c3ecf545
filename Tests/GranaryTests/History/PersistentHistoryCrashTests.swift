import Foundation
import Testing
@testable import Granary

/// A process saving into a store that tracks history, killed with SIGKILL at random moments: after
/// reopening, replaying the history gives exactly the rows the store holds (every committed save has its
/// transaction, and no transaction lacks its rows), and every save the child reported is there.
@Suite(.serialized) struct PersistentHistoryCrashTests {
    @Test(arguments: [1, 2, 3]) func killedWhileSavingTheHistoryMatchesTheRows(_ seed: Int) throws {
        let url = scratchURL("historycrash\(seed)")
        defer { try? FileManager.default.removeItem(at: url) }
        var reported = 0
        for round in 0..<2 {
            let outcome = try ChildProcess.run("granary-crashtest", ["history", url.path, String(seed * 10 + round)],
                                               killAfter: 0.4 + Double(seed) * 0.3)
            #expect(outcome.reason == .uncaughtSignal, "the child stopped by itself: \(outcome.out) \(outcome.err)")
            reported += outcome.out.split(separator: "\n").filter { $0.hasPrefix("saved") }.count
            try check(url, reported: reported)
        }
        #expect(reported > 0, "the child never saved")
    }

    private func check(_ url: URL, reported: Int) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try historyCrashModelForTests())
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: .init(persistentHistoryTracking: true))
        defer { try? coordinator.remove(store) }
        let transactions = try coordinator.execute(.fetchHistory(after: nil as PersistentHistoryToken?)).transactions
        // Each acknowledged save was durable (full durability) before the child printed it.
        #expect(transactions.count >= reported)
        // Never purged: the numbers run from 1 without a gap.
        #expect(transactions.map(\.token.transactionNumber) == (0..<transactions.count).map { Int64($0) + 1 })
        var live: [ManagedObjectID: Int64] = [:]
        for transaction in transactions {
            #expect(transaction.author == "crashtest")
            for change in transaction.changes {
                switch change.changeType {
                case .insert: live[change.changedObjectID] = -1
                case .update: #expect(live[change.changedObjectID] != nil, "an update of an object never inserted")
                case .delete:
                    #expect(live.removeValue(forKey: change.changedObjectID) != nil, "a delete of an object never inserted")
                    #expect(change.tombstone?["serial"] is Int64, "a delete without its serial in the tombstone")
                }
            }
        }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let rows = try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Item")).map(\.objectID)
        }
        #expect(Set(rows) == Set(live.keys), "the history replayed does not give the rows the store holds")
    }
}

/// The crash child's model (Sources/granary-crashtest/HistoryChild.swift), which the test cannot import.
func historyCrashModelForTests() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Item") {
            Attribute("serial", .integer64, preservesValueInHistoryOnDeletion: true)
            Attribute("label", .string)
        }
    }
}
