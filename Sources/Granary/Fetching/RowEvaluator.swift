import Foundation
import GranaryStorage

/// Evaluates predicates and sort orders on stored rows, without materialising objects.
///
/// Use it for a fetch's residual predicate and in-memory sort, and anywhere rows must be tested against a
/// `PredicateNode`. Semantics follow Core Data's SQLite store:
/// - a comparison involving null is false, except `== nil` (`isNil`) and `!= nil`; `x != 5` is false
///   when `x` is null, so `NOT (x == 5)` and `x != 5` differ on nulls, as in SQL;
/// - integers, doubles and booleans compare numerically with each other; decimal fields compare as
///   decimals; strings compare by Unicode scalars (see `ValueOrder`); values of unrelated types are
///   unequal and unordered;
/// - `[c]` ignores case and `[d]` diacritics in string operators; without them, `BEGINSWITH` compares
///   UTF-8 bytes, exactly as an index prefix scan does;
/// - key paths follow to-one relationships through `resolve`; a null or dangling link reads as null;
///   `any` and `count` resolve the members of to-many relationships (and to-one steps before them).
public struct RowEvaluator {
    /// The entity whose rows `matches` and `compare` receive.
    public let schema: FetchSchema
    private let resolve: (String, RowReference) throws -> (Row, FetchSchema)?
    private let objectReference: (ManagedObjectID) -> RowReference?
    private let regexes = RegexCache()

    /// An evaluator for rows of `schema`'s entity.
    ///
    /// - Parameters:
    ///   - schema: The fields of the entity whose rows are evaluated.
    ///   - resolve: the row a reference points at and the schema of its entity, given the
    ///     relationship's destination entity name; `nil` when the row does not exist. Needed only for key
    ///     paths through relationships.
    ///   - objectReference: the reference rows hold for an object ID (`nil` for an object no row can
    ///     reference, such as one of another store). Needed only for `PredicateNode.objects`.
    public init(schema: FetchSchema, resolve: @escaping (String, RowReference) throws -> (Row, FetchSchema)? = { _, _ in nil },
                objectReference: @escaping (ManagedObjectID) -> RowReference? = { _ in nil }) {
        self.schema = schema
        self.resolve = resolve
        self.objectReference = objectReference
    }

    /// Whether `row` satisfies the predicate.
    ///
    /// - Throws: `PredicateParseError.unknownKey` or `.invalidKeyPath` for a key path the schema does not
    ///   allow, `.invalidRegularExpression` for a bad `MATCHES` pattern, `.treeTooDeep` for a predicate
    ///   nesting deeper than `PredicateNode.maximumDepth` (plus the level a fetch adds joining its
    ///   parts), and what `resolve` throws.
    public func matches(_ node: PredicateNode, row: Row) throws -> Bool {
        try matches(node, row: row, reference: nil)
    }

    /// Whether `row`, which `reference` points at, satisfies the predicate; the reference is what
    /// `SELF == object` compares (without it, `SELF` matches no object).
    ///
    /// - Throws: as `matches(_:row:)`.
    public func matches(_ node: PredicateNode, row: Row, reference: RowReference?) throws -> Bool {
        do {
            return try matches(node, Member(row: row, schema: schema, reference: reference), levelsLeft: PredicateNode.maximumJoinedDepth)
        } catch PredicateParseError.treeTooDeep {
            // Thrown where the walk stopped; the message names the depth of the whole predicate.
            throw PredicateParseError.treeTooDeep(depth: node.depth)
        }
    }

    /// The order of two rows under the sort keys, `.orderedSame` when every key ties.
    ///
    /// - Throws: as `matches(_:row:)`, for a key path that is unknown or crosses a to-many relationship.
    public func compare(_ a: Row, _ b: Row, by keys: [SortKey]) throws -> ComparisonResult {
        for key in keys {
            let (x, xKind) = try value(key.keyPath, a, schema)
            let (y, yKind) = try value(key.keyPath, b, schema)
            let r = ValueOrder.sortOrder(x, y, asDecimals: xKind == .decimal || yKind == .decimal, strings: key.comparison)
            if r != .orderedSame {
                return key.ascending ? r : (r == .orderedAscending ? .orderedDescending : .orderedAscending)
            }
        }
        return .orderedSame
    }

    /// The value at a key path of the row: null when a to-one link on the way is null or dangling.
    ///
    /// - Throws: as `compare(_:_:by:)`.
    public func value(at keyPath: KeyPathExpr, in row: Row) throws -> Value {
        try value(keyPath, row, schema).value
    }

