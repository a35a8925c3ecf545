import Foundation
import Granary
import Logging
import Synchronization

/// Store and forward: the local edits of managed entities, made while the server may be unreachable,
/// kept durably until the server has each one — the part Coherence announced and then removed (its
/// 5.0.0, PR #100), on Granary's persistent history.
///
/// The outbox *is* the store's history: every save into a store opened with
/// `persistentHistoryTracking` records its changes in the same engine commit as the save, so no crash
/// can keep an edit without its outbox entry. Saves by the connect's entity actions (server data:
/// transaction author ``actionAuthor``) are not entries. A cursor in the store's metadata marks the
/// last entry the server acknowledged; it moves after each successful send, so an entry is sent again
/// only if the process stopped between the server's answer and that commit — with the same
/// ``OutboxEntry/idempotencyKey``, which lets the server apply it once.
///
/// ```swift
/// let outbox = try connect.enableOutbox(transport: MyServerTransport(baseURL: url))
/// // … edits on the view context, saved while offline …
/// outbox.flush()   // or let it flush after saves and retry with backoff
/// ```
///
/// Entries go in save order, one at a time: an object's changes reach the server in the order they were
/// made. A failed send stops the flush; the next attempt comes after the retry policy's delay. A feed
/// merge (`ActionContext.merge(_:into:ignoreAttributes:subsetFilter:condition:batchSize:)`) leaves
/// alone every object with an entry not yet acknowledged: it neither overwrites it nor brings back one
/// deleted locally.
///
/// An insert or update whose object was deleted before it was sent is not sent: the delete that
/// follows it is.
public final class Outbox: Sendable {
    /// The transaction author of the connect's action contexts: their saves are server data, not edits.
    public static let actionAuthor = "GranaryConnect.action"
    static let cursorKey = "GranaryConnect.outbox.cursor"

    /// The entities whose local edits are sent, with their key attributes.
    public let keys: [String: [String]]
    public let retryPolicy: OutboxRetryPolicy
    /// Whether a save starts a flush, and a failure schedules the next attempt.
    public let flushesAutomatically: Bool
    let transport: any OutboxTransport
    let coordinator: PersistentStoreCoordinator
    let store: PersistentStore
    let logger: Logger
    private let connect: WeakConnect

    private struct State {
        var isFlushing = false
        var flushAgain = false
        var consecutiveFailures = 0
        var lastError: (any Error)?
        var retry: Task<Void, Never>?
        var saves: Task<Void, Never>?
        var sent = 0
    }
    private let state = Mutex(State())

    init(connect: some Connect, store: PersistentStore, keys: [String: [String]], transport: any OutboxTransport,
         retryPolicy: OutboxRetryPolicy, flushesAutomatically: Bool, logger: Logger) throws(ConnectError) {
        guard store.tracksPersistentHistory else {
            throw .outboxUnavailable("the store \(store.url?.path ?? "(in memory)") was opened without persistentHistoryTracking")
        }
        let model = connect.managedObjectModel
        for (entity, attributes) in keys.sorted(by: { $0.key < $1.key }) {
            guard let description = model.entity(named: entity) else { throw .outboxUnavailable("the model has no entity \(entity)") }
            for name in attributes where description.attributesByName[name]?.preservesValueInHistoryOnDeletion != true {
                throw .outboxUnavailable("\(entity).\(name) is a key attribute but not kept on deletion (preservesValueInHistoryOnDeletion): a deleted \(entity) could not be named to the server")
            }
        }
        self.connect = WeakConnect(connect)
        self.store = store
        self.keys = keys
        self.transport = transport
        self.retryPolicy = retryPolicy
        self.flushesAutomatically = flushesAutomatically
        self.logger = logger
        coordinator = connect.persistentStoreCoordinator
        // First use on this store: edits saved before the outbox existed are not sent.
        if store.metadata.userInfo[Self.cursorKey] == nil {
            let current = coordinator.currentPersistentHistoryToken(fromStores: [store])?.transactionNumber ?? 0
            do { try writeCursor(Cursor(transaction: current, change: Int.max)) } catch {
                throw .outboxUnavailable("cannot write the outbox cursor: \(error)")
            }
        }
        if flushesAutomatically { watchSaves() }
    }

    deinit {
        state.withLock { state in
            state.retry?.cancel()
            state.saves?.cancel()
        }
    }

    // MARK: Reading

    /// The entries not yet acknowledged, in order, with their objects' current values.
    /// - Throws: `ContextError` from reading the history or the objects.
    public func pendingEntries() throws -> [OutboxEntry] {
        try entries(readingValues: true)
    }

    /// How many entries wait, without reading their objects.
    public func pendingCount() throws -> Int { try changes().count }

