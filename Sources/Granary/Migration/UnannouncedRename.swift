/// A removal that may be a rename inference was not told about: an entity, attribute or relationship
/// is gone from the newer version and one of the same kind and type appeared beside it, with no
/// renaming identifier linking them.
///
/// Core Data treats such a pair as a removal plus an addition and drops the removed element's data
/// without a word. Granary refuses instead (`MigrationError.unannouncedRenames`), until the newer
/// element gets a renaming identifier (Xcode's "Renaming ID" in the data model inspector, saved as
/// `elementID`; `renamingIdentifier` in code) or the app says the removal is meant, with
/// `MigrationOptions.acknowledgedRemovals` or `allowsUnannouncedRenames`.
public struct UnannouncedRename: Sendable, Hashable, CustomStringConvertible {
    /// What was removed.
    public enum Kind: String, Sendable, Hashable {
        case entity
        case attribute
        case relationship
    }

    public let kind: Kind
    /// The entity: for a removed entity its older name, else the entity's name in the newer version.
    public let entity: String
    /// The removed element's name in the older version.
    public let removed: String
    /// The elements added beside it that could carry its data, by their names in the newer version.
    public let added: [String]

    /// The removed element as `MigrationOptions.acknowledgedRemovals` names it: `Entity` or
    /// `Entity.property`.
    public var removalKey: String { kind == .entity ? entity : "\(entity).\(removed)" }

    var reason: String {
        let target = kind == .entity ? "entity" : "\(kind.rawValue) of \(entity)"
        let candidates = added.map { "'\($0)'" }.joined(separator: " or ")
        return "it may have been renamed to \(candidates) (same \(kind == .relationship ? "destination" : "type"), no renaming identifier), "
            + "and its data would be dropped: set the Renaming ID of the new \(target) to '\(removed)' in Xcode's data model inspector "
            + "(renamingIdentifier), or acknowledge the removal with MigrationOptions.acknowledgedRemovals [\"\(removalKey)\"]"
    }

    public var description: String {
        let subject = kind == .entity ? "entity \(entity)" : "\(kind.rawValue) \(entity).\(removed)"
        return "\(subject) removed: \(reason)"
    }
}
