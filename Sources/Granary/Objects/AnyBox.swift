import Foundation

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

    /// Whether `T` is one of the attribute types whose values an `Any` holds inline (at most three
    /// words, bitwise movable), so that `value(_:as:)` may be asked about it from generic code.
    @inline(__always)
    static func isInline<T>(_: T.Type) -> Bool {
        T.self == String.self || T.self == Int64.self || T.self == Int32.self || T.self == Int16.self || T.self == Double.self
            || T.self == Bool.self || T.self == Date.self || T.self == Float.self || T.self == UUID.self
    }

    /// Whether the `Any?` at `pointer` holds exactly `T`, looked at in place (no copy of the box).
    @inline(__always)
    static func holds<T>(at pointer: UnsafePointer<Any?>, exactly _: T.Type) -> Bool {
        let expected = unsafeBitCast(T.self as Any.Type, to: UInt.self)
        return UnsafeRawPointer(pointer).load(fromByteOffset: metadataOffset, as: UInt.self) == expected
    }

    /// The `T` the `Any?` at `pointer` holds, read in place: only once `holds(at:exactly:)` said it holds
    /// one, and for a `T` that `isInline` accepts. Returns a `T`, not a `T?`: generic code that makes an
    /// optional of its type parameter asks the runtime for that optional's metadata each time.
    @inline(__always)
    static func read<T>(at pointer: UnsafePointer<Any?>, as _: T.Type) -> T {
        UnsafeRawPointer(pointer).assumingMemoryBound(to: T.self).pointee
    }

    /// `value == ` the `Any?` at `pointer` when both hold exactly `T`, the stored one read in place (no
    /// copy of its box); false otherwise.
    @inline(__always)
    static func equal<T: Equatable>(_ value: Any?, at pointer: UnsafePointer<Any?>, as _: T.Type) -> Bool {
        let expected = unsafeBitCast(T.self as Any.Type, to: UInt.self)
        let stored = UnsafeRawPointer(pointer)
        guard stored.load(fromByteOffset: metadataOffset, as: UInt.self) == expected else { return false }
        return withUnsafeBytes(of: value) { x in
            x.load(fromByteOffset: metadataOffset, as: UInt.self) == expected
                && x.baseAddress!.assumingMemoryBound(to: T.self).pointee == stored.assumingMemoryBound(to: T.self).pointee
        }
    }

    /// Whether two boxes both hold nothing, or the same object of one class: a class reference is held
    /// inline, in the first word, with the class as the type. Only for boxes at least one of which holds
    /// an object or nothing (a value of another type could share the first word).
    @inline(__always)
    static func holdsSameObject(_ a: Any?, _ b: Any?) -> Bool {
        withUnsafeBytes(of: a) { x in
            withUnsafeBytes(of: b) { y in
                let type = x.load(fromByteOffset: metadataOffset, as: UInt.self)
                guard type == y.load(fromByteOffset: metadataOffset, as: UInt.self) else { return false }
                return type == 0 || x.load(as: UInt.self) == y.load(as: UInt.self)
            }
        }
    }

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
