import Foundation
import Synchronization

/// Runs work from the bench's synchronous main thread while serving the main queue, which the work
/// needs: a store manager's main context merges there, and GRDB schedules observations there.
enum MainLoop {
    /// Starts `body` in a task and runs the main run loop (and with it the main queue) until it ends.
    @discardableResult
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        try serve { finish in
            Task.detached {
                do { finish(.success(try await body())) } catch { finish(.failure(error)) }
            }
        }
    }

    /// Runs `body` on a new thread and serves the main run loop until it returns.
    static func serve<T: Sendable>(while body: @escaping @Sendable () throws -> T) throws -> T {
        try serve { finish in
            let thread = Thread {
                do { finish(.success(try body())) } catch { finish(.failure(error)) }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    /// Starts the work with a `finish` to call from any thread, then serves the main run loop until
    /// it is called.
    private static func serve<T: Sendable>(_ start: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
        precondition(Thread.isMainThread, "the main loop is served from the main thread")
        let outcome = Mutex<Result<T, any Error>?>(nil)
        start { result in
            outcome.withLock { $0 = result }
            // Wakes the run loop below at once; its timeout is only a backstop, so that polling does not
            // take the cores the measured work runs on.
            DispatchQueue.main.async {}
        }
        while true {
            if let result = outcome.withLock({ $0 }) { return try result.get() }
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        }
    }
}
