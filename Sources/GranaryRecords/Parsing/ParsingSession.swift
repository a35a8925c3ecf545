import Foundation
@_spi(GranaryRecords) import Granary

/// The state of one `parse` call: the objects found or created per entity and ID (so an ID is fetched
/// at most once and never inserted twice), the formatters in use and the nesting depth.
final class ParsingSession {
    static let batchSize = 1_000
    static let depthLimit = 64

    let context: ManagedObjectContext
    /// Per class, its objects by ID and the IDs a batch fetch found absent from the store (a miss there
    /// needs no fetch). Typed, so that a lookup hashes the ID itself rather than an `AnyHashable` box.
    /// What the call learned of one class: its objects by ID, the IDs found absent, its names (looked up
    /// once, not per object), and the top-level keys whose targets were fetched across the elements.
    ///
    /// Its tables, and the session's own, are read and written for every element of the call, on the
    /// context's queue only and never across a call that reaches them again: they opt out of dynamic
    /// exclusivity checking.
    private final class Known<T: Parsable> {
        @exclusivity(unchecked) var objects: [T.EntityID: T] = [:]
        @exclusivity(unchecked) var fetched: Set<T.EntityID> = []
        var entityName: String?
        var entity: EntityDescription?
        var idName: String?
        var jsonKey: String?
        var prefetchedKeys: Set<String> = []
        /// Batches of `prefetch(_:ids:pipelined:)` still being read on another thread, and the IDs they
        /// were asked for, in batch order. Their IDs are already in `fetched`: an ID there but not in
        /// `objects` is absent from the store only once `pipeline` is done.
        var pipeline: PrefetchPipeline?
        var pipelineIDs: [T.EntityID] = []
    }
    @exclusivity(unchecked) private var known: [ObjectIdentifier: AnyObject] = [:]
    /// The last class looked up, and its table: an import reads one class many times in a row.
    @exclusivity(unchecked) private var lastKnown: (type: ObjectIdentifier, table: AnyObject)?

    private func table<T: Parsable>(_: T.Type) -> Known<T> {
        let k = ObjectIdentifier(T.self)
        if let last = lastKnown, last.type == k { return unsafeDowncast(last.table, to: Known<T>.self) }
        let table: Known<T>
        if let found = known[k] {
            table = unsafeDowncast(found, to: Known<T>.self)
        } else {
            table = Known<T>()
            known[k] = table
        }
        lastKnown = (k, table)
        return table
    }
    /// Every pipeline started, to stop at `finish()`.
    private var pipelines: [PrefetchPipeline] = []
    private var formatters: [String: [DateFormatter]] = [:]
    /// The call's top-level elements, so that a relationship met in one element can have its targets
    /// fetched for all of them at once.
    var elements: [JSONNode] = []
    private var depth = 0
    /// Whether every pending change of the context comes from this session (the `parse` entry points
    /// require a context without changes): then each object inserted meanwhile is in `objects`, and
    /// fetches can skip the context's pending inserts instead of matching each against the predicate.
    private let ownsPendingChanges: Bool

    init(context: ManagedObjectContext, ownsPendingChanges: Bool = false) {
        self.context = context
        self.ownsPendingChanges = ownsPendingChanges
    }

    func jsonKey<T: Parsable>(_: T.Type) -> String {
        let table = table(T.self)
        if let key = table.jsonKey { return key }
        // An empty key is the default's answer when no live model bound the class: the context's has.
        var key = T.jsonKey
        if key.isEmpty, let name = try? idName(T.self) { key = name }
        table.jsonKey = key
        return key
    }

    /// Every mapped object's `MappingValues` carries it, for error messages.
    private func entityName<T: Parsable>(_: T.Type) -> String {
        let table = table(T.self)
        if let name = table.entityName { return name }
        let name = context.model?.entity(for: T.self)?.name ?? String(describing: T.self)
        table.entityName = name
        return name
    }

