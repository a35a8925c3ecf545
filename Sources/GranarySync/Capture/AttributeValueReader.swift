import Foundation
import Granary
import GranaryStorage

/// Reads an attribute of a managed object as the `SyncValue` sent for it (M15): exact, and for
/// transformable attributes the bytes the store holds rather than the decoded value, so that a device
/// without the value's type still passes it on unchanged.
enum AttributeValueReader {
    /// The value of `attribute` in `object`; nil for a nil value.
    /// - Throws: `SyncError.storeRead` naming the attribute when the object cannot be read or its value
    ///   has no storage form.
    static func value(of attribute: AttributeDescription, in object: ManagedObject) throws(SyncError) -> SyncValue? {
        let swiftValue: Any?
        do { swiftValue = try object.value(forKey: attribute.name) } catch {
            throw .storeRead("\(attribute.qualifiedName) of \(object.objectID): \(error)")
        }
        // Values whose Swift form is more exact than their column: a Float is stored as a Double (which
        // holds it exactly), a Decimal and a URL as their text.
        switch (attribute.type, swiftValue) {
        case let (.float, value as Float): return .float(value)
        case let (.decimal, value as Decimal): return .decimal(value)
        case let (.uri, value as URL): return .uri(value)
        default: break
        }
        let stored: Value
        do { stored = try attribute.storageValue(for: swiftValue) } catch {
            throw .storeRead("\(attribute.qualifiedName) of \(object.objectID) has no stored form: \(error)")
        }
        return try value(stored, of: attribute, object: object)
    }

    private static func value(_ stored: Value, of attribute: AttributeDescription,
                              object: ManagedObject) throws(SyncError) -> SyncValue? {
        func unexpected() -> SyncError {
            .storeRead("\(attribute.qualifiedName) of \(object.objectID) is stored as \(stored), not as a \(attribute.type)")
        }
        if case .null = stored { return nil }
        switch (attribute.type, stored) {
        case let (.integer16, .int(value)), let (.integer32, .int(value)), let (.integer64, .int(value)): return .integer(value)
        case let (.double, .double(value)): return .double(value)
        case let (.float, .double(value)): return .float(Float(value))
        case let (.decimal, .string(text)):
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { throw unexpected() }
            return .decimal(value)
        case let (.boolean, .bool(value)): return .boolean(value)
        case let (.string, .string(value)): return .string(value)
        case let (.date, .date(value)): return .date(value)
        case let (.binaryData, .bytes(bytes)), let (.transformable, .bytes(bytes)): return .data(Data(bytes))
        case let (.uuid, .uuid(value)): return .uuid(value)
        case let (.uri, .string(text)):
            guard let url = URL(string: text) else { throw unexpected() }
            return .uri(url)
        default: throw unexpected()
        }
    }
}
