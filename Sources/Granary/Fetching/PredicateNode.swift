import Foundation
import GranaryStorage

/// A key path from the fetched object: each component names a field, and every component but the last
/// names a relationship to follow (`["manager", "name"]`). The empty path is the object itself.
public typealias KeyPathExpr = [String]

/// The one predicate representation fetching works with: `#Predicate` lowering, the `FetchPredicate`
/// builder and the format-string parser all produce it, and the evaluator and planner consume it.
///
/// Build one directly for dynamic predicates the other forms cannot express. Semantics follow Core Data's
/// SQLite store: a comparison with a null value is false, except `isNil` and `compare(_, ==/!=, .null)`.
public indirect enum PredicateNode: Sendable, Hashable {
    /// Every object matches (`TRUEPREDICATE`).
    case `true`
    /// No object matches (`FALSEPREDICATE`).
    case `false`
    /// Every term holds; the empty conjunction is true.
    case and([PredicateNode])
    /// Some term holds; the empty disjunction is false.
    case or([PredicateNode])
    /// The term does not hold (under the null rules, `NOT (x == 5)` holds for a null `x`).
    case not(PredicateNode)
    /// `key op constant` or `key op otherKey`.
    case compare(KeyPathExpr, ComparisonOperator, Operand)
    /// The value equals one of the constants (`IN`).
    case isIn(KeyPathExpr, [Value])
    /// `lower <= value <= upper`.
    case between(KeyPathExpr, Value, Value)
    /// A string operation; the flags are Core Data's `[c]` and `[d]` modifiers.
    case string(KeyPathExpr, StringOperator, String, caseInsensitive: Bool, diacriticInsensitive: Bool = false)
    /// The value is null (an absent attribute or an empty to-one relationship).
    case isNil(KeyPathExpr)
    /// Some member of the to-many relationship at the key path matches the predicate, whose key paths
    /// start at the member.
    case any(KeyPathExpr, PredicateNode)
    /// The number of members of the to-many relationship compared with a constant (`@count`).
    case count(KeyPathExpr, ComparisonOperator, Int)

    /// A conjunction, flattened and simplified: `true` terms are dropped and a `false` term wins.
    public static func all(_ terms: [PredicateNode]) -> PredicateNode {
        // Already flat and free of constants (what lowering and the planner mostly pass): the terms
        // as they are, without building a copy.
        if terms.count > 1 && !terms.contains(where: { if case .and = $0 { return true } else { return $0.isConstant } }) {
            return .and(terms)
        }
        var out: [PredicateNode] = []
        for term in terms {
            switch term {
            case .true: continue
            case .false: return .false
            case .and(let inner): out.append(contentsOf: inner)
            default: out.append(term)
            }
        }
        return out.isEmpty ? .true : out.count == 1 ? out[0] : .and(out)
    }

    /// A disjunction, flattened and simplified: `false` terms are dropped and a `true` term wins.
    public static func either(_ terms: [PredicateNode]) -> PredicateNode {
        if terms.count > 1 && !terms.contains(where: { if case .or = $0 { return true } else { return $0.isConstant } }) {
            return .or(terms)
        }
        var out: [PredicateNode] = []
        for term in terms {
            switch term {
            case .false: continue
            case .true: return .true
            case .or(let inner): out.append(contentsOf: inner)
            default: out.append(term)
            }
        }
        return out.isEmpty ? .false : out.count == 1 ? out[0] : .or(out)
    }
}

extension PredicateNode {
    /// The same predicate with constants folded: `true`/`false` terms absorbed, nested ANDs and ORs
    /// flattened, double negations removed, and ANY over an always-false test made `false`.
    public var simplified: PredicateNode {
        switch self {
        case .and(let terms): return .all(terms.allSatisfy(\.isSimple) ? terms : terms.map(\.simplified))
        case .or(let terms): return .either(terms.allSatisfy(\.isSimple) ? terms : terms.map(\.simplified))
        case .not(let term):
            switch term.simplified {
            case .true: return .false
            case .false: return .true
            case .not(let inner): return inner
            case let s: return .not(s)
            }
        case .any(let path, let inner):
            let s = inner.simplified
            return s == .false ? .false : .any(path, s)
        default: return self
        }
    }

