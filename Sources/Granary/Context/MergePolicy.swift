/// The built-in ways a merge policy resolves conflicts (Core Data's `NSMergePolicyType`).
public enum MergePolicyType: Sendable, Hashable {
    /// The save fails: `ContextError.mergeConflicts` or `.constraintConflicts` lists every conflict.
    case error
    /// Per property, what the store has wins; the context's other changes are kept.
    case mergeByPropertyStoreTrump
    /// Per property, the context's changes win; properties it did not change take the store's values.
    case mergeByPropertyObjectTrump
    /// The context's objects are written whole, replacing what the store has.
    case overwrite
    /// The context's changes to the objects in conflict are dropped; the store's state wins.
    case rollback
}

/// How a save resolves conflicts (Core Data's `NSMergePolicy`): objects changed in the store since the
/// context read them (optimistic locking), and objects that would break a uniqueness constraint.
///
/// Set one on ``ManagedObjectContext/mergePolicy``; the five built-in policies are the static instances
/// (`.error`, the default, `.mergeByPropertyStoreTrump`, `.mergeByPropertyObjectTrump`, `.overwrite`,
/// `.rollback`). To resolve conflicts your own way, subclass it and override
/// ``resolve(optimisticLockingConflicts:)`` or ``resolve(constraintConflicts:)``: change the objects
/// the conflicts name (``MergeConflict/sourceObject``, ``ConstraintConflict/conflictingObjects``,
/// ``ConstraintConflict/databaseObject``), then call `super` with the type closest to what you want,
/// as Core Data's documentation advises. The save runs the policy on the context's queue, then tries
/// again; a conflict that is still there after eight attempts fails the save.
///
/// What the built-in types do with a uniqueness conflict (an inserted object whose constrained values
/// another object has, in the store or in the same save):
/// - `.mergeByPropertyObjectTrump`: the duplicates are merged into one object, the stored one if there
///   is one (its object ID survives), else the first inserted. Its attributes take the duplicates'
///   values, later ones winning; to-many relationships are united; a to-one takes the duplicate's
///   destination when it has one. References to a duplicate move to the survivor, and the duplicate
///   leaves the context.
/// - `.mergeByPropertyStoreTrump`: the same merge, but the survivor keeps its own attribute values and
///   to-one destinations (taking the duplicate's only where it has none).
/// - `.overwrite`: the survivor takes the last duplicate's state whole, relationships included.
/// - `.rollback`: the duplicates' state is dropped; references to them move to the survivor.
/// - `.error`: the save throws `ContextError.constraintConflicts`.
///
/// A saved object whose edit made it a duplicate is merged the same way, and then deleted.
///
/// Sendable: a policy's own state (`mergeType`) never changes. A subclass shares that duty: its
/// policies are shared between contexts on different queues, so give it immutable state only, and
/// restate the conformance (`final class MyPolicy: MergePolicy, @unchecked Sendable`).
open class MergePolicy: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked: a non-final class cannot be checked; its only stored property is a `let` of a Sendable type.

    /// What the policy does with conflicts that an override passes on to `super`.
    public let mergeType: MergePolicyType

    /// A policy of the given type; subclasses call it with the type closest to what they do.
    public init(merge type: MergePolicyType) {
        self.mergeType = type
    }

    /// Fails saves that meet a conflict (the default of every context).
    public static let error = MergePolicy(merge: .error)
    /// Per property, the store's changes win.
    public static let mergeByPropertyStoreTrump = MergePolicy(merge: .mergeByPropertyStoreTrump)
    /// Per property, the context's changes win.
    public static let mergeByPropertyObjectTrump = MergePolicy(merge: .mergeByPropertyObjectTrump)
    /// The context's objects replace the store's.
    public static let overwrite = MergePolicy(merge: .overwrite)
    /// The store's state replaces the context's changes.
    public static let rollback = MergePolicy(merge: .rollback)

    /// Resolves objects that changed in the store since the context read them; the save then tries
    /// again. Override it to change the objects first (each conflict's ``MergeConflict/sourceObject``,
    /// on the context's queue), and call `super` to apply `mergeType` to what is left.
    /// - Throws: `ContextError.mergeConflicts` listing every conflict, for `.error`.
    open func resolve(optimisticLockingConflicts list: [MergeConflict]) throws {
        if mergeType == .error { throw ContextError.mergeConflicts(list.map(\.detached)) }
        for conflict in list {
            guard let object = conflict.sourceObject, let context = object.managedObjectContext else { continue }
            context.resolveOptimisticLocking(object, storeRecord: conflict.storeRecord, type: mergeType)
        }
    }

    /// Resolves uniqueness-constraint conflicts as the list above describes; the save then tries again.
    /// Override it to change the objects first (each conflict's ``ConstraintConflict/conflictingObjects``
    /// and ``ConstraintConflict/databaseObject``, on the context's queue), and call `super` for the rest.
    /// - Throws: `ContextError.constraintConflicts` listing every conflict, for `.error`.
    open func resolve(constraintConflicts list: [ConstraintConflict]) throws {
        if mergeType == .error { throw ContextError.constraintConflicts(list.map(\.detached)) }
        for conflict in list {
            guard let context = (conflict.conflictingObjects.first ?? conflict.databaseObject)?.managedObjectContext else { continue }
            context.resolveConstraintConflict(conflict, type: mergeType)
        }
    }

    /// Two policies are equal when they are the same object, or built-in policies of the same type.
    public static func == (lhs: MergePolicy, rhs: MergePolicy) -> Bool {
        lhs === rhs || (type(of: lhs) == MergePolicy.self && type(of: rhs) == MergePolicy.self && lhs.mergeType == rhs.mergeType)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(mergeType)
    }

    public var description: String {
        type(of: self) == MergePolicy.self ? "MergePolicy.\(mergeType)" : "\(type(of: self))(\(mergeType))"
    }
}
