import Foundation
import Granary

/// A ready-made Core Data stack: a model, a coordinator with its stores, a view context for the user
/// interface and background contexts for work off it, set up in one line and started with `start()`.
///
/// Two kinds are built in: `PersistentContainer`, whose `ContextStrategy` (chosen when it is made)
/// decides how contexts are laid out, and `ImportingContainer`, with a second coordinator for heavy
/// background imports. Code that only needs "a stack" can take `some PersistentStack`.
///
/// Stores come and go while the stack runs (`attachPersistentStore(at:for:)`,
/// `detach(persistentStore:)`), for per-user stores that appear at log-in and leave at log-out.
public protocol PersistentStack: AnyObject, Sendable {
    /// The stack's name: the default store's name and the name of its default directory.
    var name: String { get }
    var managedObjectModel: ManagedObjectModel { get }
    /// The coordinator the view context reads through.
    var persistentStoreCoordinator: PersistentStoreCoordinator { get }
    /// The context for the user interface (see `StackOptions.viewContextQueue` for its queue).
    var viewContext: ManagedObjectContext { get }
    /// Where stores go when an attach call names no directory.
    var storeDirectory: URL { get }
    /// Whether `start()` has run; fetches and saves before it throw `StackError.notStarted`.
    var isStarted: Bool { get }
    /// The attached stores.
    var persistentStores: [PersistentStore] { get }

    /// Opens the stores attached so far, or, if none was, one durable store for the model's default
    /// configuration at `storeDirectory/<name>.granary`. Returns the stack, for one-line starts.
    /// - Throws: `StackError.alreadyStarted`; `.attachFailed` naming the store that could not open.
    @discardableResult
    func start() throws(StackError) -> Self

    /// A new private-queue context for background work, placed as the stack's layout says.
    func newBackgroundContext() -> ManagedObjectContext

    /// Opens the store of one configuration in `directory` (the stack's `storeDirectory` when `nil`) and
    /// attaches it, before or after `start()`.
    /// - Returns: The store as the stack's coordinator holds it (before `start()`, a handle that
    ///   `detach(persistentStore:)` accepts; it moves to the coordinator when the stack starts).
    /// - Throws: `StackError.unknownConfiguration`, `.alreadyAttached` (one store per configuration),
    ///   `.attachFailed` (locked, damaged, written by another model) naming configuration and location.
    @discardableResult
    func attachPersistentStore(at directory: URL?, for configuration: StoreConfiguration) throws(StackError) -> PersistentStore

    /// Opens and attaches several stores in one directory, all or none.
    /// - Throws: as `attachPersistentStore(at:for:)`; if one fails, those opened before it are detached.
    @discardableResult
    func attachPersistentStores(at directory: URL?, for configurations: [StoreConfiguration]) throws(StackError) -> [PersistentStore]

    /// Detaches a store and closes its files. Its objects leave the stack's own contexts (their
    /// observers are told they were deleted); fetches of its entities and saves of its objects throw
    /// `StackError.storeDetached` from then on. Other stores stay up.
    /// - Throws: `StackError.notAttached`, `.detachFailed`.
    func detach(persistentStore store: PersistentStore) throws(StackError)

    /// Detaches several stores at once.
    /// - Throws: `StackError.notAttached` (nothing is detached then), `.detachFailed`.
    func detach(persistentStores stores: [PersistentStore]) throws(StackError)

    /// Waits until the merges and saves the stack runs on its own have happened: the view context has
    /// merged every save made so far, and what the stack still had to write is in the store.
    /// - Throws: `StackError.backgroundSaveFailed` when a pending background save fails.
    func flush() async throws
}

extension PersistentStack {
    /// Runs `body` on a new background context and returns its result: for a unit of background work
    /// that saves and is done (the context goes away with it).
    /// - Throws: what `body` throws.
    public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try body(context) }
    }

    /// Attaches the store of one configuration in the stack's `storeDirectory`.
    /// - Throws: as `attachPersistentStore(at:for:)`.
    @discardableResult
    public func attachPersistentStore(for configuration: StoreConfiguration) throws(StackError) -> PersistentStore {
        try attachPersistentStore(at: nil, for: configuration)
    }

    /// Detaches every store, closing their files now: for shutting down, or before the same stores are
    /// opened again in this process (a stack that is merely dropped closes them too, but only once the
    /// last of its contexts has gone, which may be a moment later).
    /// - Throws: `StackError.detachFailed`.
    public func close() throws(StackError) {
        try detach(persistentStores: persistentStores)
    }

    /// Detaches one store (see `detach(persistentStores:)`).
    /// - Throws: `StackError.notAttached`, `.detachFailed`.
    public func detach(persistentStore store: PersistentStore) throws(StackError) {
        try detach(persistentStores: [store])
    }

    /// Opens and attaches one store (see `attachPersistentStores(at:for:)`).
    /// - Throws: as `attachPersistentStores(at:for:)`.
    @discardableResult
    public func attachPersistentStore(at directory: URL?, for configuration: StoreConfiguration) throws(StackError) -> PersistentStore {
        try attachPersistentStores(at: directory, for: [configuration])[0]
    }
}
