import Foundation
import GranaryStorage

extension PersistentStore {
    /// Runs a grouped or aggregate fetch on the stored rows its predicate matches, without making a
    /// record or object per row, and returns its dictionaries.
    ///
    /// The rows come from the planner's access path (an index when one fits the predicate), each read
    /// for the few values the query needs (`AggregateScan`). A query of minimums, maximums and object
    /// counts over every object of a table reads one end of an index per extreme instead
    /// (`answerFromIndexes`). The having predicate, distinct, sort and window then apply to the groups.
    func aggregate(_ fetch: StoreFetch, _ query: AggregateQuery, statistics: inout FetchStatistics) throws -> [[String: Any]] {
        try checkAttached()
        let schema = try fetchSchema(for: fetch.entity, includesSubentities: fetch.includesSubentities)
        let snapshot = engine.read()
        let tableName = try entityMapping(fetch.entity.name).tableName
        var scan = AggregateScan(query: query, schema: schema)
        if try !answerFromIndexes(fetch, query, schema: schema, tableName: tableName, snapshot: snapshot, into: &scan, statistics: &statistics) {
            try scanRows(fetch, schema: schema, tableName: tableName, snapshot: snapshot, into: &scan, statistics: &statistics)
        }
        let rows = try scan.results(objectReference: { [self] in objectReference($0) })
        return try dictionaries(rows, query, entity: fetch.entity.name, snapshot: snapshot)
    }

    /// Feeds the rows the fetch's predicate matches into the scan, read along the planner's access path.
    private func scanRows(_ fetch: StoreFetch, schema: FetchSchema, tableName: String, snapshot: Snapshot,
                          into scan: inout AggregateScan, statistics: inout FetchStatistics) throws {
        var whole = fetch
        (whole.sort, whole.limit, whole.offset) = ([], nil, 0)
        let plan = try plan(whole, schema: schema, snapshot: snapshot)
        statistics.lastFetchPlan = plan
        // Rows reached through to-one key paths are read from the same snapshot.
        let evaluator = RowEvaluator(schema: schema, resolve: { [self] destination, ref in
            guard let entity = model.entity(named: destination), let name = snapshot.tableName(for: ref.table),
                let row = try snapshot.row(in: name, key: ref.key)
            else { return nil }
            return (row, try fetchSchema(for: entity, includesSubentities: true))
        }, objectReference: { [self] in objectReference($0) })
        let tableID = tableIDs[fetch.entity.name]
        let residual = plan.residual
        // Without a residual to check or a relationship to follow, a row is read from its bytes.
        let streams = residual == nil && scan.readsEncodedRows
        var row = Row([])
        var examined = 0
        func take(_ encoded: EncodedRow) throws {
            examined += 1
            if streams { return try scan.add(encoded) }
            try encoded.decode(into: &row)
            if let residual, try !evaluator.matches(residual, row: row, reference: tableID.map { RowReference(table: $0, key: encoded.key) }) {
                return
            }
            try scan.add(row, evaluator: evaluator)
        }
        switch plan.access {
        case .fullScan where streams:
            // Every row of the table into the scan, nothing checked on the way: the common total.
            statistics.fullScans += 1
            try snapshot.forEachEncodedRow(in: tableName) { encoded in
                try scan.add(encoded)
                return true
            }
            examined = try snapshot.count(in: tableName)
        case .fullScan:
            statistics.fullScans += 1
            try snapshot.forEachEncodedRow(in: tableName) { encoded in
                try take(encoded)
                return true
            }
        case .index, .indexUnion:
            for query in plan.access.indexQueries(table: tableName) {
                statistics.indexScans += 1
                try snapshot.query(query) { try take($0) }
            }
        case .keys(_, let keys):
            statistics.indexScans += 1
            try snapshot.keyedRows(of: tableName).withRows(forKeys: keys) { _, encoded in
                if let encoded { try take(encoded) }
            }
        }
        statistics.rowsExamined += examined
    }

