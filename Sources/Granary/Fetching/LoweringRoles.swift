import Synchronization

/// The lowering protocols a type conforms to, found once per type.
///
/// Lowering a `#Predicate` asks of every node which protocol it conforms to. Each of those casts is a
/// lookup in the runtime's conformance tables, and for a two-comparison range they were a third of
/// translating it, on every fetch. The answers depend only on the type, so they are kept by type; a
/// node is then lowered through its type's static entry, whose cast to the concrete type is a compare
/// of type metadata.
///
/// `@unchecked`: it holds only metatypes, which are immutable, but existential metatypes of
/// non-Sendable protocols are not `Sendable` to the compiler.
struct LoweringRoles: @unchecked Sendable {
    let expression: (any LowerableExpression.Type)?
    let operand: (any LowerableOperand.Type)?
    let chain: (any OptionalChainExpression.Type)?
    let convertible: (any PredicateValueConvertible.Type)?
    let collection: (any RelationshipCollection.Type)?

    private init(_ type: Any.Type) {
        expression = type as? any LowerableExpression.Type
        operand = type as? any LowerableOperand.Type
        chain = type as? any OptionalChainExpression.Type
        convertible = type as? any PredicateValueConvertible.Type
        collection = type as? any RelationshipCollection.Type
    }

    /// Bounded by the expression and value types a program's predicates use.
    private static let known = Mutex<[ObjectIdentifier: LoweringRoles]>([:])

    static func of(_ type: Any.Type) -> LoweringRoles {
        let key = ObjectIdentifier(type)
        if let roles = known.withLock({ $0[key] }) { return roles }
        let roles = LoweringRoles(type)
        known.withLock { $0[key] = roles }
        return roles
    }
}

extension LowerableExpression {
    static func lowered(_ expression: Any, in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        try (expression as! Self).lowered(in: context)
    }
}

extension LowerableOperand {
    static func lowered(_ expression: Any, in context: LoweringContext) throws(PredicateParseError) -> LoweredOperand? {
        try (expression as! Self).lowered(in: context)
    }
}

extension OptionalChainExpression {
    static func loweredPredicate(_ expression: Any, in context: LoweringContext) throws(PredicateParseError) -> PredicateNode? {
        try (expression as! Self).loweredPredicate(in: context)
    }
}

extension PredicateValueConvertible {
    static func predicateValue(of value: Any) -> Value? {
        (value as! Self).predicateValue
    }
}