    // MARK: Evaluation

    /// The recursive part handles only the nodes with terms, in small functions, so that each level
    /// costs the stack little; `levelsLeft` stops a tree built in code from recursing past the limit.
    /// A row being evaluated, with its entity's schema and, when known, the reference that points at it.
    private struct Member {
        var row: Row
        var schema: FetchSchema
        var reference: RowReference?
    }

    private func matches(_ node: PredicateNode, _ member: Member, levelsLeft: Int) throws -> Bool {
        switch node {
        case .and(let terms): return try all(terms, member, levelsLeft: levelsLeft)
        case .or(let terms): return try some(terms, member, levelsLeft: levelsLeft)
        case .not(let term): return try !negated(term, member, levelsLeft: levelsLeft)
        case .any(let path, let inner): return try someMember(path, inner, member, levelsLeft: levelsLeft)
        case .objects(let path, let ids): return try isOneOf(ids, path, member)
        default: return try leafMatches(node, member.row, member.schema)
        }
    }

    private func all(_ terms: [PredicateNode], _ member: Member, levelsLeft: Int) throws -> Bool {
        guard levelsLeft > 0 else { throw PredicateParseError.treeTooDeep(depth: PredicateNode.maximumJoinedDepth + 1) }
        for term in terms where try !matches(term, member, levelsLeft: levelsLeft - 1) { return false }
        return true
    }

    private func some(_ terms: [PredicateNode], _ member: Member, levelsLeft: Int) throws -> Bool {
        guard levelsLeft > 0 else { throw PredicateParseError.treeTooDeep(depth: PredicateNode.maximumJoinedDepth + 1) }
        for term in terms where try matches(term, member, levelsLeft: levelsLeft - 1) { return true }
        return false
    }

    private func negated(_ term: PredicateNode, _ member: Member, levelsLeft: Int) throws -> Bool {
        guard levelsLeft > 0 else { throw PredicateParseError.treeTooDeep(depth: PredicateNode.maximumJoinedDepth + 1) }
        return try matches(term, member, levelsLeft: levelsLeft - 1)
    }

    private func someMember(_ path: KeyPathExpr, _ inner: PredicateNode, _ member: Member, levelsLeft: Int) throws -> Bool {
        guard levelsLeft > 0 else { throw PredicateParseError.treeTooDeep(depth: PredicateNode.maximumJoinedDepth + 1) }
        for m in try members(path, member) where try matches(inner, m, levelsLeft: levelsLeft - 1) {
            return true
        }
        return false
    }

    /// Whether some object the key path reaches (the row itself for the empty path) is one of `ids`:
    /// references are compared, so no row is read for the last step.
    private func isOneOf(_ ids: [ManagedObjectID], _ path: KeyPathExpr, _ member: Member) throws -> Bool {
        let wanted = Set(ids.compactMap(objectReference))
        guard let last = path.last else { return member.reference.map(wanted.contains) ?? false }
        for m in try members(Array(path.dropLast()), member) {
            let info = try field(last, of: path, in: m.schema)
            switch (info.kind, m.row[info.column]) {
            case (.toOne, .reference(let ref)):
                if wanted.contains(ref) { return true }
            case (.toMany, .references(let refs)):
                if refs.contains(where: wanted.contains) { return true }
            case (.toOne, _), (.toMany, _):
                continue
            default:
                throw PredicateParseError.invalidKeyPath(keyPath: name(path), entity: m.schema.entityName,
                                                         reason: "ends at '\(last)', which is not a relationship, so it holds no object")
            }
        }
        return false
    }

