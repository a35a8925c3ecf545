/// Everything that can go wrong reading or evaluating a predicate; each message names the offending
/// token and its character offset, or the key path and entity involved.
public enum PredicateParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The format string does not parse: `token` (empty at the end of input) at `offset` Unicode scalars
    /// from the start (characters, in ASCII text) was not what the parser expected.
    case syntax(message: String, token: String, offset: Int)
    /// A `%@`, `%K`, `%d` or `%f` at `offset` has no argument, or one the placeholder cannot use.
    case argument(message: String, offset: Int)
    /// A key path names no field of the entity it is evaluated on.
    case unknownKey(keyPath: String, entity: String)
    /// A key path is used in a way its field's kind does not allow, such as a to-many relationship in a
    /// plain comparison or `@count` of an attribute.
    case invalidKeyPath(keyPath: String, entity: String, reason: String)
    /// A `MATCHES` pattern is not a valid regular expression.
    case invalidRegularExpression(pattern: String, reason: String)

    public var description: String {
        switch self {
        case .syntax(let message, let token, let offset):
            return token.isEmpty ? "\(message) at the end of the predicate (offset \(offset))"
                : "\(message): unexpected '\(token)' at offset \(offset)"
        case .argument(let message, let offset):
            return "\(message) (placeholder at offset \(offset))"
        case .unknownKey(let keyPath, let entity):
            return "entity '\(entity)' has no field '\(keyPath)'"
        case .invalidKeyPath(let keyPath, let entity, let reason):
            return "key path '\(keyPath)' of entity '\(entity)' \(reason)"
        case .invalidRegularExpression(let pattern, let reason):
            return "MATCHES pattern '\(pattern)' is not a valid regular expression: \(reason)"
        }
    }
}
