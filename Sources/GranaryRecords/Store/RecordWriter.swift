import Foundation
import Granary

/// The one serial writer of a `StoreManager`: writes run one after the other, in the order they were
/// enqueued, never two at a time.
///
/// Enqueueing is synchronous (a yield into an unbounded stream), so two writes enqueued back to back by
/// one thread keep that order; a single task drains the stream and awaits each write to its end (its
/// context's `perform`, its save, the view context's merge) before it starts the next.
final class RecordWriter: Sendable {
    typealias Job = @Sendable () async -> Void

    private let continuation: AsyncStream<Job>.Continuation

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self, bufferingPolicy: .unbounded)
        self.continuation = continuation
        Task.detached {
            for await job in stream { await job() }
        }
    }

    deinit { continuation.finish() }

    /// Adds a write at the end of the queue.
    func enqueue(_ job: @escaping Job) {
        continuation.yield(job)
    }
}
