@_spi(GranaryRecords) import Granary

extension ActionContext {
    /// Merges a server's listing of an entity into the store by its key attributes, as Coherence's
    /// `merge(objects:for:ignoreAttributes:subsetFilter:condition:)` does, and saves once if anything
    /// changed.
    ///
    /// Each feed record holds attribute values by attribute name (values of the attribute's type, or a
    /// number or string it converts from, `nil`/`NSNull` for none), and must hold every key attribute.
    /// - A key that is stored: the record's attributes (all but `ignoreAttributes` and the keys; an
    ///   attribute the record leaves out is left alone) are written to the stored object, if `condition`
    ///   (evaluated against the stored object) holds. Relationships are never touched.
    /// - A key that is not stored: a new object with the record's attributes.
    /// - A stored object matching `subsetFilter` (all of the entity's when nil) whose key the feed does
    ///   not list: deleted, if `condition` holds — the server no longer has it.
    /// - An object with an unsent local change in the outbox is left alone: the feed neither overwrites
    ///   it nor deletes it, nor brings back one deleted here (``FeedMergeReport/protectedByOutbox``).
    ///
    /// The order of the feed does not matter; when a key repeats, the later record wins. Keys of several
    /// attributes compare as tuples. The feed is read in batches of `batchSize`: each batch's stored
    /// objects are fetched by key through the unique index, and those it leaves unchanged are turned
    /// back into faults, so the objects in memory stay within a batch whatever the feed's length (the
    /// keys seen are kept, a few bytes each, to find the objects to delete).
    ///
    /// Call it inside the action's `execute(context:)` (for an async action, inside `context.perform`).
    /// - Parameters:
    ///   - feed: The server's records.
    ///   - entityName: The entity; the action's own when nil.
    ///   - ignoreAttributes: Attributes never written to stored objects (kept as the store has them).
    ///   - subsetFilter: The stored objects the feed covers: only those may be deleted (all when nil).
    ///   - condition: Evaluated against a stored object before it is updated or deleted (always when nil).
    ///   - batchSize: Feed records read, and stored objects fetched, at a time.
    /// - Returns: What was inserted, updated, deleted, and whether it saved.
    /// - Throws: ``ConnectError/unmanagedEntity(_:reason:)``; ``ConnectError/invalidFeedRecord(entity:index:reason:)``
    ///   naming the record's index (nothing is saved then: the context is rolled back); a value the
    ///   attribute cannot take (`ContextError`); the save's error (rolled back too).
    @discardableResult
    public func merge(_ feed: some Sequence<[String: Any]>, into entityName: String? = nil, ignoreAttributes: Set<String> = [],
                      subsetFilter: FetchPredicate? = nil, condition: FetchPredicate? = nil, batchSize: Int = 1_000) throws -> FeedMergeReport {
        try mergeFeed(into: entityName) { entity, keys, protected in
            var run = FeedMergeRun(context: self, entity: entity, keys: keys, ignore: ignoreAttributes.union(keys),
                                   condition: condition?.node, protected: protected, batchSize: max(1, batchSize))
            try run.apply(feed)
            try run.deleteMissing(subset: subsetFilter?.node)
            return run.report
        }
    }

    /// What both merges share: the entity and its keys, the outbox's unsent changes, unchanged writes
    /// ignored, one save if `walk` changed anything, and a rollback if anything throws.
    func mergeFeed(into entityName: String?,
                   _ walk: (EntityDescription, [String], PendingLocalChanges) throws -> FeedMergeReport) throws -> FeedMergeReport {
        let entityName = entityName ?? self.entityName
        guard let keys = connect.managedEntityKeys[entityName] else {
            throw ConnectError.unmanagedEntity(entityName, reason: "it has no uniqueness attributes, or the connect is not started")
        }
        guard let entity = managedObjectContext.model?.entity(named: entityName) else {
            throw ConnectError.unmanagedEntity(entityName, reason: "the model has no entity of that name")
        }
        let context = managedObjectContext
        let protected = try pendingLocalChanges?(entityName) ?? PendingLocalChanges()
        let ignored = context.ignoresUnchangedWrites
        context.ignoresUnchangedWrites = true
        defer { context.ignoresUnchangedWrites = ignored }
        do {
            var report = try walk(entity, keys, protected)
            if context.hasChanges {
                let start = ContinuousClock.now
                try context.save()
                recordSave(time: Self.seconds(ContinuousClock.now - start))
                report.saved = true
            }
            return report
        } catch {
            context.rollback()
            throw error
        }
    }
}

