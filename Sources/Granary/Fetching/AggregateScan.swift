import Foundation
import GranaryStorage

/// The groups of an aggregate fetch and their accumulators, filled as the matching rows stream in, and
/// the results they make at the end (having predicate, distinct, sort and window applied).
///
/// A row is read for the few values the query needs: straight from its encoded bytes when every key
/// path is a field of the entity itself (`EncodedRow.read(columns:into:)`: the other values are stepped
/// over, and counts and sums of numbers read theirs in place, so a row allocates nothing), else from a
/// decoded `Row` through `RowEvaluator`, which follows to-one relationships.
struct AggregateScan {
    let query: AggregateQuery
    /// Each distinct key path read from a row, by slot.
    private let inputs: [KeyPathExpr]
    /// Per slot, the column holding the value, or -1 for a key path through relationships.
    private let inputColumns: [Int]
    private let groupSlots: [Int]
    /// Per aggregate, the slot of its value, or -1 for a count of objects.
    private let aggregateSlots: [Int]
    private let operations: [AggregateAccumulator.Operation]
    /// A decoded row's values, by slot; reused from row to row.
    private var values: [Value]
    /// The columns read from an encoded row, ascending, and the positions among them of the grouped
    /// values and of each aggregate's value (-1 for a count of objects).
    private let readColumns: [Int]
    private let groupPositions: [Int]
    private let aggregatePositions: [Int]
    /// An encoded row's values, by position in `readColumns`; reused from row to row.
    private var encoded: [EncodedValue]
    private var groups: GroupTable
    /// Group `g`'s accumulator of aggregate `k` is at `g * operations.count + k`.
    private var accumulators: [AggregateAccumulator] = []

    /// An empty scan for `query` over rows of `schema`'s entity.
    init(query: AggregateQuery, schema: FetchSchema) {
        self.query = query
        var inputs: [KeyPathExpr] = []
        func slot(_ input: AggregateQuery.Input) -> Int {
            if let i = inputs.firstIndex(of: input.keyPath) { return i }
            inputs.append(input.keyPath)
            return inputs.count - 1
        }
        groupSlots = query.groupings.map(slot)
        aggregateSlots = query.aggregates.map { $0.input.map(slot) ?? -1 }
        operations = query.aggregates.map(\.operation)
        self.inputs = inputs
        let inputColumns = inputs.map { path in path.count == 1 ? schema.field(path[0])?.column ?? -1 : -1 }
        self.inputColumns = inputColumns
        // Distinct key paths of the entity itself are distinct columns.
        let readColumns = inputColumns.filter { $0 >= 0 }.sorted()
        self.readColumns = readColumns
        let position = inputColumns.map { readColumns.firstIndex(of: $0) ?? -1 }
        groupPositions = groupSlots.map { position[$0] }
        aggregatePositions = aggregateSlots.map { $0 >= 0 ? position[$0] : -1 }
        encoded = Array(repeating: .absent, count: readColumns.count)
        values = [Value](repeating: .null, count: inputs.count)
        groups = GroupTable(width: groupSlots.count)
        if groupSlots.isEmpty { accumulators = Array(repeating: AggregateAccumulator(), count: operations.count) }
    }

    /// Whether every value is read from a row's own columns, so that `add(_:)` can take rows still
    /// encoded.
    var readsEncodedRows: Bool { !inputColumns.contains(-1) }

    /// Takes an encoded row in (only when `readsEncodedRows`): its values are found in its bytes, and
    /// a count or a sum of integers or doubles reads them there.
    /// - Throws: `StorageError.corruption` for a row that does not decode.
    mutating func add(_ row: EncodedRow) throws {
        try row.read(columns: readColumns, into: &encoded)
        let base = (groupPositions.isEmpty ? 0 : groups.group(of: encoded, at: groupPositions)) * operations.count
        if base == accumulators.count && !operations.isEmpty {
            accumulators.append(contentsOf: repeatElement(AggregateAccumulator(), count: operations.count))
        }
        for k in operations.indices {
            let position = aggregatePositions[k]
            accumulators[base + k].add(encoded: position >= 0 ? encoded[position] : .absent, operations[k])
        }
    }

