import Foundation
import Granary
import PropertyBased
import Testing
@testable import GranarySync

/// Each row of §12.3's table: a merge stopped after its pending record, after its store save, or after
/// finalize, then recovered from the store's history on the next open.
@Suite struct MergeRecoveryTests {
    let lem = ObjectKey("Author", "lem"), solaris = ObjectKey("Book", "s")

    struct Stop: Error {}

    func events() -> [Event] {
        var a = LedgerTestDevice(store: orderedStores[0])
        return [a.record([.insert(lem, ["name": .string("Lem")]),
                          .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": lem])])]
    }

    /// Reopens the event store, as a new process would.
    func reopen(_ stack: MergeTestStack) throws {
        try stack.eventStore.close()
        stack.eventStore = try EventStore.open(at: stack.directory.appendingPathComponent("events.granary"))
    }

    func recover(_ stack: MergeTestStack) throws -> MergeRecovery.Outcome {
        try MergeRecovery.recover(stack.eventStore, coordinator: stack.ensembleCoordinator, store: stack.ensembleStore)
    }

    @Test func theCapturedTokenSkipsTheMergesOwnSaveOnlyWhenNothingElseWasSaved() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        let history = HistoryReader(coordinator: stack.ensembleCoordinator, store: stack.ensembleStore)
        func captureUpToNow() throws {
            try stack.eventStore.commit(EventStoreStep(historyToken: try HistoryReader.encode(try history.currentToken())))
        }
        // An app save first, so that the store has a token to capture up to.
        let app = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.appCoordinator)
        func appSave(_ name: String) {
            app.performAndWait {
                let author = try? EntityDescription.insertNewObject(forEntityName: "Author", into: app)
                try? author?.setValue(name, forKey: "name")
                try? app.save()
            }
        }
        appSave("Tarkovsky")
        try captureUpToNow()

        // A local save lands between the pending record and the merge's save: the token stays, so that
        // the next capture reads that save.
        var device = LedgerTestDevice(store: orderedStores[1])
        let first = device.record([.insert(lem, ["name": .string("Lem")])])
        var integrator = stack.integrator()
        integrator.afterPendingRecord = { appSave("Strugatsky") }
        let before = try stack.eventStore.state().historyToken
        _ = try stack.merge([first], with: integrator)
        #expect(try stack.eventStore.state().historyToken == before)

        // Captured up to the merge: its save is the only transaction since, and the token moves past it.
        try captureUpToNow()
        let second = device.record([.update(lem, ["name": .string("Stanisław Lem")])])
        _ = try stack.merge([second])
        #expect(try history.decode(stack.eventStore.state().historyToken) == history.currentToken())
    }

    @Test func aPendingRecordWhoseSaveNeverCommittedIsDiscarded() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var integrator = stack.integrator()
        integrator.afterPendingRecord = { () throws(SyncError) in throw .storeBusy(attempts: 0) }
        #expect(throws: SyncError.self) { try stack.merge(events(), with: integrator) }
        try reopen(stack)
        let pending = try #require(try stack.eventStore.pendingMerge())
        #expect(pending.integrated == events().map(\.id) && !pending.mapped.isEmpty)
        #expect(try stack.storeGraph().objects.isEmpty)

        #expect(try recover(stack) == .discarded(mergeID: pending.mergeID))
        #expect(try stack.eventStore.pendingMerge() == nil)
        #expect(try stack.eventStore.state().pendingMergeID == nil)
        #expect(try stack.eventStore.events(withStatus: .downloaded).map(\.id) == events().map(\.id))
        #expect(try stack.eventStore.loadLedger() == Ledger())
        #expect(try stack.eventStore.localKey(for: lem) == nil)
        #expect(try recover(stack) == .nothingPending)

        // The next merge integrates the events; the keys the discarded merge reserved are not reused.
        let outcome = try stack.integrator().integrate(try stack.eventStore.events(withStatus: .downloaded))
        #expect(outcome.integrated == events().map(\.id))
        try expectStoreMatchesLedger(stack)
        for mapping in pending.mapped {
            let now = try #require(try stack.eventStore.localKey(for: mapping.key))
            #expect(now != mapping.localKey, "\(mapping.key) got the key the discarded merge had reserved")
        }
    }

    @Test func aCommittedSaveIsFinalizedFromTheRecord() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var integrator = stack.integrator()
        integrator.afterStoreSave = { () throws(SyncError) in throw .storeBusy(attempts: 0) }
        #expect(throws: SyncError.self) { try stack.merge(events(), with: integrator) }
        try reopen(stack)
        let pending = try #require(try stack.eventStore.pendingMerge())
        #expect(try stack.storeGraph().objects.count == 2, "the store save committed")
        #expect(try stack.eventStore.loadLedger() == Ledger(), "the ledger waits for finalize")