extension ActionContext {
    /// `merge(_:into:ignoreAttributes:subsetFilter:condition:batchSize:)` from an async action: the
    /// feed (which the call takes over) is merged on the context's queue.
    @discardableResult
    public func merge(_ feed: sending [[String: Any]], into entityName: String? = nil, ignoreAttributes: Set<String> = [],
                      subsetFilter: FetchPredicate? = nil, condition: FetchPredicate? = nil, batchSize: Int = 1_000) async throws -> FeedMergeReport {
        // `sending`: nothing else holds the feed, so it may cross to the context's queue.
        let box = FeedTransfer(records: feed)
        return try await perform { [self] in
            try merge(box.records, into: entityName, ignoreAttributes: ignoreAttributes, subsetFilter: subsetFilter,
                      condition: condition, batchSize: batchSize)
        }
    }
}

/// A feed handed over to the context's queue (its sender keeps no reference: see `sending` above).
private struct FeedTransfer: @unchecked Sendable {
    let records: [[String: Any]]
}

/// One merge's walk over the feed and the store.
private struct FeedMergeRun {
    let context: ActionContext
    let entity: EntityDescription
    let keys: [String]
    let ignore: Set<String>
    let condition: PredicateNode?
    let protected: PendingLocalChanges
    let batchSize: Int
    var report = FeedMergeReport()
    /// Every key the feed listed.
    var seen = Set<FeedKey>()
    /// The objects this merge inserted, by key (held by the context until the save anyway): a later
    /// record with the same key finds them here, not by a fetch over every pending insert.
    var created: [FeedKey: ManagedObject] = [:]

    var objectContext: ManagedObjectContext { context.managedObjectContext }

