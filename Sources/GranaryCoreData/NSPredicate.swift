import Granary

/// Core Data's `NSPredicate`, read from a format string by Granary's parser into the `PredicateNode`
/// every Granary fetch runs: `NSPredicate(format: "magnitude > %@", 4.5)` works as in Core Data.
///
/// It shadows Foundation's `NSPredicate` for code that imports `GranaryCoreData` (this module imports
/// Foundation, so its declaration wins). A format string the parser rejects does not crash, as Core Data
/// does: the predicate keeps the error, and the fetch or batch request that uses it throws it.
open class NSPredicate: CustomStringConvertible {
    /// The parsed predicate, or the reason the format string could not be parsed.
    public let parsed: Result<PredicateNode, PredicateParseError>

    /// A predicate parsed from a format string with `%@`, `%K`, `%d`, `%f`… arguments, as Core Data's
    /// `init(format:_:)`.
    /// - Parameters:
    ///   - predicateFormat: The format string (Core Data's predicate syntax).
    ///   - args: One value per `%` placeholder: strings, numbers, dates, UUIDs, managed objects, object
    ///     IDs, arrays for `IN`.
    public convenience init(format predicateFormat: String, _ args: Any?...) {
        self.init(format: predicateFormat, argumentArray: args)
    }

    /// A predicate parsed from a format string with its arguments in an array: Core Data's
    /// `init(format:argumentArray:)`.
    public init(format predicateFormat: String, argumentArray arguments: [Any?]?) {
        let arguments = (arguments ?? []).map(Self.swiftValue)
        template = (predicateFormat, arguments)
        parsed = Self.parse(predicateFormat, arguments, variables: [:])
    }

    private static func parse(_ format: String, _ arguments: [Any?], variables: [String: Any]) -> Result<PredicateNode, PredicateParseError> {
        do {
            return .success(try PredicateParser.parse(format, arguments: arguments, variables: variables))
        } catch let error as PredicateParseError {
            return .failure(error)
        } catch {
            return .failure(.argument(message: "\(error)", offset: 0))
        }
    }

    /// The format string and arguments a predicate was made from, kept for `withSubstitutionVariables(_:)`.
    private var template: (format: String, arguments: [Any?])?

    /// The predicate with values for its `$VARIABLE`s: Core Data's `withSubstitutionVariables(_:)`, for a
    /// predicate written once as a template (`NSPredicate(format: "name == $NAME")`) and filled in per
    /// fetch. A variable's value is used as a `%@` argument would be; `$NAME.key` reads a key of it (of a
    /// dictionary or a managed object). A variable left without a value is an error the fetch throws, as
    /// for any predicate that does not parse.
    public func withSubstitutionVariables(_ variables: [String: Any]) -> NSPredicate {
        guard let template else { return self }
        let values = variables.mapValues { Self.swiftValue($0) as Any }
        let result = NSPredicate(parsed: Self.parse(template.format, template.arguments, variables: values))
        result.template = template
        return result
    }

    /// Foundation's reference types as the Swift values Granary's parser takes: Core Data code passes
    /// `NSNumber`, `NSString`, `NSDate`, `NSArray`, `NSSet` arguments (and dictionaries of them as
    /// substitution variables).
    static func swiftValue(_ value: Any?) -> Any? {
        switch value {
        case let decimal as NSDecimalNumber: return decimal.decimalValue
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            case "B": return number.boolValue
            case "d", "f": return number.doubleValue
            default: return number.int64Value
            }
        case let string as NSString: return string as String
        case let date as NSDate: return date as Date
        case let dictionary as [String: Any]: return dictionary.mapValues { swiftValue($0) as Any }
        case let array as NSArray: return array.map { swiftValue($0) as Any }
        case let set as NSSet: return set.map { swiftValue($0) as Any }
        default: return value
        }
    }

    /// A predicate that is always `value`: Core Data's `init(value:)`.
    public init(value: Bool) { parsed = .success(value ? .true : .false) }

    /// A predicate made from Granary's own form.
    public init(_ node: PredicateNode) { parsed = .success(node) }

    init(parsed: Result<PredicateNode, PredicateParseError>) { self.parsed = parsed }

    /// The parsed predicate.
    /// - Throws: `PredicateParseError` naming where the format string went wrong.
    public func predicateNode() throws(PredicateParseError) -> PredicateNode { try parsed.get() }

    /// The predicate read as a fetch's having predicate, over the keys of its results: a format string
    /// is parsed again with `PredicateParser.parseHaving`, so that `$name` (and `%@` with
    /// `NSExpression(forVariable:)`) names a key rather than a variable with no value.
    /// - Throws: `PredicateParseError` naming where the format string went wrong.
    func havingNode() throws -> PredicateNode {
        guard let template else { return try parsed.get() }
        return try PredicateParser.parseHaving(template.format, arguments: template.arguments)
    }

    /// The predicate in Core Data's format syntax (the parse error's description for a bad one).
    public var predicateFormat: String {
        switch parsed {
        case .success(let node): return node.description
        case .failure(let error): return error.description
        }
    }

    public var description: String { predicateFormat }
}

/// Core Data's `NSCompoundPredicate`: the `AND`, `OR` or `NOT` of other predicates.
open class NSCompoundPredicate: NSPredicate {
    /// All of `subpredicates` (true when there are none).
    public init(andPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        super.init(parsed: Self.combine(subpredicates) { $0.isEmpty ? .true : .and($0) })
    }

    /// Any of `subpredicates` (false when there are none).
    public init(orPredicateWithSubpredicates subpredicates: [NSPredicate]) {
        super.init(parsed: Self.combine(subpredicates) { $0.isEmpty ? .false : .or($0) })
    }

    /// The negation of `predicate`.
    public init(notPredicateWithSubpredicate predicate: NSPredicate) {
        super.init(parsed: Self.combine([predicate]) { .not($0[0]) })
    }

    /// The parts combined, or the first part's parse error: a bad part spoils the whole, as it would
    /// the format string it came from.
    private static func combine(_ predicates: [NSPredicate],
                                _ make: ([PredicateNode]) -> PredicateNode) -> Result<PredicateNode, PredicateParseError> {
        var nodes: [PredicateNode] = []
        for predicate in predicates {
            switch predicate.parsed {
            case .success(let node): nodes.append(node)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(make(nodes))
    }
}
