import Foundation

/// Runs an async bench (sync, connect) from the synchronous main program and waits for its result.
/// The bench runs alone and its options, scratch folder and progress function are only read, so handing
/// it to the detached task shares nothing that changes.
func runBlocking<T>(_ body: @escaping () async throws -> T) throws -> T {
    let box = BlockingResult<T>()
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) let body = body
    Task.detached {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

/// The result of a blocking run, handed from the task to the waiting thread.
private final class BlockingResult<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { lock.withLock { self.value = value } }
    func get() throws -> T { try lock.withLock { value! }.get() }
}
