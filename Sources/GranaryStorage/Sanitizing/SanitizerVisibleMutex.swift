#if GRANARY_TSAN
import Glibc

/// A lock with `Synchronization.Mutex`'s `withLock`, built on a pthread mutex, that stands in for `Mutex`
/// in every module and test target of a ThreadSanitizer build (`make sanitize` defines GRANARY_TSAN).
///
/// On Linux, `Mutex` waits and wakes through futex system calls that ThreadSanitizer does not intercept, so
/// it cannot see that the lock orders two critical sections and reports races inside them that cannot
/// happen; ThreadSanitizer intercepts pthread mutexes. What it still reports with this lock in place is a
/// real race (or one of the few suppressed, with the reason, in .sanitizers/tsan.supp). Not compiled in
/// any other build.
public final class SanitizerVisibleMutex<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `mutex` is held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ initialValue: consuming sending Value) {
        value = initialValue
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock` does.
    /// - Throws: what `body` throws.
    public func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

/// Declared in the module, this name is found before the imported `Synchronization.Mutex`.
typealias Mutex = SanitizerVisibleMutex
#endif
