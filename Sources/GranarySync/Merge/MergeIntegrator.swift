import Foundation
import Granary

/// Integration (§10): folds ready events (and a leech's seed) into the ledger, fuses uniqueness
/// collisions (M22), projects what changed into a merge context, lets the app repair it (M24), and
/// saves it with the two-phase record that makes a crash at any point recoverable (§12.3).
///
/// Nothing reaches the event store before the pending record, and nothing reaches the app's store
/// before the save: a merge the app cancels, or that stays invalid, leaves both as they were, its
/// events downloaded and waiting (M25).
struct MergeIntegrator {
    /// What a leech adds to its first merge (§8.3): the seed event's changes, the local rows of keys it
    /// maps, and the history token (as `HistoryReader.encode` writes it) the local data was read at; made
    /// from `SeedBuilder.build`'s `Seed`.
    struct Seed: Sendable {
        var changes: [ObjectChange]
        var localKeys: [ObjectKey: Int64]
        var historyToken: Data?

        init(changes: [ObjectChange] = [], localKeys: [ObjectKey: Int64] = [:], historyToken: Data? = nil) {
            self.changes = changes
            self.localKeys = localKeys
            self.historyToken = historyToken
        }
    }

    /// The delegate's hooks, as Ensembles has them. Each is called outside any `perform`; the hook uses
    /// `performAndWait` on each context it touches, one at a time.
    struct Hooks {
        /// `shouldSaveMergedChangesIn:reparationContext:`: false cancels the merge (nothing saved).
        var shouldSave: ((_ saving: ManagedObjectContext, _ reparation: ManagedObjectContext) -> Bool)?
        /// `didFailToSaveMergedChangesIn:error:reparationContext:`: true records the repairs and tries
        /// once more.
        var didFailToSave: ((_ saving: ManagedObjectContext, _ error: SyncError, _ reparation: ManagedObjectContext) -> Bool)?

        init(shouldSave: ((ManagedObjectContext, ManagedObjectContext) -> Bool)? = nil,
             didFailToSave: ((ManagedObjectContext, SyncError, ManagedObjectContext) -> Bool)? = nil) {
            self.shouldSave = shouldSave
            self.didFailToSave = didFailToSave
        }
    }

    /// What one integration did.
    struct Outcome {
        /// The downloaded events integrated, in the order applied.
        var integrated: [EventID] = []
        /// Events given that could not integrate yet (their causal past is missing), untouched.
        var waiting: [EventID] = []
        /// The seed event recorded for a leech.
        var seedEvent: Event?
        /// The merge event recorded (fuses, repairs, or the vector after integrating changes).
        var mergeEvent: Event?
        /// The merge context's saved changes, for the delegate's did-save callback; empty when nothing
        /// was saved.
        var changes = ContextChanges()
        /// How many times the store save was tried (more than one after a racing local save, M31).
        var attempts = 0
        /// Whether the merge read the whole ledger rather than the part its events name.
        var readWholeLedger = false
    }

    let eventStore: EventStore
    /// The ensemble's own coordinator on the app's store, and that store as attached to it.
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    let schema: LedgerSchema
    var hooks = Hooks()
    /// The global ID of an object a repair inserted (the capture slice's `GlobalIdentifierSource`).
    var newGlobalID: (ManagedObject) -> String = { _ in UUID().uuidString }
    /// Called before each attempt after a save race: the caller captures the local save that raced, so
    /// the next projection includes it instead of overwriting it (M31).
    var beforeRetry: (() throws(SyncError) -> Void)?
    /// Called after the pending record is committed, before the store save; and after the save, before
    /// finalize. Throwing stops the merge on the spot, leaving the pending record as a kill there would
    /// (recovery and crash tests).
    var afterPendingRecord: (() throws(SyncError) -> Void)?
    var afterStoreSave: (() throws(SyncError) -> Void)?
    /// Baselines to join before the events (§9 step 6, M32), from `BaselineIntegrator.fetch`; joined
    /// into the ledger each attempt loads, and recorded by the finalize.
    var baselines: BaselineIntegrator.Result?
    /// Attempts before `storeBusy` (§10.4 step 5).
    var maximumAttempts = 3

    init(eventStore: EventStore, coordinator: PersistentStoreCoordinator, store: PersistentStore, schema: LedgerSchema) {
        self.eventStore = eventStore
        self.coordinator = coordinator
        self.store = store
        self.schema = schema
    }

