import Synchronization

/// Runs an ensemble's operations one at a time, in the order they were asked for.
///
/// An actor alone does not serialize async work (it is reentrant at every `await`), and a leech, merge
/// and deleech await the cloud many times: two merges interleaving there would both capture and both
/// export. A merge asked for while one runs waits and then runs, as Ensembles queues its merges.
final class EnsembleOperationQueue: Sendable {
    private struct Gate {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let gate = Mutex(Gate())

    var isBusy: Bool { gate.withLock { $0.busy } }

    func run<T>(_ operation: () async throws(SyncError) -> T) async throws(SyncError) -> T {
        await enter()
        defer { leave() }
        return try await operation()
    }

    private func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = gate.withLock { gate in
                if gate.busy {
                    gate.waiting.append(continuation)
                    return false
                }
                gate.busy = true
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    /// Hands the gate straight to the next waiter (still busy), so no newcomer can overtake it.
    private func leave() {
        let next = gate.withLock { gate -> CheckedContinuation<Void, Never>? in
            if gate.waiting.isEmpty {
                gate.busy = false
                return nil
            }
            return gate.waiting.removeFirst()
        }
        next?.resume()
    }
}
