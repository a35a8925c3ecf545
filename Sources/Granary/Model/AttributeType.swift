import Foundation

/// The type of an attribute's values, as Core Data's `NSAttributeDescription.AttributeType` names them.
///
/// Each type knows the storage column it maps to (`columnType`) and converts between the Swift values an
/// application sets and the engine's `Value`s. Use it when declaring attributes, and in the store layer
/// to turn rows into attribute values and back.
///
/// | Type | Swift values accepted | Swift value returned | Column |
/// |---|---|---|---|
/// | `.integer16/32/64` | any `BinaryInteger` that fits | `Int16`/`Int32`/`Int64` | `.int` |
/// | `.double` | `Double`, `Float`, exactly representable integers | `Double` | `.double` |
/// | `.float` | `Float`, `Double` within `Float`'s range, exactly representable integers | `Float` | `.double` |
/// | `.decimal` | `Decimal` (not NaN), integers, finite `Double` (by its shortest description) | `Decimal` | `.string` |
/// | `.boolean` | `Bool` | `Bool` | `.bool` |
/// | `.string` | `String`, `Substring` | `String` | `.string` |
/// | `.date` | `Date` | `Date` | `.date` |
/// | `.binaryData` | `Data`, `[UInt8]`, `ArraySlice<UInt8>` | `Data` | `.bytes` |
/// | `.uuid` | `UUID` | `UUID` | `.uuid` |
/// | `.uri` | `URL` | `URL` | `.string` |
/// | `.transformable` | what its codec takes (see below) | what its codec returns | `.bytes` |
/// | `.undefined` | anything (transient attributes only) | the value set | none: never stored |
///
/// A `.transformable` type's name selects its codec each time a value is stored or read (never when the
/// model loads): a `Codable` type declared with `.transformable(_:name:)` is stored as JSON; a transformer
/// registered with `registerTransformer(named:valueType:transform:reverseTransform:)` or as a
/// `ValueTransformer` under the name converts to and from `Data`; and `secureUnarchiveFromData` (or the
/// name of a property-list class such as `NSArray` or `[String]`) stores property-list values as the keyed
/// archive Core Data's default transformer writes.
///
/// `nil` is `.null` for every type; whether an attribute may be nil is `AttributeDescription.isOptional`.
public enum AttributeType: Sendable, Hashable, CustomStringConvertible {
    /// Signed integers of 16, 32 and 64 bits; values are range-checked on the way in.
    case integer16, integer32, integer64
    /// Binary floating point; `float` values are stored widened to `Double` and read back exactly.
    case double, float
    /// Stored exactly as the canonical `Decimal.description` string.
    case decimal
    /// Scalar types stored as the engine's column type of the same kind.
    case boolean, string, date, binaryData, uuid
    /// A `URL`, stored as its absolute string.
    case uri
    /// A value stored as bytes by the codec its name selects: a `Codable` type's JSON (declare with
    /// `.transformable(MyType.self)`, which registers the codec), a named transformer's `Data`, or the keyed
    /// archive of property-list values (`secureUnarchiveFromData`).
    case transformable(valueTypeName: String)
    /// Xcode's "Undefined" type: a transient attribute that holds any value in memory and is never stored
    /// (Core Data allows it only on transient attributes, and so does Granary). Values are kept as set,
    /// with no conversion or rule checked but "required".
    case undefined

    /// A transformable attribute holding property-list values — `String`, `Int`, `Double`, `Bool`, `Date`,
    /// `Data`, `URL`, `UUID` and arrays, dictionaries and sets of them, nested — stored as the keyed archive
    /// Core Data's default transformer (`NSSecureUnarchiveFromData`) writes.
    ///
    /// Use it for what a Core Data model declares as a transformable with no custom class; the Xcode loader
    /// gives such attributes this type. Values read back as their Swift types; a collection whose members
    /// share one scalar type reads back typed (`[String]`, `[String: Int]`, `Set<UUID>`), any other as
    /// `[any Sendable]` or `[String: any Sendable]`. Other integer types read back as `Int`, `Float` as
    /// `Double`, relative URLs as absolute ones. Set members and dictionary keys must be scalars of one type.
    /// Storing anything else throws `ValueConversionError.typeMismatch` or `.transformFailed`.
    public static let secureUnarchiveFromData: AttributeType = .transformable(valueTypeName: KeyedArchive.transformerName)

    /// A `.transformable` type for `T`, registering `T`'s JSON codec under `name`.
    ///
    /// Use it wherever an attribute type is expected: `Attribute("origin", .transformable(Point.self))`.
    /// The name defaults to `String(reflecting: T.self)` (module-qualified); pass a fixed name when the
    /// type may move between modules, because the name is part of the model's version hash.
    public static func transformable<T: Codable & Sendable>(_ type: T.Type, name: String? = nil) -> AttributeType {
        let name = name ?? String(reflecting: type)
        TransformableRegistry.shared.register(type, name: name)
        return .transformable(valueTypeName: name)
    }

