import Foundation
import GranaryStorage

extension PredicateNode {
    /// Translates a Foundation `#Predicate` into a `PredicateNode`, or returns `nil` when any part of it
    /// has no translation; the caller then evaluates the Foundation predicate on objects instead.
    ///
    /// Supported expressions (the types `#Predicate` builds, as seen on Linux with Swift 6.3):
    /// `Conjunction`, `Disjunction`, `Negation`, `Equal`, `NotEqual`, `Comparison`; `KeyPath` on the
    /// predicate's `Variable`, chained through `OptionalFlatMap` (`$0.manager?.name`) and `ForcedUnwrap`
    /// (`$0.manager!.name`, where a nil link reads as null instead of failing); `NilLiteral` (`== nil`);
    /// `Value` constants mapped as `PredicateValueConvertible` documents (captured arrays and sets become
    /// lists, captured ranges become bounds); `SequenceContains` on a constant list (IN);
    /// captured object IDs compared with an object's `objectID` (`$0.company?.objectID == id`) with
    /// `==`/`!=` or in `contains` (identity, as `PredicateNode.objects`); `SequenceStartsWith` (BEGINSWITH); `CollectionContainsCollection` (`String.contains`, CONTAINS);
    /// `SequenceContainsWhere` and `SequenceAllSatisfy` on a to-many relationship (ANY, and NOT ANY NOT);
    /// `KeyPath` to `count`/`isEmpty` of an `Array` or `Set` relationship (`@count`); `RangeExpressionContains`
    /// over `ClosedRange` (BETWEEN) and `Range` (`>=` and `<`); a `Bool` key path or constant standing alone.
    /// On Darwin also `StringLocalizedStandardContains` (CONTAINS[cd]), which Linux's Foundation lacks.
    ///
    /// - Parameters:
    ///   - predicate: The Foundation predicate to translate.
    ///   - keyPathName: the field names of a key path of the model (`\Employee.manager` →
    ///     `["manager"]`), or `nil` for a key path that is not one; `KeyPathNames.components(of:)` by default.
    ///
    /// Also `nil` for a predicate whose expressions nest deeper than `maximumDepth`, or whose
    /// translation would; fetches refuse those with `PredicateParseError.treeTooDeep` instead of
    /// evaluating them on objects, which would recurse as deep.
    public static func lower<T>(_ predicate: Predicate<T>,
                                keyPathName: (AnyKeyPath) -> [String]? = KeyPathNames.components(of:)) -> PredicateNode? {
        (try? lowering(predicate, keyPathName: keyPathName)) ?? nil
    }

    /// As `lower(_:keyPathName:)`, but a predicate nesting too deep throws instead of returning `nil`.
    ///
    /// - Throws: `PredicateParseError.treeTooDeep` when the expressions, or the translation (where
    ///   `allSatisfy` takes three levels), nest deeper than `maximumDepth`.
    static func lowering<T>(_ predicate: Predicate<T>,
                            keyPathName: (AnyKeyPath) -> [String]? = KeyPathNames.components(of:)) throws(PredicateParseError) -> PredicateNode? {
        let node = try withoutActuallyEscaping(keyPathName) { name throws(PredicateParseError) in
            try LoweringContext(variable: predicate.variable.key, keyPathName: name).predicate(predicate.expression)
        }
        try node?.checkDepth()
        return node
    }
}

/// What a non-Boolean sub-expression lowers to.
enum LoweredOperand {
    case keyPath(KeyPathExpr)
    case constant(Value)
    case constants([Value])
    case range(lower: Value, upper: Value, isClosed: Bool)
    /// The number of members of a to-many relationship.
    case count(KeyPathExpr)
    /// Whether a to-many relationship is empty.
    case isEmpty(KeyPathExpr)
    /// Captured managed objects (or IDs), compared by identity.
    case objects([ManagedObjectID])
}

/// The variables in scope (each bound to a key path from the current object) and the key path namer.
struct LoweringContext {
    /// The variable standing for the object the predicate tests, and those optional chains bind
    /// (innermost last). Searched in order rather than kept in a dictionary, which allocated and
    /// hashed on every fetch; a predicate without optional chains allocates nothing here.
    private var object: PredicateExpressions.VariableID
    private var chained: [(id: PredicateExpressions.VariableID, path: KeyPathExpr)] = []
    let keyPathName: (AnyKeyPath) -> [String]?
    /// How many expressions enclose the one being lowered: lowering recurses once per level, and a
    /// predicate built at run time from `any StandardPredicateExpression` can nest without bound.
    private var depth = 0

    /// A context where `variable` stands for the object the predicate tests.
    init(variable: PredicateExpressions.VariableID, keyPathName: @escaping (AnyKeyPath) -> [String]?) {
        object = variable
        self.keyPathName = keyPathName
    }

    /// The context of a test on the members of a to-many relationship, where `variable` stands for
    /// the member; it keeps counting the depth.
    func member(_ variable: PredicateExpressions.VariableID) -> LoweringContext {
        var copy = self
        copy.object = variable
        copy.chained = []
        return copy
    }