    /// Integrates `events` (ready events in position order; any whose past is missing wait) and, for a
    /// leech, the seed `seed` makes from the ledger with the cloud's events applied (its changes become
    /// the seed event, its rows are mapped, its token becomes the capture cursor); `leechState` is
    /// committed with the finalize.
    /// - Throws: `SyncError.mergeCancelled` (shouldSave said no), `.mergeValidationFailed` (still
    ///   invalid after the hooks), `.storeBusy` (local saves raced every attempt), `.eventStore`,
    ///   `.storeSave`, `.dataCorruption`; nothing of the merge is saved then.
    func integrate(_ events: [Event], seed: ((Ledger) throws(SyncError) -> Seed)? = nil,
                   leechState: LeechState? = nil) throws(SyncError) -> Outcome {
        var attempt = 0
        while true {
            attempt += 1
            if attempt > 1 { try beforeRetry?() }
            var result = try attemptIntegration(events, seed: seed, leechState: leechState)
            var whole = false
            if case .needsWholeLedger = result {
                whole = true
                result = try attemptIntegration(events, seed: seed, leechState: leechState, wholeLedger: true)
            }
            switch result {
            case .done(var outcome):
                outcome.attempts = attempt
                outcome.readWholeLedger = outcome.readWholeLedger || whole
                return outcome
            case .needsWholeLedger:
                throw .dataCorruption("a merge reading the whole ledger asked for the whole ledger")
            case .raced:
                guard attempt < maximumAttempts else { throw .storeBusy(attempts: attempt) }
            }
        }
    }

    private enum AttemptResult {
        case done(Outcome)
        /// A local save touched a row the merge writes, or took a unique value it writes (M31).
        case raced
        /// A merge that read part of the ledger found it needs all of it (repairs may name any object).
        case needsWholeLedger
    }

