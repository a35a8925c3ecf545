import Foundation
@_spi(GranaryRecords) import Granary

/// The store's reads of an import's existing objects, batch after batch, on another thread, while the
/// context's queue maps the elements whose objects are already in.
///
/// Reading rows is the store's work alone (finding each ID in the unique index, decoding the row), and
/// an eighth of the instructions of an import that is half updates: with two cores it costs the
/// importing thread only the making of the objects. Batches come back in order; the importer takes each one before it maps the
/// first element that needs it (`take()` waits for it if the reading thread is behind).
final class PrefetchPipeline: @unchecked Sendable {
    typealias Read = @Sendable () throws -> DetachedRecords

    /// How many batches there are, and how many the importer has taken.
    let count: Int
    private(set) var taken = 0

    // Shared with the reading thread, under `lock`.
    private let lock = NSLock()
    private var results: [Result<DetachedRecords, any Error>?] = []
    private var isCancelled = false
    /// Signalled once per batch read (or failed).
    private let ready = DispatchSemaphore(value: 0)
    private let finished = DispatchGroup()

    /// Starts reading `reads` in order on another thread. A read that fails ends the reading: its
    /// error is what `take()` gives for that batch.
    init(_ reads: [Read]) {
        count = reads.count
        finished.enter()
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            defer { finished.leave() }
            for read in reads {
                if lock.withLock({ isCancelled }) { return }
                let result = Result { try read() }
                lock.withLock { results.append(result) }
                ready.signal()
                if case .failure = result { return }
            }
        }
    }

    /// The next batch, in order, once it is read. Call it from the importing thread only, at most
    /// `count` times, and not after it threw.
    func take() throws -> DetachedRecords {
        precondition(taken < count, "every batch was taken")
        ready.wait()
        // Let go of the records once taken: the objects hold their values now.
        let result = lock.withLock {
            defer { results[taken] = nil }
            return results[taken]!
        }
        taken += 1
        return try result.get()
    }

    /// Stops the reading after the batch in progress and waits for the thread to let go of the store,
    /// so that nothing of an import runs on after it returned or threw.
    func cancel() {
        lock.withLock { isCancelled = true }
        finished.wait()
    }
}