    private func leafMatches(_ node: PredicateNode, _ row: Row, _ schema: FetchSchema) throws -> Bool {
        switch node {
        case .true: return true
        case .false: return false
        case .compare(let path, let op, let rhs):
            let (a, aKind) = try value(path, row, schema)
            let (b, bKind): (Value, FieldKind?)
            switch rhs {
            case .value(let v): (b, bKind) = (v, nil)
            case .keyPath(let other): (b, bKind) = try value(other, row, schema)
            }
            return Self.holds(a, op, b, asDecimals: aKind == .decimal || bKind == .decimal)
        case .isIn(let path, let values):
            let (a, kind) = try value(path, row, schema)
            return values.contains { Self.holds(a, .equal, $0, asDecimals: kind == .decimal) }
        case .between(let path, let lower, let upper):
            let (a, kind) = try value(path, row, schema)
            return Self.holds(a, .greaterOrEqual, lower, asDecimals: kind == .decimal)
                && Self.holds(a, .lessOrEqual, upper, asDecimals: kind == .decimal)
        case .string(let path, let op, let pattern, let c, let d):
            guard case .string(let s) = try value(path, row, schema).value else { return false }
            return try stringMatches(s, op, pattern, caseInsensitive: c, diacriticInsensitive: d)
        case .isNil(let path):
            return try value(path, row, schema).value.isNull
        case .count(let path, let op, let n):
            let c = try count(path, row, schema)
            return op.holds(for: c < n ? .orderedAscending : c > n ? .orderedDescending : .orderedSame)
        case .and, .or, .not, .any, .objects:
            preconditionFailure("matches(_:_:_:levelsLeft:) evaluates the nodes with terms")
        }
    }

    /// `a op b` under the null rules: only `== nil` and `!= nil` hold with a null; unrelated types are
    /// unequal and unordered.
    static func holds(_ a: Value, _ op: ComparisonOperator, _ b: Value, asDecimals: Bool) -> Bool {
        if b.isNull {
            switch op {
            case .equal: return a.isNull
            case .notEqual: return !a.isNull
            default: return false
            }
        }
        if a.isNull { return false }
        guard let r = ValueOrder.compare(a, b, asDecimals: asDecimals) else { return op == .notEqual }
        return op.holds(for: r)
    }

    // MARK: Key paths

    private func name(_ path: KeyPathExpr) -> String { path.joined(separator: ".") }

    private func field(_ name: String, of path: KeyPathExpr, in schema: FetchSchema) throws -> FieldInfo {
        guard let info = schema.field(name) else {
            throw PredicateParseError.unknownKey(keyPath: self.name(path), entity: schema.entityName)
        }
        return info
    }

    private func value(_ path: KeyPathExpr, _ row: Row, _ schema: FetchSchema) throws -> (value: Value, kind: FieldKind?) {
        guard !path.isEmpty else {
            throw PredicateParseError.invalidKeyPath(keyPath: "SELF", entity: schema.entityName, reason: "cannot be compared on rows")
        }
        var row = row
        var schema = schema
        for (i, name) in path.enumerated() {
            let info = try field(name, of: path, in: schema)
            let v = row[info.column]
            if i == path.count - 1 {
                if case .toMany = info.kind {
                    throw PredicateParseError.invalidKeyPath(keyPath: self.name(path), entity: schema.entityName,
                                                        reason: "ends at a to-many relationship: use ANY, SUBQUERY or @count")
                }
                return (v, info.kind)
            }
            guard case .toOne(let destination) = info.kind else {
                throw PredicateParseError.invalidKeyPath(keyPath: self.name(path), entity: schema.entityName,
                                                    reason: "continues after '\(name)', which is not a to-one relationship (use ANY for to-many)")
            }
            guard case .reference(let ref) = v, let next = try resolve(destination, ref) else { return (.null, nil) }
            (row, schema) = next
        }
        return (.null, nil)
    }

    /// The rows reached through the relationships of the key path (to-one and to-many), dangling links skipped.
    private func members(_ path: KeyPathExpr, _ start: Member) throws -> [Member] {
        var frontier = [start]
        for name in path {
            var next: [Member] = []
            func add(_ destination: String, _ ref: RowReference) throws {
                if let (row, schema) = try resolve(destination, ref) { next.append(Member(row: row, schema: schema, reference: ref)) }
            }
            for m in frontier {
                let info = try field(name, of: path, in: m.schema)
                switch (info.kind, m.row[info.column]) {
                case (.toOne(let destination), .reference(let ref)):
                    try add(destination, ref)
                case (.toMany(let destination), .references(let refs)):
                    for ref in refs { try add(destination, ref) }
                case (.toOne, _), (.toMany, _):
                    continue
                default:
                    throw PredicateParseError.invalidKeyPath(keyPath: self.name(path), entity: m.schema.entityName,
                                                        reason: "passes through '\(name)', which is not a relationship")
                }
            }
            frontier = next
        }
        return frontier
    }

