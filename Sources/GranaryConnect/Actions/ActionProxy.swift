import Foundation
import Synchronization

/// The handle `execute` returns for one action: its state, how it ended, its statistics, and `cancel()`.
///
/// Every member is safe to use from any thread at any time; a state read is a consistent snapshot of
/// state, completion status, error and statistics together (``snapshot``).
///
/// ```swift
/// let proxy = try connect.execute(MyEntityAction()) { proxy in
///     print(proxy.completionStatus, proxy.statistics.executionTime)
/// }
/// for await state in proxy.stateUpdates { print(state) }   // pending, executing, finished
/// ```
public final class ActionProxy: Sendable, CustomStringConvertible {
    /// A consistent reading of everything the proxy knows.
    public struct Snapshot: Sendable {
        public var state: ActionState
        public var completionStatus: ActionCompletionStatus
        public var error: (any Error)?
        public var statistics: ActionStatistics
    }

    /// The action this proxy runs.
    public let action: any Action
    /// The entity lane the action runs in, or nil for a generic action.
    public let entityName: String?

    private struct Storage {
        var snapshot: Snapshot
        var cancelRequested = false
        /// Cancels the task an async action runs in, once it has one.
        var cancelTask: (@Sendable () -> Void)?
        var observers: [Int: AsyncStream<ActionState>.Continuation] = [:]
        var nextObserver = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// Set after the completion ran: `waitUntilFinished()` returns only then.
        var completionDone = false
    }

    private let storage: Mutex<Storage>
    /// Called once the action finished, with the proxy (the `completion` given to `execute`).
    private let completion: (@Sendable (ActionProxy) -> Void)?
    /// Told when `cancel()` is called while the action is pending, so that it leaves its lane now.
    private let onCancelWhilePending: Mutex<(@Sendable (ActionProxy) -> Void)?>

    init(action: any Action, entityName: String?, completion: (@Sendable (ActionProxy) -> Void)?) {
        self.action = action
        self.entityName = entityName
        self.completion = completion
        storage = Mutex(Storage(snapshot: Snapshot(state: .created, completionStatus: .unknown, error: nil,
                                                   statistics: ActionStatistics(createdTime: Date()))))
        onCancelWhilePending = Mutex(nil)
    }

    // MARK: Reading

    /// State, completion status, error and statistics read together.
    public var snapshot: Snapshot { storage.withLock { $0.snapshot } }
    public var state: ActionState { snapshot.state }
    public var completionStatus: ActionCompletionStatus { snapshot.completionStatus }
    /// The error `execute` threw, if it threw (also on a cancelled action).
    public var error: (any Error)? { snapshot.error }
    public var statistics: ActionStatistics { snapshot.statistics }
    /// Whether `cancel()` was called (the action may still be finishing).
    public var isCancelled: Bool { storage.withLock { $0.cancelRequested } }

    /// The states from now on: the current one first, then each change, ending after `finished`.
    public var stateUpdates: AsyncStream<ActionState> {
        let (stream, continuation) = AsyncStream<ActionState>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = storage.withLock { storage in
            continuation.yield(storage.snapshot.state)
            guard storage.snapshot.state != .finished else { return nil }
            let id = storage.nextObserver
            storage.nextObserver += 1
            storage.observers[id] = continuation
            return id
        }
        if let id {
            continuation.onTermination = { [weak self] _ in _ = self?.storage.withLock { $0.observers.removeValue(forKey: id) } }
        } else {
            continuation.finish()
        }
        return stream
    }

    /// Returns once the action has finished and its completion has run.
    public func waitUntilFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = storage.withLock { storage in
                if storage.completionDone { return true }
                storage.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    public var description: String {
        let s = snapshot
        let what = entityName.map { "entity action on \($0)" } ?? "generic action"
        return "\(type(of: action)) (\(what)): \(s.state), \(s.completionStatus)" + (s.error.map { ", error: \($0)" } ?? "")
    }

    // MARK: Cancelling

    /// Cancels the action: before it starts, it never runs and finishes `canceled` now (its completion
    /// still runs, once); while it runs, the action's `cancel()` is called (and an async action's task
    /// cancelled), and it finishes `canceled` whatever it then does. After it finished, nothing happens.
    public func cancel() {
        let (first, state, cancelTask) = storage.withLock { storage -> (Bool, ActionState, (@Sendable () -> Void)?) in
            guard storage.snapshot.state != .finished, !storage.cancelRequested else { return (false, storage.snapshot.state, nil) }
            storage.cancelRequested = true
            return (true, storage.snapshot.state, storage.cancelTask)
        }
        guard first else { return }
        action.cancel()
        cancelTask?()
        if state < .executing, let handler = onCancelWhilePending.withLock({ $0 }) { handler(self) }
    }

    // MARK: Driven by the connect

    func onCancelWhilePending(_ handler: @escaping @Sendable (ActionProxy) -> Void) {
        onCancelWhilePending.withLock { $0 = handler }
    }

    /// Moves to `state`, stamping the statistics; tells the state observers.
    func move(to state: ActionState) {
        storage.withLock { storage in
            guard storage.snapshot.state < state else { return }
            storage.snapshot.state = state
            if state == .executing { storage.snapshot.statistics.startTime = Date() }
            for observer in storage.observers.values { observer.yield(state) }
        }
    }

    /// Registers how to cancel an async action's task; cancels it at once if `cancel()` came first.
    func setTaskCanceller(_ cancel: @escaping @Sendable () -> Void) {
        let already = storage.withLock { storage in
            storage.cancelTask = cancel
            return storage.cancelRequested
        }
        if already { cancel() }
    }

    func updateContextStatistics(_ body: (inout ContextStatistics) -> Void) {
        storage.withLock { storage in
            var statistics = storage.snapshot.statistics.contextStatistics ?? ContextStatistics()
            body(&statistics)
            storage.snapshot.statistics.contextStatistics = statistics
        }
    }

    /// Finishes the action with what `execute` did (nil: returned), then runs the completion; the
    /// finish happens once, whoever calls it first.
    /// - Returns: Whether this call finished it.
    /// `beforeCompletion` runs after the state is `finished`, before the completion (the connect posts
    /// its finish notification there).
    @discardableResult
    func finish(error: (any Error)?, beforeCompletion: () -> Void = {}) -> Bool {
        let observers: [AsyncStream<ActionState>.Continuation]? = storage.withLock { storage in
            guard storage.snapshot.state != .finished else { return nil }
            storage.snapshot.state = .finished
            storage.snapshot.statistics.finishTime = Date()
            storage.snapshot.error = error
            storage.snapshot.completionStatus = storage.cancelRequested ? .canceled : error == nil ? .successful : .failed
            storage.cancelTask = nil
            let observers = Array(storage.observers.values)
            storage.observers = [:]
            return observers
        }
        guard let observers else { return false }
        for observer in observers {
            observer.yield(.finished)
            observer.finish()
        }
        beforeCompletion()
        completion?(self)
        let waiters = storage.withLock { storage in
            storage.completionDone = true
            defer { storage.waiters = [] }
            return storage.waiters
        }
        for waiter in waiters { waiter.resume() }
        return true
    }
}