    /// Registers the transformer of a transformable type `name`: `transform` turns a value into the `Data`
    /// Granary stores, `reverseTransform` turns that `Data` back into the value.
    ///
    /// Use it for a model's named value transformer (`valueTransformerName="MyColorTransformer"`) or a custom
    /// class Granary cannot archive (`customClassName="UIColor"`): register under that name, before or after
    /// loading the model — the name is looked up each time a value is stored or read. It replaces a codec
    /// registered under the same name and takes precedence over a `ValueTransformer` of that name. Errors
    /// the closures throw surface as `ValueConversionError.transformFailed`; a value that is not a `Value`
    /// is refused with `.typeMismatch`.
    public static func registerTransformer<Value: Sendable>(
        named name: String,
        valueType: Value.Type = Value.self,
        transform: @escaping @Sendable (Value) throws -> Data,
        reverseTransform: @escaping @Sendable (Data) throws -> Value
    ) {
        let codec = TransformableRegistry.Codec(
            encode: { value in
                guard let typed = value as? Value else { return nil }
                return Array(try transform(typed))
            },
            decode: { bytes in try reverseTransform(Data(bytes)) })
        TransformableRegistry.shared.register(codec, name: name)
    }

    /// Whether values of the transformable type `name` can be stored and read now: a codec or transformer
    /// is registered under it, or it names the keyed archive of property-list values.
    public static func isTransformableTypeRegistered(_ name: String) -> Bool {
        TransformableRegistry.shared.resolve(name) != nil
    }

    /// The engine column type that holds values of this attribute type.
    public var columnType: ColumnType {
        switch self {
        case .integer16, .integer32, .integer64: return .int
        case .double, .float: return .double
        case .decimal, .string, .uri: return .string
        case .boolean: return .bool
        case .date: return .date
        case .binaryData, .transformable: return .bytes
        case .uuid: return .uuid
        // Never used: an undefined attribute is transient, and transient attributes have no column.
        case .undefined: return .bytes
        }
    }

    /// Whether values compare as numbers: the types a `.range` rule with numeric bounds applies to.
    public var isNumeric: Bool {
        switch self {
        case .integer16, .integer32, .integer64, .double, .float, .decimal: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .integer16: return "integer16"
        case .integer32: return "integer32"
        case .integer64: return "integer64"
        case .double: return "double"
        case .float: return "float"
        case .decimal: return "decimal"
        case .boolean: return "boolean"
        case .string: return "string"
        case .date: return "date"
        case .binaryData: return "binaryData"
        case .uuid: return "uuid"
        case .uri: return "uri"
        case .transformable(let name): return "transformable(\(name))"
        case .undefined: return "undefined"
        }
    }

    // MARK: Swift value to storage

    /// The storage value for a Swift value of this type.
    ///
    /// Use it when writing an attribute into a row; `nil` (also a nil wrapped in `Any`) becomes `.null`.
    /// - Throws: `ValueConversionError.typeMismatch` for a Swift type this attribute type does not accept,
    ///   `.outOfRange` for a value that does not fit (70000 for `.integer16`),
    ///   `.unregisteredTransformableType` or `.transformFailed` for transformable values.
    public func storageValue(for value: Any?) throws(ValueConversionError) -> Value {
        guard let value else { return .null }
        if let converted = try convert(value) { return converted }
        // A nil or value boxed in an Optional inside `Any` (an `Int?` passed as `Any`): look through it.
        if let boxed = value as? any OptionalBox {
            guard let inner = boxed.unboxed else { return .null }
            return try storageValue(for: inner)
        }
        throw .typeMismatch(attribute: nil, type: self, valueType: String(describing: Swift.type(of: value)))
    }

    /// Whether `value` is already exactly the type's own Swift type (what typed setters store): then it
    /// is its own canonical form, found from the box's type word without a cast.
    func holdsOwnSwiftType(_ value: Any?) -> Bool {
        switch self {
        case .string: return AnyBox.holds(value, exactly: String.self)
        case .integer64: return AnyBox.holds(value, exactly: Int64.self)
        case .integer32: return AnyBox.holds(value, exactly: Int32.self)
        case .integer16: return AnyBox.holds(value, exactly: Int16.self)
        case .double: return AnyBox.holds(value, exactly: Double.self)
        case .float: return AnyBox.holds(value, exactly: Float.self)
        case .boolean: return AnyBox.holds(value, exactly: Bool.self)
        case .date: return AnyBox.holds(value, exactly: Date.self)
        case .uuid: return AnyBox.holds(value, exactly: UUID.self)
        default: return false
        }
    }

