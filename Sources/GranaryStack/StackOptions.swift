import Foundation
import Granary

/// How a stack is set up, beyond its name, model and strategy.
public struct StackOptions: Sendable {
    /// Where stores go when an attach call names no directory (and where `start()` puts the default
    /// store); `nil` means `StoreDirectory.defaultURL(for:)`, the per-user data directory.
    public var storeDirectory: URL?
    /// The view context's queue: `.mainQueue` (the default) for apps, whose main queue runs; or
    /// `.privateQueue` for command-line tools and services whose main thread runs their own code and
    /// never calls `dispatchMain()` or a run loop: there the main queue never runs, and a main-queue
    /// context's work and merges would wait forever. Under `swift test` on Linux the main queue runs
    /// (on a worker thread), so both work in tests.
    public var viewContextQueue: ManagedObjectContext.ConcurrencyType
    /// Called when a save the stack runs on its own fails (a root context writing its children's
    /// saves, a view context saving an editor's changes). The changes stay unsaved where they were,
    /// and `flush()` tries again and throws.
    public var backgroundSaveErrorHandler: (@Sendable (StackError) -> Void)?

    /// Options with the defaults: the per-user directory, a main-queue view context, no error handler.
    public init(storeDirectory: URL? = nil, viewContextQueue: ManagedObjectContext.ConcurrencyType = .mainQueue,
                backgroundSaveErrorHandler: (@Sendable (StackError) -> Void)? = nil) {
        self.storeDirectory = storeDirectory
        self.viewContextQueue = viewContextQueue
        self.backgroundSaveErrorHandler = backgroundSaveErrorHandler
    }
}
