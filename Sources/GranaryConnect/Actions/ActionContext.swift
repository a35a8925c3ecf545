import Foundation
import Granary
import Synchronization

/// The context an entity action works in: a new background context of the connect's stack, made when
/// the action starts, with merge policy `.mergeByPropertyObjectTrump` (the server's answer, written by
/// the action, wins property by property over what the store holds), named after the action.
///
/// It forwards the context calls an action needs and counts them into the action's
/// ``ContextStatistics``; `managedObjectContext` is the context itself, for everything else — the
/// records module's `parse(jsonData:in:)`, `init(entityID:context:)` and key-path queries among them.
/// Its saves reach the view context as the stack's strategy says.
public final class ActionContext: @unchecked Sendable {
    // @unchecked: the context itself is thread-safe by its queue discipline (Core Data's rule); the
    // statistics go to the proxy's lock; `blockDepth` is touched only on the context's queue.

    /// The underlying context (use it on its queue: inside `execute(context:)` of a synchronous entity
    /// action you are on it).
    public let managedObjectContext: ManagedObjectContext
    /// The name of the entity the action works on.
    public let entityName: String
    /// The connect the action runs in.
    public let connect: any Connect
    private let proxy: ActionProxy
    /// The outbox's unsent local changes of an entity, for feed merges (nil: no outbox).
    let pendingLocalChanges: (@Sendable (String) throws -> PendingLocalChanges)?
    private var blockDepth = 0
    private var saveObserver: (any NSObjectProtocol)?

    init(context: ManagedObjectContext, entityName: String, connect: any Connect, proxy: ActionProxy,
         pendingLocalChanges: (@Sendable (String) throws -> PendingLocalChanges)? = nil) {
        managedObjectContext = context
        self.pendingLocalChanges = pendingLocalChanges
        self.entityName = entityName
        self.connect = connect
        self.proxy = proxy
        // An entity action has context statistics (zeros) even if it never fetches or saves.
        proxy.updateContextStatistics { _ in }
        saveObserver = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) {
            [proxy] notification in
            guard let changes = notification.userInfo?[ContextChanges.userInfoKey] as? ContextChanges else { return }
            proxy.updateContextStatistics { statistics in
                statistics.inserts += changes.inserted.count
                statistics.updates += changes.updated.count
                statistics.deletes += changes.deleted.count
            }
        }
    }

    deinit { stopObserving() }

    func stopObserving() {
        if let saveObserver { NotificationCenter.default.removeObserver(saveObserver) }
        saveObserver = nil
    }

    // MARK: Running on the context's queue

    /// Runs `body` on the context's queue and waits for it; the time counts as context block time
    /// (reentrant calls counted once).
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        try managedObjectContext.performAndWait { try timed(body) }
    }

    /// Runs `body` on the context's queue and returns its result asynchronously (for async actions).
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await managedObjectContext.perform { [self] in try timed(body) }
    }

    private func timed<T>(_ body: () throws -> T) rethrows -> T {
        blockDepth += 1
        let start = blockDepth == 1 ? ContinuousClock.now : nil
        defer {
            blockDepth -= 1
            if let start {
                let elapsed = Self.seconds(ContinuousClock.now - start)
                proxy.updateContextStatistics { $0.contextBlockTime += elapsed }
            }
        }
        return try body()
    }

    // MARK: The calls an action makes

    /// Fetches, counting the objects returned and the time.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        let start = ContinuousClock.now
        let objects = try managedObjectContext.fetch(request)
        let elapsed = Self.seconds(ContinuousClock.now - start)
        proxy.updateContextStatistics { statistics in
            statistics.fetches += objects.count
            statistics.fetchRequests += 1
            statistics.fetchTime += elapsed
        }
        return objects
    }

    /// Counts the objects a request would fetch (a fetch request, not counted as fetched objects).
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws -> Int {
        let start = ContinuousClock.now
        defer {
            let elapsed = Self.seconds(ContinuousClock.now - start)
            proxy.updateContextStatistics { statistics in
                statistics.fetchRequests += 1
                statistics.fetchTime += elapsed
            }
        }
        return try managedObjectContext.count(for: request)
    }

    /// Saves the context; its inserts, updates and deletes are counted (as are those of saves made on
    /// `managedObjectContext` directly).
    public func save() throws {
        let start = ContinuousClock.now
        defer {
            let elapsed = Self.seconds(ContinuousClock.now - start)
            proxy.updateContextStatistics { $0.saveTime += elapsed }
        }
        try managedObjectContext.save()
    }

    public var hasChanges: Bool { managedObjectContext.hasChanges }
    public func insert(_ object: ManagedObject) { managedObjectContext.insert(object) }
    public func delete(_ object: ManagedObject) { managedObjectContext.delete(object) }
    public func object(with id: ManagedObjectID) -> ManagedObject { managedObjectContext.object(with: id) }
    public func existingObject(with id: ManagedObjectID) throws -> ManagedObject { try managedObjectContext.existingObject(with: id) }
    public func rollback() { managedObjectContext.rollback() }
    public func reset() { managedObjectContext.reset() }

    /// Counts fetched objects that a helper (the feed merge) read without going through `fetch`.
    func recordFetch(objects: Int, requests: Int, time: TimeInterval) {
        proxy.updateContextStatistics { statistics in
            statistics.fetches += objects
            statistics.fetchRequests += requests
            statistics.fetchTime += time
        }
    }

    func recordSave(time: TimeInterval) {
        proxy.updateContextStatistics { $0.saveTime += time }
    }

    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
