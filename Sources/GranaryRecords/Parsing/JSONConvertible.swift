import Foundation

/// A type the `<-` operator can read from a JSON value, with the lenient conversions web services need
/// (numbers from strings and back, `Bool` from `0`/`1`/`"true"`, dates from ISO 8601 or Unix seconds)
/// and none that lose information: `"abc"` or `3.7` is not an `Int`.
///
/// Conform your own types by implementing ``init(jsonValue:)``; enums with a convertible raw value need
/// nothing (the `<-` operator reads them by raw value).
public protocol JSONConvertible {
    /// The value converted from a JSON value (`String`, a number, `Bool`, `[Any]`, `[String: Any]`), or
    /// `nil` when it cannot be converted.
    init?(jsonValue: Any)
}

/// A JSON scalar as `JSONSerialization` or Swift literals hand it over: a native value or an `NSNumber`.
enum JSONScalar {
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)
    case other

    init(_ value: Any) {
        switch value {
        case let s as String: self = .string(s)
        case let i as Int where type(of: value) == Int.self: self = .int(Int64(i))
        case let d as Double where type(of: value) == Double.self: self = .double(d)
        case let b as Bool where type(of: value) == Bool.self: self = .bool(b)
        case let n as NSNumber: self = JSONScalar(number: n)
        case let i as Int64: self = .int(i)
        case let i as Int32: self = .int(Int64(i))
        case let i as Int16: self = .int(Int64(i))
        case let f as Float: self = .double(Double(f))
        default: self = .other
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

    /// An exact integer: integral doubles and numeric strings ("27", "27.0") count, 3.7 does not.
    func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        switch self {
        case .int(let i): return T(exactly: i)
        case .double(let d): return T(exactly: d)
        case .string(let s):
            let t = s.trimmingCharacters(in: .whitespaces)
            if let i = Int64(t) { return T(exactly: i) }
            return Double(t).flatMap { T(exactly: $0) }
        case .bool, .other: return nil
        }
    }

    var double: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces))
        case .bool, .other: return nil
        }
    }
}

extension Int: JSONConvertible { public init?(jsonValue: Any) { guard let v = JSONScalar(jsonValue).integer(Int.self) else { return nil }; self = v } }
extension Int16: JSONConvertible { public init?(jsonValue: Any) { guard let v = JSONScalar(jsonValue).integer(Int16.self) else { return nil }; self = v } }
extension Int32: JSONConvertible { public init?(jsonValue: Any) { guard let v = JSONScalar(jsonValue).integer(Int32.self) else { return nil }; self = v } }
extension Int64: JSONConvertible { public init?(jsonValue: Any) { guard let v = JSONScalar(jsonValue).integer(Int64.self) else { return nil }; self = v } }

extension Double: JSONConvertible {
    public init?(jsonValue: Any) {
        guard let v = JSONScalar(jsonValue).double, v.isFinite else { return nil }
        self = v
    }
}

extension Float: JSONConvertible {
    public init?(jsonValue: Any) {
        guard let d = JSONScalar(jsonValue).double, d.isFinite, abs(d) <= Double(Float.greatestFiniteMagnitude) else { return nil }
        self = Float(d)
    }
}

extension Decimal: JSONConvertible {
    public init?(jsonValue: Any) {
        switch JSONScalar(jsonValue) {
        case .int(let i): self = Decimal(i)
        // Through the shortest decimal rendering, so 0.1 becomes 0.1 and not 0.1000000000000000055….
        case .double(let d): guard d.isFinite, let v = Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")) else { return nil }; self = v
        case .string(let s):
            let t = s.trimmingCharacters(in: .whitespaces)
            // `Decimal(string:)` accepts a numeric prefix ("12abc" → 12): require the whole string to be a number.
            guard !t.isEmpty, Double(t) != nil, let v = Decimal(string: t, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            self = v
        case .bool, .other: return nil
        }
    }
}

extension Bool: JSONConvertible {
    /// `true`/`false`, the numbers 1 and 0, and the strings "true", "false", "1", "0" (any case).
    public init?(jsonValue: Any) {
        switch JSONScalar(jsonValue) {
        case .bool(let b): self = b
        case .int(let i) where i == 0 || i == 1: self = i == 1
        case .double(let d) where d == 0 || d == 1: self = d == 1
        case .string(let s):
            switch s.lowercased() {
            case "true", "1": self = true
            case "false", "0": self = false
            default: return nil
            }
        default: return nil
        }
    }
}

extension String: JSONConvertible {
    /// A string, or a number in its decimal form (`42` → "42", `2.5` → "2.5"); not a bool or a container.
    public init?(jsonValue: Any) {
        switch JSONScalar(jsonValue) {
        case .string(let s): self = s
        case .int(let i): self = String(i)
        case .double(let d): self = d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        case .bool, .other: return nil
        }
    }
}

extension Date: JSONConvertible {
    /// An ISO 8601 date-time (with or without fractional seconds, any offset) or Unix seconds (a number).
    /// Other textual formats take the `(map["k"], dateFormats: [...])` form of `<-`.
    public init?(jsonValue: Any) {
        switch JSONScalar(jsonValue) {
        case .int(let i): self = Date(timeIntervalSince1970: TimeInterval(i))
        case .double(let d): guard d.isFinite else { return nil }; self = Date(timeIntervalSince1970: d)
        case .string(let s):
            if let d = try? Date(s, strategy: .iso8601) { self = d; return }
            if let d = try? Date(s, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { self = d; return }
            return nil
        case .bool, .other: return nil
        }
    }
}

extension UUID: JSONConvertible {
    public init?(jsonValue: Any) {
        guard case .string(let s) = JSONScalar(jsonValue), let v = UUID(uuidString: s) else { return nil }
        self = v
    }
}

extension URL: JSONConvertible {
    public init?(jsonValue: Any) {
        guard case .string(let s) = JSONScalar(jsonValue), !s.isEmpty, let v = URL(string: s) else { return nil }
        self = v
    }
}

extension Data: JSONConvertible {
    /// Base64 text (standard alphabet, padding as JSON services send it).
    public init?(jsonValue: Any) {
        guard case .string(let s) = JSONScalar(jsonValue), let v = Data(base64Encoded: s) else { return nil }
        self = v
    }
}

extension Array: JSONConvertible where Element: JSONConvertible {
    /// A JSON array whose every element converts; one bad element makes the whole array unconvertible.
    public init?(jsonValue: Any) {
        guard let array = jsonValue as? [Any] else { return nil }
        var result: [Element] = []
        result.reserveCapacity(array.count)
        for item in array {
            guard let v = Element(jsonValue: item) else { return nil }
            result.append(v)
        }
        self = result
    }
}

extension Dictionary: JSONConvertible where Key == String, Value: JSONConvertible {
    /// A JSON object whose every value converts.
    public init?(jsonValue: Any) {
        guard let object = jsonValue as? [String: Any] else { return nil }
        var result: [String: Value] = [:]
        result.reserveCapacity(object.count)
        for (k, item) in object {
            guard let v = Value(jsonValue: item) else { return nil }
            result[k] = v
        }
        self = result
    }
}
