import Granary

/// The key of an object of a managed entity: its key attributes' values in order, compared as a tuple
/// (never concatenated into a string, where ("1", "23") and ("12", "3") would be one key). Values are
/// the engine's, so an `Int16` 5 in the store and an `Int` 5 in a feed are the same key.
struct FeedKey: Hashable, Sendable, CustomStringConvertible {
    var values: [Value]

    /// The key of a feed record, or the reason it has none.
    static func of(record: [String: Any], attributes: [String]) -> Result<FeedKey, KeyProblem> {
        var values: [Value] = []
        values.reserveCapacity(attributes.count)
        for name in attributes {
            guard let raw = record[name] else { return .failure(KeyProblem(text: "no value for key attribute '\(name)'")) }
            guard let value = Self.value(raw) else {
                return .failure(KeyProblem(text: "key attribute '\(name)' holds \(type(of: raw)), which is not a value a key can have"))
            }
            values.append(value)
        }
        return .success(FeedKey(values: values))
    }

    /// The key of a stored object.
    static func of(object: ManagedObject, attributes: [String]) throws -> FeedKey {
        var values: [Value] = []
        for name in attributes { values.append(Self.value(try object.value(forKey: name)) ?? .null) }
        return FeedKey(values: values)
    }

    /// The key of a stored object's dictionary (`fetchDictionaries`).
    static func of(dictionary: [String: Any], attributes: [String]) -> FeedKey {
        FeedKey(values: attributes.map { dictionary[$0].flatMap(Self.value) ?? .null })
    }

    static func value(_ raw: Any?) -> Value? {
        guard let raw else { return .null }
        if raw is NSNull { return .null }
        if let convertible = raw as? any PredicateValueConvertible { return convertible.predicateValue }
        // Optionals arrive boxed in `Any`.
        let mirror = Mirror(reflecting: raw)
        if mirror.displayStyle == .optional { return mirror.children.first.map { value($0.value) } ?? .null }
        return nil
    }

    struct KeyProblem: Error { let text: String }

    var description: String { "(" + values.map { "\($0)" }.joined(separator: ", ") + ")" }
}
