import Foundation

/// The process's resident memory, for the memory-per-object row: what the kernel says the process
/// holds, so that every allocation counts whoever made it (objects, their value arrays, the context's
/// registry, strings), with no estimate of object sizes.
enum ResidentMemory {
    /// Resident bytes now: the second field of /proc/self/statm (pages) times the page size.
    static func current() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Runs `body` and returns what it built with the growth of resident memory while it is kept alive.
    ///
    /// Free memory goes back to the kernel (`malloc_trim`) before the first reading and before the second,
    /// so that memory freed earlier in the run cannot hide new allocations and temporaries freed by
    /// `body` do not count. The caller must keep the result alive until this returns (it does, by
    /// receiving it).
    static func growth<T>(_ body: () throws -> T) rethrows -> (result: T, bytes: Int) {
        trim()
        let before = current()
        let result = try body()
        trim()
        return (result, current() - before)
    }

    /// glibc's `malloc_trim`, looked up at run time: `<malloc.h>` is not part of the Glibc module. `nil`
    /// with another C library, where the readings then include free memory the allocator kept.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    static func trim() {
        _ = mallocTrim?(0)
    }
}
