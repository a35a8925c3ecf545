import Foundation
import Synchronization

/// The codecs that turn the values of `.transformable` attributes into stored bytes and back, keyed by
/// the attribute type's name.
///
/// An `AttributeType` is a plain enum that only carries the type's name, so the closures live here. A
/// name is resolved each time a value is stored or read, never when a model is loaded, so that an app may
/// register after loading its model, and a model whose transformers are missing still loads. In order:
/// 1. a codec registered with Granary: `AttributeType.transformable(_:name:)` (JSON, registered as a side
///    effect of declaring the attribute) or `AttributeType.registerTransformer(named:…)`;
/// 2. a `ValueTransformer` registered under the name with `ValueTransformer.setValueTransformer(_:forName:)`;
/// 3. the keyed archive of Core Data's default transformer, for `KeyedArchive.transformerName` and for the
///    names of the property-list classes it allows (`NSArray`, `[String]`, `Dictionary<String, Any>`…).
/// Anything else (a platform class such as `UIColor` or `CKRecordID`, an app transformer nobody
/// registered) has no codec: storing or reading a value throws `ValueConversionError.unregisteredTransformableType`.
final class TransformableRegistry: Sendable {
    struct Codec: Sendable {
        /// The bytes for a value, nil when the value's Swift type is not one the codec takes.
        let encode: @Sendable (Any) throws -> [UInt8]?
        let decode: @Sendable ([UInt8]) throws -> any Sendable
    }

    static let shared = TransformableRegistry()

    private let codecs = Mutex<[String: Codec]>([:])

    /// Registers `T`'s JSON codec under `name`.
    func register<T: Codable & Sendable>(_ type: T.Type, name: String) {
        let codec = Codec(
            encode: { value in
                guard let typed = value as? T else { return nil }
                let encoder = JSONEncoder()
                // Sorted keys make equal values encode to equal bytes, so stored values compare and index stably.
                encoder.outputFormatting = [.sortedKeys]
                return Array(try encoder.encode(typed))
            },
            decode: { bytes in
                try JSONDecoder().decode(T.self, from: Data(bytes))
            }
        )
        register(codec, name: name)
    }

    func register(_ codec: Codec, name: String) {
        codecs.withLock { $0[name] = codec }
    }

    /// The codec registered with Granary under `name`, not looking further.
    func codec(named name: String) -> Codec? {
        codecs.withLock { $0[name] }
    }

    /// The codec that stores and reads values of the transformable type `name`, resolved as the type's
    /// documentation describes, or nil when nothing handles the name.
    func resolve(_ name: String) -> Codec? {
        if let registered = codec(named: name) { return registered }
        if let transformer = Self.foundationTransformer(named: name) { return transformer }
        if PropertyListTypeName.isArchived(name) { return Self.keyedArchive }
        return nil
    }

    /// Core Data's default transformer: values of the property-list classes as a keyed archive.
    static let keyedArchive = Codec(
        encode: { value in
            do {
                guard let archived = try ArchivedValue(swift: value) else { return nil }
                return try KeyedArchive.archive(archived)
            } catch {
                throw TransformerFailure(reason: "\(error)")
            }
        },
        decode: { bytes in
            do {
                return try KeyedArchive.unarchive(bytes).swiftValue
            } catch {
                throw TransformerFailure(reason: "\(error)")
            }
        })
}
