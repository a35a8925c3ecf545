import Foundation
import Synchronization

#if !canImport(ObjectiveC)
/// The name a value transformer is registered under: Foundation's `NSValueTransformerName`, which
/// swift-corelibs-foundation lacks on Linux.
///
/// Use it with `ValueTransformer.setValueTransformer(_:forName:)`, as on Apple platforms.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    /// The name `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The name `rawValue`, as Foundation spells the initializer.
    public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// Converts a transformable attribute's value to the `Data` Granary stores, and back: Foundation's
/// `ValueTransformer`, which swift-corelibs-foundation lacks on Linux, with the same names.
///
/// Use it to port an app's named transformer (a model attribute with `valueTransformerName="MyColorTransformer"`)
/// unchanged: subclass it, override `transformedValue(_:)` (value to `Data`) and `reverseTransformedValue(_:)`
/// (`Data` to value), and register an instance with `setValueTransformer(_:forName:)` under the name the
/// model uses. Granary looks the name up each time it stores or reads a value, so registering after the
/// model is loaded works. `AttributeType.registerTransformer(named:valueType:transform:reverseTransform:)`
/// registers typed closures instead and takes precedence over a transformer of the same name.
///
/// Transformers are shared by every context and thread: a subclass restates the conformance
/// (`final class MyTransformer: ValueTransformer, @unchecked Sendable`) and must be safe to call from any
/// thread, and the values it returns from `reverseTransformedValue(_:)` are handed to any context.
open class ValueTransformer: @unchecked Sendable {
    /// A transformer; subclasses add their own state.
    public init() {}

    /// Whether `reverseTransformedValue(_:)` is implemented: a transformer that cannot reverse cannot
    /// read stored values back. Granary needs both directions.
    open class func allowsReverseTransformation() -> Bool { true }

    /// The stored form of `value`: Granary expects `Data` (or nil for nil).
    open func transformedValue(_ value: Any?) -> Any? { value }

    /// The value for its stored `Data`.
    open func reverseTransformedValue(_ value: Any?) -> Any? { value }

    private static let registered = Mutex<[String: ValueTransformer]>([:])

    /// Registers `transformer` under `name`, replacing any registered before; nil removes the registration.
    public class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        registered.withLock { $0[name.rawValue] = transformer }
    }

    /// The names of the registered transformers.
    public class func valueTransformerNames() -> [NSValueTransformerName] {
        registered.withLock { $0.keys.sorted().map(NSValueTransformerName.init(rawValue:)) }
    }

    /// The transformer registered under `name`, if any.
    public class func valueTransformer(forName name: NSValueTransformerName) -> ValueTransformer? {
        registered.withLock { $0[name.rawValue] }
    }
}
#endif

extension TransformableRegistry {
    /// A codec that calls the `ValueTransformer` registered under `name`, or nil when there is none.
    static func foundationTransformer(named name: String) -> Codec? {
        #if canImport(ObjectiveC)
        guard let transformer = Foundation.ValueTransformer(forName: NSValueTransformerName(name)) else { return nil }
        #else
        guard let transformer = ValueTransformer.valueTransformer(forName: NSValueTransformerName(name)) else { return nil }
        #endif
        #if canImport(ObjectiveC)
        // Foundation's transformers are not `Sendable`; registering one promises it is safe to call from any thread.
        nonisolated(unsafe) let shared = transformer
        #else
        let shared = transformer
        #endif
        return Codec(
            encode: { value in
                switch shared.transformedValue(value) {
                case let data as Data: return Array(data)
                case let bytes as [UInt8]: return bytes
                case nil: throw TransformerFailure(reason: "value transformer '\(name)' transformed a value to nil")
                case let other?: throw TransformerFailure(reason: "value transformer '\(name)' returned a \(type(of: other)), not Data")
                }
            },
            decode: { bytes in
                guard type(of: shared).allowsReverseTransformation() else {
                    throw TransformerFailure(reason: "value transformer '\(name)' does not allow reverse transformation")
                }
                guard let value = shared.reverseTransformedValue(Data(bytes)) else {
                    throw TransformerFailure(reason: "value transformer '\(name)' could not read the stored data")
                }
                return assumeSendable(value)
            })
    }

    /// `value` as `any Sendable`, which a dynamic cast cannot give (`Sendable` is a marker protocol): a
    /// transformer's untyped result is handed to contexts on other threads, as registering it promised
    /// is safe. Both existentials have the same layout (no witness table).
    private static func assumeSendable(_ value: Any) -> any Sendable {
        withUnsafePointer(to: value) { pointer in
            pointer.withMemoryRebound(to: (any Sendable).self, capacity: 1) { $0.pointee }
        }
    }
}

/// Why a registered transformer could not convert a value; surfaces as `ValueConversionError.transformFailed`.
struct TransformerFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