    private func idName<T: Parsable>(_: T.Type) throws -> String {
        let table = table(T.self)
        if let name = table.idName { return name }
        guard let model = context.model, let entity = model.entity(for: T.self),
              let parts = KeyPathNames.components(of: T.idKeyPath, entity: entity, model: model) else {
            throw ParsingError(.unknownEntity, entity: String(describing: T.self))
        }
        let name = parts.joined(separator: ".")
        table.idName = name
        return name
    }

    /// The ID of a JSON object, read at `T.jsonKey`.
    func id<T: Parsable>(of json: JSONObject, as _: T.Type, keyPrefix: String = "") throws -> T.EntityID {
        let key = jsonKey(T.self)
        switch JSONLookup(json, key) {
        case .absent, .null:
            throw ParsingError(.missingID, entity: entityName(T.self), key: keyPrefix + key)
        case .value(let v):
            guard v.isScalar, let id = v.converted(to: T.EntityID.self) else {
                throw ParsingError(.invalidID(expected: String(describing: T.EntityID.self)), entity: entityName(T.self),
                                   key: keyPrefix + key, value: v.anyValue)
            }
            return id
        }
    }

    /// Fetches the objects of these IDs that exist (pending inserts included), ≤ `batchSize` IDs a query.
    ///
    /// With `pipelined`, when the store can read them without the context (see `detachedFetch`), the
    /// batches are read on another thread instead, and made as the import reaches them: the result gives,
    /// for each position of `ids`, how many batches `awaitPrefetched(_:batches:)` must have made before
    /// the object of that position is looked up. Nil when everything was fetched here.
    @discardableResult
    func prefetch<T: Parsable>(_: T.Type, ids: [T.EntityID], pipelined: Bool) throws -> [Int]? {
        guard pipelined, ownsPendingChanges, ids.count > Self.batchSize else {
            try prefetch(T.self, ids: ids)
            return nil
        }
        let table = table(T.self)
        table.fetched.reserveCapacity(table.fetched.count + ids.count)
        var wanted: [T.EntityID] = []
        var needs: [Int] = []
        needs.reserveCapacity(ids.count)
        for id in ids {
            if table.objects[id] == nil && table.fetched.insert(id).inserted { wanted.append(id) }
            needs.append((wanted.count + Self.batchSize - 1) / Self.batchSize)
        }
        guard !wanted.isEmpty else { return nil }
        table.objects.reserveCapacity(table.objects.count + wanted.count)
        var reads: [PrefetchPipeline.Read] = []
        do {
            for request in try batchRequests(T.self, ids: wanted, includesPendingChanges: false) {
                guard let read = try context.detachedFetch(request) else { break }
                reads.append(read)
            }
        } catch {
            for id in wanted { table.fetched.remove(id) }
            throw error
        }
        guard reads.count * Self.batchSize >= wanted.count else {
            // The store cannot answer alone (the context would filter in memory): fetched here after all.
            for id in wanted { table.fetched.remove(id) }
            try prefetch(T.self, ids: wanted)
            return nil
        }
        let pipeline = PrefetchPipeline(reads)
        pipelines.append(pipeline)
        table.pipeline = pipeline
        table.pipelineIDs = wanted
        return needs
    }

    /// Makes the objects of the first `batches` batches a pipelined prefetch of `T` read.
    func awaitPrefetched<T: Parsable>(_: T.Type, batches: Int) throws {
        let table = table(T.self)
        guard let pipeline = table.pipeline else { return }
        while pipeline.taken < min(batches, pipeline.count) {
            let batch = pipeline.taken
            do {
                for object in context.objects(from: try pipeline.take(), as: T.self) {
                    table.objects[object[keyPath: T.idKeyPath]] = object
                }
            } catch {
                // The IDs of this batch and the ones after it are not known after all.
                for id in table.pipelineIDs[(batch * Self.batchSize)...] { table.fetched.remove(id) }
                table.pipeline = nil
                table.pipelineIDs = []
                throw error
            }
        }
        if pipeline.taken == pipeline.count {
            table.pipeline = nil
            table.pipelineIDs = []
        }
    }

