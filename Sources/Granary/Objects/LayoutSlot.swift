import Synchronization

/// Where an entity keeps its object layout, made on first use and then read on every object created.
///
/// Not the standard library's `AtomicLazyReference`: its `load()` is not specialized across modules,
/// and instantiated generic metadata on every call, which was half the cost of making a fault. An
/// atomic word holding a retained reference does the same job with a plain load.
struct LayoutSlot: ~Copyable, Sendable {
    private let bits = Atomic<UInt>(0)

    /// The layout, once one was stored. Acquiring, so that the layout's fields are seen as written.
    @inline(__always)
    func load() -> EntityLayout? {
        Self.layout(bits.load(ordering: .acquiring))
    }

    /// Stores `layout` unless another thread got there first; returns the one kept.
    func storeIfNil(_ layout: EntityLayout) -> EntityLayout {
        let retained = Unmanaged.passRetained(layout)
        let (stored, current) = bits.compareExchange(
            expected: 0, desired: UInt(bitPattern: retained.toOpaque()), ordering: .acquiringAndReleasing)
        if stored { return layout }
        retained.release()
        return Self.layout(current)!
    }

    @inline(__always)
    private static func layout(_ bits: UInt) -> EntityLayout? {
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<EntityLayout>.fromOpaque(pointer).takeUnretainedValue()
    }

    deinit {
        if let pointer = UnsafeRawPointer(bitPattern: bits.load(ordering: .acquiring)) {
            Unmanaged<EntityLayout>.fromOpaque(pointer).release()
        }
    }
}
