import Foundation

struct FetchSchemaKey: Hashable {
    var entity: EntityDescription
    var includesSubentities: Bool
}

/// A fetch as the store layer runs it: entity, lowered predicate, sort keys, window.
struct StoreFetch {
    var entity: EntityDescription
    var includesSubentities: Bool
    var predicate: PredicateNode?
    var sort: [SortKey]
    var limit: Int?
    var offset: Int
}

extension PersistentStore {
    /// What the planner and evaluator need to know about an entity's stored fields: fixed while the
    /// store is open, so built once per entity and kept (a fetch of a few objects would otherwise spend
    /// much of its time here).
    func fetchSchema(for entity: EntityDescription, includesSubentities: Bool) throws -> FetchSchema {
        let key = FetchSchemaKey(entity: entity, includesSubentities: includesSubentities)
        if let cached = fetchSchemas.withLock({ $0[key] }) { return cached }
        let schema = try makeFetchSchema(for: entity, includesSubentities: includesSubentities)
        fetchSchemas.withLock { $0[key] = schema }
        return schema
    }

    private func makeFetchSchema(for entity: EntityDescription, includesSubentities: Bool) throws -> FetchSchema {
        let m = try entityMapping(entity.name)
        var fields: [String: FieldInfo] = [:]
        for property in entity.properties {
            guard let column = m.column(forProperty: property.name) else { continue }
            fields[property.name] = FieldInfo(column: column, kind: FieldKind(property))
        }
        // Index columns are table columns ("Employee.salary" for a sub-entity's); the planner speaks in
        // the fetched entity's property names. Indexes over columns this entity does not have are skipped.
        let propertyForColumn: [String: String] = Dictionary(uniqueKeysWithValues: fields.map { (m.tableSchema.columns[$0.value.column].name, $0.key) })
        let indexes: [PlannerIndex] = m.tableSchema.indexes.compactMap { definition in
            var columns: [(name: String, descending: Bool)] = []
            for column in definition.columns {
                if column.name == StorageMapping.entityColumnName {
                    columns.append((FetchSchema.entityKey, column.isDescending))
                } else if let property = propertyForColumn[column.name] {
                    columns.append((property, column.isDescending))
                } else {
                    return nil
                }
            }
            return PlannerIndex(name: definition.name, columns: columns, isUnique: definition.isUnique)
        }
        let table = mapping.table(named: m.tableName)
        let codes = Set(m.entityCodes(includingSubentities: includesSubentities))
        let allCodes = Set(table?.entityNames.indices.map { Int64($0) } ?? [])
        return FetchSchema(entityName: entity.name, fields: fields, indexes: indexes,
                           entityColumn: codes == allCodes ? nil : StorageMapping.entityColumn, entityCodes: codes)
    }

    func plan(_ fetch: StoreFetch) throws -> FetchPlan {
        try plan(fetch, schema: fetchSchema(for: fetch.entity, includesSubentities: fetch.includesSubentities), snapshot: engine.read())
    }

