import Foundation
import GranaryStorage

/// How a fetch reads rows: the access path, the predicate left to check on each row it yields, and
/// whether sorting, offset and limit still need doing in memory.
public struct FetchPlan: Sendable, Hashable, CustomStringConvertible {
    /// Where rows come from.
    public enum AccessPath: Sendable, Hashable {
        /// Every row of the table, in primary-key order.
        case fullScan
        /// One scan of a secondary index; the fields map one to one onto `IndexQuery`.
        case index(name: String, equal: [Value], range: ValueRange?, prefix: String?, reverse: Bool)
        /// Several `.index` scans of one index whose results are disjoint (they differ in the value of
        /// one column), concatenated in order. Empty when the predicate can never hold.
        case indexUnion([AccessPath])
        /// Rows read by primary key, in key order: those the inverse of a to-one relationship lists on
        /// the objects a predicate compares it with (`company == %@` reads the company's `employees`).
        /// The store chooses it, not the planner, for an object comparison on a to-one relationship no
        /// index covers: every relationship has an inverse, which holds exactly the rows that point at
        /// the object. `relationship` names the inverse (`"Company.employees"`), or is `"SELF"` for the
        /// rows of the objects themselves (`SELF IN %@`).
        case keys(relationship: String, keys: [Int64])

        /// The storage queries that run this access path (none for `.fullScan`, which reads the table).
        ///
        /// Pass `offset` and `limit` only when `FetchPlan.limitPushedDown` is true.
        public func indexQueries(table: String, offset: Int = 0, limit: Int? = nil) -> [IndexQuery] {
            switch self {
            case .fullScan: return []
            case .index(let name, let equal, let range, let prefix, let reverse):
                return [IndexQuery(table: table, index: name, equal: equal, range: range, prefix: prefix, reverse: reverse,
                                   offset: offset, limit: limit)]
            case .indexUnion(let scans): return scans.flatMap { $0.indexQueries(table: table) }
            case .keys: return []
            }
        }
    }

    /// Where the fetch reads its candidate rows.
    public var access: AccessPath
    /// What each row the access path yields must still satisfy; `nil` when the access path alone answers
    /// the predicate (and the entity filter).
    public var residual: PredicateNode?
    /// The access path yields rows in the requested order (or no order was requested), so no sort is
    /// needed; rows that tie on every sort key may come in any order.
    public var sortedByAccess: Bool
    /// Offset and limit can be applied by the scan itself (`IndexQuery.offset`/`limit`, or stopping a
    /// full scan early): there is a limit or offset, no residual, and the order is satisfied.
    public var limitPushedDown: Bool
    /// What the description needs besides the above. The description itself is worded only when asked
    /// for: building the string took an eighth of a small indexed fetch.
    let entityName: String
    let sort: [SortKey]
    let limit: Int?
    let offset: Int
    /// The predicate can never hold, so the plan reads nothing.
    var isAlwaysFalse = false

    /// A one-line human-readable description of the plan.
    public var explain: String { isAlwaysFalse ? "NOTHING (the predicate is always false)" : FetchPlanner.describe(self) }

    public var description: String { explain }
}

