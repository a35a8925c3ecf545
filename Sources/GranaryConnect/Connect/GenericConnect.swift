import Foundation
import Granary
import GranaryStack
import Logging
import Synchronization

/// A persistent stack laid out by `Strategy` that runs actions: Coherence's `GenericConnect`.
///
/// ```swift
/// let connect = GenericConnect<MixedStrategy>(name: "MyModelName")
/// try connect.start()
/// let proxy = try connect.execute(MyEntityAction(webService: service)) { proxy in
///     if proxy.completionStatus == .failed { print(proxy.error!) }
/// }
/// ```
///
/// Everything a `PersistentContainer` offers is here (it is one inside): the view context, background
/// contexts, stores attached and detached before or after `start()`. On top of it:
///
/// - generic actions run on a concurrent lane, at most ``ConnectOptions/maximumConcurrentGenericActions``
///   (5) at a time;
/// - entity actions run on one serial lane per entity, so two actions on one entity never overlap, while
///   different entities run side by side; an entity action is refused at once for an entity the connect
///   does not manage (see ``Connect/managedEntityKeys``);
/// - `suspend()`/`resume()`, `cancelAll()` and `waitUntilIdle()` act on every lane.
///
/// Start and finish of every action are posted as `Notification.Name.actionDidStartExecuting` and
/// `.actionDidFinishExecuting`.
public final class GenericConnect<Strategy: ContextStrategy>: Connect, OutboxOwner {
    /// The stack underneath.
    public let container: PersistentContainer
    let options: ConnectOptions
    private let scheduler: ActionScheduler
    private let notifier: ActionNotifier
    let logger: Logger

    private struct State {
        var isStarted = false
        var managed = ManagedEntities.none
        /// Why the model named like the connect could not be had (`init(name:)` does not throw).
        var modelFailure: StackError?
        var outbox: Outbox?
        var schedules: [ScheduledAction] = []
    }
    private let state: Mutex<State>

    /// A connect for a model built in code (or loaded from a model file), laid out by `strategy`.
    public convenience init(name: String, managedObjectModel model: ManagedObjectModel, strategy: Strategy,
                            options: ConnectOptions = ConnectOptions()) {
        self.init(container: PersistentContainer(name: name, model: model, strategy: strategy, options: options.stack),
                  options: options, modelFailure: nil)
    }

    /// A connect for the model named `name` (registered in `models`, or a model file found as
    /// `PersistentContainer(name:)` finds one), laid out by `strategy`. As in Coherence it does not
    /// throw: a model that cannot be had makes `start()` throw.
    public convenience init(name: String, strategy: Strategy, options: ConnectOptions = ConnectOptions(), models: ModelRegistry = .shared) {
        do {
            let container = try PersistentContainer(name: name, strategy: strategy, options: options.stack, models: models)
            self.init(container: container, options: options, modelFailure: nil)
        } catch {
            // An empty model cannot be invalid; the connect is unusable until it has a model anyway.
            let empty = try! ManagedObjectModel(entities: [])
            self.init(container: PersistentContainer(name: name, model: empty, strategy: strategy, options: options.stack),
                      options: options, modelFailure: error)
        }
    }

    /// A connect for the model named `name`, laid out by the strategy's defaults:
    /// `GenericConnect<MixedStrategy>(name: "MyModelName")`.
    public convenience init(name: String, options: ConnectOptions = ConnectOptions(), models: ModelRegistry = .shared) where Strategy: ConnectStrategy {
        self.init(name: name, strategy: .standard, options: options, models: models)
    }

    private init(container: PersistentContainer, options: ConnectOptions, modelFailure: StackError?) {
        self.container = container
        self.options = options
        scheduler = ActionScheduler(label: "GranaryConnect.\(container.name).actions", genericLimit: options.maximumConcurrentGenericActions)
        notifier = ActionNotifier(label: "GranaryConnect.\(container.name).notifications")
        logger = Logger(label: "GranaryConnect")
        state = Mutex(State(modelFailure: modelFailure))
    }

    /// A connect for a model built in code, laid out by the strategy's defaults.
    public convenience init(name: String, managedObjectModel model: ManagedObjectModel, options: ConnectOptions = ConnectOptions()) where Strategy: ConnectStrategy {
        self.init(name: name, managedObjectModel: model, strategy: .standard, options: options)
    }

    // MARK: PersistentStack

