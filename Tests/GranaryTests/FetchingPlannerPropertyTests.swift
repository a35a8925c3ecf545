import Foundation
import PropertyBased
import Testing
@testable import Granary

/// Random predicates, sorts, limits and data over a small table: running the plan (access path over a
/// simulated index, then residual, sort, offset and limit as the plan says) must give what evaluating
/// the predicate on every row gives, and the simulated index scans must be what the storage engine
/// returns for the same queries. This is what proves the planner never drops or adds rows.
@Suite struct FetchingPlannerPropertyTests {
    /// SplitMix64, so that one seed reproduces a whole case.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func bool() -> Bool { int(2) == 0 }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
    }

    static let fields = ["a", "b", "c", "d"]
    static let ints: [Value] = [.null, -2, -1, 0, 1, 2, 3, 4]
    static let strings: [Value] = [.null, "", "a", "ab", "abc", "b", "B", "ba", "é"]
    static let doubles: [Value] = [.null, -1.5, 0.0, 0.5, 2.0, 3.25]
    static let bools: [Value] = [.null, false, true]

    static let indexes: [PlannerIndex] = [
        PlannerIndex(name: "byA", on: "a"),
        PlannerIndex(name: "byBA", on: "b", "a"),
        PlannerIndex(name: "byCDesc", columns: [("c", true)]),
        PlannerIndex(name: "byDB", columns: [("d", false), ("b", true)]),
        PlannerIndex(name: "byEntityA", on: FetchSchema.entityKey, "a"),
    ]

    static func schema(entityCodes: Set<Int64>?) -> FetchSchema {
        FetchSchema(entityName: "T", fields: [
            "a": FieldInfo(column: 0, kind: .integer), "b": FieldInfo(column: 1, kind: .string),
            "c": FieldInfo(column: 2, kind: .double), "d": FieldInfo(column: 3, kind: .bool),
        ], indexes: indexes, entityColumn: entityCodes == nil ? nil : 4, entityCodes: entityCodes ?? [])
    }

    static func constant(for field: String, _ r: inout Random) -> Value {
        switch (field, r.int(6)) {
        case ("a", 0): return r.pick([2.0, 2.5, true])  // converts to an integer, or does not
        case ("a", _): return r.pick(ints.dropFirst().map { $0 } + [-3, 5])
        case ("b", _): return r.pick(Array(strings.dropFirst()) + ["aa", "c"])
        case ("c", 0): return r.pick([0, 2, 7])
        case ("c", _): return r.pick(Array(doubles.dropFirst()) + [1.0, -2.0])
        default: return r.pick([false, true, 0, 1, 2])
        }
    }

    static func predicate(_ r: inout Random, depth: Int) -> PredicateNode {
        if depth > 0 && r.int(3) == 0 {
            let terms = (0..<(2 + r.int(2))).map { _ in predicate(&r, depth: depth - 1) }
            switch r.int(3) {
            case 0: return .and(terms)
            case 1: return .or(terms)
            default: return .not(terms[0])
            }
        }
        let field = r.pick(fields)
        switch r.int(12) {
        case 0...3: return .compare([field], r.pick(ComparisonOperator.allCases), .value(constant(for: field, &r)))
        case 4: return .isIn([field], (0..<(1 + r.int(3))).map { _ in r.int(5) == 0 ? .null : constant(for: field, &r) })
        case 5: return .between([field], constant(for: field, &r), constant(for: field, &r))
        case 6, 7:
            return .string(["b"], r.pick(StringOperator.allCases.filter { $0 != .matches }), r.pick(["", "a", "b", "B", "é", "a*"]),
                           caseInsensitive: r.int(3) == 0)
        case 8: return .isNil([field])
        case 9: return .not(.isNil([field]))
        case 10: return .compare(["a"], r.pick(ComparisonOperator.allCases), .keyPath(["c"]))
        default: return r.pick([.true, .false, .compare([field], .equal, .value(.null))])
        }
    }

    // MARK: A simulated index, ordered as IndexKey documents (independently of ValueOrder)

    static func rank(_ v: Value) -> Int {
        switch v {
        case .null: return 0
        case .bool: return 1
        case .int: return 2
        case .double: return 3
        case .date: return 4
        case .string: return 5
        default: return 6
        }
    }

    static func indexCompare(_ x: Value, _ y: Value) -> Int {
        if rank(x) != rank(y) { return rank(x) < rank(y) ? -1 : 1 }
        func c<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : a > b ? 1 : 0 }
        switch (x, y) {
        case (.bool(let a), .bool(let b)): return c(a ? 1 : 0, b ? 1 : 0)
        case (.int(let a), .int(let b)): return c(a, b)
        case (.double(let a), .double(let b)): return c(a, b)
        case (.string(let a), .string(let b)): return a.utf8.elementsEqual(b.utf8) ? 0 : a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
        default: return 0
        }
    }

    static func simulate(_ access: FetchPlan.AccessPath, rows: [Int64: Row], columns: [String: Int]) -> [Int64] {
        switch access {
        case .fullScan: return rows.keys.sorted()
        case .keys(_, let keys): return keys.filter { rows[$0] != nil }
        case .indexUnion(let scans): return scans.flatMap { simulate($0, rows: rows, columns: columns) }
        case .index(let name, let equal, let range, let prefix, let reverse):
            let index = indexes.first { $0.name == name }!
            let cols = index.columns.map { (columns[$0.name]!, $0.descending) }
            let entries = rows.keys.sorted().sorted { k1, k2 in
                for (col, desc) in cols {
                    let r = indexCompare(rows[k1]![col], rows[k2]![col])
                    if r != 0 { return desc ? r > 0 : r < 0 }
                }
                return k1 < k2
            }
            let matching = entries.filter { k in
                let row = rows[k]!
                for (i, v) in equal.enumerated() where indexCompare(row[cols[i].0], v) != 0 { return false }
                guard equal.count < cols.count else { return true }
                let v = row[cols[equal.count].0]
                if let prefix {
                    guard case .string(let s) = v else { return false }
                    return s.utf8.starts(with: prefix.utf8)
                }
                if let range {
                    if v.isNull { return false }
                    if let lo = range.lower {
                        let c = indexCompare(v, lo)
                        if c < 0 || (c == 0 && !range.lowerInclusive) { return false }
                    }
                    if let hi = range.upper {
                        let c = indexCompare(v, hi)
                        if c > 0 || (c == 0 && !range.upperInclusive) { return false }
                    }
                }
                return true
            }
            return reverse ? matching.reversed() : matching
        }
    }

    static func window(_ keys: [Int64], offset: Int, limit: Int?) -> [Int64] {
        let start = min(offset, keys.count)
        let end = limit.map { min(start + $0, keys.count) } ?? keys.count
        return Array(keys[start..<end])
    }

    static func check(seed: Int) throws {
        var r = Random(state: UInt64(seed))
        var rows: [Int64: Row] = [:]
        for key in 1...Int64(1 + r.int(30)) {
            rows[key] = [r.pick(ints), r.pick(strings), r.pick(doubles), r.pick(bools), .int(Int64(1 + r.int(3)))]
        }
        let codes: Set<Int64>? = r.bool() ? nil : Set((1...3).filter { _ in r.bool() }.map(Int64.init))
        let schema = schema(entityCodes: codes)
        let predicate: PredicateNode? = r.int(8) == 0 ? nil : predicate(&r, depth: 2)
        let sort = (0..<r.int(3)).map { _ in SortKey(r.pick(fields), ascending: r.bool()) }
        let limit: Int? = r.bool() ? nil : r.int(5)
        let offset = r.int(4) == 0 ? r.int(3) : 0
        let plan = try FetchPlanner.plan(predicate: predicate, sort: sort, limit: limit, offset: offset, schema: schema)
        let evaluator = RowEvaluator(schema: schema)
        let context = "seed \(seed): \(predicate.map(\.description) ?? "nil") sort \(sort) limit \(String(describing: limit)) offset \(offset) → \(plan.explain)"

        // The plan, run on the simulated index.
        var keys = simulate(plan.access, rows: rows, columns: ["a": 0, "b": 1, "c": 2, "d": 3, FetchSchema.entityKey: 4])
        if plan.limitPushedDown { keys = window(keys, offset: offset, limit: limit) }
        if let residual = plan.residual { keys = try keys.filter { try evaluator.matches(residual, row: rows[$0]!) } }
        if !plan.sortedByAccess {
            keys = try keys.enumerated().sorted { x, y in
                let c = try evaluator.compare(rows[x.element]!, rows[y.element]!, by: sort)
                return c == .orderedSame ? x.offset < y.offset : c == .orderedAscending
            }.map(\.element)
        }
        if !plan.limitPushedDown { keys = window(keys, offset: offset, limit: limit) }

        // Direct evaluation on every row.
        let full = PredicateNode.all([predicate ?? .true] + (codes.map { [.isIn([FetchSchema.entityKey], $0.sorted().map(Value.int))] } ?? []))
        let matching = try rows.keys.sorted().filter { try evaluator.matches(full, row: rows[$0]!) }
        let ordered = try matching.sorted { try evaluator.compare(rows[$0]!, rows[$1]!, by: sort) == .orderedAscending }
        let expected = window(ordered, offset: offset, limit: limit)

        #expect(keys.count == expected.count, "\(context)")
        #expect(Set(keys).count == keys.count, "duplicates: \(context)")
        #expect(Set(keys).isSubset(of: Set(matching)), "\(context)")
        if limit == nil && offset == 0 { #expect(Set(keys) == Set(expected), "\(context)") }
        func projection(_ k: Int64) -> [Value] { sort.map { rows[k]![["a": 0, "b": 1, "c": 2, "d": 3][$0.keyPath[0]]!] } }
        #expect(keys.map(projection) == expected.map(projection), "order: \(context)")

        // The simulated scans are what the storage engine returns.
        let queries = plan.access.indexQueries(table: "t")
        if !queries.isEmpty {
            let engine = try Engine.open(.inMemory)
            try engine.write { tx in
                try tx.createTable(TableSchema(
                    name: "t",
                    columns: [Column("a", .int), Column("b", .string), Column("c", .double), Column("d", .bool), Column(FetchSchema.entityKey, .int)],
                    indexes: indexes.map { IndexDefinition(name: $0.name, columns: $0.columns.map { IndexColumn($0.name, descending: $0.descending) }) }))
                for (key, row) in rows { try tx.insert(row, into: "t", key: key) }
            }
            let snapshot = engine.read()
            let scanned = try queries.flatMap { try snapshot.queryKeys($0) }
            #expect(scanned == simulate(plan.access, rows: rows, columns: ["a": 0, "b": 1, "c": 2, "d": 3, FetchSchema.entityKey: 4]), "engine: \(context)")
        }
    }

    @Test func plansReturnExactlyTheRowsDirectEvaluationReturns() async {
        await propertyCheck(count: 1500, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed) }
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<300 { try Self.check(seed: seed) }
    }
}
