import Foundation
import Granary
import Synchronization

/// The task behind ``AutomaticMerging``: watches the store's history token and the clock, and merges.
///
/// It holds the ensemble weakly, so an ensemble the app lets go stops merging; `stop()` ends it at once
/// (deleech, dismantle).
final class AutomaticMerger: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// How often the history token is looked at when merging after saves: often enough that the delay
    /// is what the app chose, rarely enough to cost nothing (one read of the store's last transaction).
    static let tokenCheckInterval: Duration = .milliseconds(100)

    /// How long to wait before trying a failed automatic merge again: doubling from half a second (from
    /// five for errors that need the app), up to five minutes.
    static func retryDelay(after failures: Int, retryable: Bool) -> Duration {
        let base: Duration = retryable ? .milliseconds(500) : .seconds(5)
        return min(base * (1 << min(failures - 1, 10)), .seconds(300))
    }

    func start(_ ensemble: PersistentStoreEnsemble, policy: AutomaticMerging) {
        guard policy != .manual else { return }
        let history = HistoryReader(coordinator: ensemble.coordinator, store: ensemble.syncStore)
        // "Seen" is what the last capture read up to, not the token of now: a save made after a capture
        // (right after a leech, or while a merge runs) must start a merge. The merge's own save moves the
        // token past the capture too, which costs one idle merge whose capture skips it.
        let captured: @Sendable () -> PersistentHistoryToken? = { [weak ensemble] in
            guard let eventStore = ensemble?.mutable.withLock({ $0.pipeline?.eventStore }),
                  let state = try? eventStore.state() else { return nil }
            return (try? history.decode(state.historyToken)) ?? nil
        }
        let initial = captured() ?? (try? history.currentToken())
        let started = Task.detached { [weak ensemble] in
            var seenToken = initial
            var lastMerge = ContinuousClock.now
            var retryAt: ContinuousClock.Instant?
            var failures = 0
            let tick = min(policy.saveDelay.map { min($0, Self.tokenCheckInterval) } ?? .seconds(3600),
                           policy.pollingInterval ?? .seconds(3600), Self.tokenCheckInterval)
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                guard !Task.isCancelled else { return }
                let now = ContinuousClock.now
                // The store's token only matters when saves start merges; polling alone never reads it.
                let saved = policy.saveDelay != nil && (try? history.currentToken()) != seenToken
                let due = policy.pollingInterval.map { now - lastMerge >= $0 } ?? false
                let retry = retryAt.map { now >= $0 } ?? false
                guard saved || due || retry else { continue }
                if saved, let delay = policy.saveDelay {
                    try? await Task.sleep(for: delay)
                    guard !Task.isCancelled else { return }
                }
                guard let ensemble, ensemble.isLeeched else { return }
                do throws(SyncError) {
                    try await ensemble.merge()
                    failures = 0
                    retryAt = nil
                } catch {
                    // A failed merge may have captured the saves that started it and still not sent them
                    // (the cloud was away): try again, sooner for errors that pass by themselves.
                    failures += 1
                    let backoff = Self.retryDelay(after: failures, retryable: error.isRetryable)
                    retryAt = ContinuousClock.now + backoff
                    ensemble.log(.warning, "automatic merge failed (\(error)); next try in \(backoff)")
                    ensemble.delegate?.persistentStoreEnsemble(ensemble, didFailToMergeAutomaticallyWith: error)
                }
                seenToken = captured()
                lastMerge = ContinuousClock.now
            }
        }
        let previous = task.withLock { current in
            defer { current = started }
            return current
        }
        previous?.cancel()
    }

    func stop() {
        task.withLock { $0 }?.cancel()
    }
}