/// Chooses how to run a fetch: which index to scan (if any), with which bounds, and what is left to do.
///
/// Rules:
/// 1. The predicate is simplified (`PredicateNode.simplified`) and flattened into AND terms; when `FetchSchema.entityColumn` is set, the term
///    `_entity IN entityCodes` is added so that rows of other entities sharing the table are skipped.
///    A predicate that is always false plans as an empty `.indexUnion([])`.
/// 2. A term can be answered by an index column when it tests a field of the fetched entity itself (a
///    one-component key path) against constants: `==`, `IN`, an OR of `==`/`IN` on that one field, `== nil`
///    (equality with null); `<`, `<=`, `>`, `>=`, `BETWEEN`, `!= nil` (bounds); case- and
///    diacritic-sensitive `BEGINSWITH` on a string or URI field (a prefix). The constant must convert
///    exactly to the field's stored case (`2.0` works for an integer field, `2.5` does not), and
///    decimal fields (stored as strings) only use null tests. Anything else stays residual: key paths
///    through relationships, ANY and `@count`, `!=`, NOT, other string operators, `[c]`/`[d]`,
///    comparisons between two key paths, ORs across fields or of ranges.
/// 3. For each index, equality terms bind its columns from the first one for as long as they can; one
///    column may instead take several values (an IN or OR), which makes the access a union of one scan
///    per value. The column after the bound ones may take a range (the first lower and first upper bound,
///    or a BETWEEN, or `!= nil`) or else a prefix. A double or date column's lower-only range gets `+inf`
///    as its upper bound, so that NaNs, which the index sorts above infinity, stay out as they do in
///    evaluation; for the same reason a NaN constant never binds an index column.
/// 4. Candidates that narrow by a predicate field beat those that only match the entity column; then
///    they rank by the number of bound columns, then by having a range or prefix, then by
///    delivering the requested sort order, then by not needing a union, then by being a unique index
///    bound on every column, then by fewer columns. An index that binds nothing is chosen only to deliver
///    the sort order (a full scan in order, which a limit can stop early); with no candidate, the plan
///    is a full table scan.
/// 5. An index delivers the order when the sort keys — ignoring keys on columns bound to one value —
///    are the index's remaining columns in order, each a one-component key path of a field other than a
///    decimal or to-many, with binary string comparison, all in the index's direction or all against it
///    (then the scan runs in reverse). Union scans are ordered by their values in that direction. A full
///    scan delivers only "no order".
/// 6. Terms the index does not use become the residual. Offset and limit are pushed into the scan only
///    with no residual and the order delivered, and never into a union.
public enum FetchPlanner {
    /// The plan for a fetch of `schema`'s entity.
    ///
    /// - Parameters:
    ///   - predicate: the fetch's predicate; `nil` matches every object of the entity.
    ///   - sort: the requested order, most significant first.
    ///   - limit: the maximum number of results, if any.
    ///   - offset: the number of leading results to skip.
    ///   - schema: the fetched entity's fields and the indexes of its table.
    /// - Throws: `PredicateParseError.treeTooDeep` for a predicate nesting deeper than
    ///   `PredicateNode.maximumDepth` (plus the one level a fetch adds joining its parts), which
    ///   planning would walk recursively.
    public static func plan(predicate: PredicateNode?, sort: [SortKey], limit: Int?, offset: Int, schema: FetchSchema) throws -> FetchPlan {
        try predicate?.checkDepth(limit: PredicateNode.maximumJoinedDepth)
        // A simplified predicate is already flat; only the entity filter needs joining to it.
        var combined = predicate?.simplified ?? .true
        if schema.entityColumn != nil {
            combined = .all([combined, .isIn([FetchSchema.entityKey], schema.entityCodes.sorted().map(Value.int))])
        }
        let conjuncts: [PredicateNode]
        switch combined {
        case .false:
            return FetchPlan(access: .indexUnion([]), residual: nil, sortedByAccess: true, limitPushedDown: false,
                             entityName: schema.entityName, sort: sort, limit: limit, offset: offset, isAlwaysFalse: true)
        case .true: conjuncts = []
        case .and(let xs): conjuncts = xs
        case let x: conjuncts = [x]
        }

        let constraints = conjuncts.enumerated().compactMap { i, term in
            constraint(for: term, in: schema).map { (term: i, field: $0.field, constraint: $0.constraint) }
        }

        var best: Candidate?
        for index in schema.indexes {
            guard let candidate = Candidate(index: index, constraints: constraints, sort: sort, schema: schema) else { continue }
            if best.map({ candidate.isBetter(than: $0) }) ?? true { best = candidate }
        }

        let used = best?.usedTerms ?? PositionSet()
        let residual: PredicateNode?
        if used.count == conjuncts.count {
            residual = nil
        } else {
            let rest = conjuncts.indices.filter { !used.contains($0) }.map { conjuncts[$0] }
            residual = PredicateNode.all(rest)
        }
        let access = best?.access ?? .fullScan
        let sortedByAccess = best?.ordered ?? sort.isEmpty
        let isUnion: Bool
        if case .indexUnion = access { isUnion = true } else { isUnion = false }
        let limitPushedDown = (limit != nil || offset > 0) && residual == nil && sortedByAccess && !isUnion

        return FetchPlan(access: access, residual: residual, sortedByAccess: sortedByAccess, limitPushedDown: limitPushedDown,
                         entityName: schema.entityName, sort: sort, limit: limit, offset: offset)
    }

