@_spi(GranaryRecords) import Granary

extension ActionContext {
    /// `merge(_:into:ignoreAttributes:subsetFilter:condition:batchSize:)` for a feed that comes in the
    /// store's key order (ascending by the key attributes in order; strings by their UTF-8 bytes, which is
    /// the order a server sorting by code point gives): feed and store are walked side by side, so the
    /// merge holds one batch of stored keys and no set of the feed's keys, and a feed read lazily (pages
    /// from a server, a file) is never held whole. Its outcome is the unsorted merge's.
    ///
    /// - Throws: as the unsorted merge, and ``ConnectError/invalidFeedRecord(entity:index:reason:)`` for a
    ///   record whose key comes before the previous one's (nothing is saved).
    @discardableResult
    public func merge(sortedByKey feed: some Sequence<[String: Any]>, into entityName: String? = nil, ignoreAttributes: Set<String> = [],
                      subsetFilter: FetchPredicate? = nil, condition: FetchPredicate? = nil, batchSize: Int = 1_000) throws -> FeedMergeReport {
        try mergeFeed(into: entityName) { entity, keys, protected in
            var walk = SortedFeedWalk(context: self, entity: entity, keys: keys, ignore: ignoreAttributes.union(keys),
                                      subset: subsetFilter?.node, condition: condition?.node, protected: protected, batchSize: max(1, batchSize))
            try walk.run(feed)
            return walk.report
        }
    }
}

/// The walk of a sorted feed beside the stored keys in the same order.
private struct SortedFeedWalk {
    let context: ActionContext
    let entity: EntityDescription
    let keys: [String]
    let ignore: Set<String>
    let subset: PredicateNode?
    let condition: PredicateNode?
    let protected: PendingLocalChanges
    let batchSize: Int
    var report = FeedMergeReport()
    /// Whether each key attribute is a decimal (compared as decimals, as the store sorts them).
    let decimals: [Bool]

    /// The current page of stored keys and where the walk is in it.
    var page: [(key: FeedKey, id: ManagedObjectID, row: [String: Any])] = []
    var position = 0
    var pageOffset = 0
    var exhausted = false
    /// The last key read from the store, for the next page.
    var lastStored: FeedKey?
    /// What became of the previous feed record, for a record that repeats its key (counted as the
    /// unsorted merge counts it).
    enum Outcome {
        case object(ManagedObject)
        /// A stored row the record left as it was (its object not touched).
        case unchangedRow(ManagedObjectID)
        case protected
        case conditionFailed
    }
    var previous: (key: FeedKey, outcome: Outcome)?

    init(context: ActionContext, entity: EntityDescription, keys: [String], ignore: Set<String>, subset: PredicateNode?,
         condition: PredicateNode?, protected: PendingLocalChanges, batchSize: Int) {
        self.context = context
        self.entity = entity
        self.keys = keys
        self.ignore = ignore
        self.subset = subset
        self.condition = condition
        self.protected = protected
        self.batchSize = batchSize
        decimals = keys.map { entity.attributesByName[$0]?.type == .decimal }
        comparedAttributes = entity.attributes.filter { !$0.isTransient && !$0.isDerived && !ignore.contains($0.name) }.map(\.name)
    }

    /// The attributes a record may change: read with the stored keys.
    let comparedAttributes: [String]

    /// Whether the record would leave the stored row as it is: every attribute it names holds the same
    /// engine value already. Exact: a value that converts differently (an `Int` for a `Double`
    /// attribute) counts as a change, and the write then decides.
    func changesNothing(_ record: [String: Any], stored row: [String: Any]) -> Bool {
        for (name, raw) in record where !ignore.contains(name) {
            guard entity.attributesByName[name] != nil else {
                if entity.relationshipsByName[name] != nil { continue }
                return false      // the write reports the unknown key
            }
            let incoming = raw is NSNull ? Value.null : FeedKey.value(raw)
            let current = FeedKey.value(row[name]) ?? .null
            guard let incoming, incoming == current else { return false }
        }
        return true
    }

    var objectContext: ManagedObjectContext { context.managedObjectContext }