    /// Takes a decoded row in; `evaluator` reads the key paths through relationships.
    /// - Throws: what `RowEvaluator.value(at:in:)` throws.
    mutating func add(_ row: Row, evaluator: RowEvaluator) throws {
        for slot in inputs.indices {
            let column = inputColumns[slot]
            values[slot] = column >= 0 ? row[column] : try evaluator.value(at: inputs[slot], in: row)
        }
        accept()
    }

    /// Takes aggregate `k`'s value for the one group of a query that groups nothing, found without a
    /// scan (the first entry of an index).
    mutating func add(_ value: Value, toAggregate k: Int) {
        accumulators[k].add(value, operations[k])
    }

    /// Counts `n` objects into aggregate `k` (a count of objects) of the one group of a query that
    /// groups nothing.
    mutating func addObjects(_ n: Int, toAggregate k: Int) {
        accumulators[k].addObjects(n)
    }

    private mutating func accept() {
        let group: Int
        switch groupSlots.count {
        case 0: group = 0
        case 1: group = groups.group(of: values[groupSlots[0]])
        default: group = groups.group(of: groupSlots.map { values[$0] })
        }
        let base = group * operations.count
        if base == accumulators.count && !operations.isEmpty {
            accumulators.append(contentsOf: repeatElement(AggregateAccumulator(), count: operations.count))
        }
        for k in operations.indices {
            let slot = aggregateSlots[k]
            accumulators[base + k].add(slot >= 0 ? values[slot] : .null, operations[k])
        }
    }

    /// One row of values per group, a value per column of the query (converted to the column's type),
    /// in the order the groups were first met.
    func rows() -> [[Value]] {
        let n = operations.count
        return (0..<groups.count).map { g in
            query.columns.map { column in
                var value: Value
                switch column.source {
                case .group(let i): value = groups.keys[g][i]
                case .aggregate(let k): value = accumulators[g * n + k].result(operations[k])
                }
                if case .attribute(let natural) = column.natural, case .attribute(let type) = column.type {
                    value = AggregateAccumulator.converted(value, from: natural, to: type)
                }
                return value
            }
        }
    }

    /// The rows the query returns: those its having predicate keeps, each distinct one once when asked,
    /// in its order (rows that tie keep the order they came in), within its window. `objectReference`
    /// gives the reference a grouped to-one relationship holds for an object the having predicate
    /// compares it with.
    /// - Throws: what `RowEvaluator` throws for the having predicate or the sort.
    func results(objectReference: @escaping (ManagedObjectID) -> RowReference?) throws -> [[Value]] {
        var rows = rows()
        // Made only for a having predicate or a sort: its closures and regex cache are allocations a
        // single total need not pay for.
        lazy var evaluator = RowEvaluator(schema: query.resultSchema, objectReference: objectReference)
        if let having = query.having { rows = try rows.filter { try evaluator.matches(having, row: Row($0)) } }
        if query.distinct {
            var seen = Set<ArraySlice<Value>>()
            rows = rows.filter { seen.insert($0[..<query.fetchedCount]).inserted }
        }
        if !query.sort.isEmpty {
            var failure: Error?
            let order = rows.indices.sorted { a, b in
                do {
                    let r = try evaluator.compare(Row(rows[a]), Row(rows[b]), by: query.sort)
                    return r == .orderedSame ? a < b : r == .orderedAscending
                } catch {
                    failure = error
                    return false
                }
            }
            if let failure { throw failure }
            rows = order.map { rows[$0] }
        }
        let start = min(query.offset, rows.count)
        let end = query.limit.map { min(rows.count, start + $0) } ?? rows.count
        return start == 0 && end == rows.count ? rows : Array(rows[start..<end])
    }
}
