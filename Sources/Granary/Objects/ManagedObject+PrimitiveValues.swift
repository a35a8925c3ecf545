import Foundation

// Core Data's primitive accessors and access/change notification methods. Core Data code calls them
// inside lifecycle hooks and custom accessors (`setPrimitiveValue(UUID(), forKey: "id")` in
// `awakeFromInsert()`); Granary has no separate primitive storage and no key-value observing, so they
// are the checked accessors without throwing, and the notification methods only fire the fault.

extension ManagedObject {
    /// The value of a property, as `value(forKey:)` gives it, for code written against Core Data's
    /// private-storage accessor (custom accessors, lifecycle hooks). It reads the same storage as every
    /// other accessor: Granary keeps one.
    ///
    /// Core Data's signature does not throw, so neither does this: a key the entity lacks reads as `nil`.
    /// Use `value(forKey:)` where an unknown key should be an error.
    public func primitiveValue(forKey key: String) -> Any? {
        guard let i = layout.indexByName[key] else { return nil }
        return publicValue(at: i)
    }

    /// Sets a property without throwing, for code written against Core Data's private-storage setter
    /// (initial values in `awakeFromInsert()`, custom setters between `willChangeValue(forKey:)` and
    /// `didChangeValue(forKey:)`). The value is checked and coerced as `setValue(_:forKey:)` does and the
    /// change is recorded (Granary needs no `didChangeValue(forKey:)` to notice it); setting a
    /// relationship keeps its inverse in step, as Core Data's relates and unrelates the objects.
    ///
    /// Core Data raises on a key the entity lacks. Granary keeps the error instead (a hook cannot throw,
    /// and stopping the program would be worse than a failed save): the next `save()` throws it, as
    /// `ContextError.unknownKey`, `.wrongValueType` or `.foreignObject` naming the entity and key, and the
    /// object reads `hasChanges == true` until then.
    public func setPrimitiveValue(_ value: Any?, forKey key: String) {
        do {
            try setValue(value, forKey: key)
        } catch {
            reject(error)
        }
    }

    /// Fills the object if it is a fault, before code reads its values directly (Core Data's access
    /// notification). Granary's accessors fill faults themselves; this is for ported custom accessors.
    public func willAccessValue(forKey key: String?) {
        assertOnContextQueue()
        fireFaultIfNeeded()
    }

    /// Marks the end of a direct read started by `willAccessValue(forKey:)`: nothing to do in Granary.
    public func didAccessValue(forKey key: String?) {}

    /// Fills the object if it is a fault, before a custom setter changes it with
    /// `setPrimitiveValue(_:forKey:)` (Core Data's change notification). Granary has no key-value
    /// observing to tell; the change itself is recorded by the setter.
    public func willChangeValue(forKey key: String) {
        assertOnContextQueue()
        fireFaultIfNeeded()
    }

    /// Marks the end of a change started by `willChangeValue(forKey:)`: nothing to do in Granary, whose
    /// setters record changes as they make them.
    public func didChangeValue(forKey key: String) {}
}