    // MARK: Terms an index can answer

    enum Constraint {
        case equal(Value)
        case values([Value])
        case lower(Value, inclusive: Bool)
        case upper(Value, inclusive: Bool)
        case range(ValueRange)
        case prefix(String)
    }

    /// What an index column on `field` can do for the term, or `nil` when the term must stay residual.
    static func constraint(for term: PredicateNode, in schema: FetchSchema) -> (field: String, constraint: Constraint)? {
        func field(_ path: KeyPathExpr) -> (String, FieldKind)? {
            guard path.count == 1, let info = schema.field(path[0]) else { return nil }
            return (path[0], info.kind)
        }
        switch term {
        case .isNil(let path):
            guard let (name, kind) = field(path), !isToMany(kind) else { return nil }
            return (name, .equal(.null))
        case .not(.isNil(let path)):
            guard let (name, kind) = field(path), !isToMany(kind) else { return nil }
            return (name, .range(ValueRange(lower: nil, upper: nil)))
        case .compare(let path, let op, .value(let v)):
            guard let (name, kind) = field(path) else { return nil }
            if v.isNull {
                switch op {
                case .equal: return isToMany(kind) ? nil : (name, .equal(.null))
                case .notEqual: return isToMany(kind) ? nil : (name, .range(ValueRange(lower: nil, upper: nil)))
                default: return nil
                }
            }
            guard let c = coerce(v, to: kind) else { return nil }
            switch op {
            case .equal: return (name, .equal(c))
            case .notEqual: return nil
            default:
                guard isOrdered(kind) else { return nil }
                switch op {
                case .less: return (name, .upper(c, inclusive: false))
                case .lessOrEqual: return (name, .upper(c, inclusive: true))
                case .greater: return (name, .lower(c, inclusive: false))
                default: return (name, .lower(c, inclusive: true))
                }
            }
        case .between(let path, let a, let b):
            guard let (name, kind) = field(path), isOrdered(kind), let lo = coerce(a, to: kind), let hi = coerce(b, to: kind) else { return nil }
            return (name, .range(.closed(lo, hi)))
        case .isIn(let path, let values):
            guard let (name, kind) = field(path) else { return nil }
            return inList(name, kind, values)
        case .string(let path, .beginsWith, let prefix, false, false):
            guard let (name, kind) = field(path), kind == .string || kind == .uri else { return nil }
            return (name, .prefix(prefix))
        case .or(let terms):
            // An OR is answerable only as a union of values on one field.
            var name: String?
            var values: [Value] = []
            for t in terms {
                guard let (n, c) = constraint(for: t, in: schema), name == nil || name == n else { return nil }
                name = n
                switch c {
                case .equal(let v): values.append(v)
                case .values(let vs): values.append(contentsOf: vs)
                default: return nil
                }
            }
            guard let name else { return nil }
            let unique = distinct(values)
            return (name, unique.count == 1 ? .equal(unique[0]) : .values(unique))
        default:
            return nil
        }
    }

    private static func inList(_ name: String, _ kind: FieldKind, _ values: [Value]) -> (field: String, constraint: Constraint)? {
        guard !isToMany(kind) else { return nil }
        var coerced: [Value] = []
        for v in values {
            if v.isNull { coerced.append(.null); continue }
            guard let c = coerce(v, to: kind) else { return nil }
            coerced.append(c)
        }
        let unique = distinct(coerced)
        return (name, unique.count == 1 ? .equal(unique[0]) : .values(unique))
    }

