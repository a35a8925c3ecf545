import GranaryStorage

/// A predicate over string key paths, for models known only at run time:
/// `FetchPredicate.key("age") > 30 && FetchPredicate.key("name").beginsWith("A")`.
///
/// Use it where `#Predicate` cannot be written (no Swift type for the entity); it builds a
/// `PredicateNode` (`node`) with the same semantics.
public struct FetchPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The predicate built so far.
    public var node: PredicateNode {
        didSet { depth = Self.measure(node) }
    }
    /// At least `node.depth`, and above `PredicateNode.maximumDepth` exactly when `node` nests deeper:
    /// kept so that the operators know it without walking the tree.
    private var depth: Int

    /// Wraps an existing predicate node.
    public init(_ node: PredicateNode) {
        self.node = node
        depth = Self.measure(node)
    }

    /// A node built by an operator from operands at most `bound - 1` deep; measured only when that
    /// could pass the limit.
    private init(_ node: PredicateNode, depthAtMost bound: Int) {
        self.node = node
        depth = bound > PredicateNode.maximumDepth ? Self.measure(node) : bound
    }

    private static func measure(_ node: PredicateNode) -> Int { node.depth(cappedAt: PredicateNode.maximumDepth + 1) }

    /// Whether the predicate nests deeper than `PredicateNode.maximumDepth`, which every fetch refuses.
    var isTooDeep: Bool { depth > PredicateNode.maximumDepth }

    /// A key path to compare: a field name or a dotted path through to-one relationships (`"manager.name"`).
    public static func key(_ key: String) -> FetchKey { FetchKey(key) }

    /// The predicate every object satisfies.
    public static let all = FetchPredicate(.true)
    /// The predicate no object satisfies.
    public static let none = FetchPredicate(.false)

    // The operators never nest a predicate past the limit plus one: an operand that is already too deep
    // comes back as it is, so that building one in a loop cannot make a tree whose destruction (which
    // Swift does recursively) overflows the stack. Such a predicate cannot run anyway: fetches refuse
    // it with `PredicateParseError.treeTooDeep`.

    /// Both predicates hold (an operand nested deeper than `PredicateNode.maximumDepth` is returned as
    /// it is; fetches refuse it).
    public static func && (a: FetchPredicate, b: FetchPredicate) -> FetchPredicate {
        if a.isTooDeep { return a }
        if b.isTooDeep { return b }
        return FetchPredicate(.all([a.node, b.node]), depthAtMost: max(a.depth, b.depth) + 1)
    }

    /// Either predicate holds (an operand nested deeper than `PredicateNode.maximumDepth` is returned
    /// as it is; fetches refuse it).
    public static func || (a: FetchPredicate, b: FetchPredicate) -> FetchPredicate {
        if a.isTooDeep { return a }
        if b.isTooDeep { return b }
        return FetchPredicate(.either([a.node, b.node]), depthAtMost: max(a.depth, b.depth) + 1)
    }

    /// The predicate does not hold. A double negation cancels out (`NOT NOT p` is `p` under the null
    /// rules), so a chain of `!` never nests; an operand nested deeper than `PredicateNode.maximumDepth`
    /// is returned as it is.
    public static prefix func ! (a: FetchPredicate) -> FetchPredicate {
        if a.isTooDeep { return a }
        if case .not(let inner) = a.node { return FetchPredicate(inner, depthAtMost: a.depth - 1) }
        return FetchPredicate(.not(a.node), depthAtMost: a.depth + 1)
    }

    /// `self`, or the member test nested in an ANY (for `FetchKey.any`).
    fileprivate func quantified(over path: KeyPathExpr) -> FetchPredicate {
        isTooDeep ? self : FetchPredicate(.any(path, node), depthAtMost: depth + 1)
    }

    public static func == (a: FetchPredicate, b: FetchPredicate) -> Bool { a.node == b.node }

    public func hash(into hasher: inout Hasher) { hasher.combine(node) }

    public var description: String { node.description }
}

