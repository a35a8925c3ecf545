/// Everything that can go wrong reading or evaluating a predicate; each message names the offending
/// token and its character offset, or the key path and entity involved.
public enum PredicateParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The format string does not parse: `token` (empty at the end of input) at `offset` Unicode scalars
    /// from the start (characters, in ASCII text) was not what the parser expected.
    case syntax(message: String, token: String, offset: Int)
    /// A `%@`, `%K`, `%d` or `%f` at `offset` has no argument, or one the placeholder cannot use.
    case argument(message: String, offset: Int)
    /// A `$variable` at `offset` that is not defined (no SUBQUERY declares it and no substitution value
    /// was given), or whose key path names no value of the variable's object.
    case variable(name: String, message: String, offset: Int)
    /// A key path names no field of the entity it is evaluated on.
    case unknownKey(keyPath: String, entity: String)
    /// A key path is used in a way its field's kind does not allow, such as a to-many relationship in a
    /// plain comparison or `@count` of an attribute.
    case invalidKeyPath(keyPath: String, entity: String, reason: String)
    /// A `MATCHES` pattern is not a valid regular expression.
    case invalidRegularExpression(pattern: String, reason: String)
    /// The format string nests deeper than `PredicateNode.maximumDepth`: level `depth` (one more than
    /// the limit) starts at `offset` characters from the start. Parentheses, NOT, AND, OR, ANY and
    /// SUBQUERY each add a level.
    case tooDeep(depth: Int, offset: Int)
    /// A predicate built in code (a `PredicateNode`, `FetchPredicate` or `#Predicate`) nests `depth`
    /// levels of NOT, AND, OR and ANY, deeper than `PredicateNode.maximumDepth`. For a `#Predicate`,
    /// whose lowering stops counting past the limit, `depth` is the limit plus one.
    case treeTooDeep(depth: Int)

    public var description: String {
        switch self {
        case .syntax(let message, let token, let offset):
            return token.isEmpty ? "\(message) at the end of the predicate (offset \(offset))"
                : "\(message): unexpected '\(SafeDescription.of(token))' at offset \(offset)"
        case .argument(let message, let offset):
            return "\(message) (placeholder at offset \(offset))"
        case .variable(let name, let message, let offset):
            return "$\(SafeDescription.of(name)): \(message) (at offset \(offset))"
        case .unknownKey(let keyPath, let entity):
            return "entity '\(entity)' has no field '\(SafeDescription.of(keyPath))'"
        case .invalidKeyPath(let keyPath, let entity, let reason):
            return "key path '\(SafeDescription.of(keyPath))' of entity '\(entity)' \(reason)"
        case .invalidRegularExpression(let pattern, let reason):
            return "MATCHES pattern '\(SafeDescription.of(pattern))' is not a valid regular expression: \(reason)"
        case .tooDeep(let depth, let offset):
            return "the predicate nests deeper than the \(PredicateNode.maximumDepth) levels allowed: level \(depth) starts at offset \(offset)"
        case .treeTooDeep(let depth):
            let levels = depth > PredicateNode.maximumDepth + 1 ? "\(depth)" : "more than \(PredicateNode.maximumDepth)"
            return "the predicate nests \(levels) levels of NOT, AND, OR and ANY; at most \(PredicateNode.maximumDepth) are allowed"
        }
    }
}
