import Foundation

/// A hand-written mapping between two consecutive model versions, for changes that cannot be inferred
/// (a type change, a split attribute, a new required value computed from old ones).
///
/// Entities it does not name are migrated by inference, as are the properties of named entities that
/// the transform leaves alone. CoreStore's custom schema mapping works the same way.
///
/// ```swift
/// let step = MigrationStep(from: v1, to: v2) {
///     EntityMigration.transform("Person") { old, new in
///         new["fullName"] = "\(old["first"] as? String ?? "") \(old["last"] as? String ?? "")"
///     }
///     EntityMigration.remove("Draft")
/// }
/// ```
public struct MigrationStep: Sendable {
    /// The version this step migrates from.
    public let source: ManagedObjectModel
    /// The version this step migrates to.
    public let destination: ManagedObjectModel
    /// The entity migrations, by source entity name.
    public let entities: [String: EntityMigration]

    /// A step between two versions with the given entity migrations.
    public init(from source: ManagedObjectModel, to destination: ManagedObjectModel, entities: [EntityMigration]) {
        self.source = source
        self.destination = destination
        self.entities = Dictionary(entities.map { ($0.sourceEntity, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// A step built from a block of entity migrations.
    public init(from source: ManagedObjectModel, to destination: ManagedObjectModel,
                @EntityMigrationBuilder _ entities: () -> [EntityMigration]) {
        self.init(from: source, to: destination, entities: entities())
    }
}

/// Collects the entity migrations of a `MigrationStep` block.
@resultBuilder
public enum EntityMigrationBuilder {
    public static func buildExpression(_ migration: EntityMigration) -> [EntityMigration] { [migration] }
    public static func buildBlock(_ parts: [EntityMigration]...) -> [EntityMigration] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMigration]?) -> [EntityMigration] { part ?? [] }
    public static func buildEither(first: [EntityMigration]) -> [EntityMigration] { first }
    public static func buildEither(second: [EntityMigration]) -> [EntityMigration] { second }
    public static func buildArray(_ parts: [[EntityMigration]]) -> [EntityMigration] { parts.flatMap { $0 } }
}

/// What a custom step does with the objects of one source entity.
public struct EntityMigration: Sendable {
    /// A transform of one object: reads the old object, adjusts the new one (prefilled with what
    /// inference could map), or calls `discard()` on it to drop the object.
    public typealias Transform = @Sendable (_ old: MigrationObject, _ new: inout MigrationObject) throws -> Void

    /// The source entity whose objects this applies to (exactly that entity, not its sub-entities).
    public let sourceEntity: String
    /// The destination entity its objects become; nil drops them.
    public let destinationEntity: String?
    let transform: Transform?

    /// Objects of `source` become objects of `destination` (by default the entity of the same name, or
    /// the one whose renaming identifier names it), passing through `transform`.
    public static func transform(_ source: String, to destination: String? = nil, _ transform: @escaping Transform) -> EntityMigration {
        EntityMigration(sourceEntity: source, destinationEntity: destination ?? source, transform: transform)
    }

    /// Objects of `source` become objects of `destination` with the inferred mapping only: for an entity
    /// inference would not match, such as a rename without a renaming identifier.
    public static func copy(_ source: String, to destination: String) -> EntityMigration {
        EntityMigration(sourceEntity: source, destinationEntity: destination, transform: nil)
    }

    /// Objects of `source` are dropped; relationships pointing at them are emptied.
    public static func remove(_ source: String) -> EntityMigration {
        EntityMigration(sourceEntity: source, destinationEntity: nil, transform: nil)
    }
}

/// One object during a custom migration step: string-keyed access to its attributes in their Swift
/// form (relationships are migrated by inference and are not exposed).
public struct MigrationObject: Sendable {
    /// The object's entity in the model version this side belongs to.
    public let entity: EntityDescription
    /// The object's primary key, the same on both sides (so object URIs stay valid).
    public let key: Int64
    var values: [String: any Sendable]
    /// Set by `discard()`.
    public private(set) var isDiscarded = false

    init(entity: EntityDescription, key: Int64, values: [String: any Sendable]) {
        self.entity = entity
        self.key = key
        self.values = values
    }

    /// An attribute's value; nil when it is nil or the entity has no such attribute. Setting a value of
    /// the wrong type fails the migration with an error naming the object and attribute.
    public subscript(name: String) -> (any Sendable)? {
        get { values[name] }
        set { values[name] = newValue }
    }

    /// Drops the object from the migrated store.
    public mutating func discard() { isDiscarded = true }
}
