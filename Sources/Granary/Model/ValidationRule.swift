import Foundation

/// A rule an attribute's non-nil values must satisfy before a context saves them.
///
/// Use rules in `AttributeDescription(validation:)` or `Attribute(_:_:validation:)`. Building the model
/// checks each rule against its attribute's type (`ModelError.inapplicableValidationRule`) and compiles
/// regular expressions (`ModelError.invalidRegex`). Rules do not affect storage or the version hash.
public enum ValidationRule: Sendable, CustomStringConvertible {
    /// Inclusive bounds for numbers (any numeric attribute type) or dates (`.date`); `nil` leaves a side open.
    case range(min: ValidationBound?, max: ValidationBound?)
    /// Inclusive bounds on the length of a string (in characters) or binary data (in bytes).
    case length(min: Int?, max: Int?)
    /// A regular expression (ICU syntax, as `NSRegularExpression`) that the whole string must match, as
    /// in Core Data's `MATCHES`; no anchors are needed.
    case regex(String)
    /// A named check of your own: return `nil` when the value is valid, or a message saying why not.
    /// It runs for every value, `nil` included, after the attribute's other checks pass.
    case custom(String, @Sendable (Any?) -> String?)

    public var description: String {
        switch self {
        case .range(let min, let max):
            return "range(\(min?.description ?? "-∞")...\(max?.description ?? "∞"))"
        case .length(let min, let max):
            return "length(\(min.map(String.init) ?? "0")...\(max.map(String.init) ?? "∞"))"
        case .regex(let pattern):
            return "regex(\(pattern))"
        case .custom(let name, _):
            return "custom(\(name))"
        }
    }
}

/// One end of a `.range` validation rule: a number or a date.
///
/// Integer and floating-point literals make numeric bounds, so `.range(min: 0, max: 1_000_000)` reads as
/// written; use `.date(_:)` for dates and `.decimal(_:)` for exact decimal bounds.
public enum ValidationBound: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral
{
    /// An integer bound, compared exactly with integer values.
    case integer(Int64)
    /// A floating-point bound.
    case double(Double)
    /// An exact decimal bound, compared as `Decimal`.
    case decimal(Decimal)
    /// A date bound, for `.date` attributes.
    case date(Date)

    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }

    /// Whether the bound is a number (any case but `.date`).
    public var isNumeric: Bool {
        if case .date = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .decimal(let d): return d.description
        case .date(let d): return SafeDescription.iso8601(d)
        }
    }

    /// How a validated value compares with this bound, or `nil` when they are not comparable (a date
    /// against a number). Integers compare exactly; a decimal on either side compares as `Decimal`.
    func compare(_ value: Any) -> ComparisonResult? {
        switch self {
        case .date(let bound):
            guard let date = value as? Date else { return nil }
            return date.compare(bound)
        case .integer(let bound):
            if let i = value as? any BinaryInteger, let wide = Int64(exactly: i) { return Self.order(wide, bound) }
            if let d = value as? Decimal { return Self.order(d, Decimal(bound)) }
            guard let d = Self.double(value) else { return nil }
            return Self.order(d, Double(bound))
        case .double(let bound):
            if let d = value as? Decimal {
                // `Decimal(_:)` traps on an infinite double; NaN compares as `order` has it, neither below nor equal.
                guard bound.isFinite else { return bound == .infinity ? .orderedAscending : .orderedDescending }
                return Self.order(d, Decimal(bound))
            }
            guard let d = Self.double(value) else { return nil }
            return Self.order(d, bound)
        case .decimal(let bound):
            if let d = value as? Decimal { return Self.order(d, bound) }
            if let i = value as? any BinaryInteger, let wide = Int64(exactly: i) { return Self.order(Decimal(wide), bound) }
            guard let d = Self.double(value) else { return nil }
            guard d.isFinite else { return d == -.infinity ? .orderedAscending : .orderedDescending }
            return Self.order(Decimal(d), bound)
        }
    }

    private static func double(_ value: Any) -> Double? {
        if let d = value as? Double { return d }
        if let f = value as? Float { return Double(f) }
        if let i = value as? any BinaryInteger { return Double(i) }
        return nil
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }
}
