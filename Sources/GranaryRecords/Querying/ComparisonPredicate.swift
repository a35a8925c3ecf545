import Granary

/// A predicate written with typed key paths (CorePersistence's `ComparisonPredicate`):
/// `\User.uuid == id && \User.numberOfOrders != 0`.
///
/// It is lowered into Granary's own `PredicateNode`, the tree `#Predicate` and format strings become,
/// so the planner serves it from indexes exactly as it serves them. Key paths are turned into property
/// names when the predicate is resolved against a model (`node(in:)`, `FetchRequest(_:sortedBy:in:)`,
/// `Results`); a key path that is not a stored property of the entity (or a to-one path to one) is then
/// refused with `KeyPathQueryError.notAStoredProperty`.
///
/// Comparing with `nil` tests for null; `<`, `<=`, `>`, `>=` with `nil` match nothing. `===` is `IN`.
/// Where nothing says the type, Swift reads `\User.email == nil` as "is this key path nil" (a `Bool`,
/// with a warning): write `let p: ComparisonPredicate<User> = \User.email == nil`.
/// String operators are functions: `.beginsWith(\User.name, "a", options: .caseInsensitive)`.
public struct ComparisonPredicate<Root: ManagedObject>: @unchecked Sendable {
    // @unchecked: the closure captures only key paths (immutable) and `Value`s/object IDs converted
    // when the predicate was built.
    private let build: (KeyPathResolver) throws(KeyPathQueryError) -> PredicateNode

    private init(_ build: @escaping (KeyPathResolver) throws(KeyPathQueryError) -> PredicateNode) { self.build = build }

    /// A predicate made elsewhere: a `FetchPredicate` (`.key("name") == "Ada"`) or a format string
    /// parsed with `PredicateParser.parse(_:arguments:)`, to combine with key-path predicates. Its keys
    /// are checked when the fetch runs, not here.
    public init(_ predicate: FetchPredicate) {
        let node = predicate.node
        self.init { _ in node }
    }

    /// Granary's predicate tree for this predicate over `Root`'s entity in `model`.
    /// - Throws: `KeyPathQueryError` naming a key path that is not a stored property of the entity, or
    ///   when `model` has no entity for `Root`.
    public func node(in model: ManagedObjectModel) throws(KeyPathQueryError) -> PredicateNode {
        try build(KeyPathResolver(for: Root.self, in: model))
    }

    func node(with resolver: KeyPathResolver) throws(KeyPathQueryError) -> PredicateNode { try build(resolver) }

    /// The predicate every object satisfies (`TRUEPREDICATE`).
    public static var `true`: ComparisonPredicate { ComparisonPredicate { _ in .true } }
    /// The predicate no object satisfies (`FALSEPREDICATE`).
    public static var `false`: ComparisonPredicate { ComparisonPredicate { _ in .false } }

