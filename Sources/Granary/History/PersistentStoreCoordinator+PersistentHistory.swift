import Foundation

extension PersistentStoreCoordinator {
    /// Runs a persistent history request on the stores it covers.
    /// - Throws: `PersistentHistoryError.notTracked` when a store the request names does not track
    ///   history; `.unknownStore` for a token of a store it does not cover; `.tokenExpired` for a fetch
    ///   after a token whose next transactions were purged; `.unreadableHistory` for a damaged record;
    ///   `ContextError.storage` when a store cannot be read or written.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        var stores = try historyStores(request.affectedStores)
        let bound: PersistentHistoryChangeRequest.Bound
        switch request.action {
        case .fetch(let b), .delete(let b): bound = b
        }
        if case .token(let token?) = bound {
            guard let store = stores.first(where: { $0.identifier == token.storeIdentifier }) else {
                throw PersistentHistoryError.unknownStore(token)
            }
            stores = [store]
        }
        var result = PersistentHistoryResult()
        do {
            switch request.action {
            case .fetch:
                for store in stores {
                    result.transactions += try fetch(from: store, after: bound, author: request.author, limit: request.fetchLimit)
                }
                if stores.count > 1 {
                    result.transactions.sort { ($0.timestamp, $0.token) < ($1.timestamp, $1.token) }
                }
                if request.fetchLimit > 0 && result.transactions.count > request.fetchLimit {
                    result.transactions.removeSubrange(request.fetchLimit...)
                }
            case .delete:
                for store in stores { result.deletedTransactionCount += try delete(from: store, before: bound) }
            }
        } catch let error as StorageError {
            throw ContextError.storage(error)
        }
        return result
    }

    /// The token of the last transaction recorded by the first of `stores` (every attached store when
    /// `nil`) that tracks history: where a fetch after it starts from. Core Data's
    /// `currentPersistentHistoryToken(fromStores:)`. `nil` when none of them tracks history.
    ///
    /// A store that recorded nothing yet gives a token before its first transaction.
    public func currentPersistentHistoryToken(fromStores stores: [PersistentStore]? = nil) -> PersistentHistoryToken? {
        for store in stores ?? persistentStores where store.tracksPersistentHistory {
            guard let number = HistoryTable.lastTransactionNumber(in: store.engine.read()) else { continue }
            return PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: number)
        }
        return nil
    }

    private func historyStores(_ requested: [PersistentStore]?) throws -> [PersistentStore] {
        guard let requested else { return persistentStores.filter(\.tracksPersistentHistory) }
        for store in requested {
            try store.checkAttached()
            if !store.tracksPersistentHistory {
                throw PersistentHistoryError.notTracked(store: store.url?.path ?? store.identifier.uuidString)
            }
        }
        return requested
    }

    /// The transactions of one store after `bound`, oldest first; at most `limit` of them when it is
    /// above zero.
    private func fetch(from store: PersistentStore, after bound: PersistentHistoryChangeRequest.Bound,
                       author: String?, limit: Int) throws -> [PersistentHistoryTransaction] {
        let snapshot = store.engine.read()
        guard snapshot.tableNames.contains(HistoryTable.name) else { return [] }
        var start: Int64?
        var since: Date?
        switch bound {
        case .token(let token): start = token.map { $0.transactionNumber + 1 }
        case .date(let date): since = date
        }
        if case .token(let token?) = bound, let last = HistoryTable.lastTransactionNumber(in: snapshot),
           token.transactionNumber < last {
            // Keys come only from recording and go only by purging: a gap right after the token means
            // transactions the reader has not seen were purged.
            var next: Int64?
            try snapshot.forEachEncodedRow(in: HistoryTable.name, from: token.transactionNumber + 1) { row in
                next = row.key
                return false
            }
            if next != token.transactionNumber + 1 { throw PersistentHistoryError.tokenExpired(token) }
        }
        var found: [PersistentHistoryTransaction] = []
        try snapshot.forEachRow(in: HistoryTable.name, from: start) { key, row in
            if let since, case .date(let timestamp) = row[HistoryTable.timestampColumn], timestamp <= since { return true }
            if let author {
                guard case .string(let written) = row[HistoryTable.authorColumn], written == author else { return true }
            }
            found.append(try HistoryTable.transaction(from: row, key: key, store: store))
            return limit <= 0 || found.count < limit
        }
        return found
    }

    private func delete(from store: PersistentStore, before bound: PersistentHistoryChangeRequest.Bound) throws -> Int {
        try store.engine.write { tx in
            var keys: [Int64] = []
            do {
                let snapshot = tx.snapshot
                guard snapshot.tableNames.contains(HistoryTable.name) else { return 0 }
                // Keys and timestamps only: a transaction's changes (a batch's may be large) stay encoded.
                try snapshot.forEachEncodedRow(in: HistoryTable.name) { row in
                    switch bound {
                    case .token(let token):
                        if let token, row.key >= token.transactionNumber { return false }
                    case .date(let date):
                        var values = try row.values()
                        guard HistoryTable.timestampColumn == 0, case .date(let timestamp)? = try values.next(), timestamp < date else {
                            return true
                        }
                    }
                    keys.append(row.key)
                    return true
                }
            }
            for key in keys { try tx.delete(from: HistoryTable.name, key: key) }
            return keys.count
        }
    }
}
