import Granary

// Context settings Core Data code sets routinely and Granary has no use for. They are accepted so that
// those lines compile unchanged, and do nothing: each property reads as what Granary does instead.

extension ManagedObjectContext {
    /// Accepted and ignored: always `false`, which is what Granary does. A fault whose row another
    /// context deleted reads as its entity's default values when it fires (Core Data, with this `true`,
    /// its default, marks it deleted); merging that context's did-save notification
    /// (`mergeChanges(fromContextDidSave:)`, or `automaticallyMergesChangesFromParent`) removes it.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { false }
        // swiftlint:disable:next unused_setter_value
        set {}
    }

    /// Accepted and ignored: always `0`. Granary keeps no row cache that could go stale: a fault is filled
    /// from the store when it fires, and `refresh(_:mergeChanges:)` reloads an object.
    public var stalenessInterval: TimeInterval {
        get { 0 }
        // swiftlint:disable:next unused_setter_value
        set {}
    }

    /// Accepted and ignored: always `false`. A context keeps its changed objects until they are saved and
    /// the others only while the app holds them, whatever this says: keep a reference to an object that
    /// must stay registered.
    public var retainsRegisteredObjects: Bool {
        get { false }
        // swiftlint:disable:next unused_setter_value
        set {}
    }
}