    /// Answers a query of minimums, maximums and object counts over every object of a table that holds
    /// no other entity's rows without a scan: an extreme is the first entry (past the nulls, and short of
    /// the NaNs a double or date index sorts last) at one end of an index led by its attribute, and the
    /// count is the table's. Returns false, having read nothing, for any other query.
    private func answerFromIndexes(_ fetch: StoreFetch, _ query: AggregateQuery, schema: FetchSchema, tableName: String,
                                   snapshot: Snapshot, into scan: inout AggregateScan, statistics: inout FetchStatistics) throws -> Bool {
        guard fetch.predicate == nil, query.groupings.isEmpty, schema.entityColumn == nil, !query.aggregates.isEmpty else { return false }
        enum Answer {
            case count
            case extreme(IndexQuery, column: Int, plan: FetchPlan.AccessPath)
        }
        var answers: [Answer] = []
        for aggregate in query.aggregates {
            let isMaximum: Bool
            switch aggregate.operation {
            case .countObjects:
                answers.append(.count)
                continue
            case .minimum(decimal: false): isMaximum = false
            case .maximum(decimal: false): isMaximum = true
            default: return false
            }
            guard let path = aggregate.input?.keyPath, path.count == 1, let field = schema.field(path[0]), FetchPlanner.isOrdered(field.kind),
                let index = schema.indexes.first(where: { $0.columns.first?.name == path[0] })
            else { return false }
            var range = ValueRange(lower: nil, upper: nil)
            if let infinity = FetchPlanner.infinity(field.kind) { (range.upper, range.upperInclusive) = (infinity, true) }
            let reverse = isMaximum != index.columns[0].descending
            answers.append(.extreme(IndexQuery(table: tableName, index: index.name, range: range, reverse: reverse, limit: 1), column: field.column,
                                    plan: .index(name: index.name, equal: [], range: range, prefix: nil, reverse: reverse)))
        }
        for (k, answer) in answers.enumerated() {
            switch answer {
            case .count:
                scan.addObjects(try snapshot.count(in: tableName), toAggregate: k)
            case .extreme(let query, let column, let access):
                statistics.indexScans += 1
                statistics.lastFetchPlan = FetchPlan(access: access, residual: nil, sortedByAccess: true, limitPushedDown: true,
                                                     entityName: fetch.entity.name, sort: [], limit: 1, offset: 0)
                var value = [EncodedValue.absent]
                try snapshot.query(query) { encoded in
                    statistics.rowsExamined += 1
                    try encoded.read(columns: [column], into: &value)
                    scan.add(value[0].value, toAggregate: k)
                }
            }
        }
        return true
    }

    /// The result rows as Core Data's dictionaries: a key per fetched column whose value is not nil,
    /// numbers and attributes as their Swift types, grouped to-one relationships as object IDs.
    private func dictionaries(_ rows: [[Value]], _ query: AggregateQuery, entity: String, snapshot: Snapshot) throws -> [[String: Any]] {
        let columns = query.columns.prefix(query.fetchedCount)
        var result: [[String: Any]] = []
        result.reserveCapacity(rows.count)
        for row in rows {
            var dictionary: [String: Any] = [:]
            dictionary.reserveCapacity(columns.count)
            for (i, column) in columns.enumerated() where !row[i].isNull {
                switch column.type {
                case .object:
                    if case .reference(let ref) = row[i], let id = try objectID(for: ref, in: snapshot) { dictionary[column.name] = id }
                case .attribute(let type):
                    do {
                        if let value = try type.swiftValue(from: row[i]) { dictionary[column.name] = value }
                    } catch {
                        throw ContextError.invalidRequest(entity: entity, reason: "the value of '\(column.name)' cannot be read: \(error)")
                    }
                }
            }
            result.append(dictionary)
        }
        return result
    }
}
