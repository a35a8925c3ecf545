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
