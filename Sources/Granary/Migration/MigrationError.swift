import Foundation

/// Why a store could not be brought to a model. Whatever the error, the store is left as it was.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// The store was written by another model and automatic migration is off; lists what differs.
    case incompatibleModel(store: String, differences: [String])
    /// The changes between two model versions include some that cannot be inferred; lists each.
    case cannotInferMapping(from: String, to: String, problems: [String])
    /// The store was written by a model that is neither among the given versions nor recorded in the
    /// store, so there is nothing to migrate from.
    case unknownSourceModel(store: String, storeHash: String)
    /// The store's record of the model that wrote it is damaged.
    case unreadableStoredModel(String)
    /// The model versions given do not form a usable chain (duplicates, or a step that names versions
    /// not in the list).
    case invalidVersions(String)
    /// Adding a uniqueness constraint that existing objects violate; names the duplicates.
    case uniquenessViolation(entity: String, properties: [String], duplicates: String)
    /// A migrated object does not fit the new model (a required value missing, a value of the wrong
    /// type set by a custom step).
    case invalidObject(entity: String, key: Int64, reason: String)
    /// Migrated objects fail the newer model (required values with nothing to fill them, to-many
    /// relationships below a new minimum), as Core Data decides on the data: listed object by object
    /// (the first `failures.count` of `count`). An empty store, or one whose objects all comply,
    /// migrates; fix the objects with the older model, or give the values a default.
    case validationFailed(from: String, to: String, failures: [MigrationValidationFailure], count: Int)
    /// Elements were removed beside same-typed additions with no renaming identifier: each may be a
    /// rename, and migrating would drop its data. Set the renaming identifiers, or acknowledge the
    /// removals (`MigrationOptions.acknowledgedRemovals`, `allowsUnannouncedRenames`).
    case unannouncedRenames(from: String, to: String, renames: [UnannouncedRename])
    /// A mapping model cannot be read, does not fit its versions, or has an expression the migration
    /// cannot evaluate.
    case mappingModel(MappingModelError)
    /// A custom step's transform threw for an object.
    case transformFailed(entity: String, key: Int64, underlying: String)
    /// The store is open read-only, so it cannot be migrated.
    case readOnly(store: String)
    /// The store's engine failed while migrating.
    case storage(StorageError)

    public var description: String {
        switch self {
        case .incompatibleModel(let store, let differences):
            return "the store \(store) was written with another model and automatic migration is off; differences:\n"
                + differences.map { "  - \($0)" }.joined(separator: "\n")
        case .cannotInferMapping(let from, let to, let problems):
            return "cannot infer a mapping from model \(from) to model \(to) (use a custom migration step for these changes):\n"
                + problems.map { "  - \($0)" }.joined(separator: "\n")
        case .unknownSourceModel(let store, let hash):
            return "the store \(store) was written with model \(hash.prefix(12)), which is not among the model versions given and not recorded in the store"
        case .unreadableStoredModel(let reason):
            return "the store's record of its model is unreadable: \(reason)"
        case .invalidVersions(let reason):
            return "invalid model versions: \(reason)"
        case .uniquenessViolation(let entity, let properties, let duplicates):
            return "existing \(entity) objects violate the new uniqueness constraint on \(properties.joined(separator: ", ")): \(duplicates)"
        case .invalidObject(let entity, let key, let reason):
            return "migrated \(entity) object \(key) does not fit the new model: \(reason)"
        case .validationFailed(let from, let to, let failures, let count):
            let more = count > failures.count ? "\n  … and \(count - failures.count) more" : ""
            return "migrating from model \(from) to model \(to) would leave \(count) invalid value(s) in the store, which was not changed:\n"
                + failures.map { "  - \($0)" }.joined(separator: "\n") + more
        case .unannouncedRenames(let from, let to, let renames):
            return "migrating from model \(from) to model \(to) would drop data that may have been renamed; the store was not changed:\n"
                + renames.map { "  - \($0)" }.joined(separator: "\n")
        case .mappingModel(let error):
            return "\(error)"
        case .transformFailed(let entity, let key, let underlying):
            return "the custom migration of \(entity) object \(key) failed: \(underlying)"
        case .readOnly(let store):
            return "the store \(store) needs migrating but is open read-only"
        case .storage(let error):
            return "migration failed in the storage engine: \(error)"
        }
    }
}
