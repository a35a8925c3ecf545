import Foundation

/// A value of one of the property-list classes Core Data's default transformer
/// (`NSSecureUnarchiveFromData`) allows, between its Swift form and its keyed archive.
///
/// Values surface to Swift as their native types: `String`; `Int`, `Double` and `Bool` for `NSNumber`
/// (an integer, a real and a Boolean stay apart, as the archive keeps them apart); `Date`, `Data`, `URL`,
/// `UUID`; arrays, dictionaries and sets of those, nested freely. A collection whose members all have the
/// same scalar type comes back typed (`[String]`, `[String: Int]`, `Set<UUID>`); any other array or
/// dictionary comes back as `[any Sendable]` / `[K: any Sendable]`, which `as? [[String]]` and the like
/// cast further. Set members and dictionary keys are scalars of one type, because Swift can only hold
/// hashable values of one type in a `Set` or as keys without losing `Sendable`. Values of other Swift types
/// that archive as the same class read back in the canonical one: every integer type as `Int`, `Float` as
/// `Double`, `Substring` as `String`, and a URL relative to a base as its absolute URL.
indirect enum ArchivedValue: Hashable, Sendable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case url(URL)
    case uuid(UUID)
    case array([ArchivedValue])
    case dictionary([ArchivedValue: ArchivedValue])
    case set(Set<ArchivedValue>)

    /// Why a value cannot be archived or an archive cannot be read back.
    struct Problem: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    // MARK: Swift values

    /// The archived form of a Swift value, or nil when its type is not one of the property-list types.
    /// - Throws: `Problem` for a value of a supported type that cannot be stored: an integer beyond 64
    ///   bits, a set or dictionary key that is not a scalar, or one mixing scalar types.
    init?(swift value: Any) throws(Problem) {
        switch value {
        case let s as String: self = .string(s)
        case let s as Substring: self = .string(String(s))
        case let b as Bool: self = .bool(b)
        case let d as Double: self = .double(d)
        case let f as Float: self = .double(Double(f))
        case let i as any BinaryInteger:
            guard let wide = Int64(exactly: i) else { throw Problem(reason: "\(i) does not fit a 64-bit integer") }
            self = .int(wide)
        case let d as Date: self = .date(d)
        case let d as Data: self = .data(d)
        case let u as URL: self = .url(u)
        case let u as UUID: self = .uuid(u)
        case let set as Set<AnyHashable>:
            var members = Set<ArchivedValue>()
            for member in set { members.insert(try Self.key(member.base, in: "set member")) }
            try Self.checkOneScalarType(members, in: "set members")
            self = .set(members)
        case let dictionary as [AnyHashable: Any]:
            var entries: [ArchivedValue: ArchivedValue] = [:]
            for (key, item) in dictionary {
                entries[try Self.key(key.base, in: "dictionary key")] = try Self.member(item)
            }
            try Self.checkOneScalarType(Set(entries.keys), in: "dictionary keys")
            self = .dictionary(entries)
        case let array as [Any]:
            var items: [ArchivedValue] = []
            items.reserveCapacity(array.count)
            for item in array { items.append(try Self.member(item)) }
            self = .array(items)
        default:
            return nil
        }
    }

    private static func member(_ value: Any) throws(Problem) -> ArchivedValue {
        guard let archived = try ArchivedValue(swift: value) else {
            throw Problem(reason: "a \(type(of: value)) is not a property-list value (String, number, Date, Data, URL, UUID, or a collection of them)")
        }
        return archived
    }

    private static func key(_ value: Any, in role: String) throws(Problem) -> ArchivedValue {
        let archived = try member(value)
        guard archived.scalarKind != nil else { throw Problem(reason: "a \(role) must be a String, number, Date, Data, URL or UUID") }
        return archived
    }

    private static func checkOneScalarType(_ values: Set<ArchivedValue>, in role: String) throws(Problem) {
        let kinds = Set(values.compactMap(\.scalarKind))
        guard kinds.count <= 1 else {
            throw Problem(reason: "\(role) mix \(kinds.sorted().joined(separator: " and ")): Swift can hold them only as one type")
        }
    }

    /// The scalar's type name, or nil for a collection.
    var scalarKind: String? {
        switch self {
        case .string: return "String"
        case .int: return "Int"
        case .double: return "Double"
        case .bool: return "Bool"
        case .date: return "Date"
        case .data: return "Data"
        case .url: return "URL"
        case .uuid: return "UUID"
        case .array, .dictionary, .set: return nil
        }
    }

    /// The value as Swift code reads it (see the type's documentation for the forms).
    var swiftValue: any Sendable {
        switch self {
        case .string(let s): return s
        case .int(let i): return Int(i)
        case .double(let d): return d
        case .bool(let b): return b
        case .date(let d): return d
        case .data(let d): return d
        case .url(let u): return u
        case .uuid(let u): return u
        case .array(let items):
            let values = items.map(\.swiftValue)
            return Self.typedArray(values) ?? values
        case .dictionary(let entries):
            return Self.typedDictionary(entries)
        case .set(let members):
            return Self.typedSet(members.map(\.swiftValue))
        }
    }

    private static func typedArray(_ values: [any Sendable]) -> (any Sendable)? {
        guard !values.isEmpty else { return nil }
        func all<T: Sendable>(_ type: T.Type) -> [T]? {
            var typed: [T] = []
            typed.reserveCapacity(values.count)
            for value in values {
                guard let t = value as? T else { return nil }
                typed.append(t)
            }
            return typed
        }
        // Bool first: only a Bool casts to Bool, and an Int never casts to Double in Swift.
        if let v = all(Bool.self) { return v }
        if let v = all(String.self) { return v }
        if let v = all(Int.self) { return v }
        if let v = all(Double.self) { return v }
        if let v = all(Date.self) { return v }
        if let v = all(Data.self) { return v }
        if let v = all(URL.self) { return v }
        if let v = all(UUID.self) { return v }
        return nil
    }

    private static func typedSet(_ values: [any Sendable]) -> any Sendable {
        if values.isEmpty { return Set<String>() }
        func all<T: Hashable & Sendable>(_ type: T.Type) -> Set<T>? {
            var typed = Set<T>()
            for value in values {
                guard let t = value as? T else { return nil }
                typed.insert(t)
            }
            return typed
        }
        if let v = all(Bool.self) { return v }
        if let v = all(String.self) { return v }
        if let v = all(Int.self) { return v }
        if let v = all(Double.self) { return v }
        if let v = all(Date.self) { return v }
        if let v = all(Data.self) { return v }
        if let v = all(URL.self) { return v }
        if let v = all(UUID.self) { return v }
        // Unreachable for sets read through `init(archive:)`, which checks the members share one type.
        return values
    }

    private static func typedDictionary(_ entries: [ArchivedValue: ArchivedValue]) -> any Sendable {
        func keyed<K: Hashable & Sendable>(_ type: K.Type) -> (any Sendable)? {
            var keys: [K] = []
            var values: [any Sendable] = []
            for (key, value) in entries {
                guard let k = key.swiftValue as? K else { return nil }
                keys.append(k)
                values.append(value.swiftValue)
            }
            func typed<V: Sendable>(_ valueType: V.Type) -> [K: V]? {
                var result: [K: V] = [:]
                for (k, v) in zip(keys, values) {
                    guard let value = v as? V else { return nil }
                    result[k] = value
                }
                return result
            }
            if !values.isEmpty {
                if let d = typed(Bool.self) { return d }
                if let d = typed(String.self) { return d }
                if let d = typed(Int.self) { return d }
                if let d = typed(Double.self) { return d }
                if let d = typed(Date.self) { return d }
                if let d = typed(Data.self) { return d }
                if let d = typed(URL.self) { return d }
                if let d = typed(UUID.self) { return d }
            }
            return Dictionary(uniqueKeysWithValues: zip(keys, values))
        }
        if entries.isEmpty { return [String: any Sendable]() }
        if let d = keyed(String.self) { return d }
        if let d = keyed(Int.self) { return d }
        if let d = keyed(Double.self) { return d }
        if let d = keyed(Bool.self) { return d }
        if let d = keyed(Date.self) { return d }
        if let d = keyed(Data.self) { return d }
        if let d = keyed(URL.self) { return d }
        if let d = keyed(UUID.self) { return d }
        // Unreachable for dictionaries read through `init(archive:)`, which checks the keys share one type.
        return entries.values.map(\.swiftValue)
    }
}
