import Foundation

/// A request that reads or purges the persistent history of stores: Core Data's
/// `NSPersistentHistoryChangeRequest`.
///
/// Make one with a `fetchHistory` or `deleteHistory` factory and run it with the context's or the
/// coordinator's `execute(_:)`, like the batch requests:
///
/// ```swift
/// var request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// request.author = "importer"
/// let transactions = try context.execute(request).transactions
/// ```
public struct PersistentHistoryChangeRequest: Sendable {
    /// Which transactions a request starts or stops at.
    public enum Bound: Sendable, Hashable {
        /// By token: only that token's store, transactions after it (fetch) or before it (delete);
        /// `nil` means every transaction of every store the request covers.
        case token(PersistentHistoryToken?)
        /// By timestamp: transactions committed after (fetch) or before (delete) the date.
        case date(Date)
    }

    /// What the request does.
    public enum Action: Sendable, Hashable {
        /// Read the transactions after the bound, oldest first.
        case fetch(after: Bound)
        /// Delete the transactions before the bound, freeing their space at the store's next checkpoint.
        case delete(before: Bound)
    }

    public var action: Action
    /// When set, a fetch returns only the transactions whose author is this (Core Data's form is a
    /// fetch request on the transaction entity with a predicate on `author`). Deletes ignore it.
    public var author: String?
    /// The stores the request covers; `nil` covers every attached store that tracks history. Core
    /// Data's `affectedStores`.
    public var affectedStores: [PersistentStore]?
    /// When above zero, a fetch returns at most this many transactions (the oldest).
    public var fetchLimit = 0

    /// A request for the action.
    public init(action: Action) {
        self.action = action
    }

    /// The transactions after `token` (of its store), oldest first; every transaction when `token` is
    /// `nil`.
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        .init(action: .fetch(after: .token(token)))
    }

    /// The transactions committed after `date`, oldest first.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        .init(action: .fetch(after: .date(date)))
    }

    /// The transactions after `transaction`, oldest first; every transaction when it is `nil`.
    public static func fetchHistory(after transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        .init(action: .fetch(after: .token(transaction?.token)))
    }

    /// Deletes the transactions before `token` (of its store; the token's own transaction stays), or
    /// every transaction when `token` is `nil`.
    public static func deleteHistory(before token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        .init(action: .delete(before: .token(token)))
    }

    /// Deletes the transactions committed before `date`.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        .init(action: .delete(before: .date(date)))
    }

    /// Deletes the transactions before `transaction` (which stays); every transaction when it is `nil`.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction?) -> PersistentHistoryChangeRequest {
        .init(action: .delete(before: .token(transaction?.token)))
    }
}

/// What a `PersistentHistoryChangeRequest` did: Core Data's `NSPersistentHistoryResult`.
public struct PersistentHistoryResult: Sendable {
    /// For a fetch, the transactions found, oldest first (by number within a store, by timestamp across
    /// stores); empty for a delete.
    public var transactions: [PersistentHistoryTransaction] = []
    /// For a delete, how many transactions it removed; 0 for a fetch.
    public var deletedTransactionCount = 0
}

extension PersistentStoreCoordinator {
    /// Runs a persistent history request on the stores it covers.
    /// - Throws: `PersistentHistoryError.notTracked` when a store the request names does not track
    ///   history; `.unknownStore` for a token of a store it does not cover; `.unreadableHistory` for a
    ///   damaged record; `ContextError.storage` when a store cannot be read or written.
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
                for store in stores { result.transactions += try fetch(from: store, after: bound, author: request.author) }
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

    private func fetch(from store: PersistentStore, after bound: PersistentHistoryChangeRequest.Bound,
                       author: String?) throws -> [PersistentHistoryTransaction] {
        let snapshot = store.engine.read()
        guard snapshot.tableNames.contains(HistoryTable.name) else { return [] }
        var start: Int64?
        var since: Date?
        switch bound {
        case .token(let token): start = token.map { $0.transactionNumber + 1 }
        case .date(let date): since = date
        }
        var found: [PersistentHistoryTransaction] = []
        try snapshot.forEachRow(in: HistoryTable.name, from: start) { key, row in
            if let since, case .date(let timestamp) = row[HistoryTable.timestampColumn], timestamp <= since { return true }
            if let author {
                guard case .string(let written) = row[HistoryTable.authorColumn], written == author else { return true }
            }
            found.append(try HistoryTable.transaction(from: row, key: key, store: store))
            return true
        }
        return found
    }

    private func delete(from store: PersistentStore, before bound: PersistentHistoryChangeRequest.Bound) throws -> Int {
        try store.engine.write { tx in
            var keys: [Int64] = []
            do {
                let snapshot = tx.snapshot
                guard snapshot.tableNames.contains(HistoryTable.name) else { return 0 }
                try snapshot.forEachRow(in: HistoryTable.name) { key, row in
                    switch bound {
                    case .token(let token):
                        if let token, key >= token.transactionNumber { return false }
                    case .date(let date):
                        guard case .date(let timestamp) = row[HistoryTable.timestampColumn], timestamp < date else { return true }
                    }
                    keys.append(key)
                    return true
                }
            }
            for key in keys { try tx.delete(from: HistoryTable.name, key: key) }
            return keys.count
        }
    }
}

extension ManagedObjectContext {
    /// Runs a persistent history request on the context's coordinator (Core Data's `execute(_:)` of an
    /// `NSPersistentHistoryChangeRequest`). Merge a fetched transaction's `objectIDNotification()` to
    /// bring the context up to date with it.
    /// - Throws: what `PersistentStoreCoordinator.execute(_:)` throws; `ContextError.noPersistentStore`
    ///   without a coordinator.
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        assertOnQueue()
        guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
        return try coordinator.execute(request)
    }
}
