import Foundation

/// Rows a store read away from a context's queue, for the context to turn into objects on its queue.
///
/// An importer reads the next batch of existing objects on another thread while the context maps the
/// batch before it: reading rows is the store's work and needs nothing of the context.
@_spi(GranaryRecords) public struct DetachedRecords: @unchecked Sendable {
    // Records hold the values as decoded, and nothing that the reading thread keeps: handing them over
    // shares nothing mutable.
    fileprivate let records: [ObjectRecord]

    /// How many objects the store found.
    public var count: Int { records.count }
}

extension ManagedObjectContext {
    /// The store's half of a fetch, as work any thread may run, when the store can answer the request
    /// alone: a context without a parent, the entity in one store, no pending changes to consider, a
    /// predicate the store evaluates whole, no window, sort, batching or prefetching to finish in memory,
    /// and full objects wanted. Otherwise nil: use `fetch(_:)`.
    ///
    /// Call it on the context's queue; run the returned closure anywhere, then hand its records to
    /// `objects(from:as:)` on the queue. The records are the store as it was when the closure ran, as a
    /// fetch's are when it reads the store.
    @_spi(GranaryRecords) public func detachedFetch<T: ManagedObject>(_ request: FetchRequest<T>) throws
        -> (@Sendable () throws -> DetachedRecords)? {
        guard parent == nil, let coordinator = persistentStoreCoordinator else { return nil }
        let entity = try entity(for: request)
        guard request.fetchLimit == 0, request.fetchOffset == 0, request.fetchBatchSize == 0, request.sortDescriptors.isEmpty,
            request.sortKeys.isEmpty, !request.returnsObjectsAsFaults, request.includesPropertyValues,
            request.relationshipKeyPathsForPrefetching.isEmpty, !hasPendingChanges(for: entity, request.includesPendingChanges),
            !coordinator.spansSeveralStores(entity)
        else { return nil }
        let (fetch, unlowered) = try storeFetch(request, window: true)
        guard unlowered == nil else { return nil }
        let work = UncheckedBox(fetch)
        return { DetachedRecords(records: try coordinator.fetch(work.value)) }
    }

    /// The registered objects of records that `detachedFetch(_:)`'s work read, made as `fetch(_:)` makes
    /// them: an object the context holds unchanged takes the record's values, a changed one keeps its
    /// changes. Unlike `fetch(_:)`, it does not end the context's event (`processPendingChanges()`), so
    /// an import that maps objects between batches posts one change notification, not one per batch.
    @_spi(GranaryRecords) public func objects<T: ManagedObject>(from read: DetachedRecords, as _: T.Type) -> [T] {
        assertOnQueue()
        prepareToRegister(read.records.count)
        return read.records.compactMap { materialize($0, fault: false) as? T }
    }
}