    /// Entries sent and acknowledged by this process.
    public var sentCount: Int { state.withLock { $0.sent } }
    /// Failed sends in a row (0 after a success).
    public var consecutiveFailures: Int { state.withLock { $0.consecutiveFailures } }
    /// The last send's error, until a send succeeds.
    public var lastError: (any Error)? { state.withLock { $0.lastError } }

    /// The keys of objects with unacknowledged entries, for feed merges.
    func pendingLocalChanges(of entity: String) throws -> PendingLocalChanges {
        guard let attributes = keys[entity] else { return PendingLocalChanges() }
        var result = PendingLocalChanges()
        let context = readerContext()
        for change in try changes() where change.change.changedObjectID.entityName == entity {
            let key: FeedKey?
            if change.change.changeType == .delete {
                key = FeedKey(values: attributes.map { Self.tombstoneValue(change.change, $0) })
            } else {
                key = try context.performAndWait { () throws -> FeedKey? in
                    guard let object = try? context.existingObject(with: change.change.changedObjectID) else { return nil }
                    return try FeedKey.of(object: object, attributes: attributes)
                }
            }
            guard let key else { continue }
            if change.change.changeType == .delete {
                result.deleted.insert(key)
                result.updated.remove(key)
            } else {
                result.updated.insert(key)
                result.deleted.remove(key)
            }
        }
        return result
    }

    // MARK: Sending

    /// Queues a flush on the connect's generic lane: every pending entry is sent in order until one
    /// fails. Only one flush sends at a time; one asked for meanwhile runs after it.
    @discardableResult
    public func flush() -> ActionProxy? {
        guard let connect = connect.value else { return nil }
        return connect.execute(OutboxFlushAction(outbox: self), completion: nil)
    }

    /// Flushes every `interval` while entries wait (besides the flushes after saves and the retries):
    /// for apps whose server comes back without the app saving anything.
    @discardableResult
    public func flush(every interval: Duration) -> ScheduledAction? {
        guard let connect = connect.value as? any OutboxScheduling else { return nil }
        return connect.schedule(every: interval, when: .whenOutboxNotEmpty) { [self] in OutboxFlushAction(outbox: self) }
    }

    /// Sends the pending entries now, in order, and returns how many were sent.
    /// - Throws: the transport's error for the entry that failed (those before it stay sent).
    @discardableResult
    public func send() async throws -> Int {
        let mine = state.withLock { state -> Bool in
            if state.isFlushing { state.flushAgain = true; return false }
            state.isFlushing = true
            return true
        }
        guard mine else { return 0 }
        var total = 0
        do {
            while true {
                total += try await sendPending()
                let again = state.withLock { state -> Bool in
                    if state.flushAgain { state.flushAgain = false; return true }
                    state.isFlushing = false
                    return false
                }
                if !again { break }
            }
        } catch {
            let failures = state.withLock { state -> Int in
                state.isFlushing = false
                state.flushAgain = false
                state.consecutiveFailures += 1
                state.lastError = error
                return state.consecutiveFailures
            }
            logger.warning("outbox: a send failed (\(failures) in a row): \(error)")
            if flushesAutomatically, !(error is CancellationError) { scheduleRetry(after: retryPolicy.delay(afterFailures: failures)) }
            throw error
        }
        return total
    }

    private func sendPending() async throws -> Int {
        var sent = 0
        for entry in try entries(readingValues: true) {
            try Task.checkCancellation()
            if entry.kind != .delete, entry.values.isEmpty {
                // The object is gone: its delete follows and is what the server needs.
                try writeCursor(Cursor(transaction: entry.token.transactionNumber, change: entry.changeIndex))
                continue
            }
            try await transport.send(entry)
            try writeCursor(Cursor(transaction: entry.token.transactionNumber, change: entry.changeIndex))
            sent += 1
            state.withLock { state in
                state.sent += 1
                state.consecutiveFailures = 0
                state.lastError = nil
            }
        }
        return sent
    }

