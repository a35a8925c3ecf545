import Foundation
import Granary

/// One JSON object being imported into one managed object: `map["key"]` (dotted paths allowed) gives the
/// value at a key for the `<-` operator.
///
/// A key is *absent* when the object, or an intermediate of a dotted path, does not have it — an
/// intermediate that is not an object counts as absent (`"a.b"` on `{"a": 3}`). An explicit `null` is
/// not absent.
public final class MappingValues {
    /// The JSON object being mapped.
    public let json: [String: Any]
    /// The context the object lives in (relationship targets are found or created there).
    public var context: ManagedObjectContext { session.context }
    let session: ParsingSession
    /// The dotted key of this object from the top-level element (`"address."`), for error messages.
    let keyPrefix: String
    let entityName: String

    init(json: [String: Any], session: ParsingSession, keyPrefix: String, entityName: String) {
        self.json = json
        self.session = session
        self.keyPrefix = keyPrefix
        self.entityName = entityName
    }

    /// A map over a JSON object outside a `parse` call, for reading values with `<-` into variables of
    /// your own; relationship targets it names are found or created in `context`.
    public convenience init(json: [String: Any], context: ManagedObjectContext) {
        self.init(json: json, session: ParsingSession(context: context), keyPrefix: "", entityName: "JSON")
    }

    /// The value at a key or dotted path.
    public subscript(key: String) -> MappedValue {
        MappedValue(key: key, lookup: JSONLookup(json, key), map: self)
    }

    /// Whether the key (or dotted path) is present, `null` included.
    public func isKeyPresent(_ key: String) -> Bool { self[key].isKeyPresent }

    /// Runs `block` with the value when the key is present (`null` included).
    public func keyExists(_ key: String, _ block: (MappedValue) throws -> Void) rethrows {
        let value = self[key]
        if value.isKeyPresent { try block(value) }
    }

    func error(_ reason: ParsingError.Reason, key: String, value: Any?) -> ParsingError {
        ParsingError(reason, entity: entityName, key: keyPrefix + key, value: value)
    }
}

/// What a key holds in a JSON object.
enum JSONLookup {
    case absent
    case null
    case value(Any)

    init(_ json: [String: Any], _ key: String) {
        guard key.contains(".") else {
            self = JSONLookup(json[key])
            return
        }
        var current: Any = json
        for part in key.split(separator: ".", omittingEmptySubsequences: false) {
            guard let object = current as? [String: Any], let next = object[String(part)] else {
                self = .absent
                return
            }
            current = next
        }
        self = JSONLookup(current)
    }

    private init(_ found: Any?) {
        switch found {
        case .none: self = .absent
        case .some(let v) where v is NSNull: self = .null
        case .some(let v): self = .value(v)
        }
    }
}


/// The value at one key of a JSON object, as `map["key"]` returns it: the right side of `<-`.
public struct MappedValue {
    /// The key (or dotted path) as given.
    public let key: String
    let lookup: JSONLookup
    let map: MappingValues

    /// Whether the key is present, `null` included.
    public var isKeyPresent: Bool { if case .absent = lookup { false } else { true } }
    /// Whether the key holds an explicit `null`.
    public var isNull: Bool { if case .null = lookup { true } else { false } }
    /// The raw JSON value (`nil` when absent or `null`).
    public var value: Any? { if case .value(let v) = lookup { v } else { nil } }

    /// Runs `block` with the value when the key is present (`null` included).
    public func keyExists(_ block: (MappedValue) throws -> Void) rethrows {
        if isKeyPresent { try block(self) }
    }

    func unconvertible<T>(_ type: T.Type, _ value: Any) -> ParsingError {
        map.error(.unconvertible(expected: String(describing: type)), key: key, value: value)
    }
}