    public var name: String { container.name }
    public var managedObjectModel: ManagedObjectModel { container.managedObjectModel }
    public var persistentStoreCoordinator: PersistentStoreCoordinator { container.persistentStoreCoordinator }
    public var viewContext: ManagedObjectContext { container.viewContext }
    public var storeDirectory: URL { container.storeDirectory }
    public var isStarted: Bool { state.withLock { $0.isStarted } }
    public var persistentStores: [PersistentStore] { container.persistentStores }

    /// Opens the attached stores (or the default one) and finds the managed entities. Starting a started
    /// connect does nothing but log a warning (Coherence's behaviour); after `stop()` it attaches the
    /// default store again.
    /// - Throws: what `PersistentContainer.start()` throws; `.modelNotFound`/`.modelUnreadable` for a
    ///   connect made by name whose model could not be had.
    @discardableResult
    public func start() throws(StackError) -> Self {
        if let failure = state.withLock({ $0.modelFailure }) { throw failure }
        guard !isStarted else {
            logger.warning("start() called on connect '\(name)', which is already started; nothing done")
            return self
        }
        if container.isStarted {
            if container.persistentStores.isEmpty { try container.attachPersistentStore(for: StoreConfiguration()) }
        } else {
            try container.start()
        }
        let managed = ManagedEntities(model: managedObjectModel)
        for (entity, reason) in managed.unmanaged.sorted(by: { $0.key < $1.key }) {
            logger.debug("entity \(entity) is not managed: \(reason)")
        }
        state.withLock { state in
            state.managed = managed
            state.isStarted = true
        }
        return self
    }

    /// Cancels every action, waits for nothing, and detaches every store. Stopping a stopped connect
    /// does nothing but log a warning.
    public func stop() throws(StackError) {
        guard state.withLock({ state in
            defer { state.isStarted = false; state.managed = ManagedEntities.none }
            return state.isStarted
        }) else {
            logger.warning("stop() called on connect '\(name)', which is not started; nothing done")
            return
        }
        for schedule in state.withLock({ $0.schedules }) { schedule.cancel() }
        scheduler.cancelAll()
        try container.close()
    }