    /// Stops every pipelined prefetch still reading: the call is over (returned or threw).
    func finish() {
        for pipeline in pipelines { pipeline.cancel() }
        pipelines = []
    }

    /// Fetches the objects of these IDs that exist (pending inserts included), ≤ `batchSize` IDs a query.
    func prefetch<T: Parsable>(_: T.Type, ids: [T.EntityID]) throws {
        let table = table(T.self)
        // Grown once: an import of 100,000 existing objects would otherwise rehash both tables as they fill.
        table.fetched.reserveCapacity(table.fetched.count + ids.count)
        // Each ID is marked fetched as it is picked, which also drops repeats: a second set for them and
        // a union afterwards cost more than the fetch's bookkeeping. A fetch that throws unmarks them.
        var wanted: [T.EntityID] = []
        for id in ids where table.objects[id] == nil && table.fetched.insert(id).inserted { wanted.append(id) }
        guard !wanted.isEmpty else { return }
        table.objects.reserveCapacity(table.objects.count + wanted.count)
        do {
            for request in try batchRequests(T.self, ids: wanted, includesPendingChanges: !ownsPendingChanges) {
                for object in try context.fetch(request) { table.objects[object[keyPath: T.idKeyPath]] = object }
            }
        } catch {
            for id in wanted { table.fetched.remove(id) }
            throw error
        }
    }

    /// One request per batch of `ids` (at most `batchSize` each, in order), for the `T`s with those IDs.
    private func batchRequests<T: Parsable>(_: T.Type, ids: [T.EntityID], includesPendingChanges: Bool) throws -> [FetchRequest<T>] {
        let name = try idName(T.self)
        return stride(from: 0, to: ids.count, by: Self.batchSize).map { start in
            var request = T.fetchRequest()
            request.filter = FetchPredicate.key(name).isIn(ids[start..<min(start + Self.batchSize, ids.count)]).node
            request.includesPendingChanges = includesPendingChanges
            return request
        }
    }

    /// The object with this ID: from this call, from the store (pending inserts included) or new.
    /// - Parameter batchTaken: Whether the caller made the pipelined prefetch's batch holding this ID
    ///   (the import's own element, see `awaitPrefetched`): then an ID it did not find is absent.
    func object<T: Parsable>(_: T.Type, id: T.EntityID, batchTaken: Bool = false) throws -> T {
        let table = table(T.self)
        if let found = table.objects[id] { return found }
        if !batchTaken, let pipeline = table.pipeline, table.fetched.contains(id) {
            // Asked for ahead of the import (a relationship to another element): its batch may still
            // be on its way.
            try awaitPrefetched(T.self, batches: pipeline.count)
            if let found = table.objects[id] { return found }
        }
        if !table.fetched.contains(id) {
            // A relationship target by ID: one fetch per distinct ID (answered from the ID's unique
            // index), remembered for the rest of the call.
            let name = try idName(T.self)
            var request = T.fetchRequest()
            request.filter = (FetchPredicate.key(name) == id).node
            request.fetchLimit = 1
            request.includesPendingChanges = !ownsPendingChanges
            if let found = try context.fetch(request).first {
                table.objects[id] = found
                return found
            }
        }
        // Looked up once per class: the model searches its entities for the class on every call.
        guard let entity = table.entity ?? context.model?.entity(for: T.self) else {
            throw ParsingError(.unknownEntity, entity: String(describing: T.self))
        }
        table.entity = entity
        let created = T(entity: entity, insertInto: context)
        // By name when the ID is a plain attribute: a write through the key path goes through the
        // property wrapper's read-and-write-back, several times the cost, once per new object.
        let name = try idName(T.self)
        if name.utf8.contains(UInt8(ascii: ".")) {
            created[keyPath: T.idKeyPath] = id
        } else {
            try created.setValue(id, forKey: name)
        }
        table.objects[id] = created
        return created
    }