    private func attemptIntegration(_ events: [Event], seed: ((Ledger) throws(SyncError) -> Seed)?,
                                    leechState: LeechState?, wholeLedger: Bool = false) throws(SyncError) -> AttemptResult {
        let state: EventStoreState, ledgerBefore: Ledger, storedMap: [ObjectKey: Int64]
        do { state = try eventStore.state() } catch { throw SyncError(error) }
        let sliced = !wholeLedger && seed == nil && (baselines?.baselines.isEmpty ?? true) && canSlice(events)
        var outcome = Outcome()
        outcome.readWholeLedger = !sliced
        if sliced {
            (ledgerBefore, storedMap) = try slice(for: events)
        } else {
            do {
                ledgerBefore = try eventStore.loadLedger()
                storedMap = try eventStore.idMap()
            } catch { throw SyncError(error) }
        }
        if let pending = state.pendingMergeID {
            throw .dataCorruption("merge \(pending) is still pending; recover it before integrating")
        }

        // Causal delivery (M5): an event whose past is not integrated waits, whatever the caller thought.
        var ledger = ledgerBefore
        var integratedVector = state.integrated
        var hadChanges = false
        var joinedBaselines: [BaselineRecord] = []
        for (baseline, record) in zip(baselines?.baselines ?? [], baselines?.joined ?? [])
        where !baseline.vector.isCovered(by: integratedVector) {
            integratedVector = BaselineJoiner.join(baseline, into: &ledger, integrated: integratedVector)
            joinedBaselines.append(record)
            // Peers learn from the merge event that this store now has the baseline's events (the cutoff).
            hadChanges = true
        }
        for event in events {
            guard integratedVector[event.id.store] < event.id.revision else { continue }
            guard integratedVector[event.id.store] == event.id.revision - 1, event.meta.vector.isCovered(by: integratedVector) else {
                outcome.waiting.append(event.id)
                continue
            }
            LedgerIntegrator.apply(event, to: &ledger)
            integratedVector[event.id.store] = event.id.revision
            outcome.integrated.append(event.id)
            hadChanges = hadChanges || !event.changes.isEmpty
        }

        // Nothing to integrate and no seed: no commit at all, which is most of what polling costs (S3).
        if outcome.integrated.isEmpty && seed == nil && joinedBaselines.isEmpty { return .done(outcome) }
        if sliced && Self.revivesKeys(from: ledgerBefore, to: ledger) { return .needsWholeLedger }

        var nextRevision = state.nextRevision
        // Above every event and joined baseline (M2): the finalize raises the counter to the baselines' too.
        var nextCount = max(state.maxGlobalCount, events.map(\.meta.globalCount).max() ?? 0,
                            baselines?.globalCount ?? 0) + 1
        var idMap = storedMap
        var alsoTouched: Set<ObjectKey> = []
        var localEvents: [Event] = []
        var historyToken: Data?
        if let seed {
            let made = try seed(ledger)
            let meta = EventMeta(id: EventID(store: state.storeID, revision: nextRevision), globalCount: nextCount, vector: integratedVector)
            let event = Event(meta: meta, timestamp: Date(), changes: made.changes)
            LedgerIntegrator.apply(event, to: &ledger)
            localEvents.append(event)
            outcome.seedEvent = event
            integratedVector[state.storeID] = nextRevision
            nextRevision += 1
            nextCount += 1
            for (key, localKey) in made.localKeys { idMap[key] = localKey }
            alsoTouched.formUnion(made.localKeys.keys)
            alsoTouched.formUnion(made.changes.map(\.key))
            historyToken = made.historyToken
        }

        // The merge event's identity is fixed now, so fuses and repairs can be applied with it as they come.
        let mergeMeta = EventMeta(id: EventID(store: state.storeID, revision: nextRevision), globalCount: nextCount, vector: integratedVector)
        let baseLedger = ledger
        var mergeChanges: [ObjectChange] = []
        let resolver = UniquenessResolver(model: coordinator.managedObjectModel)
        var projection = Projection(of: ledger, schema: schema)
        if sliced, try OutsideCollisionProbe(coordinator: coordinator, resolver: resolver).mayCollide(projection, ledger: ledger, idMap: idMap) {
            return .needsWholeLedger
        }
        // A fused object's values may collide with a third one; a few rounds settle any real model.
        for _ in 0..<8 {
            let fuses = resolver.fuses(in: projection, reader: LedgerReader(ledger: ledger))
            guard !fuses.isEmpty else { break }
            mergeChanges += fuses
            ledger = Self.applying(mergeChanges, meta: mergeMeta, to: baseLedger)
            projection = Projection(of: ledger, schema: schema)
        }

        let before = Projection(of: ledgerBefore, schema: schema)
        var touched = alsoTouched
        for (key, object) in ledger.objects where ledgerBefore.object(key) != object { touched.insert(key) }
        for key in Set(before.objects.keys).union(projection.objects.keys) where before.objects[key] != projection.objects[key] {
            touched.insert(key)
        }

        let mergeID = UUID().uuidString
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.name = SyncConstants.mergeContextNamePrefix + mergeID
        context.transactionAuthor = SyncConstants.mergeAuthor
        context.mergePolicy = .error
        let writer = MergeContextWriter(context: context, store: store, schema: schema, dataFileBytes: eventStore.syncDataFileBytes)
        let written = try writer.write(projection, of: ledger, touched: touched, idMap: idMap)

        var mapped = written.inserted.merging(written.adopted) { $1 }
        for (key, localKey) in idMap where storedMap[key] != localKey && !written.unmapped.contains(key) { mapped[key] = localKey }
        var keyOfRow: [String: [Int64: ObjectKey]] = [:]
        for (key, localKey) in idMap where !written.unmapped.contains(key) { keyOfRow[key.entity, default: [:]][localKey] = key }
        for (key, localKey) in mapped { keyOfRow[key.entity, default: [:]][localKey] = key }

        // Hooks and repairs (M24): whatever the app changes in the reparation context joins the merge event.
        var repairs = MergeRepairs(context: context, schema: schema, newGlobalID: newGlobalID)
        repairs.keyOfUnknownRow = { [eventStore] entity, localKey in (try? eventStore.objectKey(entity: entity, localKey: localKey)) ?? nil }
        repairs.eventStore = eventStore
        let reparation = ManagedObjectContext(concurrencyType: .privateQueue, parent: context)
        if let shouldSave = hooks.shouldSave, !shouldSave(context, reparation) { throw .mergeCancelled }
        try repairs.record(reparation, keyOfRow: keyOfRow, into: &mergeChanges, mapped: &mapped)
        var problems = Self.validationProblems(context)
        if !problems.isEmpty {
            guard let didFail = hooks.didFailToSave else { throw .mergeValidationFailed(problems) }
            let second = ManagedObjectContext(concurrencyType: .privateQueue, parent: context)
            guard didFail(context, .mergeValidationFailed(problems), second) else { throw .mergeValidationFailed(problems) }
            for (key, localKey) in mapped { keyOfRow[key.entity, default: [:]][localKey] = key }
            try repairs.record(second, keyOfRow: keyOfRow, into: &mergeChanges, mapped: &mapped)
            problems = Self.validationProblems(context)
            if !problems.isEmpty { throw .mergeValidationFailed(problems) }
        }
        if !mergeChanges.isEmpty {
            // Repairs may name objects the slice does not hold; applied to a slice they would overwrite
            // those keys' stored state. Start again from the whole ledger (repairs are rare).
            if sliced {
                context.performAndWait { context.reset() }
                return .needsWholeLedger
            }
            ledger = Self.applying(mergeChanges, meta: mergeMeta, to: baseLedger)
        }

        // A merge event when it has changes of its own, or when the merge integrated changes (so peers
        // learn this store's vector); never for empty merge events alone, or idle devices would ping-pong.
        if !mergeChanges.isEmpty || hadChanges {
            let event = Event(meta: mergeMeta, timestamp: Date(), changes: mergeChanges)
            localEvents.append(event)
            outcome.mergeEvent = event
        }
        var pending = PendingMerge(mergeID: mergeID)
        pending.integrated = outcome.integrated
        pending.localEvents = localEvents
        pending.ledgerObjects = ledger.objects.values.filter { ledgerBefore.object($0.key) != $0 }.sorted { $0.key < $1.key }
        pending.unmapped = written.unmapped.filter { mapped[$0] == nil }.sorted()
        pending.mapped = mapped.map { PendingMerge.Mapping(key: $0.key, localKey: $0.value) }.sorted { $0.key < $1.key }
        pending.historyToken = historyToken
        pending.leechState = leechState
        pending.joinedBaselines = joinedBaselines.isEmpty ? nil : joinedBaselines

        let hasChanges = context.performAndWait { context.hasChanges }
        if !hasChanges {
            // Nothing to save, so nothing to recover: one commit finishes the merge.
            do { try eventStore.finalizeMerge(pending) } catch { throw SyncError(error) }
            return .done(outcome)
        }
        let history = HistoryReader(coordinator: coordinator, store: store)
        let tokenBefore = try history.currentToken()
        pending.tokenBefore = try HistoryReader.encode(tokenBefore)
        do { try eventStore.recordPendingMerge(pending) } catch { throw SyncError(error) }
        try afterPendingRecord?()

        var saved = ContextChanges()
        var failure: Error?
        context.performAndWait {
            saved = ContextChanges(inserted: Set(context.insertedObjects.map(\.objectID)),
                                   updated: Set(context.updatedObjects.map(\.objectID)),
                                   deleted: Set(context.deletedObjects.map(\.objectID)))
            do { try context.save() } catch { failure = error }
        }
        if let failure {
            do { try eventStore.discardPendingMerge(mergeID) } catch { throw SyncError(error) }
            switch failure {
            case ContextError.mergeConflicts, ContextError.constraintConflicts, ContextError.constraintViolation:
                context.performAndWait { context.reset() }
                return .raced
            case let ContextError.validation(list):
                throw .mergeValidationFailed(list)
            default:
                throw .storeSave("\(failure)")
            }
        }
        // The save committed: from here a failure leaves the pending record for recovery to finalize.
        try afterStoreSave?()
        if pending.historyToken == nil {
            pending.historyToken = try capturedPastOwnSave(history, captured: state.historyToken, before: tokenBefore)
        }
        do { try eventStore.finalizeMerge(pending) } catch { throw SyncError(error) }
        outcome.changes = saved
        return .done(outcome)
    }

