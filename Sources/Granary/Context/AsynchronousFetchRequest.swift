import Foundation

/// A fetch that runs in steps on its context's queue, reporting progress and open to cancellation,
/// with a completion block called on that queue when it ends (Core Data's
/// `NSAsynchronousFetchRequest`).
///
/// For large results on a context other work waits on (a view context): the store finds the matching
/// rows off the queue, then the objects are made a chunk at a time, each chunk one block on the queue,
/// so the queue's other blocks run in between, and `progress` counts the objects made.
///
/// ```swift
/// let request = AsynchronousFetchRequest(fetchRequest: FetchRequest<Quake>()) { result in
///     show(result.finalResult ?? [])
/// }
/// let running = try context.execute(request)
/// // later, from anywhere: running.cancel()
/// ```
public final class AsynchronousFetchRequest<Result: ManagedObject> {
    /// The request run.
    public let fetchRequest: FetchRequest<Result>
    /// Called on the context's queue when the fetch ends: with its objects, its error, or cancelled.
    public let completionBlock: ((AsynchronousFetchResult<Result>) -> Void)?
    /// The number of results expected, for `progress` before the store has answered (0: unknown, the
    /// progress is indeterminate until then).
    public var estimatedResultCount = 0
    /// Objects made per block on the context's queue.
    public var chunkSize = 1_000

    public init(fetchRequest: FetchRequest<Result>, completionBlock: ((AsynchronousFetchResult<Result>) -> Void)? = nil) {
        self.fetchRequest = fetchRequest
        self.completionBlock = completionBlock
    }
}

/// A running or finished asynchronous fetch (Core Data's `NSAsynchronousFetchResult`).
public final class AsynchronousFetchResult<Result: ManagedObject>: @unchecked Sendable {
    // @unchecked: `finalResult` and `operationError` are written and read on the context's queue (the
    // completion block runs there); `progress` is thread-safe, and `cancel()` only touches it.

    /// The request this answers.
    public let fetchRequest: AsynchronousFetchRequest<Result>
    /// Counts the objects made; cancelling it cancels the fetch. When a `Progress` is current on the
    /// calling thread at `execute(_:)`, this one is its child.
    public let progress: Progress
    /// The objects, once the fetch has finished; nil before, and after a cancellation or an error.
    public private(set) var finalResult: [Result]?
    /// Why the fetch ended without a result: `ContextError.fetchCancelled`, or the fetch's error.
    public private(set) var operationError: (any Error)?
    /// The context the fetch runs in.
    public private(set) weak var managedObjectContext: ManagedObjectContext?

    init(_ request: AsynchronousFetchRequest<Result>, context: ManagedObjectContext) {
        fetchRequest = request
        managedObjectContext = context
        progress = Progress(totalUnitCount: request.estimatedResultCount > 0 ? Int64(request.estimatedResultCount) : -1)
    }

    /// Stops the fetch at the next chunk; the completion block is called with `operationError` set to
    /// `ContextError.fetchCancelled`. Safe from any thread; nothing happens once the fetch has ended.
    public func cancel() { progress.cancel() }

    func finish(_ outcome: Swift.Result<[Result], any Error>) {
        switch outcome {
        case .success(let objects): finalResult = objects
        case .failure(let error): operationError = error
        }
        fetchRequest.completionBlock?(self)
    }
}

extension ManagedObjectContext {
    /// Starts an asynchronous fetch and returns at once; see ``AsynchronousFetchRequest``.
    ///
    /// Requests the store can answer alone (no unsaved changes of the entity, a predicate and sort the
    /// store runs, a context on a coordinator, one store holding the entity) are answered in steps.
    /// Others are answered in one block on the queue, still after this call returns and still
    /// cancellable until that block runs.
    /// - Throws: `ContextError.unknownEntity` and the errors of a request that cannot run as given, now;
    ///   later errors reach the completion block as `operationError`.
    @discardableResult
    public func execute<T: ManagedObject>(_ request: AsynchronousFetchRequest<T>) throws -> AsynchronousFetchResult<T> {
        assertOnQueue()
        let result = AsynchronousFetchResult(request, context: self)
        let entity = try entity(for: request.fetchRequest)
        let (fetch, unlowered) = try storeFetch(request.fetchRequest, window: true)
        let sortable = fetch.sort.count == request.fetchRequest.sortKeys.count + request.fetchRequest.sortDescriptors.count
        let pending = hasPendingChanges(for: entity, request.fetchRequest.includesPendingChanges)
        let box = UncheckedBox(result)
        // Several stores answer one after the other, unsorted across them: that, too, is answered in one
        // block by `fetch`, which sorts in memory.
        guard parent == nil, unlowered == nil, sortable, !pending, let coordinator = persistentStoreCoordinator,
            !coordinator.spansSeveralStores(entity)
        else {
            schedule { [self] in
                let result = box.value
                guard !result.progress.isCancelled else { return result.finish(.failure(ContextError.fetchCancelled(entity: entity.name))) }
                do {
                    let objects = try self.fetch(result.fetchRequest.fetchRequest)
                    result.progress.totalUnitCount = Int64(objects.count)
                    result.progress.completedUnitCount = Int64(objects.count)
                    result.finish(.success(objects))
                } catch {
                    result.finish(.failure(error))
                }
            }
            return result
        }
        let chunkSize = max(1, request.chunkSize)
        DispatchQueue.global().async { [self] in
            let ids: [ManagedObjectID]
            do {
                ids = try coordinator.fetch(fetch).map(\.id)
            } catch {
                schedule { box.value.finish(.failure(error)) }
                return
            }
            box.value.progress.totalUnitCount = Int64(ids.count)
            makeObjects(ids, from: 0, chunkSize: chunkSize, into: [], result: box, entity: entity.name)
        }
        return result
    }

    /// Makes the objects of `ids` from `start` on, one chunk per block on the queue, then finishes.
    private func makeObjects<T: ManagedObject>(_ ids: [ManagedObjectID], from start: Int, chunkSize: Int, into made: [T],
                                               result: UncheckedBox<AsynchronousFetchResult<T>>, entity: String) {
        let madeBox = UncheckedBox(made)
        schedule { [self] in
            let result = result.value
            guard !result.progress.isCancelled else { return result.finish(.failure(ContextError.fetchCancelled(entity: entity))) }
            var made = madeBox.value
            let end = min(ids.count, start + chunkSize)
            do {
                let chunk = Array(ids[start..<end])
                guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
                let records = try coordinator.records(for: chunk)
                let fetchRequest = result.fetchRequest.fetchRequest
                let asFaults = fetchRequest.returnsObjectsAsFaults || !fetchRequest.includesPropertyValues
                prepareToRegister(chunk.count)
                let firstNew = made.count
                for record in records {
                    // A row deleted since the store answered is left out, as a fetch made now would.
                    guard let record else { continue }
                    let object = materialize(record, fault: asFaults, refreshingChanged: fetchRequest.shouldRefreshRefetchedObjects)
                    if let typed = object as? T { made.append(typed) }
                }
                if asFaults { BatchFaulter.attachMembers(made[firstNew...].filter(\.faultState), context: self) }
            } catch {
                return result.finish(.failure(error))
            }
            result.progress.completedUnitCount = Int64(end)
            guard end < ids.count else {
                processPendingChanges()
                return result.finish(.success(made))
            }
            makeObjects(ids, from: end, chunkSize: chunkSize, into: made, result: UncheckedBox(result), entity: entity)
        }
    }
}

/// Carries a value that is only used on one context's queue into a block that runs there.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