    /// `true` or `false`.
    var isConstant: Bool {
        switch self {
        case .true, .false: return true
        default: return false
        }
    }

    /// A node `simplified` returns as it is: one without terms of its own.
    var isSimple: Bool {
        switch self {
        case .and, .or, .not, .any: return false
        default: return true
        }
    }
}

/// The six comparison operators of predicates, sorts and `@count`.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="

    /// The operator that gives the same answer with its operands swapped (`a < b` ⇔ `b > a`).
    public var swapped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: return self
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        }
    }

    /// Whether a comparison that came out as `result` satisfies this operator.
    public func holds(for result: ComparisonResult) -> Bool {
        switch self {
        case .equal: return result == .orderedSame
        case .notEqual: return result != .orderedSame
        case .less: return result == .orderedAscending
        case .lessOrEqual: return result != .orderedDescending
        case .greater: return result == .orderedDescending
        case .greaterOrEqual: return result != .orderedAscending
        }
    }
}

/// The right-hand side of a comparison: a constant or another key path of the same object.
public enum Operand: Sendable, Hashable {
    /// A constant.
    case value(Value)
    /// The value at another key path of the same object.
    case keyPath(KeyPathExpr)
}

/// String operators, named after Core Data's keywords.
public enum StringOperator: String, Sendable, Hashable, CaseIterable {
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    /// A pattern where `*` matches any run of characters, `?` one character, and `\` escapes the next.
    case like = "LIKE"
    /// An ICU regular expression that must match the whole string.
    case matches = "MATCHES"
}

// MARK: - Format

extension PredicateNode: CustomStringConvertible {
    /// The predicate in Core Data's format syntax, which `PredicateParser` reads back.
    public var description: String { format(self) }
}

extension Operand: CustomStringConvertible {
    public var description: String {
        switch self {
        case .value(let v): return PredicateFormat.literal(v)
        case .keyPath(let k): return PredicateFormat.keyPath(k)
        }
    }
}

private func format(_ node: PredicateNode) -> String {
    func operand(_ n: PredicateNode) -> String {
        switch n {
        case .and(let xs) where xs.count > 1: return "(\(format(n)))"
        case .or(let xs) where xs.count > 1: return "(\(format(n)))"
        default: return format(n)
        }
    }
    func flags(_ c: Bool, _ d: Bool) -> String { c || d ? "[" + (c ? "c" : "") + (d ? "d" : "") + "]" : "" }
    let k = PredicateFormat.keyPath
    let lit = PredicateFormat.literal
    switch node {
    case .true: return "TRUEPREDICATE"
    case .false: return "FALSEPREDICATE"
    case .and(let xs): return xs.isEmpty ? "TRUEPREDICATE" : xs.map(operand).joined(separator: " AND ")
    case .or(let xs): return xs.isEmpty ? "FALSEPREDICATE" : xs.map(operand).joined(separator: " OR ")
    case .not(let x): return "NOT (\(format(x)))"
    case .compare(let path, let op, let rhs): return "\(k(path)) \(op.rawValue) \(rhs)"
    case .isIn(let path, let values): return "\(k(path)) IN {\(values.map(lit).joined(separator: ", "))}"
    case .between(let path, let a, let b): return "\(k(path)) BETWEEN {\(lit(a)), \(lit(b))}"
    case .string(let path, let op, let s, let c, let d): return "\(k(path)) \(op.rawValue)\(flags(c, d)) \(lit(.string(s)))"
    case .isNil(let path): return "\(k(path)) == nil"
    case .count(let path, let op, let n): return "\(k(path)).@count \(op.rawValue) \(n)"
    case .any(let path, let inner):
        // A single comparison reads naturally as ANY; anything else needs a SUBQUERY.
        switch inner {
        case .compare(let sub, let op, .value(let v)) where !sub.isEmpty:
            return "ANY \(k(path + sub)) \(op.rawValue) \(lit(v))"
        case .string(let sub, let op, let s, let c, let d) where !sub.isEmpty:
            return "ANY \(k(path + sub)) \(op.rawValue)\(flags(c, d)) \(lit(.string(s)))"
        case .isIn(let sub, let values) where !sub.isEmpty:
            return "ANY \(k(path + sub)) IN {\(values.map(lit).joined(separator: ", "))}"
        default:
            return "SUBQUERY(\(k(path)), $x, \(PredicateFormat.prefixingVariable(inner))).@count > 0"
        }
    }
}

