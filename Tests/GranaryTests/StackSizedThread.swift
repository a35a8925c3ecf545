import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Stack sizes hostile-input tests run on: 8 MB, the main thread's (and, on Linux, every thread's)
/// default, and 512 KB, what secondary threads get on Darwin. Code that recurses once per level of
/// its input must stay within the smaller one at its documented depth limit.
enum StackSize {
    static let main = 8 << 20
    static let secondary = 512 << 10
    static let all = [main, secondary]
}

/// Why a thread could not be started.
struct ThreadStartError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call) failed with error \(code)" }
}

private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

/// The start routine: takes over the retained body `onThread` passed and runs it. Its parameter is
/// optional on Linux and not on Darwin; a function taking an optional accepts both.
private func runThreadBody(_ raw: UnsafeMutableRawPointer?) {
    Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().run()
}

/// Runs `body` on a new thread with a stack of exactly `stackSize` bytes, waits for it, and returns what
/// it returned or throws what it threw.
///
/// Expectations belong on the calling thread: the new thread has none of the test's task-local state.
/// A stack overflow kills the whole test process, which is the failure these tests look for.
func onThread<T>(stackSize: Int, _ body: @escaping () throws -> T) throws -> T {
    var outcome: Result<T, any Error>?
    let job = Unmanaged.passRetained(ThreadBody { outcome = Result { try body() } })
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    let sizeResult = pthread_attr_setstacksize(&attributes, stackSize)
    guard sizeResult == 0 else {
        job.release()
        throw ThreadStartError(call: "pthread_attr_setstacksize(\(stackSize))", code: sizeResult)
    }
    #if canImport(Glibc)
    var thread = pthread_t()
    #else
    var thread: pthread_t?
    #endif
    let createResult = pthread_create(&thread, &attributes, { raw in
        runThreadBody(raw)
        return nil
    }, job.toOpaque())
    guard createResult == 0 else {
        job.release()
        throw ThreadStartError(call: "pthread_create", code: createResult)
    }
    #if canImport(Glibc)
    pthread_join(thread, nil)
    #else
    pthread_join(thread!, nil)
    #endif
    return try outcome!.get()
}
