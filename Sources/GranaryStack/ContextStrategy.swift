import Foundation
import Granary

/// How a `PersistentContainer` lays out its contexts: where the view context sits, where background
/// contexts attach, and how saves travel between them and the store.
///
/// Four strategies are built in (`.direct`, `.independent`, `.nested`, `.mixed`; see
/// <doc:ChoosingAContextStrategy> for which to pick). Write your own by returning a `StackContexts`
/// that builds the contexts and wires their merging:
///
/// ```swift
/// struct ReadOnlyViewStrategy: ContextStrategy {
///     func makeContexts(_ environment: StackEnvironment) -> DirectContexts {
///         let contexts = DirectStrategy().makeContexts(environment)
///         contexts.viewContext.isReadOnly = true
///         return contexts
///     }
/// }
/// ```
public protocol ContextStrategy: Sendable {
    associatedtype Contexts: StackContexts
    /// Builds the contexts of one container, once, when the container is created (before its stores
    /// are attached: contexts find their stores through the coordinator when they fetch and save).
    func makeContexts(_ environment: StackEnvironment) -> Contexts
}

/// The live contexts a strategy made for one container.
public protocol StackContexts: AnyObject, Sendable {
    /// The context the user interface reads from (a main-queue context unless the container's
    /// options ask for a private queue).
    var viewContext: ManagedObjectContext { get }
    /// The long-lived contexts the stack owns (a root context, the view context): when a store is
    /// detached, its objects are removed from these. Background contexts belong to their users.
    var ownedContexts: [ManagedObjectContext] { get }
    /// A new private-queue context for work off the view context, placed where the strategy says.
    func newBackgroundContext() -> ManagedObjectContext
    /// Waits until every merge and save the stack started on its own has run: the view context is up
    /// to date with the saves made so far, and (for strategies with a root context) the root's
    /// changes are in the store.
    /// - Throws: `StackError.backgroundSaveFailed` when a root context's save fails.
    func flush() async throws
}

/// What a strategy needs to build a container's contexts.
public struct StackEnvironment: Sendable {
    /// The container's coordinator; stores come and go on it.
    public let coordinator: PersistentStoreCoordinator
    /// The container's name, for context names and error messages.
    public let containerName: String
    /// The queue the view context must use (`StackOptions.viewContextQueue`).
    public let viewContextQueue: ManagedObjectContext.ConcurrencyType
    /// Reports a save the stack ran on its own that failed (see `StackOptions.backgroundSaveErrorHandler`).
    public let reportBackgroundSaveFailure: @Sendable (StackError) -> Void

    /// Containers make this; tests of a custom strategy can too.
    public init(coordinator: PersistentStoreCoordinator, containerName: String,
                viewContextQueue: ManagedObjectContext.ConcurrencyType,
                reportBackgroundSaveFailure: @escaping @Sendable (StackError) -> Void) {
        self.coordinator = coordinator
        self.containerName = containerName
        self.viewContextQueue = viewContextQueue
        self.reportBackgroundSaveFailure = reportBackgroundSaveFailure
    }

    /// A context of this container, named `<container>.<role>` so that logs and errors say which.
    public func makeContext(_ role: String, queue: ManagedObjectContext.ConcurrencyType, parent: ManagedObjectContext? = nil,
                            mergePolicy: MergePolicy) -> ManagedObjectContext {
        let context = parent.map { ManagedObjectContext(concurrencyType: queue, parent: $0) }
            ?? ManagedObjectContext(concurrencyType: queue, coordinator: coordinator)
        context.name = "\(containerName).\(role)"
        context.mergePolicy = mergePolicy
        return context
    }
}

extension ContextStrategy where Self == DirectStrategy {
    /// Every context on the coordinator; background saves merge into the view context.
    public static var direct: DirectStrategy { DirectStrategy() }
}

extension ContextStrategy where Self == IndependentStrategy {
    /// Every context on the coordinator; nothing merges: the view context is refreshed by hand.
    public static var independent: IndependentStrategy { IndependentStrategy() }
}

extension ContextStrategy where Self == NestedStrategy {
    /// A private root context owns the coordinator; the view and background contexts are its children.
    public static var nested: NestedStrategy { NestedStrategy() }
}

extension ContextStrategy where Self == MixedStrategy {
    /// The view context is a child of a private root; background contexts write to the coordinator.
    public static var mixed: MixedStrategy { MixedStrategy() }
}