    private static func distinct(_ values: [Value]) -> [Value] {
        // Lists of integers (an import's IN lists of a thousand IDs) first, as integers: hashing each
        // `Value` cost more than the index probes the list leads to.
        var integers = Set<Int64>(minimumCapacity: values.count)
        var unique: [Value] = []
        unique.reserveCapacity(values.count)
        for value in values {
            guard case .int(let i) = value else {
                var seen = Set<Value>(minimumCapacity: values.count)
                return values.filter { seen.insert($0).inserted }
            }
            if integers.insert(i).inserted { unique.append(value) }
        }
        return unique
    }

    static func isToMany(_ kind: FieldKind) -> Bool {
        if case .toMany = kind { return true }
        return false
    }

    /// Whether the index order of the field's stored values is the evaluator's order.
    static func isOrdered(_ kind: FieldKind) -> Bool {
        switch kind {
        case .integer, .double, .bool, .string, .date, .uuid, .binary, .uri: return true
        case .decimal, .toOne, .toMany: return false
        }
    }

    /// The constant as the field stores it, or `nil` when it has no exact equivalent there (and an index
    /// lookup could miss rows the evaluator accepts).
    static func coerce(_ v: Value, to kind: FieldKind) -> Value? {
        switch (kind, v) {
        case (.integer, .int): return v
        case (.integer, .double(let d)): return Int64(exactly: d).map(Value.int)
        case (.integer, .bool(let b)): return .int(b ? 1 : 0)
        // `guard … return nil`, not `d.isNaN ? nil : v`: there the literal is `Value.null`, not "no
        // constant", and an index lookup of NaN found the rows whose value is null.
        case (.double, .double(let d)):
            guard !d.isNaN else { return nil }
            return v
        case (.double, .int(let i)): return Double(exactly: i).map(Value.double)
        case (.double, .bool(let b)): return .double(b ? 1 : 0)
        case (.bool, .bool): return v
        case (.bool, .int(let i)) where i == 0 || i == 1: return .bool(i == 1)
        case (.bool, .double(let d)) where d == 0 || d == 1: return .bool(d == 1)
        // A NaN date, like a NaN double, equals nothing in evaluation but has an index entry.
        case (.date, .date(let d)):
            guard !d.timeIntervalSinceReferenceDate.isNaN else { return nil }
            return v
        case (.string, .string), (.uri, .string), (.uuid, .uuid), (.binary, .bytes), (.toOne, .reference):
            return v
        default: return nil
        }
    }