    /// The number of references held by the to-many relationships at the end of the key path.
    private func count(_ path: KeyPathExpr, _ row: Row, _ schema: FetchSchema) throws -> Int {
        guard let last = path.last else {
            throw PredicateParseError.invalidKeyPath(keyPath: "SELF", entity: schema.entityName, reason: "has no @count")
        }
        var total = 0
        for m in try members(Array(path.dropLast()), Member(row: row, schema: schema, reference: nil)) {
            let info = try field(last, of: path, in: m.schema)
            guard case .toMany = info.kind else {
                throw PredicateParseError.invalidKeyPath(keyPath: name(path), entity: m.schema.entityName, reason: "is not a to-many relationship, so it has no @count")
            }
            if case .references(let refs) = m.row[info.column] { total += refs.count }
        }
        return total
    }

    // MARK: Strings

    private func stringMatches(_ s: String, _ op: StringOperator, _ pattern: String, caseInsensitive: Bool, diacriticInsensitive: Bool) throws -> Bool {
        if op == .matches {
            let subject = diacriticInsensitive ? s.folding(options: .diacriticInsensitive, locale: nil) : s
            let regexPattern = diacriticInsensitive ? pattern.folding(options: .diacriticInsensitive, locale: nil) : pattern
            let regex = try regexes.regex(regexPattern, caseInsensitive: caseInsensitive)
            let range = NSRange(subject.startIndex..., in: subject)
            return regex.firstMatch(in: subject, options: [], range: range) != nil
        }
        if !caseInsensitive && !diacriticInsensitive {
            switch op {
            case .beginsWith: return s.utf8.starts(with: pattern.utf8)
            case .endsWith: return s.utf8.reversed().starts(with: pattern.utf8.reversed())
            case .contains: return pattern.isEmpty || s.contains(pattern)
            case .like: return LikePattern(pattern).matches(s)
            case .matches: return false
            }
        }
        var options: String.CompareOptions = []
        if caseInsensitive { options.insert(.caseInsensitive) }
        if diacriticInsensitive { options.insert(.diacriticInsensitive) }
        let subject = s.folding(options: options, locale: nil)
        let folded = pattern.folding(options: options, locale: nil)
        switch op {
        case .beginsWith: return subject.hasPrefix(folded)
        case .endsWith: return subject.hasSuffix(folded)
        case .contains: return folded.isEmpty || subject.contains(folded)
        case .like: return LikePattern(folded).matches(subject)
        case .matches: return false
        }
    }
}

/// Compiled `MATCHES` patterns, so that a residual predicate compiles each pattern once per fetch.
private final class RegexCache {
    private var compiled: [String: NSRegularExpression] = [:]

    func regex(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if let r = compiled[key] { return r }
        do {
            // Core Data's MATCHES must match the whole string.
            let r = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
            compiled[key] = r
            return r
        } catch {
            throw PredicateParseError.invalidRegularExpression(pattern: pattern, reason: SafeDescription.of(error))
        }
    }
}

/// A `LIKE` pattern: `*` matches any run of characters, `?` exactly one, `\` makes the next literal.
struct LikePattern {
    enum Token: Equatable { case anyRun, one, literal(Character) }
    let tokens: [Token]

    init(_ pattern: String) {
        var tokens: [Token] = []
        var escaped = false
        for ch in pattern {
            if escaped { tokens.append(.literal(ch)); escaped = false; continue }
            switch ch {
            case "\\": escaped = true
            case "*": tokens.append(.anyRun)
            case "?": tokens.append(.one)
            default: tokens.append(.literal(ch))
            }
        }
        if escaped { tokens.append(.literal("\\")) }
        self.tokens = tokens
    }

    /// Greedy matching with backtracking to the last `*`: linear in practice, quadratic at worst.
    func matches(_ s: String) -> Bool {
        let chars = Array(s)
        var i = 0, t = 0
        var star: Int? = nil, starMatch = 0
        while i < chars.count {
            if t < tokens.count {
                switch tokens[t] {
                case .anyRun:
                    star = t; starMatch = i; t += 1
                    continue
                case .one:
                    i += 1; t += 1
                    continue
                case .literal(let c) where c == chars[i]:
                    i += 1; t += 1
                    continue
                default: break
                }
            }
            guard let s = star else { return false }
            t = s + 1
            starMatch += 1
            i = starMatch
        }
        while t < tokens.count, tokens[t] == .anyRun { t += 1 }
        return t == tokens.count
    }

    /// The pattern matching exactly `s` (its wildcards and backslashes escaped): `==[c]` as `LIKE[c]`.
    static func escaping(_ s: String) -> String {
        var out = ""
        for ch in s {
            if ch == "*" || ch == "?" || ch == "\\" { out.append("\\") }
            out.append(ch)
        }
        return out
    }
}
