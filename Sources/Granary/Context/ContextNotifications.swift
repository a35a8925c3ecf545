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
    /// The key of the saving context's `name` in a did-save notification's `userInfo`, when it has one.
    public static let contextNameKey = "contextName"
    /// The key of the saving context's `transactionAuthor` in a did-save notification's `userInfo`,
    /// when it has one.
    public static let transactionAuthorKey = "transactionAuthor"
    /// The key of the inserted objects (`Set<ManagedObject>`) in a context notification's `userInfo`,
    /// as in Core Data (`NSInsertedObjectsKey`), for observers that want the objects themselves.
    public static let insertedObjectsKey = "inserted"
    /// The key of the updated objects (`Set<ManagedObject>`), Core Data's `NSUpdatedObjectsKey`.
    public static let updatedObjectsKey = "updated"
    /// The key of the deleted objects (`Set<ManagedObject>`), Core Data's `NSDeletedObjectsKey`.
    public static let deletedObjectsKey = "deleted"
    /// The key of the refreshed objects (`Set<ManagedObject>`), Core Data's `NSRefreshedObjectsKey`.
    public static let refreshedObjectsKey = "refreshed"

    /// A notification's `userInfo`: these changes under `userInfoKey`, and, under Core Data's keys,
    /// the objects of `context` they name (those it has registered; deleted ones are taken from
    /// `deletedObjects`, as they may have left the context by the time the notification is posted).
    ///
    /// `candidates` are objects the caller has at hand that the changes probably name (a save's
    /// objects, the context's changed objects): those of `context` whose IDs are listed are taken as
    /// they are, and the registry is only searched for the IDs they leave uncovered. A save of 100,000
    /// objects would otherwise look each one up again, for each of its two notifications.
    /// `candidatesAreRegistered` skips asking each candidate for its context (a weak reference) when
    /// the caller knows they are all registered in `context` (its changed objects always are).
    func userInfo(objectsIn context: ManagedObjectContext, candidates: some Sequence<ManagedObject> = [ManagedObject](),
                  candidatesAreRegistered: Bool = false, deletedObjects: Set<ManagedObject> = []) -> [AnyHashable: Any] {
        var found = (inserted: Set<ManagedObject>(minimumCapacity: inserted.count), updated: Set<ManagedObject>(minimumCapacity: updated.count),
                     deleted: deletedObjects.filter { deleted.contains($0.objectID) }, refreshed: Set<ManagedObject>(minimumCapacity: refreshed.count))
        let (anyInserted, anyUpdated, anyDeleted, anyRefreshed) = (!inserted.isEmpty, !updated.isEmpty, !deleted.isEmpty, !refreshed.isEmpty)
        if anyInserted || anyUpdated || anyRefreshed || (anyDeleted && found.deleted.count < deleted.count) {
            for object in candidates where candidatesAreRegistered || object.managedObjectContext === context {
                let id = object.objectID
                if anyInserted && inserted.contains(id) { found.inserted.insert(object) }
                if anyUpdated && updated.contains(id) { found.updated.insert(object) }
                if anyDeleted && deleted.contains(id) { found.deleted.insert(object) }
                if anyRefreshed && refreshed.contains(id) { found.refreshed.insert(object) }
            }
        }
        func complete(_ objects: inout Set<ManagedObject>, _ ids: Set<ManagedObjectID>) {
            guard objects.count < ids.count else { return }
            for id in ids { if let object = context.registeredObject(for: id) { objects.insert(object) } }
        }
        complete(&found.inserted, inserted)
        complete(&found.updated, updated)
        complete(&found.deleted, deleted)
        complete(&found.refreshed, refreshed)
        return userInfo(inserted: found.inserted, updated: found.updated, deleted: found.deleted, refreshed: found.refreshed)
    }

    /// A notification's `userInfo` for these changes with their objects already gathered (a save knows
    /// which object went where).
    func userInfo(inserted: Set<ManagedObject>, updated: Set<ManagedObject>, deleted: Set<ManagedObject>,
                  refreshed: Set<ManagedObject> = []) -> [AnyHashable: Any] {
        [Self.userInfoKey: self, Self.insertedObjectsKey: inserted, Self.updatedObjectsKey: updated,
         Self.deletedObjectsKey: deleted, Self.refreshedObjectsKey: refreshed]
    }
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

/// One notification of a context, as its `events()` sequence delivers it.
public enum ContextEvent: Sendable, Hashable {
    /// Objects changed (the `managedObjectContextObjectsDidChange` notification).
    case objectsDidChange(ContextChanges)
    /// The context is about to save.
    case willSave
    /// The context saved these changes.
    case didSave(ContextChanges)
}

/// Hands events to the async sequences made from it (context events, fetched-results differences);
/// a sequence leaves when its consumer stops iterating.
final class EventStreams<Element: Sendable>: Sendable {
    private struct State {
        var continuations: [UInt64: AsyncStream<Element>.Continuation] = [:]
        var next: UInt64 = 1
    }
    private let state = Mutex(State())

    func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream()
        let token = state.withLock { s in
            defer { s.next += 1 }
            s.continuations[s.next] = continuation
            return s.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: token) }
        }
        return stream
    }

    func yield(_ element: Element) {
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(element) }
    }

    /// Ends every sequence (the source goes away).
    func finish() {
        let continuations = state.withLock { s in
            defer { s.continuations = [:] }
            return Array(s.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}

extension ManagedObjectContext {
    /// This context's notifications as an async sequence, in the order they are posted: the
    /// Swift-concurrency form of observing `NotificationCenter`. Each call makes a new sequence that
    /// starts with the next event; it ends when the context goes away or the consumer stops iterating.
    public func events() -> AsyncStream<ContextEvent> { eventStreams.makeStream() }

    /// The changes of each save of this context, as an async sequence.
    public func didSaveChanges() -> AsyncCompactMapSequence<AsyncStream<ContextEvent>, ContextChanges> {
        events().compactMap { if case .didSave(let changes) = $0 { return changes } else { return nil } }
    }

    /// The changes of each objects-did-change notification of this context, as an async sequence.
    public func objectsDidChangeChanges() -> AsyncCompactMapSequence<AsyncStream<ContextEvent>, ContextChanges> {
        events().compactMap { if case .objectsDidChange(let changes) = $0 { return changes } else { return nil } }
    }
}

extension PersistentStoreCoordinator {
    /// The changes of every save that reaches this coordinator's stores, from any context, as an async
    /// sequence: what a cache, a search index or a sync engine follows to stay in step with the stores.
    public func didSaveChanges() -> AsyncStream<ContextChanges> {
        let (stream, continuation) = AsyncStream<ContextChanges>.makeStream()
        let token = didSaveFeed.subscribe { changes, _ in continuation.yield(changes) }
        continuation.onTermination = { [weak self] _ in self?.didSaveFeed.unsubscribe(token) }
        return stream
    }
}