    /// The history token just after the merge's own save when capture had read everything before it
    /// (`captured`, the state's token: only capture moves it, and capture does not run during an
    /// attempt) and the save is the only transaction since: the next capture would read that
    /// transaction, whole, only to skip it as the merge's (a large merge's save is as large as its
    /// events). Nil otherwise, leaving the token where capture left it.
    private func capturedPastOwnSave(_ history: HistoryReader, captured: Data?, before: PersistentHistoryToken) throws(SyncError) -> Data? {
        guard try history.decode(captured) == before else { return nil }
        let after = try history.currentToken()
        guard after.transactionNumber == before.transactionNumber + 1 else { return nil }
        return try HistoryReader.encode(after)
    }

    /// The part of the stored ledger, and of the ID map, that integrating `events` reads and writes: the
    /// keys they name, with their fuse groups (M22), the members of their to-manys and the targets of
    /// their to-ones (whose existence decides the projected relationships), so that the projection of
    /// those keys is what the whole ledger would give. A merge of a few changes in a large store then
    /// reads a few ledger rows, not all of them (S2).
    private func slice(for events: [Event]) throws(SyncError) -> (Ledger, [ObjectKey: Int64]) {
        var named: Set<ObjectKey> = []
        for event in events {
            for change in event.changes {
                named.insert(change.key)
                if case let .fuse(survivor) = change.kind { named.insert(survivor) }
                for case let target?? in change.toOnes.values { named.insert(target) }
                for adds in change.memberAdds.values { named.formUnion(adds.map(\.member)) }
                for removes in change.memberRemoves.values { named.formUnion(removes) }
            }
        }
        let slice = LedgerSlice(eventStore: eventStore)
        try slice.load(named, members: true)
        // The to-one targets the loaded keys' registers may name: whichever write wins, its target must be
        // known to exist or not.
        var targets: Set<ObjectKey> = []
        for object in slice.ledger.objects.values {
            for register in object.toOnes.values {
                for case let target? in register.candidates.map(\.value) { targets.insert(target) }
            }
        }
        try slice.load(targets)
        var map: [ObjectKey: Int64] = [:]
        do {
            for key in slice.ledger.objects.keys.sorted() {
                if let localKey = try eventStore.localKey(for: key) { map[key] = localKey }
            }
        } catch { throw SyncError(error) }
        return (slice.ledger, map)
    }