    /// `start()` off the caller's thread; `block` gets its error (nil on success) on a global queue, as
    /// Coherence's `start(block:)`.
    public func start(block: @escaping @Sendable ((any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            do { try start(); block(nil) } catch { block(error) }
        }
    }

    /// `stop()` off the caller's thread; `block` gets its error (nil on success) on a global queue.
    public func stop(block: @escaping @Sendable ((any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            do { try stop(); block(nil) } catch { block(error) }
        }
    }

    public func newBackgroundContext() -> ManagedObjectContext { container.newBackgroundContext() }

    @discardableResult
    public func attachPersistentStores(at directory: URL?, for configurations: [StoreConfiguration]) throws(StackError) -> [PersistentStore] {
        try container.attachPersistentStores(at: directory, for: configurations)
    }

    public func detach(persistentStores stores: [PersistentStore]) throws(StackError) {
        try container.detach(persistentStores: stores)
    }

    public func flush() async throws { try await container.flush() }

    // MARK: Lanes

    public var managedEntityKeys: [String: [String]] { state.withLock { $0.managed.keys } }
    public var isSuspended: Bool { scheduler.isSuspended }
    public func suspend() { scheduler.setSuspended(true) }
    public func resume() { scheduler.setSuspended(false) }
    public func cancelAll() { scheduler.cancelAll() }
    public func waitUntilIdle() async { await scheduler.waitUntilIdle() }

    /// Queued and running actions.
    public var activeActionCount: Int { scheduler.activeCount }

    // MARK: Executing

    @discardableResult
    public func execute(_ action: some GenericAction, completion: (@Sendable (ActionProxy) -> Void)?) -> ActionProxy {
        submit(action, lane: nil, completion: completion) { _ in try action.execute() }
    }

    @discardableResult
    public func execute(_ action: some AsyncGenericAction, completion: (@Sendable (ActionProxy) -> Void)?) -> ActionProxy {
        submitAsync(action, lane: nil, completion: completion) { _ in try await action.execute() }
    }

    @discardableResult
    public func execute<A: EntityAction>(_ action: A, completion: (@Sendable (ActionProxy) -> Void)?) throws(ConnectError) -> ActionProxy {
        let entity = try managedEntity(named: A.entityName, class: A.ManagedObjectType.self)
        return submit(action, lane: entity, completion: completion) { [self] proxy in
            let context = makeActionContext(for: A.self, entity: entity, proxy: proxy)
            defer { context.stopObserving() }
            try context.performAndWait { try action.execute(context: context) }
        }
    }

    @discardableResult
    public func execute<A: AsyncEntityAction>(_ action: A, completion: (@Sendable (ActionProxy) -> Void)?) throws(ConnectError) -> ActionProxy {
        let entity = try managedEntity(named: A.entityName, class: A.ManagedObjectType.self)
        return submitAsync(action, lane: entity, completion: completion) { [self] proxy in
            let context = makeActionContext(for: A.self, entity: entity, proxy: proxy)
            defer { context.stopObserving() }
            try await action.execute(context: context)
        }
    }

    /// Queues a synchronous action: `body` runs on the lane's thread unless the action was cancelled first.
    private func submit(_ action: some Action, lane: String?, completion: (@Sendable (ActionProxy) -> Void)?,
                        _ body: @escaping @Sendable (ActionProxy) throws -> Void) -> ActionProxy {
        let proxy = ActionProxy(action: action, entityName: lane, completion: completion)
        scheduler.submit(.init(proxy: proxy, lane: lane, withdrawn: withdrawn(proxy)) { [self] done in
            began(proxy)
            var failure: (any Error)?
            if !proxy.isCancelled {
                do { try body(proxy) } catch { failure = error }
            }
            ended(proxy, failure, done)
        })
        return proxy
    }

    /// Queues an async action: `body` runs in a task of its own, which cancelling the proxy cancels.
    private func submitAsync(_ action: some Action, lane: String?, completion: (@Sendable (ActionProxy) -> Void)?,
                             _ body: @escaping @Sendable (ActionProxy) async throws -> Void) -> ActionProxy {
        let proxy = ActionProxy(action: action, entityName: lane, completion: completion)
        scheduler.submit(.init(proxy: proxy, lane: lane, withdrawn: withdrawn(proxy)) { [self] done in
            began(proxy)
            let task = Task {
                var failure: (any Error)?
                if !proxy.isCancelled {
                    do { try await body(proxy) } catch { failure = error }
                }
                ended(proxy, failure, done)
            }
            proxy.setTaskCanceller { task.cancel() }
        })
        return proxy
    }

    // MARK: Helpers

    /// The managed entity an entity action names (by name, or by its class).
    /// - Throws: `.notStarted`, `.unknownEntityClass`, `.unmanagedEntity`.
    func managedEntity(named name: String?, class type: ManagedObject.Type) throws(ConnectError) -> String {
        let managed = state.withLock { $0.isStarted ? $0.managed : nil }
        guard let managed else { throw .notStarted }
        let entityName: String
        if let name {
            entityName = name
        } else if type != ManagedObject.self, let entity = managedObjectModel.entity(for: type) {
            entityName = entity.name
        } else {
            throw .unknownEntityClass(String(reflecting: type))
        }
        guard managed.keys[entityName] != nil else {
            throw .unmanagedEntity(entityName, reason: managed.unmanaged[entityName] ?? "the model has no entity of that name")
        }
        return entityName
    }

    private func makeActionContext<A>(for type: A.Type, entity: String, proxy: ActionProxy) -> ActionContext {
        let context = newBackgroundContext()
        context.name = "\(name).action.\(A.self)"
        context.mergePolicy = .mergeByPropertyObjectTrump
        // Saves of actions are the server's data: the outbox leaves them out.
        context.transactionAuthor = Outbox.actionAuthor
        var pending: (@Sendable (String) throws -> PendingLocalChanges)?
        if let outbox = self.outbox {
            pending = { entity in try outbox.pendingLocalChanges(of: entity) }
        }
        return ActionContext(context: context, entityName: entity, connect: self, proxy: proxy, pendingLocalChanges: pending)
    }

    // MARK: Schedules

    /// Runs a generic action made by `make` every `interval` while `condition` holds, each run only after
    /// the previous one finished.
    @discardableResult
    public func schedule(every interval: Duration, when condition: ScheduledAction.Condition = .always,
                         _ make: @escaping @Sendable () -> some GenericAction) -> ScheduledAction {
        keep(ScheduledAction(interval: interval, condition: condition, connect: self) { [weak self] in
            guard let self else { throw ConnectError.notStarted }
            return self.execute(make(), completion: nil)
        })
    }

    /// Runs an async generic action made by `make` every `interval` (see the generic form).
    @discardableResult
    public func schedule(every interval: Duration, when condition: ScheduledAction.Condition = .always,
                         _ make: @escaping @Sendable () -> some AsyncGenericAction) -> ScheduledAction {
        keep(ScheduledAction(interval: interval, condition: condition, connect: self) { [weak self] in
            guard let self else { throw ConnectError.notStarted }
            return self.execute(make(), completion: nil)
        })
    }

    /// Runs an entity action made by `make` every `interval`: the way to keep an entity's cache fresh.
    /// - Throws: ``ConnectError/unmanagedEntity(_:reason:)`` for an action on an unmanaged entity (checked now).
    @discardableResult
    public func schedule<A: EntityAction>(every interval: Duration, when condition: ScheduledAction.Condition = .always,
                                          _ make: @escaping @Sendable () -> A) throws(ConnectError) -> ScheduledAction {
        _ = try managedEntity(named: A.entityName, class: A.ManagedObjectType.self)
        return keep(ScheduledAction(interval: interval, condition: condition, connect: self) { [weak self] in
            guard let self else { throw ConnectError.notStarted }
            return try self.execute(make(), completion: nil)
        })
    }

    /// Runs an async entity action made by `make` every `interval`.
    @discardableResult
    public func schedule<A: AsyncEntityAction>(every interval: Duration, when condition: ScheduledAction.Condition = .always,
                                               _ make: @escaping @Sendable () -> A) throws(ConnectError) -> ScheduledAction {
        _ = try managedEntity(named: A.entityName, class: A.ManagedObjectType.self)
        return keep(ScheduledAction(interval: interval, condition: condition, connect: self) { [weak self] in
            guard let self else { throw ConnectError.notStarted }
            return try self.execute(make(), completion: nil)
        })
    }

    private func keep(_ schedule: ScheduledAction) -> ScheduledAction {
        state.withLock { state in
            state.schedules.removeAll { $0.isCancelled }
            state.schedules.append(schedule)
        }
        return schedule
    }

    // MARK: Outbox

    /// The outbox, once `enableOutbox` made it.
    public var outbox: Outbox? { state.withLock { $0.outbox } }

    /// Starts recording local edits of managed entities for the server (see ``Outbox``).
    /// - Parameters:
    ///   - transport: Sends one entry to the server.
    ///   - entities: The entities whose edits are sent; every managed entity when nil.
    ///   - store: The store whose history is read; the first store that tracks history when nil.
    ///   - retryPolicy: When a failed send is tried again.
    ///   - flushesAutomatically: Flush after every save, and retry failures by the policy; when false,
    ///     call `flush()` yourself (or schedule it).
    /// - Throws: ``ConnectError/notStarted``; ``ConnectError/outboxUnavailable(_:)`` when no store tracks
    ///   history, or an entity's key attribute is not kept on deletion; ``ConnectError/unmanagedEntity(_:reason:)``.
    @discardableResult
    public func enableOutbox(transport: some OutboxTransport, entities: Set<String>? = nil, store: PersistentStore? = nil,
                             retryPolicy: OutboxRetryPolicy = OutboxRetryPolicy(), flushesAutomatically: Bool = true) throws(ConnectError) -> Outbox {
        guard isStarted else { throw .notStarted }
        let managed = managedEntityKeys
        var keys: [String: [String]] = [:]
        for entity in entities ?? Set(managed.keys) {
            guard let attributes = managed[entity] else { throw .unmanagedEntity(entity, reason: "it has no uniqueness attributes") }
            keys[entity] = attributes
        }
        guard let store = store ?? persistentStores.first(where: \.tracksPersistentHistory) else {
            throw .outboxUnavailable("no attached store tracks persistent history (StoreConfiguration options: persistentHistoryTracking)")
        }
        let outbox = try Outbox(connect: self, store: store, keys: keys, transport: transport, retryPolicy: retryPolicy,
                                flushesAutomatically: flushesAutomatically, logger: logger)
        state.withLock { $0.outbox = outbox }
        return outbox
    }

    private func withdrawn(_ proxy: ActionProxy) -> @Sendable () -> Void {
        { [self] in ended(proxy, nil, {}) }
    }

    private func began(_ proxy: ActionProxy) {
        proxy.move(to: .executing)
        logger.trace("action \(type(of: proxy.action)) started")
        notifier.post(.actionDidStartExecuting, proxy: proxy, connect: self)
    }

    private func ended(_ proxy: ActionProxy, _ failure: (any Error)?, _ done: @Sendable () -> Void) {
        if let failure { logger.debug("action \(type(of: proxy.action)) threw: \(failure)") }
        proxy.finish(error: failure, beforeCompletion: { [self] in notifier.post(.actionDidFinishExecuting, proxy: proxy, connect: self) })
        done()
    }
}