    /// The context of a sub-expression, one level deeper.
    ///
    /// - Throws: `PredicateParseError.treeTooDeep` past `PredicateNode.maximumDepth` levels.
    private func descending() throws(PredicateParseError) -> LoweringContext {
        guard depth < PredicateNode.maximumDepth else { throw .treeTooDeep(depth: PredicateNode.maximumDepth + 1) }
        var copy = self
        copy.depth += 1
        return copy
    }

    /// The key path a variable in scope stands for.
    func path(of id: PredicateExpressions.VariableID) -> KeyPathExpr? {
        if let binding = chained.last(where: { $0.id == id }) { return binding.path }
        return id == object ? [] : nil
    }

    func binding(_ id: PredicateExpressions.VariableID, to path: KeyPathExpr) -> LoweringContext {
        var copy = self
        copy.chained.append((id, path))
        return copy
    }

    /// The predicate for a Boolean expression.
    func predicate(_ expression: Any) throws(PredicateParseError) -> PredicateNode? {
        if let e = LoweringRoles.of(type(of: expression)).expression { return try e.lowered(expression, in: descending()) }
        switch try operand(expression) {
        case .keyPath(let p)?: return .compare(p, .equal, .value(.bool(true)))
        case .constant(.bool(let b))?: return b ? .true : .false
        case .isEmpty(let p)?: return .count(p, .equal, 0)
        default: return nil
        }
    }

    func operand(_ expression: Any) throws(PredicateParseError) -> LoweredOperand? {
        guard let operand = LoweringRoles.of(type(of: expression)).operand else { return nil }
        return try operand.lowered(expression, in: descending())
    }

    /// `lhs op rhs` for key paths, constants and counts on either side.
    func comparison(_ lhs: Any, _ op: ComparisonOperator, _ rhs: Any) throws(PredicateParseError) -> PredicateNode? {
        let l = try operand(lhs)
        let r = try operand(rhs)
        switch (l, r) {
        case (.keyPath(let p)?, .constant(.null)?), (.constant(.null)?, .keyPath(let p)?):
            switch op {
            case .equal: return .isNil(p)
            case .notEqual: return .not(.isNil(p))
            default: return .false  // ordering against nil never holds
            }
        case (.keyPath(let p)?, .constant(let v)?): return .compare(p, op, .value(v))
        case (.constant(let v)?, .keyPath(let p)?): return .compare(p, op.swapped, .value(v))
        case (.keyPath(let p)?, .keyPath(let q)?): return .compare(p, op, .keyPath(q))
        case (.keyPath(let p)?, .objects(let ids)?), (.objects(let ids)?, .keyPath(let p)?):
            switch op {
            case .equal: return .objects(p, ids)
            case .notEqual: return .not(.objects(p, ids))
            default: return nil
            }
        case (.count(let p)?, .constant(.int(let n))?): return Int(exactly: n).map { .count(p, op, $0) }
        case (.constant(.int(let n))?, .count(let p)?): return Int(exactly: n).map { .count(p, op.swapped, $0) }
        case (nil, .constant(.bool(true))?) where op == .equal: return try optionalPredicate(lhs)
        case (.constant(.bool(true))?, nil) where op == .equal: return try optionalPredicate(rhs)
        default: return nil
        }
    }

    /// A Boolean expression that may be wrapped in an optional chain (`$0.nick?.starts(with: "A") == true`),
    /// which is true only when the chain reaches a value and the test holds.
    func optionalPredicate(_ expression: Any) throws(PredicateParseError) -> PredicateNode? {
        if let chain = LoweringRoles.of(type(of: expression)).chain { return try chain.loweredPredicate(expression, in: descending()) }
        return try predicate(expression)
    }
}

/// A Foundation expression that yields a `Bool` and has a `PredicateNode`.
protocol LowerableExpression { func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? }
/// A Foundation expression that yields a key path's value, a constant or a count.
protocol LowerableOperand { func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? }
/// `OptionalFlatMap`, whose transform may be a Boolean test.
protocol OptionalChainExpression { func loweredPredicate(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? }

/// Collections whose `count` and `isEmpty` key paths stand for a to-many relationship's `@count`.
protocol RelationshipCollection {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}
extension Array: RelationshipCollection {
    static var countKeyPath: AnyKeyPath { \Array.count }
    static var isEmptyKeyPath: AnyKeyPath { \Array.isEmpty }
}
extension Set: RelationshipCollection {
    static var countKeyPath: AnyKeyPath { \Set.count }
    static var isEmptyKeyPath: AnyKeyPath { \Set.isEmpty }
}

// MARK: Boolean expressions

extension PredicateExpressions.Conjunction: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard let l = try context.predicate(lhs), let r = try context.predicate(rhs) else { return nil }
        return .all([l, r])
    }
}

extension PredicateExpressions.Disjunction: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard let l = try context.predicate(lhs), let r = try context.predicate(rhs) else { return nil }
        return .either([l, r])
    }
}

extension PredicateExpressions.Negation: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? { try context.predicate(wrapped).map { .not($0) } }
}

