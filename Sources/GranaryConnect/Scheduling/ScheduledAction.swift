import Foundation
import Synchronization

/// Actions run again and again to keep a cache fresh: made by `make` every `interval`, each only when
/// the previous run has finished (a slow server never piles runs up) and the condition holds. Cancel it
/// to stop; a connect's `stop()` cancels its schedules.
public final class ScheduledAction: Sendable {
    /// When a scheduled run may start.
    public enum Condition: Sendable {
        /// At every tick.
        case always
        /// Only while the connect's outbox has entries not acknowledged yet.
        case whenOutboxNotEmpty
        /// When the closure says so (read on the schedule's task).
        case when(@Sendable () -> Bool)
    }

    public let interval: Duration
    private struct State {
        var task: Task<Void, Never>?
        var last: ActionProxy?
        var runs = 0
        var isCancelled = false
    }
    private let state = Mutex(State())

    init(interval: Duration, condition: Condition, connect: some Connect, start: @escaping @Sendable () throws -> ActionProxy) {
        self.interval = interval
        let weakConnect = WeakConnect(connect)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled, let connect = weakConnect.value else { return }
                if let last = self.lastProxy, last.state != .finished { continue }
                switch condition {
                case .always: break
                case .whenOutboxNotEmpty:
                    guard let outbox = (connect as? any OutboxOwner)?.outbox, (try? outbox.pendingCount()) ?? 0 > 0 else { continue }
                case .when(let holds): guard holds() else { continue }
                }
                guard let proxy = try? start() else { continue }
                self.state.withLock { state in
                    state.last = proxy
                    state.runs += 1
                }
            }
        }
        state.withLock { $0.task = task }
    }

    /// The proxy of the latest run.
    public var lastProxy: ActionProxy? { state.withLock { $0.last } }
    /// How many runs started.
    public var runCount: Int { state.withLock { $0.runs } }
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Stops the schedule; a run under way goes on (cancel its proxy to stop it too).
    public func cancel() {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    deinit { state.withLock { $0.task?.cancel() } }
}

/// A connect with an outbox, for `.whenOutboxNotEmpty`.
protocol OutboxOwner {
    var outbox: Outbox? { get }
}
