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
    /// Some object the key path reaches is one of the given objects: identity, as Core Data compares a
    /// managed object argument (`company == %@`, `company IN %@`, `ANY employees == %@`, `SELF IN %@`).
    ///
    /// The key path may pass through to-one and to-many relationships; the empty path is the object
    /// itself. `NOT` of it holds where no object reached is one of them (an empty relationship
    /// included, as in Core Data, where `nil != object`). An ID matches a stored row only when it is
    /// the row's permanent ID; a temporary ID (an object not saved yet) matches the context's unsaved
    /// objects only, and an ID is taken when the predicate is built, so build it after saving.
    case objects(KeyPathExpr, [ManagedObjectID])

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

// MARK: - Equality and hashing

/// Written by hand, without recursion: the synthesized `==` and `hash(into:)` of an indirect enum
/// recurse once per level and overflow the stack on a tree built in code thousands of levels deep.
/// Both walk the two trees (or the one) in the same order with a list of the nodes still to visit.
extension PredicateNode {
    public static func == (a: PredicateNode, b: PredicateNode) -> Bool {
        var pending: [(PredicateNode, PredicateNode)] = []
        var pair = (a, b)
        while true {
            switch pair {
            case (.and(let xs), .and(let ys)), (.or(let xs), .or(let ys)):
                guard xs.count == ys.count else { return false }
                pending.append(contentsOf: zip(xs, ys))
            case (.not(let x), .not(let y)):
                pending.append((x, y))
            case (.any(let p, let x), .any(let q, let y)):
                guard p == q else { return false }
                pending.append((x, y))
            case (.true, .true), (.false, .false):
                break
            case (.compare(let p, let o, let r), .compare(let q, let u, let s)):
                guard p == q && o == u && r == s else { return false }
            case (.isIn(let p, let vs), .isIn(let q, let ws)):
                guard p == q && vs == ws else { return false }
            case (.between(let p, let a, let b), .between(let q, let c, let d)):
                guard p == q && a == c && b == d else { return false }
            case (.string(let p, let o, let s, let c, let d), .string(let q, let u, let t, let e, let f)):
                guard p == q && o == u && s == t && c == e && d == f else { return false }
            case (.isNil(let p), .isNil(let q)):
                guard p == q else { return false }
            case (.count(let p, let o, let n), .count(let q, let u, let m)):
                guard p == q && o == u && n == m else { return false }
            case (.objects(let p, let xs), .objects(let q, let ys)):
                guard p == q && xs == ys else { return false }
            default:
                return false
            }
            guard let next = pending.popLast() else { return true }
            pair = next
        }
    }

    public func hash(into hasher: inout Hasher) {
        var pending: [PredicateNode] = []
        var node = self
        while true {
            switch node {
            case .true: hasher.combine(0)
            case .false: hasher.combine(1)
            case .and(let xs):
                hasher.combine(2)
                hasher.combine(xs.count)
                pending.append(contentsOf: xs.reversed())
            case .or(let xs):
                hasher.combine(3)
                hasher.combine(xs.count)
                pending.append(contentsOf: xs.reversed())
            case .not(let x):
                hasher.combine(4)
                pending.append(x)
            case .compare(let p, let o, let r):
                hasher.combine(5)
                hasher.combine(p)
                hasher.combine(o)
                hasher.combine(r)
            case .isIn(let p, let vs):
                hasher.combine(6)
                hasher.combine(p)
                hasher.combine(vs)
            case .between(let p, let a, let b):
                hasher.combine(7)
                hasher.combine(p)
                hasher.combine(a)
                hasher.combine(b)
            case .string(let p, let o, let s, let c, let d):
                hasher.combine(8)
                hasher.combine(p)
                hasher.combine(o)
                hasher.combine(s)
                hasher.combine(c)
                hasher.combine(d)
            case .isNil(let p):
                hasher.combine(9)
                hasher.combine(p)
            case .any(let p, let x):
                hasher.combine(10)
                hasher.combine(p)
                pending.append(x)
            case .count(let p, let o, let n):
                hasher.combine(11)
                hasher.combine(p)
                hasher.combine(o)
                hasher.combine(n)
            case .objects(let p, let ids):
                hasher.combine(12)
                hasher.combine(p)
                hasher.combine(ids)
            }
            guard let next = pending.popLast() else { return }
            node = next
        }
    }
}

extension PredicateNode {
    /// The same predicate with constants folded: `true`/`false` terms absorbed, nested ANDs and ORs
    /// flattened, double negations removed, and ANY over an always-false test made `false`.
    ///
    /// Levels deeper than `maximumDepth` (plus the one a fetch adds), which no fetch accepts, are left
    /// as they are: simplifying them would recurse as deep as the tree does.
    public var simplified: PredicateNode { simplified(levelsLeft: Self.maximumJoinedDepth) }

    private func simplified(levelsLeft: Int) -> PredicateNode {
        switch self {
        case .and(let terms): return .all(Self.simplified(terms, levelsLeft: levelsLeft))
        case .or(let terms): return .either(Self.simplified(terms, levelsLeft: levelsLeft))
        case .not(let term):
            guard levelsLeft > 0 else { return self }
            switch term.simplified(levelsLeft: levelsLeft - 1) {
            case .true: return .false
            case .false: return .true
            case .not(let inner): return inner
            case let s: return .not(s)
            }
        case .any(let path, let inner):
            guard levelsLeft > 0 else { return self }
            let s = inner.simplified(levelsLeft: levelsLeft - 1)
            if case .false = s { return .false }
            return .any(path, s)
        default: return self
        }
    }