extension PredicateExpressions.Equal: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? { try context.comparison(lhs, .equal, rhs) }
}

extension PredicateExpressions.NotEqual: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? { try context.comparison(lhs, .notEqual, rhs) }
}

extension PredicateExpressions.Comparison: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        let o: ComparisonOperator
        switch op {
        case .lessThan: o = .less
        case .lessThanOrEqual: o = .lessOrEqual
        case .greaterThan: o = .greater
        case .greaterThanOrEqual: o = .greaterOrEqual
        @unknown default: return nil
        }
        return try context.comparison(lhs, o, rhs)
    }
}

extension PredicateExpressions.SequenceContains: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        switch (try context.operand(element), try context.operand(sequence)) {
        case (.keyPath(let p)?, .constants(let values)?): return .isIn(p, values)
        // `objects.contains($0.company)` and `$0.employees.contains(employee)`: identity.
        case (.keyPath(let p)?, .objects(let ids)?), (.objects(let ids)?, .keyPath(let p)?): return .objects(p, ids)
        default: return nil
        }
    }
}

extension PredicateExpressions.SequenceStartsWith: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(base), case .constant(.string(let s))? = try context.operand(prefix) else { return nil }
        return .string(p, .beginsWith, s, caseInsensitive: false)
    }
}

extension PredicateExpressions.CollectionContainsCollection: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(base), case .constant(.string(let s))? = try context.operand(other) else { return nil }
        return .string(p, .contains, s, caseInsensitive: false)
    }
}

#if canImport(Darwin)
extension PredicateExpressions.StringLocalizedStandardContains: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(root), case .constant(.string(let s))? = try context.operand(other) else { return nil }
        return .string(p, .contains, s, caseInsensitive: true, diacriticInsensitive: true)
    }
}
#endif

extension PredicateExpressions.SequenceContainsWhere: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(sequence),
              let inner = try context.member(variable.key).predicate(test)
        else { return nil }
        return .any(p, inner)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(sequence),
              let inner = try context.member(variable.key).predicate(test)
        else { return nil }
        return .not(.any(p, .not(inner)))
    }
}

extension PredicateExpressions.RangeExpressionContains: LowerableExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let p)? = try context.operand(element),
              case .range(let lo, let hi, let isClosed)? = try context.operand(range) else { return nil }
        return isClosed ? .between(p, lo, hi) : .and([.compare(p, .greaterOrEqual, .value(lo)), .compare(p, .less, .value(hi))])
    }
}

// MARK: Operands

extension PredicateExpressions.Variable: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? { context.path(of: key).map { .keyPath($0) } }
}

extension PredicateExpressions.KeyPath: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        guard case .keyPath(let base)? = try context.operand(root) else { return nil }
        let any: AnyKeyPath = keyPath
        if let collection = LoweringRoles.of(type(of: any).rootType).collection {
            if collection.countKeyPath == any { return .count(base) }
            if collection.isEmptyKeyPath == any { return .isEmpty(base) }
        }
        // `objectID` stands for the object itself, which a comparison with captured IDs tests by identity.
        if type(of: any).valueType == ManagedObjectID.self, type(of: any).rootType is ManagedObject.Type { return .keyPath(base) }
        guard let names = context.keyPathName(any) else { return nil }
        // From the object itself (the common case), the namer's array as it is: no concatenation.
        return .keyPath(base.isEmpty ? names : base + names)
    }
}

extension PredicateExpressions.OptionalFlatMap: LowerableOperand, OptionalChainExpression {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        guard case .keyPath(let base)? = try context.operand(wrapped) else { return nil }
        return try context.binding(variable.key, to: base).operand(transform)
    }

    func loweredPredicate(in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        guard case .keyPath(let base)? = try context.operand(wrapped) else { return nil }
        return try context.binding(variable.key, to: base).optionalPredicate(transform)
    }
}

extension PredicateExpressions.ForcedUnwrap: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        guard case .keyPath(let p)? = try context.operand(inner) else { return nil }
        return .keyPath(p)
    }
}

extension PredicateExpressions.NilLiteral: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? { .constant(.null) }
}

extension PredicateExpressions.Value: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        if let v = PredicateValues.value(of: value) { return .constant(v) }
        if let ids = PredicateValues.objectIDs(of: value) { return .objects(ids) }
        // Ranges before sequences: an integer range is also a sequence of its members.
        if let b = PredicateValues.bounds(of: value) { return .range(lower: b.lower, upper: b.upper, isClosed: b.isClosed) }
        if let vs = PredicateValues.values(of: value) { return .constants(vs) }
        return nil
    }
}

extension PredicateExpressions.ClosedRange: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        guard case .constant(let lo)? = try context.operand(lower), case .constant(let hi)? = try context.operand(upper) else { return nil }
        return .range(lower: lo, upper: hi, isClosed: true)
    }
}

extension PredicateExpressions.Range: LowerableOperand {
    func lowered(in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        guard case .constant(let lo)? = try context.operand(lower), case .constant(let hi)? = try context.operand(upper) else { return nil }
        return .range(lower: lo, upper: hi, isClosed: false)
    }
}