/// One side of a `FetchPredicate` comparison: a key path of the fetched entity.
public struct FetchKey: Sendable {
    /// The key path's components.
    public var path: KeyPathExpr

    /// A key path given as a dotted string.
    public init(_ key: String) { path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    /// A key path given as components.
    public init(path: KeyPathExpr) { self.path = path }

    private static func constant(_ v: some PredicateValueConvertible) -> Value {
        guard let value = v.predicateValue else { preconditionFailure("\(SafeDescription.of(v)) has no predicate value (an unsigned integer above Int64.max?)") }
        return value
    }

    private func compare(_ op: ComparisonOperator, _ v: some PredicateValueConvertible) -> FetchPredicate {
        let value = Self.constant(v)
        if value.isNull {
            switch op {
            case .equal: return FetchPredicate(.isNil(path))
            case .notEqual: return FetchPredicate(.not(.isNil(path)))
            default: return .none
            }
        }
        return FetchPredicate(.compare(path, op, .value(value)))
    }

    /// The key's value == the constant (a nil constant with == or != tests for null).
    public static func == (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.equal, v) }
    /// The key's value != the constant (a nil constant with == or != tests for null).
    public static func != (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.notEqual, v) }
    /// The key's value < the constant (a nil constant with == or != tests for null).
    public static func < (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.less, v) }
    /// The key's value <= the constant (a nil constant with == or != tests for null).
    public static func <= (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.lessOrEqual, v) }
    /// The key's value > the constant (a nil constant with == or != tests for null).
    public static func > (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.greater, v) }
    /// The key's value >= the constant (a nil constant with == or != tests for null).
    public static func >= (k: FetchKey, v: some PredicateValueConvertible) -> FetchPredicate { k.compare(.greaterOrEqual, v) }

    /// `key == nil`.
    public static func == (k: FetchKey, _: _OptionalNilComparisonType) -> FetchPredicate { FetchPredicate(.isNil(k.path)) }
    /// `key != nil`.
    public static func != (k: FetchKey, _: _OptionalNilComparisonType) -> FetchPredicate { FetchPredicate(.not(.isNil(k.path))) }

    /// The object at this key path is `object`, by identity (`company == %@`); a nil object tests for
    /// an empty relationship. Only the object's ID is kept, so build the predicate after saving a new
    /// object (a temporary ID matches unsaved objects only).
    public static func == (k: FetchKey, object: ManagedObject?) -> FetchPredicate {
        guard let object else { return FetchPredicate(.isNil(k.path)) }
        return FetchPredicate(.objects(k.path, [object.objectID]))
    }
    /// The object at this key path is not `object` (an empty relationship included, as in Core Data);
    /// a nil object tests for a non-empty relationship.
    public static func != (k: FetchKey, object: ManagedObject?) -> FetchPredicate {
        guard let object else { return FetchPredicate(.not(.isNil(k.path))) }
        return FetchPredicate(.not(.objects(k.path, [object.objectID])))
    }
    /// The object at this key path is the one with this ID.
    public static func == (k: FetchKey, id: ManagedObjectID) -> FetchPredicate { FetchPredicate(.objects(k.path, [id])) }
    /// The object at this key path is not the one with this ID (an empty relationship included).
    public static func != (k: FetchKey, id: ManagedObjectID) -> FetchPredicate { FetchPredicate(.not(.objects(k.path, [id]))) }

    /// The object at this key path is one of `objects`, by identity (`company IN %@`).
    public func isIn<S: Sequence>(_ objects: S) -> FetchPredicate where S.Element: ManagedObject {
        FetchPredicate(.objects(path, objects.map(\.objectID)))
    }
    /// The object at this key path is one of the objects with these IDs.
    public func isIn<S: Sequence>(_ ids: S) -> FetchPredicate where S.Element == ManagedObjectID {
        FetchPredicate(.objects(path, Array(ids)))
    }
    /// This to-many relationship holds `object` (`ANY employees == %@`).
    public func contains(_ object: ManagedObject) -> FetchPredicate { FetchPredicate(.objects(path, [object.objectID])) }
    /// This to-many relationship holds the object with this ID.
    public func contains(_ id: ManagedObjectID) -> FetchPredicate { FetchPredicate(.objects(path, [id])) }

    /// The first key's value == the second key's value.
    public static func == (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .equal, .keyPath(b.path))) }
    /// The first key's value != the second key's value.
    public static func != (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .notEqual, .keyPath(b.path))) }
    /// The first key's value < the second key's value.
    public static func < (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .less, .keyPath(b.path))) }
    /// The first key's value <= the second key's value.
    public static func <= (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .lessOrEqual, .keyPath(b.path))) }
    /// The first key's value > the second key's value.
    public static func > (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .greater, .keyPath(b.path))) }
    /// The first key's value >= the second key's value.
    public static func >= (a: FetchKey, b: FetchKey) -> FetchPredicate { FetchPredicate(.compare(a.path, .greaterOrEqual, .keyPath(b.path))) }

    /// The value is null.
    public var isNil: FetchPredicate { FetchPredicate(.isNil(path)) }
    /// The value is not null.
    public var isNotNil: FetchPredicate { FetchPredicate(.not(.isNil(path))) }

    /// The value equals one of `values` (`IN`).
    public func isIn<S: Sequence>(_ values: S) -> FetchPredicate where S.Element: PredicateValueConvertible {
        FetchPredicate(.isIn(path, values.map { Self.constant($0) }))
    }

    /// `lower <= value <= upper`.
    public func between(_ lower: some PredicateValueConvertible, _ upper: some PredicateValueConvertible) -> FetchPredicate {
        FetchPredicate(.between(path, Self.constant(lower), Self.constant(upper)))
    }

    private func string(_ op: StringOperator, _ s: String, _ c: Bool, _ d: Bool) -> FetchPredicate {
        FetchPredicate(.string(path, op, s, caseInsensitive: c, diacriticInsensitive: d))
    }

    /// `BEGINSWITH`; only the case- and diacritic-sensitive form can use an index.
    public func beginsWith(_ s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> FetchPredicate {
        string(.beginsWith, s, caseInsensitive, diacriticInsensitive)
    }
    /// `ENDSWITH`.
    public func endsWith(_ s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> FetchPredicate {
        string(.endsWith, s, caseInsensitive, diacriticInsensitive)
    }
    /// `CONTAINS` (substring).
    public func contains(_ s: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> FetchPredicate {
        string(.contains, s, caseInsensitive, diacriticInsensitive)
    }
    /// `LIKE`, with `*` and `?` wildcards.
    public func like(_ pattern: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> FetchPredicate {
        string(.like, pattern, caseInsensitive, diacriticInsensitive)
    }
    /// `MATCHES`: the whole string matches the ICU regular expression.
    public func matches(_ regex: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> FetchPredicate {
        string(.matches, regex, caseInsensitive, diacriticInsensitive)
    }

    /// Some member of this to-many relationship satisfies `predicate`, whose keys start at the member
    /// (a predicate nested deeper than `PredicateNode.maximumDepth` is returned as it is; fetches refuse it).
    public func any(_ predicate: FetchPredicate) -> FetchPredicate { predicate.quantified(over: path) }

    /// The number of members of this to-many relationship (`@count`), to compare with an integer.
    public var count: FetchCount { FetchCount(path: path) }
}

/// The `@count` of a to-many relationship in a `FetchPredicate`.
public struct FetchCount: Sendable {
    public var path: KeyPathExpr

    /// The number of members == n.
    public static func == (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .equal, n)) }
    /// The number of members != n.
    public static func != (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .notEqual, n)) }
    /// The number of members < n.
    public static func < (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .less, n)) }
    /// The number of members <= n.
    public static func <= (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .lessOrEqual, n)) }
    /// The number of members > n.
    public static func > (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .greater, n)) }
    /// The number of members >= n.
    public static func >= (c: FetchCount, n: Int) -> FetchPredicate { FetchPredicate(.count(c.path, .greaterOrEqual, n)) }
}
