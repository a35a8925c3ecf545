import Foundation

/// A computed column of dictionary results: Core Data's `NSExpressionDescription`, a name and the
/// expression whose value the dictionaries hold under it.
///
/// Put one in `FetchRequest.propertiesToFetch` to have the store total, average, count or find the
/// extremes of an attribute over the matching objects (or over each group of them, with
/// `propertiesToGroupBy`) without making a managed object; or to fetch an attribute under another key.
///
/// ```swift
/// var request = FetchRequest<Sale>()
/// request.propertiesToFetch = ["category", .expression(ExpressionDescription(name: "total", expression: .sum("amount")))]
/// request.propertiesToGroupBy = ["category"]
/// let totals = try context.fetchDictionaries(request)  // [["category": "books", "total": 120], …]
/// ```
public struct ExpressionDescription: Sendable, Hashable {
    /// The aggregate functions Core Data's stores evaluate: `NSExpression(forFunction:arguments:)` with
    /// `sum:`, `average:`, `min:`, `max:` and `count:`.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// The total (`sum:`).
        case sum
        /// The mean (`average:`).
        case average
        /// The least value (`min:`).
        case min
        /// The greatest value (`max:`).
        case max
        /// How many values, or objects (`count:`).
        case count
    }

    /// What an expression description computes.
    public enum Expression: Sendable, Hashable, CustomStringConvertible {
        /// The value at a key path (an attribute or to-one relationship, through to-one relationships):
        /// Core Data's `NSExpression(forKeyPath:)`. In a grouped request it must be grouped by.
        case keyPath(String)
        /// An aggregate of the values at a key path over the objects of a group (every matching object
        /// when nothing is grouped): Core Data's `NSExpression(forFunction:arguments:)`. Nil values
        /// take no part, as in SQL. The key path is `nil` only for `count`, which then counts objects.
        case function(Function, keyPath: String?)

        /// The total of a numeric attribute: `Int64` for integers (wrapping on overflow), `Double` for
        /// doubles and floats, `Decimal` for decimals; 0 when no value takes part.
        public static func sum(_ keyPath: String) -> Expression { .function(.sum, keyPath: keyPath) }
        /// The mean of a numeric attribute: `Double` (`Decimal` for decimals); none when no value takes
        /// part.
        public static func average(_ keyPath: String) -> Expression { .function(.average, keyPath: keyPath) }
        /// The least value of a number, date or string attribute, of the attribute's type; none when no
        /// value takes part.
        public static func min(_ keyPath: String) -> Expression { .function(.min, keyPath: keyPath) }
        /// The greatest value of a number, date or string attribute, of the attribute's type; none when
        /// no value takes part.
        public static func max(_ keyPath: String) -> Expression { .function(.max, keyPath: keyPath) }
        /// How many values the key path holds (nil ones are not counted), or, without a key path, how
        /// many objects: an `Int64`.
        public static func count(_ keyPath: String? = nil) -> Expression { .function(.count, keyPath: keyPath) }

        /// The key path the expression reads, if any.
        public var keyPath: String? {
            switch self {
            case .keyPath(let path): return path
            case .function(_, let path): return path
            }
        }

        /// The aggregate function, or `nil` for a plain key path.
        public var function: Function? {
            if case .function(let f, _) = self { return f }
            return nil
        }

        /// Core Data's format of the expression (`sum:(amount)`).
        public var description: String {
            switch self {
            case .keyPath(let path): return path
            case .function(let f, let path): return "\(f.rawValue):(\(path ?? "SELF"))"
            }
        }
    }

    /// The key under which dictionary results hold the expression's value.
    public var name: String
    /// What is computed: an aggregate of a key path, or a key path's value.
    public var expression: Expression
    /// The type of the value, as Core Data's `expressionResultType`: numbers are converted to it (an
    /// integer type truncates toward zero and clamps to its range), so an average asked for as
    /// `.integer64` comes back as an `Int64`. `.undefined` (the default) keeps the expression's own type
    /// (see each `Expression` case). Only numbers convert to other number types; a date, string or
    /// object ID keeps its own type, which may be named.
    public var expressionResultType: AttributeType

    /// A named expression, optionally with the type its value is wanted in.
    public init(name: String, expression: Expression, resultType: AttributeType = .undefined) {
        self.name = name
        self.expression = expression
        self.expressionResultType = resultType
    }
}