    /// The planner's plan, except that a full scan with an object comparison on the object itself reads
    /// the rows of the objects compared with, and one on a to-one relationship the rows the
    /// relationship's inverse lists (`FetchPlan.AccessPath.keys`).
    func plan(_ fetch: StoreFetch, schema: FetchSchema, snapshot: Snapshot) throws -> FetchPlan {
        var plan = try FetchPlanner.plan(predicate: bindingObjects(in: fetch.predicate, schema: schema), sort: fetch.sort,
                                         limit: fetch.limit, offset: fetch.offset, schema: schema)
        // Tables are named after their hierarchy's root, and so is the entity-column index.
        let entityIndex = try StorageMapping.entityIndexName(root: entityMapping(fetch.entity.name).tableName)
        guard plan.residual != nil, !narrowsUserFields(plan.access, entityIndex: entityIndex), let table = tableIDs[fetch.entity.name] else { return plan }
        let terms: [PredicateNode]
        switch fetch.predicate {
        case .and(let xs)?: terms = xs
        case let x?: terms = [x]
        case nil: terms = []
        }
        // `SELF IN %@` / `SELF == %@` (Core Data's usual way to fetch known objects): their own rows, by key.
        for case .objects(let path, let ids) in terms where path.isEmpty {
            let keys = Set(ids.compactMap { id in objectReference(id).flatMap { $0.table == table ? $0.key : nil } })
            plan.access = .keys(relationship: "SELF", keys: keys.sorted())
            return plan
        }
        for case .objects(let path, let ids) in terms where path.count == 1 {
            guard let relationship = fetch.entity.relationshipsByName[path[0]], !relationship.isToMany else { continue }
            var keys = Set<Int64>()
            for id in ids {
                // The object's row, and in it the inverse's list of the rows that point at the object.
                guard let ref = objectReference(id), let name = snapshot.tableName(for: ref.table),
                      let column = try entityMapping(id.entityName).column(forProperty: relationship.graphInverseName),
                      let row = try snapshot.row(in: name, key: ref.key), case .references(let members) = row[column]
                else { continue }
                for member in members where member.table == table { keys.insert(member.key) }
            }
            plan.access = .keys(relationship: "\(relationship.destinationEntityName).\(relationship.graphInverseName)", keys: keys.sorted())
            return plan
        }
        return plan
    }

    /// Whether the access path narrows by a field of the predicate, not only (in a table shared by an
    /// entity hierarchy) by the entity column, which keeps every object of the entity.
    private func narrowsUserFields(_ access: FetchPlan.AccessPath, entityIndex: String) -> Bool {
        switch access {
        case .fullScan, .keys: return false
        case .index(let name, _, _, _, _): return name != entityIndex
        case .indexUnion(let scans): return scans.contains { narrowsUserFields($0, entityIndex: entityIndex) }
        }
    }

    /// The reference this store's rows hold for an object: `nil` for a temporary ID or an object of
    /// another store, which no stored row can point at.
    func objectReference(_ id: ManagedObjectID) -> RowReference? {
        guard let key = id.primaryKey, id.persistentStoreIdentifier == identifier, let table = tableIDs[id.entityName] else { return nil }
        return RowReference(table: table, key: key)
    }

    /// The predicate with its top-level object tests on a to-one relationship of the entity itself
    /// (`company == %@`, `company IN %@`) written as reference constants (`company IN {ref}`), which
    /// mean the same here and which the planner can answer with an index on the relationship.
    func bindingObjects(in predicate: PredicateNode?, schema: FetchSchema) -> PredicateNode? {
        func bound(_ term: PredicateNode) -> PredicateNode {
            guard case .objects(let path, let ids) = term, path.count == 1, case .toOne? = schema.field(path[0])?.kind else { return term }
            return .isIn(path, ids.compactMap(objectReference).map(Value.reference))
        }
        switch predicate {
        case .objects?: return bound(predicate!)
        case .and(let terms)? where terms.contains(where: { if case .objects = $0 { return true } else { return false } }):
            return .and(terms.map(bound))
        default: return predicate
        }
    }

