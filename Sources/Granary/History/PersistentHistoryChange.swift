import Foundation

/// One object's change in a recorded transaction: Core Data's `NSPersistentHistoryChange`.
///
/// Read it to find what happened to an object since a token: that it was inserted, which of its
/// properties an update changed, or, for a deleted object, the values its entity asked to keep.
public struct PersistentHistoryChange: Sendable, CustomStringConvertible {
    /// What happened to the object (Core Data's `NSPersistentHistoryChangeType`).
    public enum ChangeType: Int, Sendable, Hashable, Codable, CustomStringConvertible {
        case insert = 0
        case update = 1
        case delete = 2

        public var description: String {
            switch self {
            case .insert: return "insert"
            case .update: return "update"
            case .delete: return "delete"
            }
        }
    }

    /// The change's position in its transaction, from 0.
    public let changeID: Int
    /// The object that changed; for a delete, the ID it had.
    public let changedObjectID: ManagedObjectID
    /// Whether the object was inserted, updated or deleted.
    public let changeType: ChangeType
    /// For an update, the names of the properties whose stored values changed (attributes and
    /// relationships, including the other ends of relationships the save set); `nil` for inserts and
    /// deletes, as in Core Data.
    public let updatedProperties: Set<String>?
    /// For a delete, the values the deleted object held in the attributes its entity marks
    /// `preservesValueInHistoryOnDeletion`, by attribute name, each in its type's Swift form; attributes
    /// that were nil are absent. `nil` for inserts and updates, and for deletes of entities that keep
    /// nothing.
    public let tombstone: [String: any Sendable]?
    /// The token of the transaction that holds this change.
    public let transactionToken: PersistentHistoryToken

    public var description: String {
        var text = "<history change \(changeID): \(changeType) \(changedObjectID)"
        if let updatedProperties { text += " " + updatedProperties.sorted().joined(separator: ",") }
        if let tombstone { text += " tombstone " + tombstone.keys.sorted().joined(separator: ",") }
        return text + ">"
    }
}