    private func scheduleRetry(after delay: Duration) {
        let task = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            self?.flush()
        }
        state.withLock { state in
            state.retry?.cancel()
            state.retry = task
        }
    }

    /// Flushes after every save that reaches the coordinator (a flush with nothing pending costs one
    /// history read).
    private func watchSaves() {
        let saves = coordinator.didSaveChanges()
        let task = Task { [weak self] in
            for await _ in saves {
                guard let self else { return }
                if self.state.withLock({ $0.retry == nil || $0.consecutiveFailures == 0 }) { self.flush() }
            }
        }
        state.withLock { $0.saves = task }
    }

    // MARK: History

    /// A change of an outbox entity after the cursor, with its place.
    private struct PendingChange {
        var change: PersistentHistoryChange
        var transaction: PersistentHistoryTransaction
        var index: Int
    }

    private struct Cursor {
        var transaction: Int64
        /// The last acknowledged change of `transaction`; `Int.max`: all of it.
        var change: Int

        init(transaction: Int64, change: Int) {
            self.transaction = transaction
            self.change = change
        }

        init?(_ text: String) {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let transaction = Int64(parts[0]), let change = Int(parts[1]) else { return nil }
            self.init(transaction: transaction, change: change)
        }

        var text: String { "\(transaction):\(change)" }
    }

    private func readCursor() -> Cursor {
        store.metadata.userInfo[Self.cursorKey].flatMap(Cursor.init) ?? Cursor(transaction: 0, change: Int.max)
    }

    private func writeCursor(_ cursor: Cursor) throws {
        try coordinator.setMetadataValue(cursor.text, forKey: Self.cursorKey, for: store)
    }

    private func changes() throws -> [PendingChange] {
        let cursor = readCursor()
        let after = cursor.change == Int.max ? cursor.transaction : cursor.transaction - 1
        var request = PersistentHistoryChangeRequest.fetchHistory(after: after > 0 ? PersistentHistoryToken(storeIdentifier: store.identifier, transactionNumber: after) : nil)
        request.affectedStores = [store]
        var result: [PendingChange] = []
        for transaction in try coordinator.execute(request).transactions where transaction.author != Self.actionAuthor {
            for (index, change) in transaction.changes.enumerated() where keys[change.changedObjectID.entityName] != nil {
                if transaction.transactionNumber == cursor.transaction, index <= cursor.change { continue }
                result.append(PendingChange(change: change, transaction: transaction, index: index))
            }
        }
        return result
    }

    private func entries(readingValues: Bool) throws -> [OutboxEntry] {
        let context = readerContext()
        let pendingChanges = try changes()
        // An object deleted later in the outbox is named by its delete's tombstone in its earlier entries too.
        var deletedKeys: [ManagedObjectID: [String: Value]] = [:]
        for pending in pendingChanges where pending.change.changeType == .delete {
            let attributes = keys[pending.change.changedObjectID.entityName] ?? []
            deletedKeys[pending.change.changedObjectID] = Dictionary(uniqueKeysWithValues: attributes.map { ($0, Self.tombstoneValue(pending.change, $0)) })
        }
        return try pendingChanges.map { pending in
            let change = pending.change
            let entity = change.changedObjectID.entityName
            let attributes = keys[entity] ?? []
            let kind: OutboxEntry.Kind = switch change.changeType {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
            var key: [String: Value] = [:]
            var values: [String: Value] = [:]
            if kind == .delete {
                for name in attributes { key[name] = Self.tombstoneValue(change, name) }
            } else if readingValues {
                try context.performAndWait {
                    guard let object = try? context.existingObject(with: change.changedObjectID) else { return }
                    for attribute in object.entity.attributes where !attribute.isTransient {
                        values[attribute.name] = FeedKey.value(try object.value(forKey: attribute.name)) ?? .null
                    }
                    for name in attributes { key[name] = values[name] ?? .null }
                }
            }
            if key.isEmpty, let deleted = deletedKeys[change.changedObjectID] { key = deleted }
            let changed = change.updatedProperties ?? (kind == .insert ? Set(values.keys) : [])
            return OutboxEntry(idempotencyKey: "\(store.identifier.uuidString)-\(pending.transaction.transactionNumber)-\(pending.index)",
                               entityName: entity, kind: kind, key: key, values: values, changedProperties: changed,
                               token: pending.transaction.token, changeIndex: pending.index, timestamp: pending.transaction.timestamp)
        }
    }

    /// A key attribute's value as a delete's tombstone kept it.
    private static func tombstoneValue(_ change: PersistentHistoryChange, _ attribute: String) -> Value {
        change.tombstone?[attribute].flatMap { FeedKey.value($0) } ?? .null
    }

    private func readerContext() -> ManagedObjectContext {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.name = "GranaryConnect.outbox"
        return context
    }
}

/// The flush as an action, so that it is monitored, cancelled and waited for like any other.
final class OutboxFlushAction: AsyncGenericAction {
    let outbox: Outbox
    init(outbox: Outbox) { self.outbox = outbox }
    func execute() async throws { try await outbox.send() }
    func cancel() {}
}

/// A connect that can schedule actions, for `Outbox.flush(every:)`.
protocol OutboxScheduling: Connect {
    @discardableResult
    func schedule(every interval: Duration, when condition: ScheduledAction.Condition,
                  _ make: @escaping @Sendable () -> some AsyncGenericAction) -> ScheduledAction
}

extension GenericConnect: OutboxScheduling {}

/// A weak reference to a connect, for the outbox it owns.
final class WeakConnect: Sendable {
    private let box: Mutex<WeakBox>
    private struct WeakBox { weak var value: (any Connect)? }
    init(_ value: any Connect) { box = Mutex(WeakBox(value: value)) }
    var value: (any Connect)? { box.withLock { $0.value } }
}
