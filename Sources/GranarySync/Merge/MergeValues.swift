import Foundation
import Granary
import GranaryStorage

/// The write direction of `AttributeValueReader`: the value to set on a managed object for a `SyncValue`
/// (M15), through the attribute's storage value, so that a transformable value arrives as the bytes its
/// sender's store held, never decoded and re-encoded on the way.
enum MergeValues {
    /// The value to set on an object for `value` of `attribute`.
    /// - Throws: `SyncError.dataCorruption` naming the attribute when an event holds a value of another
    ///   type than the model's (a peer with another model under the same version hash), or a data file
    ///   reference (`MergeContextWriter` replaces those by their bytes first).
    static func objectValue(_ value: SyncValue?, attribute: AttributeDescription) throws(SyncError) -> Any? {
        guard let value else { return nil }
        let stored = try storedValue(value, attribute: attribute)
        do { return try attribute.swiftValue(from: stored) } catch {
            throw .dataCorruption("the value \(value) of \(attribute.qualifiedName) does not convert: \(error)")
        }
    }

    /// `value` as the store holds it for `attribute`.
    /// - Throws: `SyncError.dataCorruption` for a value of another type than the attribute's.
    static func storedValue(_ value: SyncValue, attribute: AttributeDescription) throws(SyncError) -> Value {
        let stored: Value
        switch (attribute.type, value) {
        case (.integer16, .integer(let i)), (.integer32, .integer(let i)), (.integer64, .integer(let i)): stored = .int(i)
        case (.double, .double(let d)): stored = .double(d)
        case (.float, .float(let f)): stored = .double(Double(f))
        case (.decimal, .decimal(let d)): stored = .string(d.description)
        case (.boolean, .boolean(let b)): stored = .bool(b)
        case (.string, .string(let s)): stored = .string(s)
        case (.date, .date(let d)): stored = .date(d)
        case (.binaryData, .data(let d)), (.transformable, .data(let d)): stored = .bytes(Array(d))
        case (.uuid, .uuid(let u)): stored = .uuid(u)
        case (.uri, .uri(let u)): stored = .string(u.absoluteString)
        default:
            throw .dataCorruption("an event gives \(attribute.qualifiedName) (\(attribute.type)) the value \(value), of another type")
        }
        return stored
    }
}
