import Foundation

/// One recorded save (or batch request) of a store and its changes: Core Data's
/// `NSPersistentHistoryTransaction`.
///
/// Fetch transactions with `PersistentHistoryChangeRequest.fetchHistory(after:)`; bring a context up to
/// date with one by merging `objectIDNotification()`.
public struct PersistentHistoryTransaction: Sendable, CustomStringConvertible {
    /// The transaction's position in its store's history.
    public let token: PersistentHistoryToken
    /// When the save committed.
    public let timestamp: Date
    /// The identifier of the store the transaction wrote.
    public let storeID: UUID
    /// The saving context's `name`, when it had one.
    public let contextName: String?
    /// The saving context's `transactionAuthor`, when it had one.
    public let author: String?
    /// Every object the transaction inserted, updated or deleted, in a stable order (by table, then by
    /// object key).
    public let changes: [PersistentHistoryChange]

    /// The transaction's number in its store: `token.transactionNumber`.
    public var transactionNumber: Int64 { token.transactionNumber }

    /// The objects this transaction changed, in the form a did-save notification carries, for
    /// `ManagedObjectContext.mergeChanges(fromContextDidSave:)`: Core Data's `objectIDNotification()`.
    ///
    /// Use it to bring a context up to date with a save it did not see (one of another process, or one
    /// made before the context existed): updated objects are refreshed, deleted ones leave.
    public func objectIDNotification() -> ContextChanges {
        var changes = ContextChanges()
        for change in self.changes {
            switch change.changeType {
            case .insert: changes.inserted.insert(change.changedObjectID)
            case .update: changes.updated.insert(change.changedObjectID)
            case .delete: changes.deleted.insert(change.changedObjectID)
            }
        }
        return changes
    }

    public var description: String {
        var text = "<history transaction #\(token.transactionNumber) of \(storeID.uuidString), \(changes.count) changes"
        if let author { text += ", author \(author)" }
        if let contextName { text += ", context \(contextName)" }
        return text + ">"
    }
}
