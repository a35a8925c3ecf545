import Foundation
import GranaryStorage

/// How predicate evaluation and in-memory sorting compare values.
///
/// Values of one type compare as the storage engine's index keys do (strings by UTF-8 bytes, which is
/// Unicode scalar order; dates by time; UUIDs and bytes by their bytes; references by table then key),
/// so that what an index scan returns, and in which order, agrees with evaluating and sorting rows.
/// Integers, doubles and booleans (as 0 and 1) compare numerically and exactly with one another;
/// decimal fields (strings holding `Decimal` descriptions) compare as decimals.
enum ValueOrder {
    /// The comparison of two non-null values, or `nil` when they cannot be compared (different types,
    /// NaN, an unparsable decimal).
    static func compare(_ a: Value, _ b: Value, asDecimals: Bool) -> ComparisonResult? {
        if asDecimals {
            guard let x = decimal(a), let y = decimal(b) else { return nil }
            return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        }
        switch (a, b) {
        case (.string(let x), .string(let y)): return bytes(x.utf8, y.utf8)
        case (.date(let x), .date(let y)): return doubles(x.timeIntervalSinceReferenceDate, y.timeIntervalSinceReferenceDate)
        case (.uuid(let x), .uuid(let y)):
            return withUnsafeBytes(of: x.uuid) { xb in withUnsafeBytes(of: y.uuid) { yb in bytes(xb, yb) } }
        case (.bytes(let x), .bytes(let y)): return bytes(x, y)
        case (.reference(let x), .reference(let y)): return x < y ? .orderedAscending : y < x ? .orderedDescending : .orderedSame
        default: return numbers(a, b)
        }
    }

    /// Numeric comparison of integers, doubles and booleans, exact across `Int64` and `Double`.
    static func numbers(_ a: Value, _ b: Value) -> ComparisonResult? {
        switch (number(a), number(b)) {
        case (.int(let x)?, .int(let y)?): return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
        case (.double(let x)?, .double(let y)?): return doubles(x, y)
        case (.int(let x)?, .double(let y)?): return intDouble(x, y)
        case (.double(let x)?, .int(let y)?): return intDouble(y, x).map(reversed)
        default: return nil
        }
    }

    /// The total order in-memory sorting uses: null first, then `compare`, with NaN after every other
    /// number and values of types that cannot be compared ordered by type, as the index does.
    static func sortOrder(_ a: Value, _ b: Value, asDecimals: Bool, strings: SortKey.StringComparison) -> ComparisonResult {
        switch (a.isNull, b.isNull) {
        case (true, true): return .orderedSame
        case (true, false): return .orderedAscending
        case (false, true): return .orderedDescending
        default: break
        }
        if strings != .binary, case .string(let x) = a, case .string(let y) = b, !asDecimals {
            switch strings {
            case .caseInsensitive: return x.compare(y, options: .caseInsensitive)
            default: return x.compare(y, options: [.caseInsensitive, .diacriticInsensitive, .numeric])
            }
        }
        if let r = compare(a, b, asDecimals: asDecimals) { return r }
        let (ra, rb) = (rank(a, asDecimals), rank(b, asDecimals))
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        // Same rank but incomparable: NaNs (which sort last among numbers) or unparsable decimals.
        let (na, nb) = (isNaNOrInvalid(a, asDecimals), isNaNOrInvalid(b, asDecimals))
        if na != nb { return na ? .orderedDescending : .orderedAscending }
        if asDecimals, case .string(let x) = a, case .string(let y) = b { return bytes(x.utf8, y.utf8) }
        return .orderedSame
    }

    static func decimal(_ v: Value) -> Decimal? {
        switch v {
        case .string(let s): return Decimal(string: s, locale: Locale(identifier: "en_US_POSIX"))
        case .int(let i): return Decimal(i)
        case .double(let d): return d.isFinite ? Decimal(d) : nil
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    private enum Number { case int(Int64), double(Double) }

    private static func number(_ v: Value) -> Number? {
        switch v {
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .bool(let b): return .int(b ? 1 : 0)
        default: return nil
        }
    }

    private static func doubles(_ x: Double, _ y: Double) -> ComparisonResult? {
        if x.isNaN || y.isNaN { return nil }
        return x < y ? .orderedAscending : x > y ? .orderedDescending : .orderedSame
    }

    /// `i` against `d` without rounding `i` to a double (2^53 + 1 must not equal 2^53).
    private static func intDouble(_ i: Int64, _ d: Double) -> ComparisonResult? {
        if d.isNaN { return nil }
        if d >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if d < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)
        if i != w { return i < w ? .orderedAscending : .orderedDescending }
        let fraction = d - whole
        return fraction > 0 ? .orderedAscending : fraction < 0 ? .orderedDescending : .orderedSame
    }

    private static func bytes<A: Sequence, B: Sequence>(_ x: A, _ y: B) -> ComparisonResult where A.Element == UInt8, B.Element == UInt8 {
        var i = x.makeIterator()
        var j = y.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let p?, let q?): if p != q { return p < q ? .orderedAscending : .orderedDescending }
            }
        }
    }

    private static func reversed(_ r: ComparisonResult) -> ComparisonResult {
        r == .orderedAscending ? .orderedDescending : r == .orderedDescending ? .orderedAscending : .orderedSame
    }

    /// Type ranks in the index's tag order.
    private static func rank(_ v: Value, _ asDecimals: Bool) -> Int {
        if asDecimals, decimal(v) != nil { return 2 }
        switch v {
        case .null: return 0
        case .bool, .int, .double: return 2
        case .date: return 3
        case .string: return 4
        case .bytes: return 5
        case .uuid: return 6
        case .reference: return 7
        case .references: return 8
        }
    }

    private static func isNaNOrInvalid(_ v: Value, _ asDecimals: Bool) -> Bool {
        if asDecimals { return decimal(v) == nil }
        if case .double(let d) = v { return d.isNaN }
        if case .date(let d) = v { return d.timeIntervalSinceReferenceDate.isNaN }
        return false
    }
}

extension Value {
    /// The order a fetch sorted by an attribute returns its values in, nulls first (the store's index
    /// order; strings by UTF-8 bytes): for code that walks a sorted fetch beside values of its own.
    /// - Parameter decimal: Whether the values are a decimal attribute's (compared as decimals).
    @_spi(GranaryRecords) public static func storeOrder(_ a: Value, _ b: Value, decimal: Bool = false) -> ComparisonResult {
        ValueOrder.sortOrder(a, b, asDecimals: decimal, strings: .binary)
    }
}
