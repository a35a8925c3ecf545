/// Why a JSON import stopped or skipped an element, and where: the entity, the element's index in the
/// array, the (dotted) key and a short rendering of the offending value.
///
/// Values are rendered to at most ``ParsingError/valuePreviewLimit`` characters, so that an error about
/// a 10 MB string stays readable and cheap.
public struct ParsingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Equatable, Sendable {
        /// The value at `key` cannot be turned into the property's type (`"abc"` or `3.7` into an `Int`).
        case unconvertible(expected: String)
        /// The object has no ID at its `jsonKey` (absent or `null`).
        case missingID
        /// The ID at `jsonKey` cannot be turned into the entity's ID type.
        case invalidID(expected: String)
        /// An element of the array (or a nested relationship value) is not a JSON object or ID.
        case notAnObject
        /// The data is not JSON, or its top level is neither an object nor an array.
        case invalidJSON(String)
        /// Nested objects go deeper than the limit (a guard against runaway recursion).
        case nestingTooDeep(limit: Int)
        /// The context given to a `parse` call already had unsaved changes: the call refuses, because on
        /// failure it rolls the context back and must not discard someone else's work.
        case contextHasUnsavedChanges
        /// The class is bound to no entity of the context's model.
        case unknownEntity
    }

    /// The longest value rendering an error carries.
    public static let valuePreviewLimit = 120

    public var reason: Reason
    /// The entity being imported when the error happened (the nested one for a nested object).
    public var entity: String
    /// The index of the element in the array given to `parse`, when the error concerns one element.
    public var index: Int?
    /// The dotted key of the offending value, from the element's top level (`"address.zip"`).
    public var key: String?
    /// The offending value, shortened to ``valuePreviewLimit`` characters.
    public var value: String?

    public init(_ reason: Reason, entity: String, index: Int? = nil, key: String? = nil, value: Any? = nil) {
        self.reason = reason
        self.entity = entity
        self.index = index
        self.key = key
        self.value = value.map(Self.preview)
    }

    static func preview(_ value: Any) -> String {
        let text: String
        if let s = value as? String {
            // Only the prefix is rendered: describing a 10 MB string would copy it.
            let head = s.prefix(valuePreviewLimit)
            return head.count < s.count ? "\"\(head)…\" (\(s.utf8.count) bytes)" : "\"\(s)\""
        }
        text = String(describing: value)
        return text.count > valuePreviewLimit ? String(text.prefix(valuePreviewLimit)) + "…" : text
    }

    public var description: String {
        var where_ = "\(entity)"
        if let index { where_ += " element \(index)" }
        if let key { where_ += " key \"\(key)\"" }
        let what: String
        switch reason {
        case .unconvertible(let expected): what = "cannot convert \(value ?? "the value") to \(expected)"
        case .missingID: what = "no ID"
        case .invalidID(let expected): what = "ID \(value ?? "") is not a \(expected)"
        case .notAnObject: what = "\(value ?? "the value") is not a JSON object"
        case .invalidJSON(let detail): what = "invalid JSON: \(detail)"
        case .nestingTooDeep(let limit): what = "nested objects deeper than \(limit)"
        case .contextHasUnsavedChanges: what = "the context has unsaved changes"
        case .unknownEntity: what = "the class is bound to no entity of the context's model"
        }
        return "\(where_): \(what)"
    }
}
