import Foundation
import Synchronization

/// Runs actions in lanes: one concurrent lane for generic actions (at most `genericLimit` at a time)
/// and one serial lane per entity name, each first in, first out. Different lanes run side by side.
///
/// Synchronous actions block a thread (they may wait on a web service), so they never run on Swift's
/// cooperative pool, whose few threads other tasks need, nor on a concurrent dispatch queue, which on
/// Linux runs no more blocks at once than there are cores: every running slot of a lane is a serial
/// dispatch queue of its own, which gets a thread of its own when it needs one. Async actions start
/// there and run in tasks of their own.
final class ActionScheduler: Sendable {
    /// A queued or running action: its proxy, its lane, and how to run it (calling `done` once at the end).
    struct Job: Sendable {
        let proxy: ActionProxy
        let lane: String?
        /// Finishes the proxy of a job cancelled before it started (it never runs).
        let withdrawn: @Sendable () -> Void
        let run: @Sendable (_ done: @escaping @Sendable () -> Void) -> Void
    }

    private struct Lane {
        /// One serial queue per slot: `capacity` of them.
        var queues: [DispatchQueue]
        var freeSlots: [Int]
        var waiting: [Job] = []
        var head = 0

        init(label: String, capacity: Int) {
            queues = (0..<capacity).map { DispatchQueue(label: capacity == 1 ? label : "\(label).\($0)", qos: .utility) }
            freeSlots = Array((0..<capacity).reversed())
        }

        var hasWaiting: Bool { head < waiting.count }

        /// Takes every waiting job out.
        mutating func drain() -> [Job] {
            defer {
                waiting = []
                head = 0
            }
            return Array(waiting[head...])
        }

        mutating func pop() -> Job {
            let job = waiting[head]
            head += 1
            // Drop the consumed front once it is most of the array, so a long-lived lane stays small.
            if head > 64, head * 2 > waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private struct State {
        var generic: Lane
        var entities: [String: Lane] = [:]
        /// Entity lanes in the order they first had work, so that none is starved by the order of a dictionary.
        var entityOrder: [String] = []
        var isSuspended = false
        /// Actions queued or running.
        var active = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Every queued or running proxy, for `cancelAll()`.
        var proxies: [ObjectIdentifier: ActionProxy] = [:]
    }

    private let state: Mutex<State>
    private let label: String
    /// Where actions withdrawn before they started are finished.
    private let queue: DispatchQueue

    init(label: String, genericLimit: Int) {
        self.label = label
        state = Mutex(State(generic: Lane(label: "\(label).generic", capacity: max(1, genericLimit))))
        queue = DispatchQueue(label: "\(label).withdrawn", qos: .utility)
    }

    var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Queued and running actions.
    var activeCount: Int { state.withLock { $0.active } }

    /// Queues `job` (its proxy moves to `pending`) and starts what may start.
    func submit(_ job: Job) {
        job.proxy.onCancelWhilePending { [weak self] proxy in self?.withdraw(proxy) }
        state.withLock { state in
            state.active += 1
            state.proxies[ObjectIdentifier(job.proxy)] = job.proxy
            if let name = job.lane {
                if state.entities[name] == nil {
                    state.entities[name] = Lane(label: "\(label).entity.\(name.lowercased())", capacity: 1)
                    state.entityOrder.append(name)
                }
                state.entities[name]!.waiting.append(job)
            } else {
                state.generic.waiting.append(job)
            }
        }
        job.proxy.move(to: .pending)
        pump()
    }

    func setSuspended(_ suspended: Bool) {
        state.withLock { $0.isSuspended = suspended }
        if !suspended { pump() }
    }

    /// Cancels every queued and running action. The queued ones leave their lanes first, all at once,
    /// so that none starts because a running one ended while the others were being cancelled.
    func cancelAll() {
        let (waiting, running) = state.withLock { state -> ([Job], [ActionProxy]) in
            var waiting = state.generic.drain()
            for name in state.entityOrder { waiting += state.entities[name]?.drain() ?? [] }
            let withdrawn = Set(waiting.map { ObjectIdentifier($0.proxy) })
            return (waiting, state.proxies.values.filter { !withdrawn.contains(ObjectIdentifier($0)) })
        }
        for job in waiting {
            job.proxy.cancel()
            finishWithdrawn(job)
        }
        for proxy in running { proxy.cancel() }
    }

    /// Returns when nothing is queued or running (at once if nothing is). A suspended connect with
    /// queued actions is not idle.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.active == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Starts the waiting jobs that have room in their lanes, unless suspended.
    private func pump() {
        let ready: [(job: Job, queue: DispatchQueue, slot: Int)] = state.withLock { state in
            guard !state.isSuspended else { return [] }
            var ready: [(job: Job, queue: DispatchQueue, slot: Int)] = []
            while state.generic.hasWaiting, let slot = state.generic.freeSlots.popLast() {
                ready.append((state.generic.pop(), state.generic.queues[slot], slot))
            }
            for name in state.entityOrder {
                guard var lane = state.entities[name], lane.hasWaiting, let slot = lane.freeSlots.popLast() else { continue }
                ready.append((lane.pop(), lane.queues[slot], slot))
                state.entities[name] = lane
            }
            return ready
        }
        for (job, queue, slot) in ready {
            queue.async {
                job.run { [self] in self.finished(job, slot: slot) }
            }
        }
    }

    private func finished(_ job: Job, slot: Int) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if let name = job.lane { state.entities[name]?.freeSlots.append(slot) } else { state.generic.freeSlots.append(slot) }
            return Self.leave(job.proxy, &state)
        }
        for waiter in waiters { waiter.resume() }
        pump()
    }

    /// Takes a pending proxy out of its lane (it was cancelled before it started) and finishes it; it
    /// stops counting as active once its completion has run.
    private func withdraw(_ proxy: ActionProxy) {
        let removed = state.withLock { state -> Job? in
            func remove(from lane: inout Lane) -> Job? {
                guard let index = lane.waiting[lane.head...].firstIndex(where: { $0.proxy === proxy }) else { return nil }
                return lane.waiting.remove(at: index)
            }
            if let name = proxy.entityName {
                guard var lane = state.entities[name] else { return nil }
                defer { state.entities[name] = lane }
                return remove(from: &lane)
            }
            return remove(from: &state.generic)
        }
        guard let removed else { return }
        finishWithdrawn(removed)
    }

    /// Finishes a job taken out of its lane before it started, off the canceller's thread (every
    /// completion runs on the connect's threads); it stops counting as active once its completion ran.
    private func finishWithdrawn(_ job: Job) {
        queue.async { [self] in
            job.withdrawn()
            let waiters = state.withLock { Self.leave(job.proxy, &$0) }
            for waiter in waiters { waiter.resume() }
        }
    }

    private static func leave(_ proxy: ActionProxy, _ state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.active -= 1
        state.proxies.removeValue(forKey: ObjectIdentifier(proxy))
        guard state.active == 0 else { return [] }
        defer { state.idleWaiters = [] }
        return state.idleWaiters
    }
}
