import Foundation
import Synchronization

extension Notification.Name {
    /// Posted after a context saved; `object` is the context, `userInfo["changes"]` a `ContextChanges`.
    public static let managedObjectContextDidSave = Notification.Name("GranaryManagedObjectContextDidSave")
    /// Posted before a context saves; `object` is the context.
    public static let managedObjectContextWillSave = Notification.Name("GranaryManagedObjectContextWillSave")
    /// Posted when objects of a context changed (edits, inserts, deletes, merges, refreshes);
    /// `userInfo["changes"]` is a `ContextChanges`.
    public static let managedObjectContextObjectsDidChange = Notification.Name("GranaryManagedObjectContextObjectsDidChange")
}

/// The object IDs a save or a change touched. A value: it crosses threads, and `mergeChanges(from:)`
/// applies it to another context.
public struct ContextChanges: Sendable, Hashable {
    public var inserted: Set<ManagedObjectID> = []
    public var updated: Set<ManagedObjectID> = []
    public var deleted: Set<ManagedObjectID> = []
    /// Objects refreshed from the store (merges, `refresh`), reported by objects-did-change only. A merge
    /// also lists here updated objects the context holds only as faults or not at all, so observers can
    /// re-evaluate them.
    public var refreshed: Set<ManagedObjectID> = []
    public init(inserted: Set<ManagedObjectID> = [], updated: Set<ManagedObjectID> = [], deleted: Set<ManagedObjectID> = [],
                refreshed: Set<ManagedObjectID> = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.refreshed = refreshed
    }
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && refreshed.isEmpty }
    public static let userInfoKey = "changes"
}

/// Fans saves out to subscribers (contexts that merge automatically, async sequences).
final class SaveFeed: Sendable {
    private struct State {
        var subscribers: [UInt64: @Sendable (ContextChanges, ObjectIdentifier) -> Void] = [:]
        var next: UInt64 = 1
    }
    private let state = Mutex(State())

    func subscribe(_ handler: @escaping @Sendable (ContextChanges, ObjectIdentifier) -> Void) -> UInt64 {
        state.withLock { s in
            defer { s.next += 1 }
            s.subscribers[s.next] = handler
            return s.next
        }
    }

    func unsubscribe(_ token: UInt64) { _ = state.withLock { $0.subscribers.removeValue(forKey: token) } }

    /// `source` identifies the saving context, so that it does not merge its own save.
    func publish(_ changes: ContextChanges, from source: ObjectIdentifier) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber(changes, source) }
    }
}
