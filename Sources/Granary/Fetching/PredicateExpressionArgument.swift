/// A `%@` argument of a predicate format that stands for an expression, not a constant: what Core Data
/// does with an `NSExpression` argument (`NSPredicate(format: "%@ > 1", NSExpression(forVariable:
/// "count"))`). GranaryCoreData's `NSExpression` conforms.
public protocol PredicateExpressionArgument {
    /// The key path the argument reads (`NSExpression(forKeyPath:)`), or nil.
    var predicateKeyPath: String? { get }
    /// The substitution variable the argument names (`NSExpression(forVariable:)`), or nil. In a having
    /// predicate (`PredicateParser.parseHaving`) it names a key of the results, as `$name` does.
    var predicateVariable: String? { get }
}
