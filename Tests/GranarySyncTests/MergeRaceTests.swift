import Foundation
import Granary
import Testing
@testable import GranarySync

/// A local save that commits while a merge runs is never lost and fails nothing but a retried merge
/// (M31): the merge's save fails optimistic locking, the merge captures the local save and tries again,
/// at most three times.
@Suite struct MergeRaceTests {
    let solaris = ObjectKey("Book", "s")

    /// Saves `title` for Solaris from the app's own coordinator, as the app would while a merge runs.
    static func appSave(title: String, of key: ObjectKey, in stack: MergeTestStack) {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.appCoordinator)
        context.performAndWait {
            do {
                let book = try object(key, in: context, of: stack)
                try book.setValue(title, forKey: "title")
                try context.save()
            } catch {
                Issue.record("the app's save failed: \(error)")
            }
        }
    }

    /// Records `changes` as a local event with its ledger changes, as the capture of a local save does.
    static func capture(_ changes: [ObjectChange], in stack: MergeTestStack) throws(SyncError) {
        do {
            var ledger = try stack.eventStore.loadLedger()
            let event = Event(meta: try stack.eventStore.nextLocalMeta(), changes: changes)
            LedgerIntegrator.apply(event, to: &ledger)
            try stack.eventStore.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: changes.compactMap { ledger.object($0.key) }))
        } catch {
            throw SyncError(error)
        }
    }

    @Test func m31ALocalSaveRacingTheMergeIsCapturedAndKept() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(solaris, ["title": .string("Solaris"), "year": .integer(1961)])])])

        var integrator = stack.integrator()
        var raced = false
        integrator.hooks.shouldSave = { _, _ in
            if !raced {
                raced = true
                Self.appSave(title: "Local", of: self.solaris, in: stack)
            }
            return true
        }
        integrator.beforeRetry = { () throws(SyncError) in
            try Self.capture([.update(self.solaris, ["title": .string("Local")])], in: stack)
        }
        let remote = a.record([.update(solaris, ["title": .string("Solaris (2nd ed.)"), "year": .integer(1962)])])
        let outcome = try stack.merge([remote], with: integrator)
        #expect(outcome.attempts == 2)
        #expect(outcome.integrated == [remote.id])
        let book = try #require(try stack.storeGraph().objects[solaris])
        // The local save is later than the remote edit (M2), so its title wins; the year it did not touch merges.
        #expect(book.attributes["title"] == .some(.string("Local")))
        #expect(book.attributes["year"] == .some(.integer(1962)))
        try expectStoreMatchesLedger(stack)
        #expect(try stack.eventStore.state().pendingMergeID == nil)
    }

    @Test func m31LocalSavesRacingEveryAttemptEndInStoreBusyWithNothingLost() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(solaris, ["title": .string("Solaris")])])])

        var integrator = stack.integrator()
        var saves = 0
        integrator.hooks.shouldSave = { _, _ in
            saves += 1
            Self.appSave(title: "Local \(saves)", of: self.solaris, in: stack)
            return true
        }
        let remote = a.record([.update(solaris, ["title": .string("Solaris (2nd ed.)")])])
        #expect {
            try stack.merge([remote], with: integrator)
        } throws: { error in
            guard case let SyncError.storeBusy(attempts) = error else { return false }
            return attempts == 3 && (error as? SyncError)?.isRetryable == true
        }
        #expect(saves == 3)
        #expect(try stack.storeGraph().objects[solaris]?.attributes["title"] == .some(.string("Local 3")))
        #expect(try stack.eventStore.status(of: remote.id) == .downloaded)
        #expect(try stack.eventStore.state().pendingMergeID == nil)
    }
}