    /// Whether `value` and the value stored at `pointer` are both of the type's own Swift type and
    /// equal, the stored one read in place: validation's test that a hook handed a value back unchanged.
    func holdsSameOwnTypeValue(_ value: Any?, at pointer: UnsafePointer<Any?>) -> Bool {
        switch self {
        case .string: return AnyBox.equal(value, at: pointer, as: String.self)
        case .integer64: return AnyBox.equal(value, at: pointer, as: Int64.self)
        case .integer32: return AnyBox.equal(value, at: pointer, as: Int32.self)
        case .integer16: return AnyBox.equal(value, at: pointer, as: Int16.self)
        case .double: return AnyBox.equal(value, at: pointer, as: Double.self)
        case .float: return AnyBox.equal(value, at: pointer, as: Float.self)
        case .boolean: return AnyBox.equal(value, at: pointer, as: Bool.self)
        case .date: return AnyBox.equal(value, at: pointer, as: Date.self)
        case .uuid: return AnyBox.equal(value, at: pointer, as: UUID.self)
        default: return false
        }
    }

    /// The storage value of a value of the type's own Swift type, read without a cast; nil for anything
    /// else (which takes `storageValue(for:)`). What a save encodes for nearly every attribute.
    func ownTypeStorageValue(_ value: Any?) -> Value? {
        switch self {
        case .string: return AnyBox.value(value, as: String.self).map { .string($0) }
        case .integer64: return AnyBox.value(value, as: Int64.self).map { .int($0) }
        case .integer32: return AnyBox.value(value, as: Int32.self).map { .int(Int64($0)) }
        case .integer16: return AnyBox.value(value, as: Int16.self).map { .int(Int64($0)) }
        case .double: return AnyBox.value(value, as: Double.self).map { .double($0) }
        case .float: return AnyBox.value(value, as: Float.self).map { .double(Double($0)) }
        case .boolean: return AnyBox.value(value, as: Bool.self).map { .bool($0) }
        case .date: return AnyBox.value(value, as: Date.self).map { .date($0) }
        case .uuid: return AnyBox.value(value, as: UUID.self).map { .uuid($0) }
        default: return nil
        }
    }

    /// The canonical Swift value for `value` when it already has the type's own Swift type (or `Int` for
    /// `.integer64`), else nil: typed setters pass such values on every write, and skipping the round
    /// trip through a storage `Value` keeps them cheap. Anything else takes `storageValue(for:)`.
    func canonicalFastPath(_ value: Any) -> (any Sendable)? {
        switch self {
        case .string: return value as? String
        case .integer64:
            if let i = value as? Int64 { return i }
            if let i = value as? Int { return Int64(i) }
            return nil
        case .integer32:
            if let i = value as? Int32 { return i }
            return nil
        case .integer16:
            if let i = value as? Int16 { return i }
            return nil
        case .double: return value as? Double
        case .float: return value as? Float
        case .boolean: return value as? Bool
        case .date: return value as? Date
        case .uuid: return value as? UUID
        default: return nil
        }
    }

    /// The storage value for `value` when it already has the type's own Swift type (or `Int` for
    /// `.integer64`), else nil: what `storageValue(for: canonicalFastPath(value))` gives, without the
    /// general conversion, for batch inserts, whose values mostly come as exactly that.
    func fastStorageValue(_ value: Any) -> Value? {
        if let own = ownTypeStorageValue(value) { return own }
        if self == .integer64, let i = value as? Int { return .int(Int64(i)) }
        return nil
    }

