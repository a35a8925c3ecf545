import Foundation
import Granary
import GranaryStack

/// A persistent stack that also runs actions: Coherence's `Connect`. ``GenericConnect`` is the one to
/// make; code that only needs "a stack that runs actions" can take `some Connect` (and code that only
/// needs a stack, `some PersistentStack`).
public protocol Connect: PersistentStack {
    /// The entities entity actions and feed merges may name, with their key attributes in order; empty
    /// before `start()`. Coherence's rule, in its order: the entity's user info `uniquenessAttributes`
    /// (comma-separated attribute names, every one an attribute of the entity), else its superentity's
    /// setting, else its smallest uniqueness constraint. Abstract entities are never managed.
    var managedEntityKeys: [String: [String]] { get }

    /// Whether new actions are held in their lanes (running ones finish).
    var isSuspended: Bool { get }
    /// Holds new actions until `resume()`; running ones go on to their end.
    func suspend()
    /// Lets held actions start.
    func resume()

    /// Detaches every store, after cancelling every queued and running action. `start()` again attaches
    /// the default store again.
    func stop() throws(StackError)

    /// Queues a generic action.
    /// - Parameters:
    ///   - action: The action; the connect holds it until it finished.
    ///   - completion: Called once, after the action finished (on a thread of the connect).
    @discardableResult
    func execute(_ action: some GenericAction, completion: (@Sendable (ActionProxy) -> Void)?) -> ActionProxy

    /// Queues an async generic action.
    @discardableResult
    func execute(_ action: some AsyncGenericAction, completion: (@Sendable (ActionProxy) -> Void)?) -> ActionProxy

    /// Queues an entity action in its entity's lane.
    /// - Throws: ``ConnectError/unmanagedEntity(_:reason:)`` (at once; no proxy is made) and
    ///   ``ConnectError/notStarted``.
    @discardableResult
    func execute<A: EntityAction>(_ action: A, completion: (@Sendable (ActionProxy) -> Void)?) throws(ConnectError) -> ActionProxy

    /// Queues an async entity action in its entity's lane.
    /// - Throws: as `execute(_:completion:)` for entity actions.
    @discardableResult
    func execute<A: AsyncEntityAction>(_ action: A, completion: (@Sendable (ActionProxy) -> Void)?) throws(ConnectError) -> ActionProxy

    /// Cancels every queued and running action.
    func cancelAll()
    /// Returns when no action is queued or running (their completions have run).
    func waitUntilIdle() async
}

extension Connect {
    /// The managed entities' names.
    public var managedEntityNames: Set<String> { Set(managedEntityKeys.keys) }

    @discardableResult
    public func execute(_ action: some GenericAction) -> ActionProxy { execute(action, completion: nil) }

    @discardableResult
    public func execute(_ action: some AsyncGenericAction) -> ActionProxy { execute(action, completion: nil) }

    @discardableResult
    public func execute<A: EntityAction>(_ action: A) throws(ConnectError) -> ActionProxy { try execute(action, completion: nil) }

    @discardableResult
    public func execute<A: AsyncEntityAction>(_ action: A) throws(ConnectError) -> ActionProxy { try execute(action, completion: nil) }

    /// Runs a generic action and returns its proxy once it finished: the `async` way to wait for one.
    @discardableResult
    public func run(_ action: some GenericAction) async -> ActionProxy {
        let proxy = execute(action, completion: nil)
        await proxy.waitUntilFinished()
        return proxy
    }

    /// Runs an async generic action and returns its proxy once it finished.
    @discardableResult
    public func run(_ action: some AsyncGenericAction) async -> ActionProxy {
        let proxy = execute(action, completion: nil)
        await proxy.waitUntilFinished()
        return proxy
    }

    /// Runs an entity action and returns its proxy once it finished.
    /// - Throws: what `execute` throws (the action's own error is in the proxy).
    @discardableResult
    public func run<A: EntityAction>(_ action: A) async throws(ConnectError) -> ActionProxy {
        let proxy = try execute(action, completion: nil)
        await proxy.waitUntilFinished()
        return proxy
    }

    /// Runs an async entity action and returns its proxy once it finished.
    @discardableResult
    public func run<A: AsyncEntityAction>(_ action: A) async throws(ConnectError) -> ActionProxy {
        let proxy = try execute(action, completion: nil)
        await proxy.waitUntilFinished()
        return proxy
    }
}
