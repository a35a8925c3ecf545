import Foundation

extension ManagedObjectContext {
    func entity<T>(for request: FetchRequest<T>) throws -> EntityDescription {
        lifecycle.hasBeenUsed = true
        guard let model else { throw ContextError.noPersistentStore("the context has no coordinator") }
        if let name = request.entityName {
            guard let entity = model.entity(named: name) else { throw ContextError.unknownEntity(name) }
            return entity
        }
        guard let entity = model.entity(for: T.self) else {
            throw ContextError.unknownEntity("(no entity has class \(T.self); set entityName)")
        }
        return entity
    }

    /// The request as the store layer runs it; `nil` predicate when the typed predicate cannot be
    /// translated (then it is evaluated on the objects instead).
    ///
    /// Every fetch passes here, so this is where predicates built in code are held to
    /// `PredicateNode.maximumDepth` before anything walks them.
    /// - Throws: `PredicateParseError.treeTooDeep` for a `#Predicate` or filter nesting too deep.
    func storeFetch<T>(_ request: FetchRequest<T>, window: Bool) throws -> (fetch: StoreFetch, unloweredPredicate: Predicate<T>?) {
        let entity = try entity(for: request)
        let model = self.model!
        let names: (AnyKeyPath) -> [String]? = { KeyPathProbe.components(of: $0, entity: entity, model: model) }
        var lowered: PredicateNode?
        var unlowered: Predicate<T>?
        if let predicate = request.predicate {
            if let node = try PredicateNode.lowering(predicate, keyPathName: names) { lowered = node } else { unlowered = predicate }
        }
        try request.filter?.checkDepth()
        let storePredicate: PredicateNode?
        switch (lowered, request.filter) {
        case let (l?, f?): storePredicate = .and([l, f])
        case let (l, f): storePredicate = l ?? f
        }
        var sort = request.sortKeys
        var sortable = true
        for descriptor in request.sortDescriptors {
            if let key = SortKey(descriptor, keyPathName: names) { sort.append(key) } else { sortable = false }
        }
        let pushWindow = window && unlowered == nil && sortable
        let fetch = StoreFetch(entity: entity, includesSubentities: request.includesSubentities,
                               predicate: storePredicate,
                               sort: sortable ? sort : [],
                               limit: pushWindow && request.fetchLimit > 0 ? request.fetchLimit : nil,
                               offset: pushWindow ? request.fetchOffset : 0)
        return (fetch, unlowered)
    }

