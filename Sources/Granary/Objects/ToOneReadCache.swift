import Synchronization

/// What each to-one property of an entity has been seen to read as: the declared type of a `@Managed`
/// property (`Department?`) whose value is the target object's reference itself, bit for bit.
///
/// A typed read of a to-one otherwise converts the object to the declared optional by a dynamic cast
/// in the unspecialized getter, which also asks the runtime for `Optional<Value>`'s metadata: most of
/// the read, and an import reads each object's to-one once per `<-`. Nothing is assumed about types:
/// a read is remembered only after the slow path produced exactly the object's pointer (or, for nil,
/// all zero bits) in a value of pointer size, and used again only for the same declared type and, for
/// an object, the same exact class, whose conversion then gives the same bits.
final class ToOneReadCache: Sendable {
    /// A declared type and the exact class of an object it read as its own reference. Immutable, and
    /// kept for the cache's life once published.
    private final class Entry: Sendable {
        let valueType: Any.Type
        let objectClass: AnyClass
        init(valueType: Any.Type, objectClass: AnyClass) {
            self.valueType = valueType
            self.objectClass = objectClass
        }
    }

    private let count: Int
    /// Per property index: a retained `Entry`, or 0. Written once (the first learned read wins).
    nonisolated(unsafe) private let objects: UnsafeMutablePointer<Atomic<UInt>>
    /// Per property index: the metadata of a declared type whose nil is all zero bits, or 0.
    nonisolated(unsafe) private let nils: UnsafeMutablePointer<Atomic<UInt>>

    init(count: Int) {
        self.count = count
        objects = .allocate(capacity: max(count, 1))
        nils = .allocate(capacity: max(count, 1))
        for i in 0..<count {
            (objects + i).initialize(to: Atomic<UInt>(0))
            (nils + i).initialize(to: Atomic<UInt>(0))
        }
    }

    deinit {
        for i in 0..<count {
            let bits = objects[i].load(ordering: .acquiring)
            if let pointer = UnsafeRawPointer(bitPattern: bits) { Unmanaged<Entry>.fromOpaque(pointer).release() }
        }
        objects.deinitialize(count: count)
        nils.deinitialize(count: count)
        objects.deallocate()
        nils.deallocate()
    }

    /// Whether `target` reads at property `i` as a `Value` holding its reference (nil: all zero
    /// bits), as an earlier read of the same declared type and class showed.
    @inline(__always)
    func readsAsReference<Value>(_ target: ManagedObject?, at i: Int, as _: Value.Type) -> Bool {
        guard let target else { return nils[i].load(ordering: .relaxed) == Self.bits(of: Value.self) }
        guard let pointer = UnsafeRawPointer(bitPattern: objects[i].load(ordering: .acquiring)) else { return false }
        let entry = Unmanaged<Entry>.fromOpaque(pointer).takeUnretainedValue()
        return entry.valueType == Value.self && entry.objectClass == type(of: target)
    }

    /// Remembers how `target` read at property `i` when `value` (what the full conversion gave) holds
    /// exactly its reference, so that `readsAsReference` answers yes for the same type and class.
    func learn<Value>(_ target: ManagedObject?, at i: Int, as _: Value.Type, value: Value) {
        guard MemoryLayout<Value>.size == MemoryLayout<ManagedObject?>.size else { return }
        let same = withUnsafeBytes(of: value) { v in withUnsafeBytes(of: target) { t in v.elementsEqual(t) } }
        guard same else { return }
        guard let target else {
            nils[i].store(Self.bits(of: Value.self), ordering: .relaxed)
            return
        }
        guard objects[i].load(ordering: .relaxed) == 0 else { return }
        let entry = Unmanaged.passRetained(Entry(valueType: Value.self, objectClass: type(of: target)))
        let (stored, _) = objects[i].compareExchange(expected: 0, desired: UInt(bitPattern: entry.toOpaque()),
                                                      ordering: .acquiringAndReleasing)
        if !stored { entry.release() }
    }

    @inline(__always)
    private static func bits(of type: Any.Type) -> UInt {
        UInt(bitPattern: unsafeBitCast(type, to: UnsafeRawPointer.self))
    }
}