    static func compare<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ op: ComparisonOperator, _ v: V) -> ComparisonPredicate {
        // Converted now, so that the predicate keeps only values (`Value`), never the caller's object.
        let converted = v.predicateValue
        let shown = converted == nil ? String(describing: v) : ""
        return ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in
            let path = try r.path(kp)
            let value = try r.value(converted, shown: shown, for: kp)
            if value.isNull {
                switch op {
                case .equal: return .isNil(path)
                case .notEqual: return .not(.isNil(path))
                default: return .false
                }
            }
            return .compare(path, op, .value(value))
        }
    }

    static func identity<O: ManagedObject>(_ kp: KeyPath<Root, O?>, _ id: ManagedObjectID?) -> ComparisonPredicate {
        ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in
            let path = try r.path(kp)
            return id.map { .objects(path, [$0]) } ?? .isNil(path)
        }
    }

    static func isIn<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ values: [V]) -> ComparisonPredicate {
        let converted = values.map(\.predicateValue)
        let shown = converted.firstIndex(of: nil).map { String(describing: values[$0]) } ?? ""
        return ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in
            let path = try r.path(kp)
            var result: [Value] = []
            result.reserveCapacity(converted.count)
            for v in converted { result.append(try r.value(v, shown: shown, for: kp)) }
            return .isIn(path, result)
        }
    }

    /// Both predicates hold.
    public static func && (a: ComparisonPredicate, b: ComparisonPredicate) -> ComparisonPredicate {
        ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in (FetchPredicate(try a.build(r)) && FetchPredicate(try b.build(r))).node }
    }
    /// Either predicate holds.
    public static func || (a: ComparisonPredicate, b: ComparisonPredicate) -> ComparisonPredicate {
        ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in (FetchPredicate(try a.build(r)) || FetchPredicate(try b.build(r))).node }
    }
    /// The predicate does not hold.
    public static prefix func ! (a: ComparisonPredicate) -> ComparisonPredicate {
        ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in (!FetchPredicate(try a.build(r))).node }
    }

    /// How a string operator compares.
    public typealias StringOptions = StringComparisonOptions

    private static func string<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ op: StringOperator, _ s: String,
                                                             _ options: StringOptions) -> ComparisonPredicate {
        ComparisonPredicate { (r: KeyPathResolver) throws(KeyPathQueryError) in
            .string(try r.path(kp), op, s, caseInsensitive: options.contains(.caseInsensitive),
                    diacriticInsensitive: options.contains(.diacriticInsensitive))
        }
    }

    /// `BEGINSWITH`: the string at the key path starts with `prefix`. Only the form without options can
    /// use an index.
    public static func beginsWith<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ prefix: String, options: StringOptions = []) -> ComparisonPredicate {
        string(kp, .beginsWith, prefix, options)
    }
    /// `ENDSWITH`: the string at the key path ends with `suffix`.
    public static func endsWith<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ suffix: String, options: StringOptions = []) -> ComparisonPredicate {
        string(kp, .endsWith, suffix, options)
    }
    /// `CONTAINS`: the string at the key path contains `substring`.
    public static func contains<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ substring: String, options: StringOptions = []) -> ComparisonPredicate {
        string(kp, .contains, substring, options)
    }
    /// `LIKE`: the string at the key path matches `pattern`, where `*` stands for any run of characters
    /// and `?` for one.
    public static func like<V: PredicateValueConvertible>(_ kp: KeyPath<Root, V>, _ pattern: String, options: StringOptions = []) -> ComparisonPredicate {
        string(kp, .like, pattern, options)
    }
}

// The operators are members of `KeyPath` (Swift wants a member operator to take its own type), so that
// they sit in the documentation with the type they extend rather than as free functions.

extension KeyPath where Root: ManagedObject, Value: PredicateValueConvertible {
    /// The value at the key path equals `v` (`nil`: the value is null).
    public static func == (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .equal, v) }
    /// The value at the key path differs from `v` (`nil`: the value is not null).
    public static func != (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .notEqual, v) }
    /// The value at the key path is less than `v` (never, for `nil`).
    public static func < (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .less, v) }
    /// The value at the key path is at most `v` (never, for `nil`).
    public static func <= (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .lessOrEqual, v) }
    /// The value at the key path is greater than `v` (never, for `nil`).
    public static func > (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .greater, v) }
    /// The value at the key path is at least `v` (never, for `nil`).
    public static func >= (kp: KeyPath, v: Value) -> ComparisonPredicate<Root> { .compare(kp, .greaterOrEqual, v) }

    /// `IN`: the value at the key path is one of `values`. Give at most about 1,000 values a query;
    /// an indexed key path is then read once per value.
    public static func === <S: Sequence>(kp: KeyPath, values: S) -> ComparisonPredicate<Root> where S.Element == Value {
        .isIn(kp, Array(values))
    }
}

extension KeyPath where Root: ManagedObject {
    /// The to-one relationship at the key path is `object`, by identity (`nil`: the relationship is
    /// empty). Only the object's ID is kept: build it after saving a new object.
    public static func == <O: ManagedObject>(kp: KeyPath, object: O?) -> ComparisonPredicate<Root> where Value == O? {
        .identity(kp, object?.objectID)
    }
    /// The to-one relationship at the key path is not `object` (an empty relationship included; `nil`:
    /// the relationship is set).
    public static func != <O: ManagedObject>(kp: KeyPath, object: O?) -> ComparisonPredicate<Root> where Value == O? {
        !ComparisonPredicate.identity(kp, object?.objectID)
    }
}

/// How a key-path string operator compares (`[c]`, `[d]` in format strings).
public struct StringComparisonOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`: ignore case.
    public static let caseInsensitive = StringComparisonOptions(rawValue: 1)
    /// `[d]`: ignore diacritics.
    public static let diacriticInsensitive = StringComparisonOptions(rawValue: 2)
}