    func order(_ a: FeedKey, _ b: FeedKey) -> ComparisonResult {
        for (index, (x, y)) in zip(a.values, b.values).enumerated() {
            let result = Value.storeOrder(x, y, decimal: decimals[index])
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    mutating func run(_ feed: some Sequence<[String: Any]>) throws {
        for (index, record) in feed.enumerated() {
            let key: FeedKey
            switch FeedKey.of(record: record, attributes: keys) {
            case .success(let found): key = found
            case .failure(let problem): throw ConnectError.invalidFeedRecord(entity: entity.name, index: index, reason: problem.text)
            }
            if let previous {
                switch order(previous.key, key) {
                case .orderedDescending:
                    throw ConnectError.invalidFeedRecord(entity: entity.name, index: index,
                                                         reason: "key \(key) comes before the previous record's \(previous.key): the feed is not in key order")
                case .orderedSame:
                    report.repeatedKeys += 1
                    switch previous.outcome {
                    case .object(let object): try apply(record, to: object, index: index)
                    case .unchangedRow(let id):
                        let object = try objectContext.existingObject(with: id)
                        if let condition, try !object.matches(condition) {
                            report.unchanged += 1
                        } else {
                            try apply(record, to: object, index: index)
                        }
                        self.previous = (key, .object(object))
                    case .protected: report.protectedByOutbox += 1
                    case .conditionFailed: report.unchanged += 1
                    }
                    continue
                case .orderedAscending:
                    break
                }
            }
            // Stored objects before this key are missing from the feed.
            while let stored = try currentStored(), order(stored.key, key) == .orderedAscending {
                try missing(stored)
                position += 1
            }
            if let stored = try currentStored(), order(stored.key, key) == .orderedSame {
                position += 1
                if protected.updated.contains(key) || protected.deleted.contains(key) {
                    report.protectedByOutbox += 1
                    previous = (key, .protected)
                    continue
                }
                if changesNothing(record, stored: stored.row) {
                    report.unchanged += 1
                    previous = (key, .unchangedRow(stored.id))
                    continue
                }
                let object = try objectContext.existingObject(with: stored.id)
                context.recordFetch(objects: 1, requests: 0, time: 0)
                if let condition, try !object.matches(condition) {
                    report.unchanged += 1
                    objectContext.refresh(object, mergeChanges: false)
                    previous = (key, .conditionFailed)
                    continue
                }
                try apply(record, to: object, index: index)
                previous = (key, .object(object))
            } else {
                if protected.deleted.contains(key) {
                    report.protectedByOutbox += 1
                    previous = (key, .protected)
                    continue
                }
                let object = try EntityDescription.insertNewObject(forEntityName: entity.name, into: objectContext)
                for (name, value) in zip(keys, key.values) { try object.setValue(FeedMergeValues.swiftValue(value), forKey: name) }
                try FeedMergeValues.write(record, to: object, entity: entity, ignore: ignore, index: index)
                report.inserted += 1
                previous = (key, .object(object))
            }
        }
        while let stored = try currentStored() {
            try missing(stored)
            position += 1
        }
    }

    /// Writes a record to an object and counts it as the unsorted merge does (an object this merge
    /// inserted is counted once, as inserted).
    private mutating func apply(_ record: [String: Any], to object: ManagedObject, index: Int) throws {
        let wasChanged = object.hasChanges
        try FeedMergeValues.write(record, to: object, entity: entity, ignore: ignore, index: index)
        guard !object.isInserted else { return }
        if object.hasChanges && !wasChanged {
            report.updated += 1
        } else if !object.hasChanges {
            report.unchanged += 1
            objectContext.refresh(object, mergeChanges: false)
        }
    }

    /// A stored object the feed does not list: deleted if it is in the subset, the condition holds and
    /// the outbox has no unsent edit of it.
    private mutating func missing(_ stored: (key: FeedKey, id: ManagedObjectID, row: [String: Any])) throws {
        if protected.updated.contains(stored.key) {
            report.protectedByOutbox += 1
            return
        }
        let object = try objectContext.existingObject(with: stored.id)
        if let subset, try !object.matches(subset) {
            objectContext.refresh(object, mergeChanges: false)
            return
        }
        if let condition, try !object.matches(condition) {
            objectContext.refresh(object, mergeChanges: false)
            return
        }
        objectContext.delete(object)
        report.deleted += 1
    }

    /// The stored key at the walk's position, reading the next page when the current one is used up.
    private mutating func currentStored() throws -> (key: FeedKey, id: ManagedObjectID, row: [String: Any])? {
        if position < page.count { return page[position] }
        guard !exhausted else { return nil }
        let idKey = FetchRequest<ManagedObject>.objectIDKey
        var request = FetchRequest<ManagedObject>(entityName: entity.name)
        // Stored rows only, every one of them (a key outside the subset is still a match, not an insert).
        request.includesPendingChanges = false
        // The stored values come with the keys, so that a record that changes nothing is recognised without
        // touching (and registering) its object.
        request.propertiesToFetch = (keys + comparedAttributes + [idKey]).map(FetchProperty.property)
        request.fetchLimit = batchSize
        request.sortKeys = keys.map { SortKey($0) }
        if keys.count == 1, let last = lastStored?.values.first {
            request.filter = .compare([keys[0]], .greater, .value(last))
        } else if keys.count > 1 {
            request.fetchOffset = pageOffset
        }
        let start = ContinuousClock.now
        let rows = try objectContext.fetchDictionaries(request)
        context.recordFetch(objects: rows.count, requests: 1, time: ActionContext.seconds(ContinuousClock.now - start))
        page = rows.compactMap { row in
            (row[idKey] as? ManagedObjectID).map { (FeedKey.of(dictionary: row, attributes: keys), $0, row) }
        }
        position = 0
        pageOffset += rows.count
        lastStored = page.last?.key
        exhausted = rows.count < batchSize
        return page.first
    }
}
