/// Reading values of known types out of `Any` boxes without dynamic casts.
///
/// An object's values live in `[Any?]`, and saves, validation and imports compare them property by
/// property. A cast (`as? String`) goes through the runtime's dynamic cast machinery each time; most
/// values are exactly the attribute's own Swift type, which these helpers recognise from the box's
/// type metadata word and read in place.
///
/// An `Any?` is three words of inline buffer and the type's metadata (a nil has none). Every type
/// asked about here is at most three words and so stored inline, at the buffer's start.
enum AnyBox {
    private static let metadataOffset = 3 * MemoryLayout<UInt>.size

    /// Whether `value` holds exactly `T` (not an optional or a subclass holding one).
    @inline(__always)
    static func holds<T>(_ value: Any?, exactly _: T.Type) -> Bool {
        let expected = unsafeBitCast(T.self as Any.Type, to: UInt.self)
        return withUnsafeBytes(of: value) { $0.load(fromByteOffset: metadataOffset, as: UInt.self) == expected }
    }

    /// The `T` in `value`, read in place, when it holds exactly `T`.
    @inline(__always)
    static func value<T>(_ value: Any?, as _: T.Type) -> T? {
        let expected = unsafeBitCast(T.self as Any.Type, to: UInt.self)
        return withUnsafeBytes(of: value) { x in
            guard x.load(fromByteOffset: metadataOffset, as: UInt.self) == expected else { return nil }
            return x.baseAddress!.assumingMemoryBound(to: T.self).pointee
        }
    }

    /// `a == b` when both hold exactly `T`, else nil.
    @inline(__always)
    static func equal<T: Equatable>(_ a: Any?, _ b: Any?, as _: T.Type) -> Bool? {
        assert(MemoryLayout<T>.size <= 3 * MemoryLayout<UInt>.size && MemoryLayout<Any?>.size == 4 * MemoryLayout<UInt>.size)
        let expected = unsafeBitCast(T.self as Any.Type, to: UInt.self)
        return withUnsafeBytes(of: a) { x in
            withUnsafeBytes(of: b) { y in
                guard x.load(fromByteOffset: metadataOffset, as: UInt.self) == expected,
                    y.load(fromByteOffset: metadataOffset, as: UInt.self) == expected
                else { return nil }
                return x.baseAddress!.assumingMemoryBound(to: T.self).pointee == y.baseAddress!.assumingMemoryBound(to: T.self).pointee
            }
        }
    }
}