/// Spelling of key paths and constants in the format syntax.
enum PredicateFormat {
    static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "LIKE", "MATCHES", "BEGINSWITH",
        "ENDSWITH", "CONTAINS", "TRUEPREDICATE", "FALSEPREDICATE", "YES", "NO", "TRUE", "FALSE", "NIL", "NULL",
        "SELF", "CAST", "SUBQUERY",
    ]

    static func keyPath(_ path: KeyPathExpr) -> String {
        if path.isEmpty { return "SELF" }
        return path.map { reservedWords.contains($0.uppercased()) ? "#" + $0 : $0 }.joined(separator: ".")
    }

    static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "YES" : "NO"
        case .int(let i): return String(i)
        case .double(let d): return d.isFinite ? String(d) : "CAST('\(d)', \"Double\")"
        case .string(let s): return quoted(s)
        // Through the double's own literal, so that an infinite or NaN interval (a literal such as 1e999
        // overflows to one) is written in a form that parses back.
        case .date(let d): return "CAST(\(literal(.double(d.timeIntervalSinceReferenceDate))), \"NSDate\")"
        case .uuid(let u): return "CAST('\(u.uuidString)', \"UUID\")"
        case .bytes(let b): return "CAST('\(b.map { String(format: "%02x", $0) }.joined())', \"NSData\")"
        case .reference(let r): return "CAST('\(r.table.rawValue)/\(r.key)', \"RowReference\")"
        case .references(let rs): return "{\(rs.map { literal(.reference($0)) }.joined(separator: ", "))}"
        }
    }

    static func quoted(_ s: String) -> String {
        var out = "'"
        for ch in s.unicodeScalars {
            switch ch {
            case "'": out += "\\'"
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out + "'"
    }

    /// The inner predicate of a SUBQUERY with every key path prefixed by the variable `$x`.
    static func prefixingVariable(_ node: PredicateNode) -> String {
        format(node.mapKeyPaths { ["$x"] + $0 })
    }
}

extension PredicateNode {
    /// The same predicate with every key path of this level (not inside `any`) transformed.
    func mapKeyPaths(_ f: (KeyPathExpr) -> KeyPathExpr) -> PredicateNode {
        switch self {
        case .true, .false: return self
        case .and(let xs): return .and(xs.map { $0.mapKeyPaths(f) })
        case .or(let xs): return .or(xs.map { $0.mapKeyPaths(f) })
        case .not(let x): return .not(x.mapKeyPaths(f))
        case .compare(let p, let op, let rhs):
            if case .keyPath(let q) = rhs { return .compare(f(p), op, .keyPath(f(q))) }
            return .compare(f(p), op, rhs)
        case .isIn(let p, let vs): return .isIn(f(p), vs)
        case .between(let p, let a, let b): return .between(f(p), a, b)
        case .string(let p, let op, let s, let c, let d): return .string(f(p), op, s, caseInsensitive: c, diacriticInsensitive: d)
        case .isNil(let p): return .isNil(f(p))
        case .any(let p, let inner): return .any(f(p), inner)
        case .count(let p, let op, let n): return .count(f(p), op, n)
        }
    }
}
