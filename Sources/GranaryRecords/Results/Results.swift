import Foundation
import Granary

/// A live, sorted list of objects of one entity in one context, for driving a list on screen
/// (CorePersistence's `Results`), built on Granary's `FetchedResultsController`.
///
/// ```swift
/// let users = try Results<User>(context: context, sortedBy: [.ascending(\User.name)])
/// users.registerForChanges { changes in
///     for change in changes { /* apply change.type at change.indexPath / change.newIndexPath */ }
/// }
/// ```
///
/// - **Batches.** `registerForChanges` hears each change event of the context that changed the results
///   (a save, a merge of another context's save, `processPendingChanges()`) once, with all its changes;
///   `changes` delivers the same batches as an `AsyncStream`. A batch lists deletions (old index paths),
///   insertions (new ones), moves (both) and updates (both), so applying deletions and moved-from
///   positions (old indexes, descending) and then insertions and moved-to positions (new indexes,
///   ascending) to a copy of the previous `toArray()` gives the new one.
/// - **Filtering and sorting again.** `filterBy(_:)` and `sortBy(_:)` fetch again and keep the
///   registration and the streams (CorePersistence drops them); they report no batch themselves.
/// - **Filters through to-one relationships** (`\Order.user?.name == "Ada"`) follow the related
///   objects' changes when they arrive merged from another context; an edit of the related object in the
///   results' own context is not re-tested (as with Core Data's controller) until the next fetch.
/// - **Lifetime.** As in CorePersistence, the results stop following the context when the `Results`
///   is released: keep a strong reference for as long as changes should arrive. Releasing it finishes
///   the `changes` streams.
/// - **Threads.** Use it on its context's queue, like the context; batches arrive there.
public final class Results<T: ManagedObject> {
    /// One change of one object in a batch (CorePersistence's `Change`).
    ///
    /// It is `Sendable` so that `changes` can carry it to a task; its `object` is still the context's,
    /// to be read on the context's queue (`context.perform`) like any managed object.
    public struct Change: @unchecked Sendable {
        // @unchecked: the index paths and type are values; `object` follows the context's queue rule.
        /// What happened to the object.
        public enum ChangeType: Sendable, Hashable {
            case insert, delete, move, update
        }
        /// What happened to the object.
        public let type: ChangeType
        /// Where the object was: set for delete, update and move.
        public let indexPath: IndexPath?
        /// Where the object is now: set for insert and move (and update, where it equals `indexPath`
        /// unless other changes of the batch shifted it).
        public let newIndexPath: IndexPath?
        /// The object.
        public let object: T
    }

    /// The context the results live in.
    public let context: ManagedObjectContext
    private var predicate: ComparisonPredicate<T>?
    private var clauses: [ComparisonClause<T>]
    private var controller: FetchedResultsController<T>
    private let relay = DelegateRelay<T>()
    private var onChanges: (([Change]) -> Void)?
    private var continuations: [UUID: AsyncStream<[Change]>.Continuation] = [:]

    /// Results of the objects of `T`'s entity in `context` matching `predicate`, in the order of
    /// `clauses`, fetched now.
    ///
    /// - Parameters:
    ///   - context: The context to follow; call on its queue.
    ///   - predicate: Which objects; all when `nil`.
    ///   - clauses: The order; it must not be empty (a `Persistable` type may omit it: see
    ///     `init(context:filterBy:)`).
    /// - Throws: `KeyPathQueryError` for a key path that is not a stored property; `ContextError` when
    ///   the order is empty, or a store error.
    public init(context: ManagedObjectContext, filterBy predicate: ComparisonPredicate<T>? = nil,
                sortedBy clauses: [ComparisonClause<T>]) throws {
        self.context = context
        self.predicate = predicate
        self.clauses = clauses
        controller = try Self.makeController(context, predicate, clauses)
        relay.owner = self
        controller.delegate = relay
    }

    deinit {
        for continuation in continuations.values { continuation.finish() }
    }

    private static func makeController(_ context: ManagedObjectContext, _ predicate: ComparisonPredicate<T>?,
                                       _ clauses: [ComparisonClause<T>]) throws -> FetchedResultsController<T> {
        let request = try FetchRequest<T>(predicate, sortedBy: clauses, in: context)
        let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        try controller.performFetch()
        return controller
    }

    private func refetch() throws {
        let fresh = try Self.makeController(context, predicate, clauses)
        controller.delegate = nil
        controller = fresh
        controller.delegate = relay
    }

