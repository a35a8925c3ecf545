/// One key of dictionary results: a stored property read as it is, or a computed expression; what
/// Core Data's `propertiesToFetch` holds (property names and descriptions, `NSExpressionDescription`s).
///
/// A string literal is a property: `request.propertiesToFetch = ["name", "company"]` reads as
/// `[.property("name"), .property("company")]`.
public enum FetchProperty: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// An attribute, a to-one relationship (its value is the destination's object ID), or
    /// `FetchRequest.objectIDKey` (the object's own ID), under its own name.
    case property(String)
    /// An expression's value under the description's name.
    case expression(ExpressionDescription)

    /// The object's own ID, under the key `FetchRequest.objectIDKey`: what Core Data fetches with an
    /// `NSExpressionDescription` of `NSExpression.expressionForEvaluatedObject()`.
    public static var objectID: FetchProperty { .property(FetchRequest<ManagedObject>.objectIDKey) }

    /// A property named by a string literal.
    public init(stringLiteral value: String) { self = .property(value) }

    /// The key under which dictionary results hold the value.
    public var name: String {
        switch self {
        case .property(let name): return name
        case .expression(let description): return description.name
        }
    }

    public var description: String {
        switch self {
        case .property(let name): return name
        case .expression(let e): return "\(e.name) = \(e.expression)"
        }
    }
}
