import Foundation

/// Why a persistent history request failed.
public enum PersistentHistoryError: Error, Sendable, CustomStringConvertible {
    /// The request names a store (through `affectedStores` or its token) that does not record history:
    /// it was added without `PersistentStore.Options.persistentHistoryTracking`.
    case notTracked(store: String)
    /// The request's token belongs to a store that is not attached to the coordinator, or not among the
    /// request's `affectedStores`.
    case unknownStore(PersistentHistoryToken)
    /// Transactions right after the token were purged (`deleteHistory(before:)` went past it): whoever
    /// kept the token has missed changes, and should start over from the store's current state and
    /// `currentPersistentHistoryToken(fromStores:)`. Core Data's `NSPersistentHistoryTokenExpiredError`.
    case tokenExpired(PersistentHistoryToken)
    /// A recorded transaction could not be read back (the store's files were altered by something
    /// other than Granary).
    case unreadableHistory(store: String, transactionNumber: Int64, reason: String)

    public var description: String {
        switch self {
        case .notTracked(let store):
            return "the store \(store) does not track persistent history; add it with Options.persistentHistoryTracking"
        case .unknownStore(let token):
            return "the history token \(token) names a store that is not attached, or not among the request's stores"
        case .tokenExpired(let token):
            return "the history after \(token) was purged: read the store's current state and go on from its current token"
        case .unreadableHistory(let store, let number, let reason):
            return "transaction #\(number) of the persistent history of \(store) is unreadable: \(reason)"
        }
    }
}
