import Foundation

/// JSON as an import holds it: typed once, when read, so that mapping a value is a switch rather than
/// a chain of dynamic casts (casting `Any` that came from `JSONSerialization` bridges `NSNumber` and
/// `NSDictionary` on every read, and cost more than everything else an import does).
enum JSONNode: Sendable {
    case null
    case bool(Bool)
    /// An integer literal that fits in 64 bits (larger ones are `double`).
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONNode])
    case object(JSONObject)
    /// A value of another type found in JSON built by hand (`[String: Any]` holding a `Date`, say), kept
    /// for conversions of the user's own.
    case other(AnyBox)

    /// Holds a value of no JSON type without widening every node to an existential.
    final class AnyBox: @unchecked Sendable {
        // @unchecked: the value comes from the caller's JSON, which an import only reads.
        let value: Any
        init(_ value: Any) { self.value = value }
    }

    /// The node for a value as `JSONSerialization` or Swift literals give it.
    init(any value: Any) {
        switch value {
        case let s as String: self = .string(s)
        case let i as Int where type(of: value) == Int.self: self = .int(Int64(i))
        case let d as Double where type(of: value) == Double.self: self = .double(d)
        case let b as Bool where type(of: value) == Bool.self: self = .bool(b)
        case let o as [String: Any]: self = .object(JSONObject(o.mapValues(JSONNode.init(any:))))
        case let a as [Any]: self = .array(a.map(JSONNode.init(any:)))
        case is NSNull: self = .null
        case let n as NSNumber: self = JSONNode(number: n)
        case let i as Int64: self = .int(i)
        case let i as Int32: self = .int(Int64(i))
        case let i as Int16: self = .int(Int64(i))
        case let i as Int8: self = .int(Int64(i))
        case let i as UInt where UInt64(i) <= UInt64(Int64.max): self = .int(Int64(i))
        case let f as Float: self = .double(Double(f))
        default: self = .other(AnyBox(value))
        }
    }

    private init(number n: NSNumber) {
        switch String(cString: n.objCType) {
        case "c", "B": self = .bool(n.boolValue)
        case "d", "f": self = .double(n.doubleValue)
        case "Q": self = n.uint64Value <= UInt64(Int64.max) ? .int(Int64(n.uint64Value)) : .double(n.doubleValue)
        default: self = .int(n.int64Value)
        }
    }

    /// The value as Foundation's JSON APIs would give it: `String`, `Int`, `Double`, `Bool`, `[Any]`,
    /// `[String: Any]`, `NSNull`; for conversions of the user's own and for error messages.
    var anyValue: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let b): return b
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .string(let s): return s
        case .array(let a): return a.map(\.anyValue)
        case .object(let o): return Dictionary(o.map { ($0.key, $0.value.anyValue) }, uniquingKeysWith: { $1 })
        case .other(let box): return box.value
        }
    }

    /// Whether this is a scalar (a bare ID can be one), not a container or null.
    var isScalar: Bool {
        switch self {
        case .bool, .int, .double, .string: true
        case .null, .array, .object, .other: false
        }
    }

    // MARK: Conversions of the built-in types

    /// An exact integer: integral doubles and numeric strings ("27", "27.0") count, 3.7 does not.
    func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        switch self {
        case .int(let i): return T(exactly: i)
        case .double(let d): return T(exactly: d)
        case .string(let s):
            if let i = Int64(s) { return T(exactly: i) }
            let t = s.trimmingCharacters(in: .whitespaces)
            if let i = Int64(t) { return T(exactly: i) }
            return Double(t).flatMap { T(exactly: $0) }
        default: return nil
        }
    }

    var double: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s): return Double(s) ?? Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

}
