import Foundation
import Granary

/// One JSON object being imported into one managed object: `map["key"]` (dotted paths allowed) gives the
/// value at a key for the `<-` operator.
///
/// A key is *absent* when the object, or an intermediate of a dotted path, does not have it — an
/// intermediate that is not an object counts as absent (`"a.b"` on `{"a": 3}`). An explicit `null` is
/// not absent.
public final class MappingValues {
    /// The JSON object being mapped, as Foundation's JSON APIs would give it. Built on each read: the
    /// `<-` operators do not use it.
    public var json: [String: Any] { JSONNode.object(object).anyValue as? [String: Any] ?? [:] }
    let object: JSONObject
    /// The context the object lives in (relationship targets are found or created there).
    public var context: ManagedObjectContext { session.context }
    let session: ParsingSession
    /// The dotted key of this object from the top-level element (`"address."`), for error messages.
    let keyPrefix: String
    let entityName: String

    init(object: JSONObject, session: ParsingSession, keyPrefix: String, entityName: String) {
        self.object = object
        self.session = session
        self.keyPrefix = keyPrefix
        self.entityName = entityName
    }

    /// A map over a JSON object outside a `parse` call, for reading values with `<-` into variables of
    /// your own; relationship targets it names are found or created in `context`.
    public convenience init(json: [String: Any], context: ManagedObjectContext) {
        self.init(object: JSONObject(json.mapValues(JSONNode.init(any:))), session: ParsingSession(context: context), keyPrefix: "", entityName: "JSON")
    }

    /// The value at a key or dotted path.
    public subscript(key: String) -> MappedValue {
        MappedValue(key: key, lookup: JSONLookup(object, key), map: self)
    }

    /// Whether the key (or dotted path) is present, `null` included.
    public func isKeyPresent(_ key: String) -> Bool { self[key].isKeyPresent }

    /// Runs `block` with the value when the key is present (`null` included).
    public func keyExists(_ key: String, _ block: (MappedValue) throws -> Void) rethrows {
        let value = self[key]
        if value.isKeyPresent { try block(value) }
    }

    func error(_ reason: ParsingError.Reason, key: String, value: JSONNode?) -> ParsingError {
        ParsingError(reason, entity: entityName, key: keyPrefix + key, value: value?.anyValue)
    }
}

/// What a key holds in a JSON object.
enum JSONLookup {
    case absent
    case null
    case value(JSONNode)

    init(_ object: JSONObject, _ key: String) {
        if let found = object[key] {
            self = JSONLookup(found)
            return
        }
        // A dotted path, or a key that is not there; a key that holds a dot itself was found above.
        guard key.utf8.contains(UInt8(ascii: ".")) else {
            self = .absent
            return
        }
        var current = JSONNode.object(object)
        for part in key.split(separator: ".", omittingEmptySubsequences: false) {
            guard case .object(let members) = current, let next = members[String(part)] else {
                self = .absent
                return
            }
            current = next
        }
        self = JSONLookup(current)
    }

    private init(_ found: JSONNode) {
        if case .null = found { self = .null } else { self = .value(found) }
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
    /// The raw JSON value (`nil` when absent or `null`), as Foundation's JSON APIs would give it.
    public var value: Any? { if case .value(let v) = lookup { v.anyValue } else { nil } }

    /// Runs `block` with the value when the key is present (`null` included).
    public func keyExists(_ block: (MappedValue) throws -> Void) rethrows {
        if isKeyPresent { try block(self) }
    }

    func unconvertible<T>(_ type: T.Type, _ value: JSONNode) -> ParsingError {
        map.error(.unconvertible(expected: String(describing: type)), key: key, value: value)
    }
}
