import Foundation
import Granary

/// A private root context owns the coordinator; the view context is its child, and background
/// contexts are children of the root too (siblings of the view context, not its children, so that
/// their work never runs on the view context's queue).
///
/// **Saves**: a child's `save()` pushes its changes into the root and returns; the root then writes
/// them to the store on its own queue, in the background. Errors of that write go to
/// `StackOptions.backgroundSaveErrorHandler`, and the changes stay in the root, where `flush()` tries
/// again and throws.
///
/// **Freshness**: when a background `save()` returns, its changes are in the root but not yet in the
/// store (nor on disk). The view context's fetches go through the root, so they include them at once;
/// objects the view context has already loaded are refreshed once the root has written them (the root's
/// save is merged into the view context). `await container.flush()` waits for both.
///
/// **IDs**: objects inserted in a child get permanent IDs before the child saves, so the child can go
/// on editing them after the root has written them. Reserving their keys is one small write, synced
/// like any other: a child save that inserts waits for one sync; edits and deletions do not.
///
/// Pick it when the view context's saves should not wait for the store's commit (the root writes them
/// later), and when a child's work should be visible to the view context's fetches as soon as it is
/// saved. Its cost: every fetch and fault of the view context and of background contexts goes through
/// the root's queue, which is busy while the root writes, so heavy imports make the view context wait
/// (see the bench).
public struct NestedStrategy: ContextStrategy {
    /// The root context's merge policy (see `init`).
    public var rootMergePolicy: MergePolicy
    /// The view context's merge policy (see `init`).
    public var viewMergePolicy: MergePolicy
    /// The background contexts' merge policy (see `init`).
    public var backgroundMergePolicy: MergePolicy

    /// - Parameters:
    ///   - rootMergePolicy: The root's policy when the store changed under it (another coordinator,
    ///     batch requests); object-trump by default, so its children's saves win per property.
    ///   - viewMergePolicy: The view context's policy (it matters only if you attach it elsewhere).
    ///   - backgroundMergePolicy: Background contexts' policy.
    public init(rootMergePolicy: MergePolicy = .mergeByPropertyObjectTrump, viewMergePolicy: MergePolicy = .mergeByPropertyStoreTrump,
                backgroundMergePolicy: MergePolicy = .mergeByPropertyObjectTrump) {
        self.rootMergePolicy = rootMergePolicy
        self.viewMergePolicy = viewMergePolicy
        self.backgroundMergePolicy = backgroundMergePolicy
    }

    /// Builds the contexts for one container.
    public func makeContexts(_ environment: StackEnvironment) -> NestedContexts {
        NestedContexts(environment, strategy: self)
    }
}

/// The contexts of the nested strategy: a private root on the coordinator, the view context and
/// background contexts as its children.
public final class NestedContexts: StackContexts {
    /// The private-queue context that owns the coordinator and writes its children's saves.
    public let rootContext: ManagedObjectContext
    /// The user interface's context.
    public let viewContext: ManagedObjectContext
    private let environment: StackEnvironment
    private let backgroundMergePolicy: MergePolicy
    private let observers: [ContextObserver]

    init(_ environment: StackEnvironment, strategy: NestedStrategy) {
        self.environment = environment
        self.backgroundMergePolicy = strategy.backgroundMergePolicy
        let root = environment.makeContext("root", queue: .privateQueue, mergePolicy: strategy.rootMergePolicy)
        rootContext = root
        viewContext = environment.makeContext("view", queue: environment.viewContextQueue, parent: root, mergePolicy: strategy.viewMergePolicy)
        // The root's saves (of any child's changes) refresh what the view context has loaded.
        viewContext.automaticallyMergesChangesFromParent = true
        observers = ChildSavePropagation.observers(root: root, environment: environment)
    }

    /// The contexts purged when a store is detached.
    public var ownedContexts: [ManagedObjectContext] { [rootContext, viewContext] }

    /// A new private-queue background context (see the strategy for where it sits).
    public func newBackgroundContext() -> ManagedObjectContext {
        environment.makeContext("background", queue: .privateQueue, parent: rootContext, mergePolicy: backgroundMergePolicy)
    }

    /// Waits for the merges (and root saves) queued so far.
    public func flush() async throws {
        try await rootContext.saveIfChanged(container: environment.containerName)
        await viewContext.drain()
    }
}

/// The root side of a nested layout: children of `root` get permanent IDs before they save, and their
/// saves are written to the store by the root, later, on its queue.
enum ChildSavePropagation {
    static func observers(root: ManagedObjectContext, environment: StackEnvironment) -> [ContextObserver] {
        let rootID = ObjectIdentifier(root)
        let isChild: @Sendable (ManagedObjectContext) -> Bool = { context in context.parent.map(ObjectIdentifier.init) == rootID }
        let container = environment.containerName
        let report = environment.reportBackgroundSaveFailure
        return [
            ContextObserver(.willSave, where: isChild) { context, _ in
                // If no store can reserve keys (not started, detached), the root's save meets the same
                // problem and reports it; the child's save into the root goes on.
                try? context.obtainPermanentIDsForInsertedObjects()
            },
            ContextObserver(.didSave, where: isChild) { [weak root] _, _ in
                root?.scheduleSave(container: container, report: report)
            },
        ]
    }
}