    /// Whether integrating `events` may read only the part of the ledger they name. Not when the model
    /// has one-to-one relationships (a target keeps one claimant among every object naming it, M17), or
    /// when the events fuse keys: those merges read the whole ledger. Models with uniqueness constraints
    /// slice too, and go to the whole ledger when `OutsideCollisionProbe` finds a possible collision.
    private func canSlice(_ events: [Event]) -> Bool {
        guard !schema.entities.values.contains(where: { shape in
            shape.toOnes.values.contains { if case .toOne = $0.inverse { return true } else { return false } }
        }) else { return false }
        return !events.contains { event in
            event.changes.contains { if case .fuse = $0.kind { return true } else { return false } }
        }
    }

    /// Whether a key that had incarnations, all dead, is alive again (an insert after a delete, M11):
    /// objects outside a slice may still name it (a member add no remove cancelled, a to-one), and their
    /// projection changes with it, so the merge must read the whole ledger to write them.
    static func revivesKeys(from before: Ledger, to after: Ledger) -> Bool {
        after.objects.contains { key, object in
            guard let old = before.object(key), !old.incarnations.isEmpty, old.incarnations.allSatisfy(\.isKilled) else { return false }
            return object.incarnations.contains { !$0.isKilled }
        }
    }

    /// `base` with one event of `changes` under `meta` applied: the merge event as it stands.
    static func applying(_ changes: [ObjectChange], meta: EventMeta, to base: Ledger) -> Ledger {
        var ledger = base
        LedgerIntegrator.apply(Event(meta: meta, changes: changes), to: &ledger)
        return ledger
    }

    /// Every problem validation finds in `context`, as validation errors (a deny rule or a failing
    /// validation hook becomes one naming its entity and property).
    static func validationProblems(_ context: ManagedObjectContext) -> [ValidationError] {
        let errors = context.performAndWait { context.validationErrors() }
        var problems: [ValidationError] = []
        for error in errors {
            switch error {
            case let ContextError.validation(list): problems += list
            case let error as ValidationError: problems.append(error)
            case let ContextError.deleteDenied(entity, relationship, object, count):
                problems.append(ValidationError(entityName: entity, propertyName: relationship,
                                                reason: .custom(rule: "deny", message: "\(object) still holds \(count) object(s)")))
            case let ContextError.validationFailed(entity, object, hook, error):
                problems.append(ValidationError(entityName: entity, propertyName: hook,
                                                reason: .custom(rule: hook, message: "\(object): \(error)")))
            default:
                problems.append(ValidationError(entityName: nil, propertyName: "", reason: .custom(rule: "save", message: "\(error)")))
            }
        }
        return problems
    }
}
