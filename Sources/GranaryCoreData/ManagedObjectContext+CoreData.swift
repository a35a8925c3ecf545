import Granary

extension ManagedObjectContext.ConcurrencyType {
    /// Core Data's name for `.privateQueue`.
    public static var privateQueueConcurrencyType: Self { .privateQueue }
    /// Core Data's name for `.mainQueue`.
    public static var mainQueueConcurrencyType: Self { .mainQueue }
}

extension ManagedObjectContext {
    /// Runs a Core Data fetch request: managed objects, object IDs, dictionaries or a count, as its
    /// `resultType` says (Granary's `fetch(_:)`, `fetchObjectIDs(_:)`, `fetchDictionaries(_:)`,
    /// `count(for:)`).
    /// - Throws: `ContextError.unknownEntity` for an entity the model lacks; `PredicateParseError` for a
    ///   predicate that did not parse or names unknown keys; store errors.
    public func fetch<T>(_ request: NSFetchRequest<T>) throws -> [T] {
        let granary = try request.granaryRequest(of: ManagedObject.self, model: model)
        try checkEntity(granary.entityName)
        let results: [Any]
        switch request.resultType {
        case .managedObjectIDResultType: results = try fetchObjectIDs(granary)
        case .dictionaryResultType: results = try fetchDictionaries(granary).map { NSDictionary(dictionary: $0) }
        case .countResultType: results = [NSNumber(value: try count(for: granary))]
        default: results = try fetch(granary)
        }
        return try results.map { result in
            guard let typed = result as? T else {
                throw ContextError.invalidRequest(entity: granary.entityName ?? "?",
                                                  reason: "a result is a \(type(of: result)), not the request's \(T.self)")
            }
            return typed
        }
    }

    /// How many objects a Core Data fetch request would return: Core Data's `count(for:)`.
    /// - Throws: as `fetch(_:)`.
    public func count<T>(for request: NSFetchRequest<T>) throws -> Int {
        let granary = try request.granaryRequest(of: ManagedObject.self, model: model)
        try checkEntity(granary.entityName)
        return try count(for: granary)
    }

    /// A Core Data fetch of an entity the model lacks throws here, naming it, rather than in the planner.
    private func checkEntity(_ name: String?) throws {
        guard let name, let model else { return }
        if model.entitiesByName[name] == nil { throw ContextError.unknownEntity(name) }
    }

    /// Merges a did-save notification of another context: Core Data's `mergeChanges(fromContextDidSave:)`
    /// taking the `Notification` itself (Granary's form takes its `ContextChanges`).
    public func mergeChanges(fromContextDidSave notification: Notification) {
        guard let changes = notification.userInfo?[ContextChanges.userInfoKey] as? ContextChanges else { return }
        mergeChanges(fromContextDidSave: changes)
    }

    /// Merges changes made elsewhere (a batch request's object IDs) into `contexts`: Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`, taking a dictionary whose `NSInsertedObjectsKey`,
    /// `NSUpdatedObjectsKey` and `NSDeletedObjectsKey` (or `…ObjectIDsKey`) hold object IDs or objects.
    public static func mergeChanges(fromRemoteContextSave changeNotificationData: [AnyHashable: Any], into contexts: [ManagedObjectContext]) {
        func ids(_ keys: String...) -> Set<ManagedObjectID> {
            var result: Set<ManagedObjectID> = []
            for key in keys {
                guard let value = changeNotificationData[key] else { continue }
                let items: [Any]
                if let sequence = value as? any Sequence { items = Array(sequence) } else { items = [value] }
                for item in items {
                    if let id = item as? ManagedObjectID { result.insert(id) } else if let object = item as? ManagedObject { result.insert(object.objectID) }
                }
            }
            return result
        }
        let changes = ContextChanges(inserted: ids(NSInsertedObjectsKey, NSInsertedObjectIDsKey),
                                     updated: ids(NSUpdatedObjectsKey, NSUpdatedObjectIDsKey),
                                     deleted: ids(NSDeletedObjectsKey, NSDeletedObjectIDsKey))
        mergeChanges(fromRemoteContextSave: changes, into: contexts)
    }
}
