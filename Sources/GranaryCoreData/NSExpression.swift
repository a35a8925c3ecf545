import Granary

/// Core Data's `NSExpression`, as far as fetch requests use it: a key path, an aggregate function of a
/// key path (`sum:`, `average:`, `min:`, `max:`, `count:`), the evaluated object, a variable.
///
/// It shadows Foundation's `NSExpression` for code that imports `GranaryCoreData`, as `NSPredicate`
/// does. Put it in an `NSExpressionDescription` of `propertiesToFetch`, or pass it as a `%@` argument
/// of a predicate (`NSPredicate(format: "%@ > 1", NSExpression(forVariable: "count"))`), where it
/// stands for the key path or variable it names.
open class NSExpression: PredicateExpressionArgument, CustomStringConvertible {
    /// What an expression is: Core Data's `NSExpression.ExpressionType`, the kinds Granary reads.
    public enum ExpressionType: Sendable, Hashable {
        case keyPath, function, evaluatedObject, variable
    }

    /// The kind of expression.
    public let expressionType: ExpressionType
    /// The key path of a key-path expression ("" for other kinds).
    public let keyPath: String
    /// The function's name (`"sum:"`) of a function expression ("" for other kinds).
    public let function: String
    /// The arguments of a function expression.
    public let arguments: [NSExpression]?
    /// The name of a variable expression ("" for other kinds).
    public let variable: String

    private init(_ type: ExpressionType, keyPath: String = "", function: String = "", arguments: [NSExpression]? = nil, variable: String = "") {
        self.expressionType = type
        self.keyPath = keyPath
        self.function = function
        self.arguments = arguments
        self.variable = variable
    }

    /// The value at a key path of the object: Core Data's `init(forKeyPath:)`.
    public convenience init(forKeyPath keyPath: String) {
        self.init(.keyPath, keyPath: keyPath)
    }

    /// A function of other expressions: Core Data's `init(forFunction:arguments:)`. Fetch requests take
    /// `sum:`, `average:`, `min:`, `max:` and `count:` of one key path (or, for `count:`, of the
    /// evaluated object); arguments that are not `NSExpression`s are dropped.
    public convenience init(forFunction name: String, arguments parameters: [Any]) {
        self.init(.function, function: name, arguments: parameters.compactMap { $0 as? NSExpression })
    }

    /// A substitution variable, or in a having predicate a key of the results: Core Data's
    /// `init(forVariable:)`.
    public convenience init(forVariable string: String) {
        self.init(.variable, variable: string)
    }

    /// The object being evaluated itself: Core Data's `expressionForEvaluatedObject()`, which a dictionary
    /// fetch returns as the object's ID and `count:` counts.
    public class func expressionForEvaluatedObject() -> NSExpression {
        NSExpression(.evaluatedObject)
    }

    /// The key path a key-path expression stands for as a predicate argument.
    public var predicateKeyPath: String? { expressionType == .keyPath ? keyPath : nil }
    /// The variable a variable expression stands for as a predicate argument.
    public var predicateVariable: String? { expressionType == .variable ? variable : nil }

    /// The expression in Core Data's format syntax.
    public var description: String {
        switch expressionType {
        case .keyPath: return keyPath
        case .evaluatedObject: return "SELF"
        case .variable: return "$" + variable
        case .function: return function + "(" + (arguments ?? []).map(\.description).joined(separator: ", ") + ")"
        }
    }

    /// This expression in Granary's form, for the description named `name` of a fetch of `entity`.
    /// - Throws: `ContextError.invalidAggregate` for a function Granary does not compute, or arguments
    ///   other than one key path (or the evaluated object, for `count:`).
    func granaryExpression(name: String, entity: String) throws -> ExpressionDescription.Expression {
        func invalid(_ reason: String) -> ContextError { .invalidAggregate(entity: entity, name: name, keyPath: description, reason: reason) }
        switch expressionType {
        case .keyPath: return .keyPath(keyPath)
        case .evaluatedObject, .variable: throw invalid("only a key path or a function of one can be fetched")
        case .function:
            let functions: [String: ExpressionDescription.Function] = ["sum:": .sum, "average:": .average, "min:": .min, "max:": .max, "count:": .count]
            guard let f = functions[function] else {
                throw invalid("\(function) is not a function a fetch computes (sum:, average:, min:, max: or count:)")
            }
            guard let arguments, arguments.count == 1 else { throw invalid("\(function) takes one argument") }
            switch arguments[0].expressionType {
            case .keyPath: return .function(f, keyPath: arguments[0].keyPath)
            case .evaluatedObject where f == .count: return .count(nil)
            default: throw invalid("\(function) takes a key path (count: also the evaluated object)")
            }
        }
    }
}