    /// Runs a fetch and returns the matching records in order, with the statistics of how; on
    /// `snapshot` when given (a write transaction's), else on the latest commit.
    func fetch(_ fetch: StoreFetch, statistics: inout FetchStatistics, in snapshot: Snapshot? = nil) throws -> [ObjectRecord] {
        try checkAttached()
        let schema = try fetchSchema(for: fetch.entity, includesSubentities: fetch.includesSubentities)
        let snapshot = snapshot ?? engine.read()
        let plan = try self.plan(fetch, schema: schema, snapshot: snapshot)
        statistics.lastFetchPlan = plan
        let m = try entityMapping(fetch.entity.name)
        let tableName = m.tableName
        guard let table = mapping.table(named: tableName) else { throw ContextError.unknownEntity(fetch.entity.name) }

        // Rows reached through to-one key paths in a residual predicate are read from the same snapshot.
        // Made only for a residual or a sort in memory: most indexed fetches need neither, and making
        // it allocated its closure and its regex cache on every fetch.
        lazy var evaluator = RowEvaluator(schema: schema, resolve: { [self] destination, ref in
            guard let entity = model.entity(named: destination), let name = snapshot.tableName(for: ref.table),
                let row = try snapshot.row(in: name, key: ref.key)
            else { return nil }
            return (row, try fetchSchema(for: entity, includesSubentities: true))
        }, objectReference: { [self] in objectReference($0) })
        // The reference of a row of this table, for `SELF == object`.
        let tableID = tableIDs[fetch.entity.name]
        func reference(_ key: Int64) -> RowReference? { tableID.map { RowReference(table: $0, key: key) } }

        let pushed = plan.limitPushedDown
        var decoder = try RecordDecoder(store: self, table: table, snapshot: snapshot)
        // A scan whose order and window are already the final ones turns each row into a record as it
        // is read, straight from its bytes (or, to check a residual, through one reused row): no array
        // per row.
        let isFinal = (plan.sortedByAccess || fetch.sort.isEmpty) && (pushed || (fetch.offset == 0 && fetch.limit == nil))
        if isFinal, !pushed, plan.residual == nil, let probes = plan.access.uniqueProbes(in: table) {
            // An `IN` list on a unique index (an import finding its objects by ID): each value names at
            // most one row, so the index is probed for all of them at once, in key order, and their rows
            // read together, instead of one index scan per value. The rows come in the list's order, as
            // the scans gave them.
            let keys = try snapshot.firstKeys(in: tableName, index: probes.index, equalTo: probes.values).compactMap { $0 }
            statistics.indexScans += probes.values.count
            var records: [ObjectRecord] = []
            records.reserveCapacity(keys.count)
            try snapshot.keyedRows(of: tableName).withRows(forKeys: keys) { i, encoded in
                guard let encoded else {
                    throw StorageError.corruption(file: "index '\(probes.index)'", offset: 0,
                                                  reason: "entry for missing row \(keys[i]) in table '\(tableName)'")
                }
                statistics.rowsExamined += 1
                records.append(try decoder.record(from: encoded))
            }
            return records
        }
        if isFinal, plan.access != .fullScan, !plan.access.isByKeys {
            var records: [ObjectRecord] = []
            // A limit pushed into the scan bounds the records (growing the array by doubling reallocated
            // it five times for 20).
            if pushed, let limit = fetch.limit { records.reserveCapacity(min(limit, 1024)) }
            var row = Row([])
            for query in plan.access.indexQueries(table: tableName, offset: pushed ? fetch.offset : 0, limit: pushed ? fetch.limit : nil) {
                statistics.indexScans += 1
                try snapshot.query(query) { encoded in
                    statistics.rowsExamined += 1
                    if let residual = plan.residual {
                        try encoded.decode(into: &row)
                        if try evaluator.matches(residual, row: row, reference: reference(encoded.key)) { records.append(try decoder.record(from: row, key: encoded.key)) }
                    } else {
                        records.append(try decoder.record(from: encoded))
                    }
                }
            }
            return records
        }
        if isFinal && plan.access == .fullScan && plan.residual == nil && fetch.offset == 0 && fetch.limit == nil {
            // Every row of the table becomes a record: their value arrays are made first, together
            // (see `RecordDecoder.prepareBlanks`), unless the entity has no rows of its own.
            let count = try snapshot.count(in: tableName)
            if !fetch.entity.isAbstract { decoder.prepareBlanks(count: count, entityCode: m.entityCode) }
            var records: [ObjectRecord] = []
            records.reserveCapacity(count)
            statistics.fullScans += 1
            try snapshot.forEachEncodedRow(in: tableName) { encoded in
                statistics.rowsExamined += 1
                records.append(try decoder.record(from: encoded))
                return true
            }
            return records
        }

        var rows: [(key: Int64, row: Row)] = []
        switch plan.access {
        case .fullScan:
            statistics.fullScans += 1
            var skipped = 0
            try snapshot.forEachRow(in: tableName) { key, row in
                statistics.rowsExamined += 1
                if let residual = plan.residual, try !evaluator.matches(residual, row: row, reference: reference(key)) { return true }
                if pushed && skipped < fetch.offset {
                    skipped += 1
                    return true
                }
                rows.append((key, row))
                return !(pushed && fetch.limit.map { rows.count >= $0 } ?? false)
            }
        case .keys(_, let keys):
            // Primary-key lookups: counted as one scan of the table's key index.
            statistics.indexScans += 1
            for key in keys {
                guard let row = try snapshot.row(in: tableName, key: key) else { continue }
                statistics.rowsExamined += 1
                if let residual = plan.residual, try !evaluator.matches(residual, row: row, reference: reference(key)) { continue }
                rows.append((key, row))
            }
        case .index, .indexUnion:
            for query in plan.access.indexQueries(table: tableName, offset: pushed ? fetch.offset : 0, limit: pushed ? fetch.limit : nil) {
                statistics.indexScans += 1
                for hit in try snapshot.query(query) {
                    statistics.rowsExamined += 1
                    if let residual = plan.residual, try !evaluator.matches(residual, row: hit.row, reference: reference(hit.key)) { continue }
                    rows.append(hit)
                }
            }
        }
        if !plan.sortedByAccess && !fetch.sort.isEmpty {
            var failure: Error?
            rows.sort { a, b in
                do { return try evaluator.compare(a.row, b.row, by: fetch.sort) == .orderedAscending } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
        }
        if !pushed && (fetch.offset > 0 || fetch.limit != nil) {
            let start = min(fetch.offset, rows.count)
            let end = fetch.limit.map { min(rows.count, start + $0) } ?? rows.count
            rows = Array(rows[start..<end])
        }
        var records: [ObjectRecord] = []
        records.reserveCapacity(rows.count)
        for hit in rows { records.append(try decoder.record(from: hit.row, key: hit.key)) }
        return records
    }

    /// The number of objects a fetch matches, without decoding them when the plan allows.
    func count(_ fetch: StoreFetch, statistics: inout FetchStatistics) throws -> Int {
        var unlimited = fetch
        unlimited.sort = []
        let plan = try self.plan(unlimited)
        if plan.residual == nil, case .index = plan.access {
            statistics.indexScans += 1
            statistics.lastFetchPlan = plan
            let table = try entityMapping(fetch.entity.name).tableName
            let total = try plan.access.indexQueries(table: table).reduce(0) { $0 + (try engine.read().count($1)) }
            return max(0, min(fetch.limit ?? .max, total - fetch.offset))
        }
        return try self.fetch(unlimited, statistics: &statistics).count
    }
}

extension FetchPlan.AccessPath {
    /// Whether the rows are read by primary key (`.keys`), which the index-scan paths do not cover.
    var isByKeys: Bool {
        if case .keys = self { return true }
        return false
    }

    /// The values of an access path that probes one unique index of `table` for whole keys, one scan
    /// per value (an `IN` list on a uniquely constrained attribute), in scan order; nil for any other.
    /// Values with a null are left to the scans: a unique index holds any number of rows with one.
    func uniqueProbes(in table: TableMapping) -> (index: String, values: [[Value]])? {
        guard case .indexUnion(let scans) = self, !scans.isEmpty else { return nil }
        var name: String?
        var values: [[Value]] = []
        values.reserveCapacity(scans.count)
        for scan in scans {
            guard case .index(let index, let equal, nil, nil, false) = scan, name == nil || name == index,
                !equal.contains(where: \.isNull) else { return nil }
            name = index
            values.append(equal)
        }
        guard let name, let definition = table.schema.indexes.first(where: { $0.name == name }), definition.isUnique,
            values.allSatisfy({ $0.count == definition.columns.count }) else { return nil }
        return (name, values)
    }
}