    /// The terms of an AND or OR, simplified; the array as it is when none has terms of its own.
    private static func simplified(_ terms: [PredicateNode], levelsLeft: Int) -> [PredicateNode] {
        guard levelsLeft > 0, terms.contains(where: { !$0.isSimple }) else { return terms }
        var out: [PredicateNode] = []
        out.reserveCapacity(terms.count)
        for term in terms { out.append(term.simplified(levelsLeft: levelsLeft - 1)) }
        return out
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
    ///
    /// Levels deeper than `maximumDepth` (plus the one a fetch adds) are written as `…`: a description
    /// must not recurse as deep as a tree built in code can be.
    public var description: String {
        var writer = PredicateWriter()
        writer.write(self, prefix: [], levelsLeft: Self.maximumJoinedDepth)
        return writer.out
    }
}

extension Operand: CustomStringConvertible {
    public var description: String {
        switch self {
        case .value(let v): return PredicateFormat.literal(v)
        case .keyPath(let k): return PredicateFormat.keyPath(k)
        }
    }
}

/// Writes a predicate in the format syntax into one string. The recursive part handles only the
/// nodes with terms and keeps little on the stack; leaves are worded by `PredicateFormat.leaf`.
private struct PredicateWriter {
    var out = ""

    /// - Parameter prefix: prepended to every key path of this level (`$x` inside a SUBQUERY).
    mutating func write(_ node: PredicateNode, prefix: KeyPathExpr, levelsLeft: Int) {
        switch node {
        case .and(let xs) where !xs.isEmpty: terms(xs, " AND ", prefix, levelsLeft)
        case .or(let xs) where !xs.isEmpty: terms(xs, " OR ", prefix, levelsLeft)
        case .not(let x):
            guard levelsLeft > 0 else { out += "…"; return }
            out += "NOT ("
            write(x, prefix: prefix, levelsLeft: levelsLeft - 1)
            out += ")"
        case .any(let path, let inner):
            // A single comparison reads naturally as ANY; anything else needs a SUBQUERY.
            if let quantified = PredicateFormat.quantified(prefix + path, inner) {
                out += quantified
            } else {
                guard levelsLeft > 0 else { out += "…"; return }
                out += "SUBQUERY(\(PredicateFormat.keyPath(prefix + path)), $x, "
                write(inner, prefix: ["$x"], levelsLeft: levelsLeft - 1)
                out += ").@count > 0"
            }
        default:
            out += PredicateFormat.leaf(node, prefix: prefix)
        }
    }

    private mutating func terms(_ xs: [PredicateNode], _ separator: String, _ prefix: KeyPathExpr, _ levelsLeft: Int) {
        guard levelsLeft > 0 else { out += "…"; return }
        for (i, x) in xs.enumerated() {
            if i > 0 { out += separator }
            let parenthesized: Bool
            switch x {
            case .and(let ys), .or(let ys): parenthesized = ys.count > 1
            default: parenthesized = false
            }
            if parenthesized { out += "(" }
            write(x, prefix: prefix, levelsLeft: levelsLeft - 1)
            if parenthesized { out += ")" }
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
        case .date(let d):
            let t = d.timeIntervalSinceReferenceDate
            // A NaN or infinite interval is no number literal; quoted, CAST reads it back.
            return t.isFinite ? "CAST(\(t), \"NSDate\")" : "CAST('\(t)', \"NSDate\")"
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

    /// A node without terms of its own, with `prefix` before its key paths.
    static func leaf(_ node: PredicateNode, prefix: KeyPathExpr) -> String {
        func flags(_ c: Bool, _ d: Bool) -> String { c || d ? "[" + (c ? "c" : "") + (d ? "d" : "") + "]" : "" }
        func k(_ path: KeyPathExpr) -> String { keyPath(prefix + path) }
        switch node {
        // Only empty ANDs and ORs come here; the writer words the others.
        case .true, .and: return "TRUEPREDICATE"
        case .false, .or: return "FALSEPREDICATE"
        case .compare(let path, let op, .keyPath(let other)): return "\(k(path)) \(op.rawValue) \(k(other))"
        case .compare(let path, let op, .value(let v)): return "\(k(path)) \(op.rawValue) \(literal(v))"
        case .isIn(let path, let values): return "\(k(path)) IN {\(values.map(literal).joined(separator: ", "))}"
        case .between(let path, let a, let b): return "\(k(path)) BETWEEN {\(literal(a)), \(literal(b))}"
        case .string(let path, let op, let s, let c, let d): return "\(k(path)) \(op.rawValue)\(flags(c, d)) \(literal(.string(s)))"
        case .isNil(let path): return "\(k(path)) == nil"
        case .count(let path, let op, let n): return "\(k(path)).@count \(op.rawValue) \(n)"
        // Objects are written by their URIs, as Core Data writes them by description: this form is for
        // reading, not for parsing back (a predicate with objects is built from the objects).
        case .objects(let path, let ids) where ids.count == 1: return "\(k(path)) == <\(ids[0])>"
        case .objects(let path, let ids): return "\(k(path)) IN {\(ids.map { "<\($0)>" }.joined(separator: ", "))}"
        case .not, .any: return "…"
        }
    }

    /// `ANY path op constant` for an ANY over a single comparison of a member's field, else `nil`.
    static func quantified(_ path: KeyPathExpr, _ inner: PredicateNode) -> String? {
        switch inner {
        case .compare(let sub, _, .value), .string(let sub, _, _, _, _), .isIn(let sub, _):
            return sub.isEmpty ? nil : "ANY " + leaf(inner, prefix: path)
        default:
            return nil
        }
    }
}
