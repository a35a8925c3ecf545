import Foundation
import Granary

/// Resolves a merge left pending by a crash (§12.3): the store's history says whether the merge's save
/// committed, by looking for a transaction with the merge context's name after the token recorded
/// before the save.
///
/// Committed → finalize from the record, recomputing nothing (the record holds exactly what the save
/// wrote). Not committed → forget the record: phase one wrote nothing else, and the keys it reserved
/// are never handed out again. Unknown (history purged past the token) → forget the record too, and
/// say so, so that the caller rescans the store (§8.4) instead of trusting the ledger.
enum MergeRecovery {
    enum Outcome: Hashable, Sendable {
        case nothingPending
        /// The save had committed; the merge is now finalized.
        case finalized(mergeID: String)
        /// The save had not committed; the record is gone and the events wait for the next merge.
        case discarded(mergeID: String)
        /// History after the recorded token was purged, so whether the save committed is unknown; the
        /// record is gone and the store must be rescanned against the ledger.
        case discardedHistoryLost(mergeID: String)
    }

    /// Resolves the pending merge of `eventStore`, if any, against the history of `store` (read
    /// through `coordinator`).
    /// - Throws: `SyncError.eventStore` when the event store cannot be read or written,
    ///   `.storeRead` when the history cannot be read for another reason than a purge.
    static func recover(_ eventStore: EventStore, coordinator: PersistentStoreCoordinator,
                        store: PersistentStore) throws(SyncError) -> Outcome {
        let pending: PendingMerge?
        do { pending = try eventStore.pendingMerge() } catch { throw SyncError(error) }
        guard let pending else { return .nothingPending }
        let committed = try saveCommitted(pending, coordinator: coordinator, store: store)
        do {
            switch committed {
            case true?:
                try eventStore.finalizeMerge(pending)
                return .finalized(mergeID: pending.mergeID)
            case false?:
                try eventStore.discardPendingMerge(pending.mergeID)
                return .discarded(mergeID: pending.mergeID)
            case nil:
                try eventStore.discardPendingMerge(pending.mergeID)
                return .discardedHistoryLost(mergeID: pending.mergeID)
            }
        } catch {
            throw SyncError(error)
        }
    }

    /// Whether the store's history holds the save of `pending`; nil when history after its token was
    /// purged, so nobody can tell.
    /// - Throws: `SyncError.dataCorruption` for an unreadable token; `.storeRead` when history cannot
    ///   be read.
    static func saveCommitted(_ pending: PendingMerge, coordinator: PersistentStoreCoordinator,
                              store: PersistentStore) throws(SyncError) -> Bool? {
        let history = HistoryReader(coordinator: coordinator, store: store)
        return try history.containsTransaction(contextName: pending.contextName, after: try history.decode(pending.tokenBefore))
    }
}