    /// How the store would answer a request: which index, what is left to filter and sort in memory.
    /// - Throws: `ContextError` for an unknown entity or no store.
    public func explain<T>(_ request: FetchRequest<T>) throws -> FetchPlan {
        guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("no coordinator") }
        return try coordinator.plan(storeFetch(request, window: true).fetch)
    }

    /// Fetches the objects a request describes.
    /// - Throws: `ContextError` for an unknown entity, a removed store, or store errors.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [T] {
        assertOnQueue()
        let objects = try fetchObjects(request)
        // Objects of exactly the requested class (almost always all of them) skip the dynamic cast,
        // which looks up generic metadata for every object.
        var result: [T] = []
        result.reserveCapacity(objects.count)
        for object in objects {
            if type(of: object) == T.self {
                result.append(unsafeDowncast(object, to: T.self))
            } else if let typed = object as? T {
                result.append(typed)
            }
        }
        return result
    }

    /// The IDs of the objects a request describes, without loading them: objects not registered yet
    /// are registered as faults.
    public func fetchObjectIDs<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [ManagedObjectID] {
        assertOnQueue()
        var request = request
        request.includesPropertyValues = false
        return try fetchObjects(request).map(\.objectID)
    }

    /// Runs a request and returns what its `resultType` asks for (Core Data's `execute(_:)` of a fetch
    /// request, or `fetch(_:)` of one whose result type is not objects).
    /// - Throws: what `fetch(_:)`, `fetchObjectIDs(_:)`, `fetchDictionaries(_:)` or `count(for:)` throw.
    public func execute<T: ManagedObject>(_ request: FetchRequest<T>) throws -> FetchRequestResult<T> {
        switch request.resultType {
        case .managedObject: .objects(try fetch(request))
        case .managedObjectID: .objectIDs(try fetchObjectIDs(request))
        case .dictionary: .dictionaries(try fetchDictionaries(request))
        case .count: .count(try count(for: request))
        }
    }

    /// How many objects a request matches.
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws -> Int {
        assertOnQueue()
        let (fetch, unlowered) = try storeFetch(request, window: true)
        if unlowered == nil && parent == nil && !hasPendingChanges(for: fetch.entity, request.includesPendingChanges),
            let coordinator = persistentStoreCoordinator
        {
            return try coordinator.count(fetch)
        }
        return try fetchObjects(request).count
    }

    func hasPendingChanges(for entity: EntityDescription, _ includes: Bool) -> Bool {
        // Pending changes take part in fetches and counts: the owners an import's logged edits change too.
        applyDeferredLinks()
        return includes && changed.values.contains { $0.hasChanges && $0.entity.isKind(of: entity) }
    }

    func fetchObjects<T: ManagedObject>(_ request: FetchRequest<T>) throws -> [ManagedObject] {
        let entity = try entity(for: request)
        let pending = hasPendingChanges(for: entity, request.includesPendingChanges)
        let window = parent == nil && !pending && persistentStoreCoordinator?.spansSeveralStores(entity) != true
        var storeRequest = request
        if parent == nil && pending && request.fetchLimit > 0 {
            // With k objects of the entity changed here, the store's first offset + limit + k rows hold
            // every saved row of the answer (at most k of them can leave it or move), so a window of 20
            // reads 20 + k rows rather than the whole table; the window is applied again in memory.
            let changedHere = changed.values.count { $0.hasChanges && $0.entity.isKind(of: entity) }
            storeRequest.fetchLimit = request.fetchOffset + request.fetchLimit + changedHere
            storeRequest.fetchOffset = 0
        }
        let (fetch, unlowered) = try storeFetch(storeRequest, window: window || storeRequest.fetchLimit != request.fetchLimit)
        var objects: [ManagedObject]
        // What is left to do here once the objects are in hand.
        var local = request
        if let parent {
            // A child sees its parent's unsaved state: the parent answers with IDs, the child loads them.
            // Without pending changes of its own the child's answer is the parent's, so the parent
            // applies the window (a fetch of 20 out of 200,000 returns 20 IDs, not 200,000).
            var forwarded = request
            if pending {
                forwarded.fetchLimit = 0
                forwarded.fetchOffset = 0
            } else {
                local.fetchOffset = 0
            }
            let ids = try parent.performAndWait { try parent.fetchObjects(forwarded).map(\.objectID) }
            objects = ids.compactMap { registeredOrFault($0) }
        } else {
            guard let coordinator = persistentStoreCoordinator else { throw ContextError.noPersistentStore("the context has no coordinator") }
            let records = try coordinator.fetch(fetch)
            prepareToRegister(records.count)
            let asFaults = request.fetchBatchSize > 0 || request.returnsObjectsAsFaults || !request.includesPropertyValues
            objects = records.map { materialize($0, fault: asFaults, refreshingChanged: request.shouldRefreshRefetchedObjects) }
        }
        let inMemory = !window || unlowered != nil || fetch.limit == nil && (request.fetchLimit > 0 || request.fetchOffset > 0)
        if inMemory {
            // The store has already skipped the rows of an offset it was given (an offset without a
            // limit): skipping them again here dropped as many objects more.
            local.fetchOffset = max(0, local.fetchOffset - fetch.offset)
            objects = try applyInMemory(local, to: objects, entity: fetch.entity, unlowered: unlowered)
        }
        if request.fetchBatchSize > 0 {
            BatchFaulter.attach(objects, batchSize: request.fetchBatchSize, context: self)
        } else if request.returnsObjectsAsFaults || !request.includesPropertyValues {
            // Loaded together on the first touch, as a fired relationship's members are.
            BatchFaulter.attachMembers(objects.filter(\.faultState), context: self)
        }
        try prefetch(request.relationshipKeyPathsForPrefetching, for: objects)
        processPendingChanges()
        return objects
    }

    /// A registered object for a fetched record; an object with unsaved changes keeps them, on top of
    /// the record's values when `refreshingChanged` (`shouldRefreshRefetchedObjects`).
    func materialize(_ record: ObjectRecord, fault: Bool, refreshingChanged: Bool = false) -> ManagedObject {
        if let object = liveObject(record.id) {
            if !object.hasChanges && !fault {
                object.apply(record)
            } else if refreshingChanged && object.hasChanges && !object.insertedState && !object.deletedState {
                merge(record, into: object)
                pendingNotification.refreshed.insert(object.objectID)
            }
            return object
        }
        let object = makeFault(record.id, entity: record.layout.entity)
        if !fault { object.apply(record) } else { object.rowVersion = record.version }
        return object
    }

    /// Filters, sorts and windows in memory, with the context's unsaved changes: what a fetch does when
    /// the store cannot (or must not) do it all.
    private func applyInMemory<T: ManagedObject>(_ request: FetchRequest<T>, to fetched: [ManagedObject], entity: EntityDescription,
                                                 unlowered: Predicate<T>?) throws -> [ManagedObject] {
        var candidates = fetched
        var seen = Set(fetched.map { ObjectIdentifier($0) })
        if request.includesPendingChanges {
            for object in changed.values where !object.deletedState && object.entity.isKind(of: entity) && seen.insert(ObjectIdentifier(object)).inserted {
                if !request.includesSubentities && object.entity != entity { continue }
                candidates.append(object)
            }
            candidates.removeAll { $0.deletedState }
        }
        let lowered = try storeFetch(request, window: false).fetch.predicate
        let evaluator = ObjectEvaluator(context: self)
        var result: [ManagedObject] = []
        for object in candidates {
            if let lowered, try !evaluator.matches(lowered, object) { continue }
            if let unlowered, let typed = object as? T, try !unlowered.evaluate(typed) { continue }
            result.append(object)
        }
        let keys = try storeFetch(request, window: false).fetch.sort
        if !request.sortDescriptors.isEmpty && keys.count < request.sortDescriptors.count + request.sortKeys.count {
            result.sort { a, b in
                guard let a = a as? T, let b = b as? T else { return false }
                for descriptor in request.sortDescriptors {
                    let order = descriptor.compare(a, b)
                    if order != .orderedSame { return order == .orderedAscending }
                }
                return false
            }
        } else if !keys.isEmpty {
            var failure: Error?
            result.sort { a, b in
                do { return try evaluator.compare(a, b, by: keys) == .orderedAscending } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
        let start = min(request.fetchOffset, result.count)
        let end = request.fetchLimit > 0 ? min(result.count, start + request.fetchLimit) : result.count
        return Array(result[start..<end])
    }

    /// Loads the destinations of the given relationship key paths for all objects at once.
    private func prefetch(_ keyPaths: [String], for objects: [ManagedObject]) throws {
        for keyPath in keyPaths {
            let first = String(keyPath.split(separator: ".").first ?? "")
            var ids = Set<ManagedObjectID>()
            for object in objects {
                guard let i = object.layout.indexByName[first] else { throw ContextError.unknownKey(entity: object.entity.name, key: first) }
                object.fireFaultIfNeeded()
                if let id = object.values[i] as? ManagedObjectID { ids.insert(id) }
                if let many = object.values[i] as? [ManagedObjectID] { ids.formUnion(many) }
            }
            for id in ids { registeredOrFault(id)?.fireFaultIfNeeded() }
        }
    }
}
