import Foundation
import Synchronization

/// Delivers change summaries to observers in commit order, on the thread that published the commit,
/// never while the engine holds a lock (so an observer may read or even write the store).
final class ChangeFeed: Sendable {
    private struct State {
        var observers: [UInt64: @Sendable (ChangeSummary) -> Void] = [:]
        var nextToken: UInt64 = 1
        var queue: [ChangeSummary] = []
        var isDelivering = false
    }
    private let state = Mutex(State())

    func add(_ handler: @escaping @Sendable (ChangeSummary) -> Void) -> UInt64 {
        state.withLock { s in
            let token = s.nextToken
            s.nextToken += 1
            s.observers[token] = handler
            return token
        }
    }

    func remove(_ token: UInt64) {
        _ = state.withLock { $0.observers.removeValue(forKey: token) }
    }

    var hasObservers: Bool { state.withLock { !$0.observers.isEmpty } }

    /// Queues summaries (already in commit order) and delivers them unless another thread is already
    /// delivering, in which case that thread picks them up: this keeps the order without holding a lock
    /// while observers run.
    func publish(_ summaries: [ChangeSummary]) {
        let shouldDeliver = state.withLock { s -> Bool in
            if s.observers.isEmpty { return false }
            s.queue.append(contentsOf: summaries)
            if s.isDelivering { return false }
            s.isDelivering = true
            return true
        }
        guard shouldDeliver else { return }
        while true {
            let next = state.withLock { s -> ([ChangeSummary], [@Sendable (ChangeSummary) -> Void])? in
                if s.queue.isEmpty {
                    s.isDelivering = false
                    return nil
                }
                let batch = s.queue
                s.queue = []
                return (batch, s.observers.sorted { $0.key < $1.key }.map(\.value))
            }
            guard let (batch, observers) = next else { return }
            for summary in batch {
                for observer in observers { observer(summary) }
            }
        }
    }
}

/// Keeps a change observer registered; cancel it, or let it go, to stop observing.
public final class ChangeObservation: Sendable {
    private let cancelAction: Mutex<(@Sendable () -> Void)?>

    init(cancel: @escaping @Sendable () -> Void) {
        cancelAction = Mutex(cancel)
    }

    /// Stops delivery. Safe to call more than once.
    public func cancel() {
        let action = cancelAction.withLock { a -> (@Sendable () -> Void)? in
            defer { a = nil }
            return a
        }
        action?()
    }

    deinit { cancel() }
}
