/// One migrated object that fails the newer model: a required value with nothing to fill it, a to-many
/// relationship below its new minimum. `MigrationError.validationFailed` lists them.
public struct MigrationValidationFailure: Sendable, Hashable, CustomStringConvertible {
    /// The object's entity in the newer version.
    public let entity: String
    /// The object's primary key (`ManagedObjectID.primaryKey`), the same before and after migrating.
    public let key: Int64
    /// The object's URI (`ManagedObjectID.uriRepresentation`), to find it with the older model.
    public let objectURI: String
    /// The attribute or relationship that fails, by its name in the newer version.
    public let property: String
    public let reason: ValidationError.Reason

    public var description: String {
        ValidationError(entityName: entity, propertyName: property, reason: reason).description
            + " for object \(key) (\(objectURI))"
    }
}
