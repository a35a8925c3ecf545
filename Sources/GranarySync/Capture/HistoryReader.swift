import Foundation
import Granary

/// The one place GranarySync calls Granary's persistent-history API, so that a change there changes one
/// file (§2 of the plan).
struct HistoryReader {
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore

    /// Transactions read per request: bounds the memory of one read, not the size of a capture window.
    static let batchSize = 1_000

    /// The transactions after `token`, oldest first, at most `limit`.
    /// - Throws: `SyncError.historyGap` when transactions right after `token` were purged before being
    ///   captured (§8.4); `.eventStore` naming the store for any other failure of the read.
    func transactions(after token: PersistentHistoryToken?, limit: Int = batchSize) throws(SyncError) -> [PersistentHistoryTransaction] {
        var request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.affectedStores = [store]
        request.fetchLimit = limit
        do {
            return try coordinator.execute(request).transactions
        } catch PersistentHistoryError.tokenExpired(let expired) {
            throw .historyGap(afterTransaction: expired.transactionNumber)
        } catch {
            throw .storeRead("reading the persistent history of \(storePath) after \(token.map(String.init(describing:)) ?? "the start"): \(error)")
        }
    }

    /// The token of the store's last transaction: where a read of everything from now on starts.
    func currentToken() throws(SyncError) -> PersistentHistoryToken {
        guard let token = coordinator.currentPersistentHistoryToken(fromStores: [store]) else {
            throw .historyTrackingDisabled(store: store.url)
        }
        return token
    }

    /// Whether a transaction whose context is `name` was recorded after `token` (merge recovery, §12.3);
    /// nil when the history after `token` was purged, so that the answer is unknown.
    func containsTransaction(contextName name: String, after token: PersistentHistoryToken?) throws(SyncError) -> Bool? {
        var next = token
        while true {
            let batch: [PersistentHistoryTransaction]
            do throws(SyncError) { batch = try transactions(after: next) } catch {
                guard case .historyGap = error else { throw error }
                return nil
            }
            if batch.contains(where: { $0.contextName == name }) { return true }
            guard let last = batch.last else { return false }
            next = last.token
        }
    }

    /// Deletes the store's transactions before `token` (its own stays, so that a later read after it
    /// still tells a purge from nothing new).
    /// - Throws: `SyncError.storeRead` naming the store.
    func purge(before token: PersistentHistoryToken) throws(SyncError) {
        var request = PersistentHistoryChangeRequest.deleteHistory(before: token)
        request.affectedStores = [store]
        do { _ = try coordinator.execute(request) } catch {
            throw .storeRead("purging the persistent history of \(storePath) before \(token): \(error)")
        }
    }

    private var storePath: String { store.url?.path ?? store.identifier.uuidString }

    // MARK: Tokens as the event store keeps them

    /// The token's bytes in the event store's `state.historyToken`.
    static func encode(_ token: PersistentHistoryToken) throws(SyncError) -> Data {
        do { return try EventPayloadCoding.encode(token) } catch {
            throw .dataCorruption("the history token \(token) has no JSON form: \(error)")
        }
    }

    /// The token kept as `bytes`; nil bytes (nothing captured yet) read as nil.
    /// - Throws: `SyncError.dataCorruption` for bytes that are no token, or a token of another store.
    func decode(_ bytes: Data?) throws(SyncError) -> PersistentHistoryToken? {
        guard let bytes else { return nil }
        let token: PersistentHistoryToken
        do { token = try EventPayloadCoding.decode(PersistentHistoryToken.self, from: bytes, name: "state.historyToken") } catch {
            throw .dataCorruption("the history token kept in the event store is unreadable: \(error)")
        }
        guard token.storeIdentifier == store.identifier else {
            throw .dataCorruption("the history token kept in the event store names store \(token.storeIdentifier.uuidString), not \(store.identifier.uuidString)")
        }
        return token
    }
}
