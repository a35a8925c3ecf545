import Foundation
import Granary

/// The view context is a child of a private root context, and its saves reach the store through the
/// root, in the background; background contexts attach straight to the coordinator, and their saves
/// are merged into the root and then into the view context.
///
/// **Freshness**: when a background `save()` returns, the data is in the store (on disk for a durable
/// store); the merge is queued on the root's queue, then on the view context's, and has run by their
/// next turns (`await container.flush()` waits for it). As with `.direct`, loaded objects are
/// refreshed, deleted ones dropped, inserted ones announced without being loaded.
///
/// **View saves**: the view context's `save()` pushes into the root and returns without waiting for
/// the disk; the root writes in the background (errors go to `StackOptions.backgroundSaveErrorHandler`,
/// and `flush()` tries again and throws). Objects inserted in the view context get permanent IDs
/// before it saves (one small synced write that reserves their keys), so it can go on editing them.
///
/// Pick it for apps whose user edits should not wait for the store's commit and whose background
/// imports should never go through the view context's queue: imports write on their own, and the view
/// context's fetches wait for the root only while it writes the user's (small) saves.
public struct MixedStrategy: ContextStrategy {
    /// The root context's merge policy (see `init`).
    public var rootMergePolicy: MergePolicy
    /// The view context's merge policy (see `init`).
    public var viewMergePolicy: MergePolicy
    /// The background contexts' merge policy (see `init`).
    public var backgroundMergePolicy: MergePolicy

    /// - Parameters:
    ///   - rootMergePolicy: The root's policy when a background save changed rows the view context's
    ///     save also changed; store-trump by default, as for the view context of `.direct`.
    ///   - viewMergePolicy: The view context's policy (it matters only if you attach it elsewhere).
    ///   - backgroundMergePolicy: Background contexts' policy; object-trump by default.
    public init(rootMergePolicy: MergePolicy = .mergeByPropertyStoreTrump, viewMergePolicy: MergePolicy = .mergeByPropertyStoreTrump,
                backgroundMergePolicy: MergePolicy = .mergeByPropertyObjectTrump) {
        self.rootMergePolicy = rootMergePolicy
        self.viewMergePolicy = viewMergePolicy
        self.backgroundMergePolicy = backgroundMergePolicy
    }

    /// Builds the contexts for one container.
    public func makeContexts(_ environment: StackEnvironment) -> MixedContexts {
        MixedContexts(environment, strategy: self)
    }
}

/// The contexts of the mixed strategy: a private root on the coordinator with the view context as its
/// child; background contexts on the coordinator.
public final class MixedContexts: StackContexts {
    /// The private-queue context that owns the coordinator and writes the view context's saves.
    public let rootContext: ManagedObjectContext
    /// The user interface's context.
    public let viewContext: ManagedObjectContext
    private let environment: StackEnvironment
    private let backgroundMergePolicy: MergePolicy
    private let observers: [ContextObserver]

    init(_ environment: StackEnvironment, strategy: MixedStrategy) {
        self.environment = environment
        self.backgroundMergePolicy = strategy.backgroundMergePolicy
        let root = environment.makeContext("root", queue: .privateQueue, mergePolicy: strategy.rootMergePolicy)
        let view = environment.makeContext("view", queue: environment.viewContextQueue, parent: root, mergePolicy: strategy.viewMergePolicy)
        rootContext = root
        viewContext = view
        let rootID = ObjectIdentifier(root)
        let coordinatorID = ObjectIdentifier(environment.coordinator)
        // Saves of contexts on the coordinator other than the root: the background contexts.
        let isBackground: @Sendable (ManagedObjectContext) -> Bool = { context in
            context.parent == nil && ObjectIdentifier(context) != rootID
                && context.persistentStoreCoordinator.map(ObjectIdentifier.init) == coordinatorID
        }
        observers = ChildSavePropagation.observers(root: root, environment: environment) + [
            ContextObserver(.didSave, where: isBackground) { [weak root, weak view] _, changes in
                guard let root, let view else { return }
                // The root first, so that the view context's refresh (which reads through the root)
                // sees the new values.
                root.schedule {
                    root.mergeChanges(fromContextDidSave: changes)
                    view.schedule { view.mergeChanges(fromContextDidSave: changes) }
                }
            },
        ]
    }

    /// The contexts purged when a store is detached.
    public var ownedContexts: [ManagedObjectContext] { [rootContext, viewContext] }

    /// A new private-queue background context (see the strategy for where it sits).
    public func newBackgroundContext() -> ManagedObjectContext {
        environment.makeContext("background", queue: .privateQueue, mergePolicy: backgroundMergePolicy)
    }

    /// Waits for the merges (and root saves) queued so far.
    public func flush() async throws {
        try await rootContext.saveIfChanged(container: environment.containerName)
        await viewContext.drain()
    }
}
