import Foundation
import Granary

/// Records the store's local saves as events (§8.1): everything saved since the last capture becomes one
/// event of this store (M30), skipping the ensemble's own merge saves (M29).
///
/// The event, its ledger changes, the new ID map entries and the history token it captured up to are one
/// event-store commit (§12.2): a kill before it leaves the store as it was and the next capture reads the
/// same transactions again; a kill after it has nothing left to do. The app's store is only read.
final class LocalChangeRecorder {
    let history: HistoryReader
    let eventStore: EventStore
    let schema: LedgerSchema
    let identifiers: GlobalIdentifierSource
    /// Whether each capture deletes the history it captured (`EnsembleConfiguration.purgesHistory`), once
    /// its commit holds the token: history kept until then is what makes a crash before the commit lose
    /// nothing.
    let purgesHistory: Bool
    /// Called after history is read and before rows are, with nothing held: lets tests save at the moment
    /// a concurrent app save would do the most harm.
    var afterReadingHistory: (() -> Void)?
    /// Per entity, how many objects of the last capture got a random global ID because their identifier
    /// attribute was nil or empty (for `SyncDiagnostic.missingGlobalIdentifier`).
    private(set) var missingIdentifiers: [String: Int] = [:]
    /// The objects of the last capture whose identifier attribute no longer matches their global ID (for
    /// `SyncDiagnostic.globalIdentifierChanged`); the ID stays, the attribute is synced as a value.
    private(set) var changedIdentifiers: [(entity: String, old: String, new: String?)] = []
    /// Per entity, how many new objects of the last capture repeat the global ID of another live object.
    private(set) var duplicateIdentifiers: [String: Int] = [:]
    /// Those objects with the object whose key each repeats, for the ensemble to fold
    /// (`LocalDuplicateMerger.merge`); the last capture's event already holds the folded object.
    private(set) var localDuplicates: [LocalDuplicateMerger.Pair] = []

    /// A recorder of `store`'s saves, read through `coordinator` (the ensemble's own, sharing the app's
    /// store), into `eventStore`.
    init(coordinator: PersistentStoreCoordinator, store: PersistentStore, eventStore: EventStore, schema: LedgerSchema,
         identifiers: GlobalIdentifierSource, purgesHistory: Bool = false) {
        self.history = HistoryReader(coordinator: coordinator, store: store)
        self.eventStore = eventStore
        self.schema = schema
        self.identifiers = identifiers
        self.purgesHistory = purgesHistory
    }

    /// Captures the saves since the last capture as one event, committed with the new history token;
    /// nil when they hold no synced change (the token still advances, M30). When history the recorder had
    /// not captured was purged, the store is rescanned instead (§8.4) and `didRescan` is set.
    /// - Throws: `SyncError.storeRead`, `.eventStore`, `.dataCorruption`, `.globalIdentifierCountMismatch`.
    func capture() throws(SyncError) -> Event? {
        let event = try captureWindow()
        if purgesHistory, let token = try history.decode(try currentState().historyToken) { try history.purge(before: token) }
        return event
    }

    private func currentState() throws(SyncError) -> EventStoreState {
        do { return try eventStore.state() } catch { throw SyncError(error) }
    }

    private func captureWindow() throws(SyncError) -> Event? {
        let start = try history.decode(try currentState().historyToken)
        var window = CaptureWindow()
        var last = start
        let isSynced = { [schema] (entity: String) in schema.entities[entity] != nil }
        didRescan = false
        missingIdentifiers = [:]
        changedIdentifiers = []
        duplicateIdentifiers = [:]
        localDuplicates = []
        do throws(SyncError) {
            while true {
                let batch = try history.transactions(after: last)
                guard let final = batch.last else { break }
                for transaction in batch where transaction.author != SyncConstants.mergeAuthor {
                    window.add(transaction, isSynced: isSynced)
                }
                last = final.token
            }
        } catch {
            guard case .historyGap = error else { throw error }
            return try captureByRescan()
        }
        afterReadingHistory?()
        guard let last, last != start else { return nil }
        let token = try HistoryReader.encode(last)
        guard !window.isEmpty else {
            try commitToken(token)
            return nil
        }
        let slice = LedgerSlice(eventStore: eventStore)
        let assembled = try assemble(window, slice: slice)
        missingIdentifiers = assembled.missingIdentifiers
        changedIdentifiers = assembled.changedIdentifiers
        duplicateIdentifiers = assembled.duplicateIdentifiers
        localDuplicates = assembled.localDuplicates
        // The assembler loaded every key the changes name, with fuse groups and members: all that
        // integrating them reads.
        return try record(assembled.changes, localKeys: assembled.localKeys, token: token, ledger: slice.ledger)
    }

    /// Whether the last capture found history purged and rescanned the store instead (for
    /// `SyncDiagnostic.historyRescanned`).
    private(set) var didRescan = false

    /// §8.4: history after the token is gone, so the store itself is compared with the ledger; the event
    /// holds the differences and the token is the one the store was read at.
    private func captureByRescan() throws(SyncError) -> Event? {
        let ledger = try loadLedger()
        let rescan = Rescan(history: history, eventStore: eventStore, schema: schema, identifiers: identifiers)
        let result = try rescan.run(ledger: ledger)
        didRescan = true
        missingIdentifiers = result.missingIdentifiers
        return try record(result.changes, localKeys: result.localKeys, token: try HistoryReader.encode(result.historyToken),
                          ledger: ledger)
    }

    /// Commits `changes` as the next local event with the ledger changes it makes, the map entries and the
    /// token; only the token when there are no changes.
    private func record(_ changes: [ObjectChange], localKeys: [ObjectKey: Int64], token: Data,
                        ledger: Ledger) throws(SyncError) -> Event? {
        guard !changes.isEmpty else {
            try commitToken(token, localKeys: localKeys)
            return nil
        }
        let meta: EventMeta
        do { meta = try eventStore.nextLocalMeta() } catch { throw SyncError(error) }
        // Large values become data files here, before the ledger sees them, so that registers hold names.
        let (changes, dataFiles) = LargeValues.extract(changes, writer: meta.id.store)
        let event = Event(meta: meta, timestamp: Date(), changes: changes)
        var updated = ledger
        // The newest position: the event wins everything it touches, as the store already shows.
        LedgerIntegrator.apply(event, to: &updated)
        let changed = updated.objects.values.filter { ledger.object($0.key) != $0 }
        do {
            try eventStore.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: changed, localKeys: localKeys,
                                                                        historyToken: token, dataFiles: dataFiles))
        } catch { throw SyncError(error) }
        return event
    }

    private func loadLedger() throws(SyncError) -> Ledger {
        do { return try eventStore.loadLedger() } catch { throw SyncError(error) }
    }

    private func assemble(_ window: CaptureWindow, slice: LedgerSlice) throws(SyncError) -> CaptureAssembler.Result {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: history.coordinator)
        context.name = "granary.sync.capture"
        let reader = StoreObjectReader(context: context, store: history.store, eventStore: eventStore)
        let assembler = CaptureAssembler(reader: reader, schema: schema, identifiers: identifiers, slice: slice)
        do {
            return try context.performAndWait { try assembler.assemble(window) }
        } catch let error as SyncError {
            throw error
        } catch {
            throw .storeRead("capturing local changes: \(error)")
        }
    }

    private func commitToken(_ token: Data, localKeys: [ObjectKey: Int64] = [:]) throws(SyncError) {
        do { try eventStore.commit(EventStoreStep(localKeys: localKeys, historyToken: token)) } catch { throw SyncError(error) }
    }
}