    /// The highest value of a double or date column short of NaN, which the index sorts above it:
    /// the upper bound a lower-only range takes so that NaNs stay out, as they do in evaluation.
    static func infinity(_ kind: FieldKind) -> Value? {
        switch kind {
        case .double: return .double(.infinity)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: .infinity))
        default: return nil
        }
    }

    // MARK: Candidates

    /// Positions of terms (those an index answers) or of index columns (those bound to one value): a
    /// bit mask for the first 64, which covers every predicate and index in practice, so that planning a
    /// fetch allocates no set.
    struct PositionSet {
        private var bits: UInt64 = 0
        private var more: Set<Int> = []
        private(set) var count = 0

        func contains(_ term: Int) -> Bool {
            term < 64 ? bits & (1 << UInt64(term)) != 0 : more.contains(term)
        }

        var isEmpty: Bool { count == 0 }

        mutating func insert(_ term: Int) {
            guard !contains(term) else { return }
            if term < 64 { bits |= 1 << UInt64(term) } else { more.insert(term) }
            count += 1
        }
    }

    /// One way to use one index.
    struct Candidate {
        let index: PlannerIndex
        var equal: [Value] = []
        var union: (position: Int, values: [Value])?
        var range: ValueRange?
        var prefix: String?
        var usedTerms = PositionSet()
        var ordered = false
        var reverse = false

        init?(index: PlannerIndex, constraints: [(term: Int, field: String, constraint: Constraint)], sort: [SortKey], schema: FetchSchema) {
            self.index = index
            let columns = index.columns
            var position = 0
            var fixed = PositionSet()
            while position < columns.count {
                let name = columns[position].name
                if let c = constraints.first(where: { if $0.field == name, case .equal = $0.constraint { return true } else { return false } }),
                   case .equal(let v) = c.constraint {
                    equal.append(v)
                    fixed.insert(position)
                    usedTerms.insert(c.term)
                } else if union == nil,
                          let c = constraints.first(where: { if $0.field == name, case .values = $0.constraint { return true } else { return false } }),
                          case .values(let vs) = c.constraint {
                    union = (position, vs)
                    equal.append(.null)  // replaced by each union value
                    usedTerms.insert(c.term)
                } else {
                    break
                }
                position += 1
            }
            if position < columns.count {
                let name = columns[position].name
                let here = constraints.filter { $0.field == name }
                if let c = here.first(where: { if case .range = $0.constraint { return true } else { return false } }),
                   case .range(let r) = c.constraint {
                    range = r
                    usedTerms.insert(c.term)
                } else {
                    var r = ValueRange(lower: nil, upper: nil)
                    var found = false
                    if let c = here.first(where: { if case .lower = $0.constraint { return true } else { return false } }),
                       case .lower(let v, let inclusive) = c.constraint {
                        (r.lower, r.lowerInclusive, found) = (v, inclusive, true)
                        usedTerms.insert(c.term)
                    }
                    if let c = here.first(where: { if case .upper = $0.constraint { return true } else { return false } }),
                       case .upper(let v, let inclusive) = c.constraint {
                        (r.upper, r.upperInclusive, found) = (v, inclusive, true)
                        usedTerms.insert(c.term)
                    }
                    if found {
                        if r.upper == nil, let kind = schema.field(name)?.kind, let infinity = FetchPlanner.infinity(kind) {
                            (r.upper, r.upperInclusive) = (infinity, true)
                        }
                        range = r
                    } else if let c = here.first(where: { if case .prefix = $0.constraint { return true } else { return false } }),
                              case .prefix(let p) = c.constraint {
                        prefix = p
                        usedTerms.insert(c.term)
                    }
                }
            }
            (ordered, reverse) = Self.order(of: index, fixed: fixed, sort: sort, schema: schema)
            // An index that filters nothing is worth scanning only for its order.
            if usedTerms.isEmpty && !(ordered && !sort.isEmpty) { return nil }
            if let u = union {
                let column = columns[u.position]
                let descendingValues = column.descending != reverse
                union = (u.position, u.values.sorted {
                    ValueOrder.sortOrder($0, $1, asDecimals: false, strings: .binary) == (descendingValues ? .orderedDescending : .orderedAscending)
                })
            }
        }

        /// Whether scanning the index (forward, or in reverse) yields the sort order, given the columns
        /// bound to one value.
        static func order(of index: PlannerIndex, fixed: PositionSet, sort: [SortKey], schema: FetchSchema) -> (ordered: Bool, reverse: Bool) {
            let columns = index.columns
            // Walked side by side without building the lists of keys and columns: this runs for every
            // index on every fetch.
            func isBound(_ key: SortKey) -> Bool {
                key.keyPath.count == 1 && columns.indices.contains { fixed.contains($0) && columns[$0].name == key.keyPath[0] }
            }
            var position = 0
            var direction: Bool?
            for key in sort where !isBound(key) {
                while position < columns.count && fixed.contains(position) { position += 1 }
                guard position < columns.count else { return (false, false) }
                let column = columns[position]
                position += 1
                guard key.keyPath.count == 1, key.keyPath[0] == column.name, let kind = schema.field(column.name)?.kind,
                      FetchPlanner.isOrdered(kind) || isReference(kind)
                else { return (false, false) }
                if key.comparison != .binary && (kind == .string || kind == .uri) { return (false, false) }
                let forward = key.ascending != column.descending
                if let d = direction, d != forward { return (false, false) }
                direction = forward
            }
            return (true, direction == false)
        }

        static func isReference(_ kind: FieldKind) -> Bool {
            if case .toOne = kind { return true }
            return false
        }

        var boundColumns: Int { equal.count }
        /// Whether the scan narrows by a field of the predicate, not only by the entity filter, which in a
        /// hierarchy table is barely selective: such a scan beats an equality on the entity column.
        var narrowsUserFields: Bool {
            index.columns.prefix(equal.count + (hasRangeOrPrefix ? 1 : 0)).contains { $0.name != FetchSchema.entityKey }
        }
        var hasRangeOrPrefix: Bool { range != nil || prefix != nil }
        var isUniqueLookup: Bool { index.isUnique && union == nil && equal.count == index.columns.count }

        func isBetter(than other: Candidate) -> Bool {
            let mine = [narrowsUserFields ? 1 : 0, boundColumns, hasRangeOrPrefix ? 1 : 0, ordered ? 1 : 0, union == nil ? 1 : 0, isUniqueLookup ? 1 : 0, -index.columns.count]
            let theirs = [other.narrowsUserFields ? 1 : 0, other.boundColumns, other.hasRangeOrPrefix ? 1 : 0, other.ordered ? 1 : 0, other.union == nil ? 1 : 0,
                          other.isUniqueLookup ? 1 : 0, -other.index.columns.count]
            return mine.lexicographicallyPrecedes(theirs) == false && mine != theirs
        }

        var access: FetchPlan.AccessPath {
            guard let union else {
                return .index(name: index.name, equal: equal, range: range, prefix: prefix, reverse: reverse)
            }
            return .indexUnion(union.values.map { v in
                var e = equal
                e[union.position] = v
                return .index(name: index.name, equal: e, range: range, prefix: prefix, reverse: reverse)
            })
        }
    }

    // MARK: Explain

    /// The wording of `FetchPlan.explain`.
    static func describe(_ plan: FetchPlan) -> String {
        var explain = describe(plan.access, entityName: plan.entityName)
        if !plan.sort.isEmpty {
            explain += plan.sortedByAccess ? " ORDER SATISFIED" : " SORT IN MEMORY BY " + plan.sort.map(\.description).joined(separator: ", ")
        }
        if let residual = plan.residual { explain += ", RESIDUAL \(residual)" }
        if plan.limitPushedDown {
            explain += ", " + [plan.limit.map { "LIMIT \($0)" }, plan.offset > 0 ? "OFFSET \(plan.offset)" : nil].compactMap { $0 }.joined(separator: " ") + " IN SCAN"
        }
        return explain
    }

    private static func describe(_ access: FetchPlan.AccessPath, entityName: String) -> String {
        switch access {
        case .fullScan:
            return "SCAN \(entityName)"
        case .index(let name, _, _, _, _):
            return "INDEX \(name)" + bounds(access)
        case .keys(let relationship, let keys):
            return relationship == "SELF" ? "ROWS BY KEY (\(keys.count))" : "ROWS LISTED BY \(relationship) (\(keys.count))"
        case .indexUnion(let scans):
            guard case .index(let name, _, _, _, _)? = scans.first else { return "NOTHING" }
            return "UNION OF \(scans.count) SCANS OF INDEX \(name):" + scans.map(bounds).joined(separator: " |")
        }
    }

    private static func bounds(_ access: FetchPlan.AccessPath) -> String {
        guard case .index(_, let equal, let range, let prefix, let reverse) = access else { return "" }
        var out = ""
        if !equal.isEmpty { out += " EQUAL (" + equal.map(PredicateFormat.literal).joined(separator: ", ") + ")" }
        if let range {
            if range.lower == nil && range.upper == nil {
                out += " NOT NULL"
            } else {
                out += " RANGE " + (range.lower != nil && range.lowerInclusive ? "[" : "(")
                out += range.lower.map(PredicateFormat.literal) ?? "-inf"
                out += ", " + (range.upper.map(PredicateFormat.literal) ?? "+inf")
                out += range.upper != nil && range.upperInclusive ? "]" : ")"
            }
        }
        if let prefix { out += " PREFIX " + PredicateFormat.quoted(prefix) }
        if reverse { out += " REVERSE" }
        return out
    }
}