    /// Keeps only the objects matching `predicate` (replacing the previous filter) and fetches again;
    /// the change registration and streams stay.
    /// - Throws: `KeyPathQueryError` for a key path that is not a stored property, or a store error;
    ///   the results are then unchanged.
    @discardableResult
    public func filterBy(_ predicate: ComparisonPredicate<T>?) throws -> Results {
        let previous = self.predicate
        self.predicate = predicate
        do { try refetch() } catch {
            self.predicate = previous
            throw error
        }
        return self
    }

    /// Orders the results by `clauses` (replacing the previous order) and fetches again; the change
    /// registration and streams stay.
    /// - Throws: `KeyPathQueryError` for a key path that is not a stored property, `ContextError` for
    ///   an empty order, or a store error; the results are then unchanged.
    @discardableResult
    public func sortBy(_ clauses: ComparisonClause<T>...) throws -> Results {
        try sortBy(clauses)
    }

    /// Orders the results by `clauses`: see `sortBy(_:)` (variadic).
    @discardableResult
    public func sortBy(_ clauses: [ComparisonClause<T>]) throws -> Results {
        let previous = self.clauses
        self.clauses = clauses
        do { try refetch() } catch {
            self.clauses = previous
            throw error
        }
        return self
    }

    /// Calls `closure` once per change event that changed the results, with all its changes, on the
    /// context's queue; replaces a previous registration. It stays through `filterBy` and `sortBy`
    /// and ends when the `Results` is released.
    @discardableResult
    public func registerForChanges(_ closure: @escaping ([Change]) -> Void) -> Results {
        onChanges = closure
        return self
    }

    /// The same batches as `registerForChanges`, as an asynchronous sequence: each call makes a new
    /// stream, which finishes when the `Results` is released. Batches are buffered until read.
    public var changes: AsyncStream<[Change]> {
        let (stream, continuation) = AsyncStream<[Change]>.makeStream()
        let id = UUID()
        continuations[id] = continuation
        return stream
    }

    // MARK: Reading

    /// The objects, in order.
    public func toArray() -> [T] { controller.fetchedObjects }
    /// Whether there are no objects (CorePersistence tested for no sections, which never happens).
    public var isEmpty: Bool { controller.fetchedObjects.isEmpty }
    /// The number of sections: always 1 (there is no section key path).
    public var numberOfSections: Int { controller.sections.count }
    /// The number of objects in section `section`, 0 for a section that does not exist.
    public func numberOfObjects(in section: Int) -> Int {
        controller.sections.indices.contains(section) ? controller.sections[section].numberOfObjects : 0
    }
    /// The number of objects in the first section: 0 when there are none (CorePersistence trapped).
    public var numberOfObjectsInFirstSection: Int { numberOfObjects(in: 0) }
    /// The object at `indexPath`; the index path must be valid, as for an array.
    public func object(at indexPath: IndexPath) -> T { controller.object(at: indexPath) }
    /// The objects at `indexPaths`, in their order (CorePersistence's `objects(for:)`); each must be valid.
    public func objects(for indexPaths: [IndexPath]) -> [T] { indexPaths.map { controller.object(at: $0) } }

    // MARK: Delivery

    fileprivate func deliver(_ batch: [Change]) {
        guard !batch.isEmpty else { return }
        onChanges?(batch)
        for continuation in continuations.values { continuation.yield(batch) }
    }
}

/// The controller's delegate, apart from `Results` so that the delegate protocol stays out of its
/// public API; it gathers one event's changes into a batch.
private final class DelegateRelay<T: ManagedObject>: FetchedResultsControllerDelegate {
    weak var owner: Results<T>?
    private var batch: [Results<T>.Change] = []

    func controllerWillChangeContent(_ controller: FetchedResultsController<T>) { batch = [] }

    func controller(_ controller: FetchedResultsController<T>, didChange object: T, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        let kind: Results<T>.Change.ChangeType
        switch type {
        case .insert: kind = .insert
        case .delete: kind = .delete
        case .move: kind = .move
        case .update: kind = .update
        }
        batch.append(Results<T>.Change(type: kind, indexPath: indexPath, newIndexPath: newIndexPath, object: object))
    }

    func controllerDidChangeContent(_ controller: FetchedResultsController<T>) {
        let done = batch
        batch = []
        owner?.deliver(done)
    }
}
