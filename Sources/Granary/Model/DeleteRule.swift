/// What deleting an object does to the objects its relationship points at: Core Data's `NSDeleteRule`.
///
/// Set per relationship; the context applies it when the source object is deleted. It does not affect
/// storage or the version hash.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Remove the deleted object from the inverse relationship of each destination.
    case nullify
    /// Delete the destinations too.
    case cascade
    /// Refuse to delete while the relationship has any destination.
    case deny
    /// Leave the destinations alone, even pointing at the deleted object, until the save. Unlike Core
    /// Data, which leaves such references dangling, Granary's save then drops them (the store keeps no
    /// reference to a row that is gone), so that after the save no action ends as nullify does.
    case noAction

    public var description: String { rawValue }
}
