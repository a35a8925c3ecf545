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
    ///   `.storeSave` when the history cannot be read for another reason than a purge.
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
    /// - Throws: `SyncError.dataCorruption` for an unreadable token; `.storeSave` when history cannot
    ///   be read.
    static func saveCommitted(_ pending: PendingMerge, coordinator: PersistentStoreCoordinator,
                              store: PersistentStore) throws(SyncError) -> Bool? {
        var token: PersistentHistoryToken?
        if let data = pending.tokenBefore {
            do { token = try JSONDecoder().decode(PersistentHistoryToken.self, from: data) } catch {
                throw .dataCorruption("the history token of pending merge \(pending.mergeID) does not decode: \(error)")
            }
        }
        var request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.author = SyncConstants.mergeAuthor
        request.affectedStores = [store]
        do {
            return try coordinator.execute(request).transactions.contains { $0.contextName == pending.contextName }
        } catch PersistentHistoryError.tokenExpired {
            return nil
        } catch {
            throw .storeSave("reading the history of \(store.url?.path ?? "the store") for pending merge \(pending.mergeID) failed: \(error)")
        }
    }

    /// The JSON of the store's current history token, as a pending record keeps it.
    static func currentToken(coordinator: PersistentStoreCoordinator, store: PersistentStore) throws(SyncError) -> Data? {
        guard let token = coordinator.currentPersistentHistoryToken(fromStores: [store]) else { return nil }
        do { return try JSONEncoder().encode(token) } catch {
            throw .dataCorruption("the store's history token does not encode: \(error)")
        }
    }
}
