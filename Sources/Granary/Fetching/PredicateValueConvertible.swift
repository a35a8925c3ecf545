import Foundation
import GranaryStorage

/// A Swift value that can stand as a constant in a predicate, and the `Value` it becomes.
///
/// The mapping is the one stored rows use (see `FieldKind`): every integer type → `.int` (a `UInt`/`UInt64`
/// above `Int64.max` has no `Value` and makes lowering fail), `Double`/`Float` → `.double`, `Bool` →
/// `.bool`, `String` → `.string`, `Date` → `.date`, `UUID` → `.uuid`, `Data` → `.bytes`, `Decimal` →
/// `.string(description)`, `URL` → `.string(absoluteString)`, `RowReference` → `.reference`, `nil` →
/// `.null`. Conform your own types to use them with `FetchPredicate` and `#Predicate` lowering.
public protocol PredicateValueConvertible {
    /// The predicate constant for this value, or `nil` when it has none.
    var predicateValue: Value? { get }
}

extension Int: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension Int8: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension Int16: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension Int32: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension Int64: PredicateValueConvertible { public var predicateValue: Value? { .int(self) } }
extension UInt: PredicateValueConvertible { public var predicateValue: Value? { Int64(exactly: self).map(Value.int) } }
extension UInt8: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension UInt16: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension UInt32: PredicateValueConvertible { public var predicateValue: Value? { .int(Int64(self)) } }
extension UInt64: PredicateValueConvertible { public var predicateValue: Value? { Int64(exactly: self).map(Value.int) } }
extension Double: PredicateValueConvertible { public var predicateValue: Value? { .double(self) } }
extension Float: PredicateValueConvertible { public var predicateValue: Value? { .double(Double(self)) } }
extension Bool: PredicateValueConvertible { public var predicateValue: Value? { .bool(self) } }
extension String: PredicateValueConvertible { public var predicateValue: Value? { .string(self) } }
extension Substring: PredicateValueConvertible { public var predicateValue: Value? { .string(String(self)) } }
extension Date: PredicateValueConvertible { public var predicateValue: Value? { .date(self) } }
extension UUID: PredicateValueConvertible { public var predicateValue: Value? { .uuid(self) } }
extension Data: PredicateValueConvertible { public var predicateValue: Value? { .bytes([UInt8](self)) } }
extension Decimal: PredicateValueConvertible { public var predicateValue: Value? { .string(description) } }
extension URL: PredicateValueConvertible { public var predicateValue: Value? { .string(absoluteString) } }
extension RowReference: PredicateValueConvertible { public var predicateValue: Value? { .reference(self) } }
extension Value: PredicateValueConvertible { public var predicateValue: Value? { self } }

extension Optional: PredicateValueConvertible where Wrapped: PredicateValueConvertible {
    public var predicateValue: Value? {
        switch self {
        case .none: return .null
        case .some(let wrapped): return wrapped.predicateValue
        }
    }
}

/// Conversions of untyped values (format arguments, `#Predicate` constants) to predicate constants.
enum PredicateValues {
    /// The constant for a single value, or `nil` when it has none (a collection is not a single value).
    static func value(of any: Any) -> Value? {
        // The cast first: it answers every constant of a convertible type, optionals of one included,
        // where the reflection below costs more than the rest of lowering a comparison.
        if let convertible = LoweringRoles.of(type(of: any)).convertible { return convertible.predicateValue(of: any) }
        if isNil(any) { return .null }
        if let unwrapped = unwrapOptional(any) { return value(of: unwrapped) }
        return nil
    }

    /// The IDs of a managed object or object ID, or of a non-empty collection of them, or `nil` for
    /// anything else: what a predicate compares by identity.
    static func objectIDs(of any: Any) -> [ManagedObjectID]? {
        if let id = any as? ManagedObjectID { return [id] }
        if let object = any as? ManagedObject { return [object.objectID] }
        if let unwrapped = unwrapOptional(any) { return objectIDs(of: unwrapped) }
        if any is String || any is Data || any is Substring { return nil }
        guard let sequence = any as? any Sequence else { return nil }
        var ids: [ManagedObjectID] = []
        for element in elements(sequence) {
            if let id = element as? ManagedObjectID {
                ids.append(id)
            } else if let object = element as? ManagedObject {
                ids.append(object.objectID)
            } else {
                return nil
            }
        }
        return ids.isEmpty ? nil : ids
    }

    /// The constants of a collection (an array, set or other sequence of convertible values), or `nil`.
    static func values(of any: Any) -> [Value]? {
        if let unwrapped = unwrapOptional(any) { return values(of: unwrapped) }
        if any is String || any is Data || any is Substring { return nil }
        guard let sequence = any as? any Sequence else { return nil }
        var out: [Value] = []
        for element in elements(sequence) {
            guard let v = value(of: element) else { return nil }
            out.append(v)
        }
        return out
    }

    /// The bounds of a `ClosedRange` (`isClosed`) or `Range` of convertible values, or `nil`.
    static func bounds(of any: Any) -> (lower: Value, upper: Value, isClosed: Bool)? {
        let name = String(describing: type(of: any))
        let isClosed: Bool
        if name.hasPrefix("ClosedRange<") { isClosed = true } else if name.hasPrefix("Range<") { isClosed = false } else { return nil }
        let children = Dictionary(Mirror(reflecting: any).children.compactMap { c in c.label.map { ($0, c.value) } },
                                  uniquingKeysWith: { a, _ in a })
        guard let lo = children["lowerBound"].flatMap(value(of:)), let hi = children["upperBound"].flatMap(value(of:)) else { return nil }
        return (lo, hi, isClosed)
    }

    static func isNil(_ any: Any) -> Bool {
        let mirror = Mirror(reflecting: any)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    private static func unwrapOptional(_ any: Any) -> Any? {
        let mirror = Mirror(reflecting: any)
        guard mirror.displayStyle == .optional, let first = mirror.children.first else { return nil }
        return first.value
    }

    private static func elements<S: Sequence>(_ s: S) -> [Any] { s.map { $0 as Any } }
}
