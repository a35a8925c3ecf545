import Foundation

/// What a `PersistentHistoryChangeRequest` did: Core Data's `NSPersistentHistoryResult`.
public struct PersistentHistoryResult: Sendable {
    /// For a fetch, the transactions found, oldest first (by number within a store, by timestamp across
    /// stores); empty for a delete.
    public var transactions: [PersistentHistoryTransaction] = []
    /// For a delete, how many transactions it removed; 0 for a fetch.
    public var deletedTransactionCount = 0
}
