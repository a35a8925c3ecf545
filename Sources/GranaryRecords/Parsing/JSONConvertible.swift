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

/// The built-in conversions, read from a ``JSONNode`` without going through `Any`.
protocol NodeConvertible {
    init?(node: JSONNode)
}

extension JSONNode {
    /// The node converted to `T`: the built-in types directly, other types through their
    /// `init(jsonValue:)`.
    func converted<T: JSONConvertible>(to _: T.Type) -> T? {
        // Metatype comparisons are pointer compares; the common types skip the conformance lookup.
        if T.self == String.self { return String(node: self) as? T }
        if T.self == Int.self { return Int(node: self) as? T }
        if T.self == Double.self { return Double(node: self) as? T }
        if T.self == Bool.self { return Bool(node: self) as? T }
        if T.self == Date.self { return Date(node: self) as? T }
        if T.self == Int64.self { return Int64(node: self) as? T }
        if T.self == Int32.self { return Int32(node: self) as? T }
        if let convertible = T.self as? any NodeConvertible.Type { return convertible.init(node: self) as? T }
        return T(jsonValue: anyValue)
    }
}

extension Int: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) { guard let v = node.integer(Int.self) else { return nil }; self = v }
}
extension Int16: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) { guard let v = node.integer(Int16.self) else { return nil }; self = v }
}
extension Int32: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) { guard let v = node.integer(Int32.self) else { return nil }; self = v }
}
extension Int64: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) { guard let v = node.integer(Int64.self) else { return nil }; self = v }
}

extension Double: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard let v = node.double, v.isFinite else { return nil }
        self = v
    }
}

extension Float: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard let d = node.double, d.isFinite, abs(d) <= Double(Float.greatestFiniteMagnitude) else { return nil }
        self = Float(d)
    }
}

extension Decimal: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        switch node {
        case .int(let i): self = Decimal(i)
        // Through the shortest decimal rendering, so 0.1 becomes 0.1 and not 0.1000000000000000055….
        case .double(let d): guard d.isFinite, let v = Decimal(string: "\(d)", locale: Locale(identifier: "en_US_POSIX")) else { return nil }; self = v
        case .string(let s):
            let t = s.trimmingCharacters(in: .whitespaces)
            // `Decimal(string:)` accepts a numeric prefix ("12abc" → 12): require the whole string to be a number.
            guard !t.isEmpty, Double(t) != nil, let v = Decimal(string: t, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
            self = v
        default: return nil
        }
    }
}

extension Bool: JSONConvertible, NodeConvertible {
    /// `true`/`false`, the numbers 1 and 0, and the strings "true", "false", "1", "0" (any case).
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        switch node {
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

extension String: JSONConvertible, NodeConvertible {
    /// A string, or a number in its decimal form (`42` → "42", `2.5` → "2.5"); not a bool or a container.
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        switch node {
        case .string(let s): self = s
        case .int(let i): self = String(i)
        case .double(let d): self = d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
        default: return nil
        }
    }
}

extension Date: JSONConvertible, NodeConvertible {
    /// An ISO 8601 date-time (with or without fractional seconds, any offset) or Unix seconds (a number).
    /// Other textual formats take the `(map["k"], dateFormats: [...])` form of `<-`.
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        switch node {
        case .int(let i): self = Date(timeIntervalSince1970: TimeInterval(i))
        case .double(let d): guard d.isFinite else { return nil }; self = Date(timeIntervalSince1970: d)
        case .string(let s):
            if let d = ISO8601Text.date(s) { self = d; return }
            if let d = try? Date(s, strategy: .iso8601) { self = d; return }
            if let d = try? Date(s, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { self = d; return }
            return nil
        default: return nil
        }
    }
}

extension UUID: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard case .string(let s) = node, let v = UUID(uuidString: s) else { return nil }
        self = v
    }
}

extension URL: JSONConvertible, NodeConvertible {
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard case .string(let s) = node, !s.isEmpty, let v = URL(string: s) else { return nil }
        self = v
    }
}

extension Data: JSONConvertible, NodeConvertible {
    /// Base64 text (standard alphabet, padding as JSON services send it).
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard case .string(let s) = node, let v = Data(base64Encoded: s) else { return nil }
        self = v
    }
}

extension Array: JSONConvertible, NodeConvertible where Element: JSONConvertible {
    /// A JSON array whose every element converts; one bad element makes the whole array unconvertible.
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard case .array(let array) = node else { return nil }
        var result: [Element] = []
        result.reserveCapacity(array.count)
        for item in array {
            guard let v = item.converted(to: Element.self) else { return nil }
            result.append(v)
        }
        self = result
    }
}

extension Dictionary: JSONConvertible, NodeConvertible where Key == String, Value: JSONConvertible {
    /// A JSON object whose every value converts.
    public init?(jsonValue: Any) { self.init(node: JSONNode(any: jsonValue)) }
    init?(node: JSONNode) {
        guard case .object(let object) = node else { return nil }
        var result: [String: Value] = [:]
        for (k, item) in object {
            guard let v = item.converted(to: Value.self) else { return nil }
            result[k] = v
        }
        self = result
    }
}
