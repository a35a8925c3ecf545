extension EntityDescription {
    /// The entity of this name in the model of `context`'s coordinator (Core Data's
    /// `entity(forEntityName:in:)`), or `nil` when the model has none or the context no coordinator.
    public static func entity(forEntityName name: String, in context: ManagedObjectContext) -> EntityDescription? {
        context.model?.entity(named: name)
    }

    /// Makes an object of the entity named `name` in `context`'s model, of the entity's class, and
    /// inserts it (Core Data's `insertNewObject(forEntityName:into:)`, which raises where this throws).
    /// - Throws: `ContextError.unknownEntity` when the model has no such entity,
    ///   `ContextError.invalidRequest` for an abstract entity, `ContextError.noPersistentStore` when the
    ///   context has no coordinator (so no model).
    // Disfavoured so that GranaryCoreData's non-throwing form of Core Data's signature wins where both
    // are visible; alone, this is the only candidate and is chosen as usual.
    @_disfavoredOverload
    public static func insertNewObject(forEntityName name: String, into context: ManagedObjectContext) throws -> ManagedObject {
        guard let model = context.model else { throw ContextError.noPersistentStore("\(context) has no coordinator, so no model") }
        guard let entity = model.entity(named: name) else { throw ContextError.unknownEntity(name) }
        if entity.isAbstract { throw ContextError.invalidRequest(entity: name, reason: "the entity is abstract; insert an object of one of its sub-entities") }
        let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
        return type.init(entity: entity, insertInto: context)
    }
}
