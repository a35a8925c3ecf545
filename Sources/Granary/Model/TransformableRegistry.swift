import Foundation
import Synchronization

/// The JSON codecs of the value types that `.transformable` attributes name.
///
/// An `AttributeType` is a plain enum that only carries the type's name, so the closures that encode
/// and decode it live here, keyed by that name. `AttributeType.transformable(_:)` registers as a side
/// effect of declaring the attribute, so a model written in code never has to register by hand; a model
/// whose transformable names nobody registered fails to build with `ModelError.unregisteredTransformableType`.
final class TransformableRegistry: Sendable {
    struct Codec: Sendable {
        let encode: @Sendable (Any) throws -> [UInt8]?
        let decode: @Sendable ([UInt8]) throws -> any Sendable
    }

    static let shared = TransformableRegistry()

    private let codecs = Mutex<[String: Codec]>([:])

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
        codecs.withLock { $0[name] = codec }
    }

    func codec(named name: String) -> Codec? {
        codecs.withLock { $0[name] }
    }
}