    mutating func apply(_ feed: some Sequence<[String: Any]>) throws {
        var batch: [(index: Int, key: FeedKey, record: [String: Any])] = []
        for (index, record) in feed.enumerated() {
            switch FeedKey.of(record: record, attributes: keys) {
            case .success(let key): batch.append((index, key, record))
            case .failure(let problem): throw ConnectError.invalidFeedRecord(entity: entity.name, index: index, reason: problem.text)
            }
            if batch.count >= batchSize {
                try applyBatch(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try applyBatch(batch) }
    }

    private mutating func applyBatch(_ batch: [(index: Int, key: FeedKey, record: [String: Any])]) throws {
        let stored = try fetchStored(batch.map(\.key))
        for (index, key, record) in batch {
            if !seen.insert(key).inserted { report.repeatedKeys += 1 }
            if let object = stored[key] ?? created[key] {
                if protected.updated.contains(key) || protected.deleted.contains(key) {
                    report.protectedByOutbox += 1
                    continue
                }
                if let condition, try !object.matches(condition) {
                    report.unchanged += 1
                    continue
                }
                let wasChanged = object.hasChanges
                try write(record, to: object, index: index)
                if object.isInserted {
                    continue
                } else if object.hasChanges && !wasChanged {
                    report.updated += 1
                } else if !object.hasChanges {
                    report.unchanged += 1
                    objectContext.refresh(object, mergeChanges: false)
                }
            } else {
                if protected.deleted.contains(key) {
                    report.protectedByOutbox += 1
                    continue
                }
                let object = try EntityDescription.insertNewObject(forEntityName: entity.name, into: objectContext)
                for (name, value) in zip(keys, key.values) { try object.setValue(FeedMergeValues.swiftValue(value), forKey: name) }
                try write(record, to: object, index: index)
                created[key] = object
                report.inserted += 1
            }
        }
    }

    /// The stored objects of `keys`, by key: one `IN` fetch on the first key attribute (answered from
    /// its index), the rest of a composite key compared here.
    private func fetchStored(_ keys: [FeedKey]) throws -> [FeedKey: ManagedObject] {
        var request = FetchRequest<ManagedObject>(entityName: entity.name)
        // Stored rows only: this merge's own inserts are in `created`, and evaluating the key list
        // against every pending insert at each batch would make a long feed quadratic.
        request.includesPendingChanges = false
        let firsts = Array(Set(keys.map { $0.values[0] }))
        request.filter = .isIn([self.keys[0]], firsts)
        let start = ContinuousClock.now
        let objects = try objectContext.fetch(request)
        context.recordFetch(objects: objects.count, requests: 1, time: ActionContext.seconds(ContinuousClock.now - start))
        var found: [FeedKey: ManagedObject] = [:]
        let wanted = Set(keys)
        for object in objects {
            let key = try FeedKey.of(object: object, attributes: self.keys)
            if wanted.contains(key) { found[key] = object } else if !object.hasChanges { objectContext.refresh(object, mergeChanges: false) }
        }
        return found
    }

    private func write(_ record: [String: Any], to object: ManagedObject, index: Int) throws {
        try FeedMergeValues.write(record, to: object, entity: entity, ignore: ignore, index: index)
    }

    /// Deletes the stored objects of the subset whose keys the feed did not list, reading only their
    /// keys, a batch at a time: after the last key of the previous batch for a key of one attribute (its
    /// unique index gives them in order), by offset for a composite key.
    mutating func deleteMissing(subset: PredicateNode?) throws {
        let idKey = FetchRequest<ManagedObject>.objectIDKey
        var last: Value?
        var offset = 0
        while true {
            var request = FetchRequest<ManagedObject>(entityName: entity.name)
            // Stored rows only, so that the deletes made here do not move the pages.
            request.includesPendingChanges = false
            request.propertiesToFetch = (keys + [idKey]).map(FetchProperty.property)
            request.fetchLimit = batchSize
            if keys.count == 1 {
                request.sortKeys = [SortKey(keys[0])]
                let after = last.map { PredicateNode.compare([keys[0]], .greater, .value($0)) }
                request.filter = [subset, after].compactMap { $0 }.reduce(nil) { partial, term in partial.map { .and([$0, term]) } ?? term }
            } else {
                request.filter = subset
                request.fetchOffset = offset
            }
            let start = ContinuousClock.now
            let rows = try objectContext.fetchDictionaries(request)
            context.recordFetch(objects: rows.count, requests: 1, time: ActionContext.seconds(ContinuousClock.now - start))
            for row in rows {
                let key = FeedKey.of(dictionary: row, attributes: keys)
                guard !seen.contains(key), let id = row[idKey] as? ManagedObjectID else { continue }
                if protected.updated.contains(key) {
                    report.protectedByOutbox += 1
                    continue
                }
                let object = try objectContext.existingObject(with: id)
                if let condition, try !object.matches(condition) {
                    objectContext.refresh(object, mergeChanges: false)
                    continue
                }
                objectContext.delete(object)
                report.deleted += 1
            }
            guard rows.count == batchSize else { return }
            offset += rows.count
            last = rows.last.flatMap { FeedKey.of(dictionary: $0, attributes: keys).values.first }
        }
    }
}

/// Writing feed records into objects, for both merges.
enum FeedMergeValues {
    /// Writes the record's attributes (all but `ignore`; relationships skipped) to `object`.
    /// - Throws: ``ConnectError/invalidFeedRecord(entity:index:reason:)`` for a key that is no property;
    ///   `ContextError` for a value the attribute cannot take.
    static func write(_ record: [String: Any], to object: ManagedObject, entity: EntityDescription, ignore: Set<String>, index: Int) throws {
        for (name, raw) in record where !ignore.contains(name) {
            guard entity.attributesByName[name] != nil else {
                if entity.relationshipsByName[name] != nil { continue }
                throw ConnectError.invalidFeedRecord(entity: entity.name, index: index, reason: "'\(name)' is not an attribute of \(entity.name)")
            }
            try object.setValue(raw is NSNull ? nil : raw, forKey: name)
        }
    }

    /// An engine value as the Swift value an attribute takes (for the key attributes of a new object).
    static func swiftValue(_ value: Value) -> Any? {
        switch value {
        case .null: nil
        case .bool(let b): b
        case .int(let i): i
        case .double(let d): d
        case .string(let s): s
        case .date(let d): d
        case .uuid(let u): u
        case .bytes(let b): Data(b)
        default: nil
        }
    }
}