    /// The conversion for a value that is not an `Optional`, or `nil` when its Swift type does not fit.
    private func convert(_ value: Any) throws(ValueConversionError) -> Value? {
        switch self {
        case .integer16: return try integer(value, in: Int64(Int16.min)...Int64(Int16.max))
        case .integer32: return try integer(value, in: Int64(Int32.min)...Int64(Int32.max))
        case .integer64: return try integer(value, in: Int64.min...Int64.max)
        case .double:
            if let d = value as? Double { return .double(d) }
            if let f = value as? Float { return .double(Double(f)) }
            if let i = value as? any BinaryInteger {
                guard let d = Double(exactly: i) else { throw outOfRange(i) }
                return .double(d)
            }
            return nil
        case .float:
            if let f = value as? Float { return .double(Double(f)) }
            if let d = value as? Double {
                if d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) { throw outOfRange(d) }
                // Narrow, then widen: the stored Double is exactly the Float the app will read back.
                return .double(Double(Float(d)))
            }
            if let i = value as? any BinaryInteger {
                guard let f = Float(exactly: i) else { throw outOfRange(i) }
                return .double(Double(f))
            }
            return nil
        case .decimal:
            if let d = value as? Decimal {
                if d.isNaN { throw outOfRange(d) }
                return .string(d.description)
            }
            if let i = value as? any BinaryInteger {
                if let small = Int64(exactly: i) { return .string(Decimal(small).description) }
                if let large = UInt64(exactly: i) { return .string(Decimal(large).description) }
                throw outOfRange(i)
            }
            if let d = value as? Double {
                // The shortest description round-trips the Double and is what a person would write: 0.1, not
                // 0.1000000000000000055511151231257827.
                guard d.isFinite, let decimal = Decimal(string: String(d), locale: Self.posix) else { throw outOfRange(d) }
                return .string(decimal.description)
            }
            return nil
        case .boolean:
            if let b = value as? Bool { return .bool(b) }
            return nil
        case .string:
            if let s = value as? String { return .string(s) }
            if let s = value as? Substring { return .string(String(s)) }
            return nil
        case .date:
            if let d = value as? Date { return .date(d) }
            return nil
        case .binaryData:
            if let d = value as? Data { return .bytes(Array(d)) }
            if let b = value as? [UInt8] { return .bytes(b) }
            if let b = value as? ArraySlice<UInt8> { return .bytes(Array(b)) }
            return nil
        case .uuid:
            if let u = value as? UUID { return .uuid(u) }
            return nil
        case .uri:
            if let u = value as? URL { return .string(u.absoluteString) }
            return nil
        case .transformable(let name):
            if value is any OptionalBox { return nil }
            guard let codec = TransformableRegistry.shared.resolve(name) else {
                throw .unregisteredTransformableType(attribute: nil, typeName: name)
            }
            do {
                guard let bytes = try codec.encode(value) else { return nil }
                return .bytes(bytes)
            } catch {
                throw .transformFailed(attribute: nil, typeName: name, reason: SafeDescription.of(error))
            }
        case .undefined:
            // No storage form: objects keep such values as they are (see `ManagedObject.setValue`).
            return nil
        }
    }

    private func integer(_ value: Any, in range: ClosedRange<Int64>) throws(ValueConversionError) -> Value? {
        // Objects hold integers as `Int64`: a concrete cast is far cheaper than the existential one.
        if let wide = value as? Int64 {
            guard range.contains(wide) else { throw outOfRange(wide) }
            return .int(wide)
        }
        guard let i = value as? any BinaryInteger else { return nil }
        guard let wide = Int64(exactly: i), range.contains(wide) else { throw outOfRange(i) }
        return .int(wide)
    }

    private func outOfRange(_ value: Any) -> ValueConversionError {
        .outOfRange(attribute: nil, type: self, value: SafeDescription.of(value))
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    // MARK: Storage to Swift value

    /// The Swift value for a stored value, in the type listed for this attribute type (an `Int16` for
    /// `.integer16`, a `Data` for `.binaryData`); `.null` becomes `nil`.
    ///
    /// Use it when reading a row into attribute values.
    /// - Throws: `ValueConversionError.unexpectedStorageValue` when the value does not have this type's
    ///   column type or does not fit it (an `.int(70000)` for `.integer16`, an unparsable decimal string),
    ///   `.unregisteredTransformableType` or `.transformFailed` for transformable values.
    public func swiftValue(from value: Value) throws(ValueConversionError) -> (any Sendable)? {
        if case .null = value { return nil }
        switch (self, value) {
        case (.integer16, .int(let i)):
            if let v = Int16(exactly: i) { return v }
        case (.integer32, .int(let i)):
            if let v = Int32(exactly: i) { return v }
        case (.integer64, .int(let i)):
            return i
        case (.double, .double(let d)):
            return d
        case (.float, .double(let d)):
            return Float(d)
        case (.decimal, .string(let s)):
            if let d = Decimal(string: s, locale: Self.posix), !d.isNaN { return d }
        case (.boolean, .bool(let b)):
            return b
        case (.string, .string(let s)):
            return s
        case (.date, .date(let d)):
            return d
        case (.binaryData, .bytes(let b)):
            return Data(b)
        case (.uuid, .uuid(let u)):
            return u
        case (.uri, .string(let s)):
            if let url = URL(string: s) { return url }
        case (.transformable(let name), .bytes(let b)):
            guard let codec = TransformableRegistry.shared.resolve(name) else {
                throw .unregisteredTransformableType(attribute: nil, typeName: name)
            }
            do {
                return try codec.decode(b)
            } catch {
                throw .transformFailed(attribute: nil, typeName: name, reason: SafeDescription.of(error))
            }
        default:
            break
        }
        throw .unexpectedStorageValue(attribute: nil, type: self, value: SafeDescription.of(value))
    }
}

/// Lets a value typed `Any` that is really an `Optional` be looked through without knowing its wrapped type.
private protocol OptionalBox {
    var unboxed: Any? { get }
}

extension Optional: OptionalBox {
    fileprivate var unboxed: Any? {
        switch self {
        case .some(let wrapped): return wrapped
        case .none: return nil
        }
    }
}
