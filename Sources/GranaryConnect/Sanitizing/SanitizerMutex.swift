#if GRANARY_TSAN
import GranaryStorage

/// In a ThreadSanitizer build, the module's `Mutex` is one ThreadSanitizer can see; see `SanitizerVisibleMutex`.
typealias Mutex = SanitizerVisibleMutex
#endif
