import Foundation
import Granary

/// Every context attached to the coordinator; a background context's save is merged into the view
/// context automatically.
///
/// **Freshness**: when a background `save()` returns, the data is in the store (on disk for a durable
/// store); the merge into the view context is queued on the view context's queue and has run by the
/// view context's next turn (`await container.flush()` waits for it). The merge refreshes the objects
/// the view context has loaded, keeping its own unsaved edits on top, drops deleted ones, and
/// announces inserted ones without loading them.
///
/// **Conflicts**: a view-context save that meets a row changed since it was read (a background save
/// it had not merged yet) is resolved by `viewMergePolicy`; background contexts use
/// `backgroundMergePolicy`.
///
/// Pick it by default: the simplest layout, always fresh, every save straight to the store. Its cost
/// is that merges run on the view context's queue (the main queue), in proportion to the objects it
/// has loaded.
public struct DirectStrategy: ContextStrategy {
    /// The view context's merge policy (see `init`).
    public var viewMergePolicy: MergePolicy
    /// The background contexts' merge policy (see `init`).
    public var backgroundMergePolicy: MergePolicy

    /// - Parameters:
    ///   - viewMergePolicy: The view context's policy; store-trump by default, so that what background
    ///     work saved wins over stale edits per property.
    ///   - backgroundMergePolicy: Background contexts' policy; object-trump by default, so an import's
    ///     values win.
    public init(viewMergePolicy: MergePolicy = .mergeByPropertyStoreTrump,
                backgroundMergePolicy: MergePolicy = .mergeByPropertyObjectTrump) {
        self.viewMergePolicy = viewMergePolicy
        self.backgroundMergePolicy = backgroundMergePolicy
    }

    /// Builds the contexts for one container.
    public func makeContexts(_ environment: StackEnvironment) -> DirectContexts {
        DirectContexts(environment, strategy: self, mergesAutomatically: true)
    }
}

/// The contexts of the direct and independent strategies: a view context and background contexts, all
/// on the coordinator.
public final class DirectContexts: StackContexts {
    /// The user interface's context.
    public let viewContext: ManagedObjectContext
    private let environment: StackEnvironment
    private let backgroundMergePolicy: MergePolicy

    init(_ environment: StackEnvironment, strategy: DirectStrategy, mergesAutomatically: Bool) {
        self.environment = environment
        self.backgroundMergePolicy = strategy.backgroundMergePolicy
        viewContext = environment.makeContext("view", queue: environment.viewContextQueue, mergePolicy: strategy.viewMergePolicy)
        viewContext.automaticallyMergesChangesFromParent = mergesAutomatically
    }

    /// The contexts purged when a store is detached.
    public var ownedContexts: [ManagedObjectContext] { [viewContext] }

    /// A new private-queue background context (see the strategy for where it sits).
    public func newBackgroundContext() -> ManagedObjectContext {
        environment.makeContext("background", queue: .privateQueue, mergePolicy: backgroundMergePolicy)
    }

    /// Waits for the merges (and root saves) queued so far.
    public func flush() async throws {
        await viewContext.drain()
    }
}