    /// Finds or creates the object a JSON object names, then maps the JSON onto it.
    func upsert<T: Parsable>(_: T.Type, json: JSONObject, keyPrefix: String) throws -> T {
        let id = try self.id(of: json, as: T.self, keyPrefix: keyPrefix)
        let object = try self.object(T.self, id: id)
        try map(json, onto: object, keyPrefix: keyPrefix)
        return object
    }

    func map<T: Parsable>(_ json: JSONObject, onto object: T, keyPrefix: String) throws {
        guard depth < Self.depthLimit else {
            throw ParsingError(.nestingTooDeep(limit: Self.depthLimit), entity: entityName(T.self), key: keyPrefix)
        }
        depth += 1
        defer { depth -= 1 }
        try object.mapValues(from: MappingValues(object: json, session: self, keyPrefix: keyPrefix, entityName: entityName(T.self)))
    }

    /// The relationship target a JSON value names: a nested object (upserted and mapped) or a bare ID (a
    /// stub, or the existing object).
    func target<T: Parsable>(_: T.Type, from value: JSONNode, key: String, map: MappingValues) throws -> T {
        if case .object(let nested) = value {
            return try upsert(T.self, json: nested, keyPrefix: map.keyPrefix + key + ".")
        }
        guard value.isScalar else {
            throw map.error(.notAnObject, key: key, value: value)
        }
        guard let id = value.converted(to: T.EntityID.self) else {
            throw map.error(.invalidID(expected: String(describing: T.EntityID.self)), key: key, value: value)
        }
        if map.keyPrefix.isEmpty && !isKnown(T.self, id: id) { try prefetchTargets(T.self, key: key) }
        return try object(T.self, id: id)
    }

    private func isKnown<T: Parsable>(_: T.Type, id: T.EntityID) -> Bool {
        let table = table(T.self)
        return table.objects[id] != nil || table.fetched.contains(id)
    }

    /// Fetches, in batches, the `T`s that the top-level key `key` names by ID in every element of the
    /// call: an array of items each linking a parent by ID would otherwise fetch each parent on its own.
    private func prefetchTargets<T: Parsable>(_: T.Type, key: String) throws {
        guard table(T.self).prefetchedKeys.insert(key).inserted else { return }
        // Distinct IDs only: a thousand parents named by a hundred thousand items are a thousand IDs to
        // fetch, not an array a hundred times their number for `prefetch` to sift.
        var ids: [T.EntityID] = []
        var seen = Set<T.EntityID>()
        for element in elements {
            guard case .object(let object) = element, case .value(let value) = JSONLookup(object, key) else { continue }
            if value.isScalar {
                if let id = value.converted(to: T.EntityID.self), seen.insert(id).inserted { ids.append(id) }
            } else {
                for id in targetIDs(value, as: T.self) where seen.insert(id).inserted { ids.append(id) }
            }
        }
        try prefetch(T.self, ids: ids)
    }

    /// The IDs of the `T`s a relationship's JSON value names: a nested object's ID, a bare ID, or those of
    /// an array of either; what cannot be read is left out (mapping the value reports it).
    func targetIDs<T: Parsable>(_ value: JSONNode, as _: T.Type) -> [T.EntityID] {
        let items: [JSONNode]
        if case .array(let array) = value { items = array } else { items = [value] }
        return items.compactMap { item in
            if case .object(let nested) = item { return try? id(of: nested, as: T.self) }
            return item.isScalar ? item.converted(to: T.EntityID.self) : nil
        }
    }

    /// Formatters for a list of date formats, POSIX locale, in `timeZone`; made once per call.
    func dateFormatters(_ formats: [String], timeZone: TimeZone) -> [DateFormatter] {
        let cacheKey = timeZone.identifier + "\u{1}" + formats.joined(separator: "\u{1}")
        if let made = formatters[cacheKey] { return made }
        let made = formats.map { format in
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = timeZone
            f.dateFormat = format
            return f
        }
        formatters[cacheKey] = made
        return made
    }
}