        #expect(try recover(stack) == .finalized(mergeID: pending.mergeID))
        #expect(try stack.eventStore.state().pendingMergeID == nil)
        #expect(try stack.eventStore.events(withStatus: .integrated).map(\.id) == events().map(\.id))
        #expect(try stack.eventStore.events(withStatus: .localUnexported) == pending.localEvents)
        try expectStoreMatchesLedger(stack)
        #expect(try recover(stack) == .nothingPending)
    }

    @Test func aFinalizedMergeLeavesNothingToRecover() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        try stack.merge(events())
        try reopen(stack)
        #expect(try recover(stack) == .nothingPending)
        try expectStoreMatchesLedger(stack)
    }

    /// History purged past the pending record's token: nobody can tell whether the save committed, so the
    /// record is discarded and the outcome says a rescan is due.
    @Test func historyPurgedPastTheTokenDiscardsAndReportsIt() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var integrator = stack.integrator()
        integrator.afterStoreSave = { () throws(SyncError) in throw .storeBusy(attempts: 0) }
        #expect(throws: SyncError.self) { try stack.merge(events(), with: integrator) }
        // An app save after the merge's, then a purge of everything before it.
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: stack.appCoordinator)
        try context.performAndWait {
            let tag = ManagedObject(entity: stack.model.entity(named: "Tag")!, insertInto: context)
            try tag.setValue("local", forKey: "name")
            try context.save()
        }
        let last = stack.appCoordinator.currentPersistentHistoryToken(fromStores: [stack.appStore])
        _ = try stack.appCoordinator.execute(.deleteHistory(before: last))
        let pending = try #require(try stack.eventStore.pendingMerge())
        #expect(try recover(stack) == .discardedHistoryLost(mergeID: pending.mergeID))
        #expect(try stack.eventStore.state().pendingMergeID == nil)
        #expect(try stack.eventStore.events(withStatus: .downloaded).map(\.id) == events().map(\.id))
    }

    /// Random histories merged in chunks, each merge stopped at random after its pending record or after
    /// its store save, then recovered as a restart would: the store ends as the reference model's graph
    /// and equal to the ledger's projection, whichever steps were cut.
    @Test func mergesStoppedAtRandomStepsRecoverToTheSameGraph() async throws {
        let model = try libraryModel()
        await propertyCheck(count: 15, input: Gen.int(in: 0...Int.max)) { seed in
            do { try Self.checkStops(seed: seed, model: model) } catch { Issue.record("seed \(seed): \(error)") }
        }
    }

    static func checkStops(seed: Int, model: ManagedObjectModel) throws {
        var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
        simulation.run(steps: 30)
        var g = SplitMix(seed: seed ^ 0x123)
        let order = LedgerConvergencePropertyTests.randomCausalOrder(simulation.events, &g)
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        var start = 0
        while start < order.count {
            let end = min(order.count, start + Int.random(in: 1...max(1, order.count / 3), using: &g))
            for event in order[start..<end] { try stack.eventStore.importEvent(event) }
            start = end
            var integrator = stack.integrator()
            switch Int.random(in: 0..<3, using: &g) {
            case 0: integrator.afterPendingRecord = { () throws(SyncError) in throw .storeBusy(attempts: 0) }
            case 1: integrator.afterStoreSave = { () throws(SyncError) in throw .storeBusy(attempts: 0) }
            default: break
            }
            do { _ = try integrator.integrate(try stack.eventStore.events(withStatus: .downloaded)) } catch SyncError.storeBusy {
                try stack.eventStore.close()
                stack.eventStore = try EventStore.open(at: stack.directory.appendingPathComponent("events.granary"))
                _ = try MergeRecovery.recover(stack.eventStore, coordinator: stack.ensembleCoordinator, store: stack.ensembleStore)
            }
            try expectStoreMatchesLedger(stack, "seed \(seed), after event \(end)")
        }
        // Whatever a discarded merge left waiting integrates now.
        _ = try stack.integrator().integrate(try stack.eventStore.events(withStatus: .downloaded))
        #expect(try stack.eventStore.events(withStatus: .downloaded).isEmpty)
        let reference = ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: simulation.events)
        #expect(normalized(try stack.storeGraph()) == normalized(reference), "seed \(seed)")
        try expectStoreMatchesLedger(stack, "seed \(seed), at the end")
    }
}

