import Foundation
import Granary

/// A unit of work a ``Connect`` runs for you: executed on its queues, monitored through the
/// ``ActionProxy`` that `execute` returns, cancelled through that proxy.
///
/// Actions are called from the connect's threads (`execute`) and from whatever thread cancels them
/// (`cancel()`), so they are `Sendable`: keep the cancellation flag in a ``CancellationFlag`` (or any
/// lock) rather than a plain `var`.
public protocol Action: AnyObject, Sendable {
    /// Asks a running action to stop at its next check. Called at most once per execution, from any
    /// thread, also before the action starts (it then never runs). Cancellation is cooperative: the
    /// connect does not interrupt `execute`.
    func cancel()
}

/// Work that needs no store: a web-service call, a file to write. Runs concurrently with other generic
/// actions, up to ``ConnectOptions/maximumConcurrentGenericActions`` at a time.
///
/// ```swift
/// final class MyGenericAction: GenericAction {
///     let canceled = CancellationFlag()
///
///     func execute() throws {
///         guard !canceled.isSet else { return }
///         // Perform work here
///     }
///
///     func cancel() { canceled.set() }
/// }
/// ```
public protocol GenericAction: Action {
    /// The work, run on one of the connect's threads. A thrown error fails the action (or, after
    /// `cancel()`, is kept on a cancelled one).
    func execute() throws
}

/// ``GenericAction`` for `async` work: `cancel()` is called and the task running `execute()` is
/// cancelled too, so `Task.isCancelled`, `Task.checkCancellation()` and cancellable awaits (`URLSession`,
/// `Task.sleep`) see it.
public protocol AsyncGenericAction: Action {
    /// The work, run in a task of its own.
    func execute() async throws
}

/// Work on one entity's objects, typically a web-service call whose answer goes into the store. Runs
/// on a background context of the stack (its ``ActionContext``), and never at the same time as another
/// entity action on the same entity: each entity has a serial lane of its own; different entities run
/// side by side.
///
/// The entity must be *managed*: have uniqueness attributes (see ``Connect/managedEntityNames``), which
/// the connect needs to merge feeds into it. The context is not saved for you: save it, or let
/// `merge` save.
///
/// ```swift
/// final class MyEntityAction: EntityAction {
///     typealias ManagedObjectType = User
///     let canceled = CancellationFlag()
///
///     func execute(context: ActionContext) throws {
///         guard !canceled.isSet else { return }
///         let data = try webService.users()            // the call
///         guard !canceled.isSet else { return }
///         try User.parse(jsonData: data, in: context.managedObjectContext)
///         try context.save()
///     }
///
///     func cancel() { canceled.set() }
/// }
/// ```
public protocol EntityAction: Action {
    /// The class of the entity the action works on; its entity's name keys the action's lane.
    associatedtype ManagedObjectType: ManagedObject
    /// The entity's name, for models whose entities have no class of their own (`ManagedObjectType`
    /// is then `ManagedObject`); nil (the default): the entity whose class is `ManagedObjectType`.
    static var entityName: String? { get }
    /// The work, run on the context's queue (inside its `performAndWait`), so the context can be used
    /// directly.
    func execute(context: ActionContext) throws
}

extension EntityAction {
    public static var entityName: String? { nil }
}

/// ``EntityAction`` for `async` work. `execute(context:)` runs in a task of its own, off the context's
/// queue: reach the context through `context.perform { }`. `cancel()` also cancels the task.
public protocol AsyncEntityAction: Action {
    associatedtype ManagedObjectType: ManagedObject
    /// As ``EntityAction/entityName``.
    static var entityName: String? { get }
    func execute(context: ActionContext) async throws
}

extension AsyncEntityAction {
    public static var entityName: String? { nil }
}
