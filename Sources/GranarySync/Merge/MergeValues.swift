import Foundation
import Granary
import GranaryStorage

/// Converts between an attribute's value on a managed object and its `SyncValue` (M15), through the
/// attribute's storage value: what the store keeps is what travels, so a transformable value passes
/// through as its bytes, never decoded and re-encoded.
enum MergeValues {
    /// The sync value of `value` as `attribute` stores it.
    /// - Throws: `SyncError.dataCorruption` naming the attribute when the value does not convert (a
    ///   value of the wrong type, a transformer that fails).
    static func syncValue(of value: Any?, attribute: AttributeDescription) throws(SyncError) -> SyncValue? {
        let stored: Value
        do { stored = try attribute.storageValue(for: value) } catch {
            throw .dataCorruption("\(attribute.qualifiedName) holds a value that does not convert for storage: \(error)")
        }
        switch (attribute.type, stored) {
        case (_, .null): return nil
        case (.integer16, .int(let i)), (.integer32, .int(let i)), (.integer64, .int(let i)): return .integer(i)
        case (.double, .double(let d)): return .double(d)
        case (.float, .double(let d)): return .float(Float(d))
        case (.decimal, .string(let text)):
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw .dataCorruption("\(attribute.qualifiedName) stores '\(text.prefix(80))', which is not a decimal")
            }
            return .decimal(decimal)
        case (.boolean, .bool(let b)): return .boolean(b)
        case (.string, .string(let s)): return .string(s)
        case (.date, .date(let d)): return .date(d)
        case (.binaryData, .bytes(let b)), (.transformable, .bytes(let b)): return .data(Data(b))
        case (.uuid, .uuid(let u)): return .uuid(u)
        case (.uri, .string(let s)):
            guard let url = URL(string: s) else { throw .dataCorruption("\(attribute.qualifiedName) stores '\(s.prefix(80))', which is not a URL") }
            return .uri(url)
        default:
            throw .dataCorruption("\(attribute.qualifiedName) (\(attribute.type)) stores \(stored), which sync cannot carry")
        }
    }

    /// The value to set on an object for `value` of `attribute`.
    /// - Throws: `SyncError.dataCorruption` naming the attribute when an event holds a value of another
    ///   type than the model's (a peer with another model under the same version hash), or a data file
    ///   reference (large values travel inline in this version).
    static func objectValue(_ value: SyncValue?, attribute: AttributeDescription) throws(SyncError) -> Any? {
        guard let value else { return nil }
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
        do { return try attribute.swiftValue(from: stored) } catch {
            throw .dataCorruption("the value \(value) of \(attribute.qualifiedName) does not convert: \(error)")
        }
    }
}
