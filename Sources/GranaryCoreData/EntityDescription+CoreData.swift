import Granary

extension EntityDescription {
    /// Makes an object of the entity named `name`, of the entity's class, and inserts it into
    /// `context`: Core Data's `insertNewObject(forEntityName:into:)` with its non-throwing signature, so
    /// that `NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context) as! Quake` ports
    /// unchanged. In code that imports this module it hides Granary's throwing form of the same name.
    ///
    /// Core Data raises an exception for a name its model lacks; this stops the program with a message
    /// naming the entity and the model's entities, as it does for an abstract entity or a context without
    /// a coordinator: a misspelt name is a programmer error. Code that takes the name from data looks the
    /// entity up first with `entity(forEntityName:in:)`, which returns nil for an unknown name.
    public static func insertNewObject(forEntityName name: String, into context: ManagedObjectContext) -> ManagedObject {
        guard let model = context.model else {
            preconditionFailure("insertNewObject(forEntityName: \"\(name)\", into:): \(context) has no coordinator, so no model")
        }
        guard let entity = model.entity(named: name) else {
            preconditionFailure("insertNewObject(forEntityName: \"\(name)\", into:): the model has no entity \"\(name)\" "
                                + "(it has \(model.entitiesByName.keys.sorted().joined(separator: ", ")))")
        }
        precondition(!entity.isAbstract, "insertNewObject(forEntityName: \"\(name)\", into:): the entity is abstract")
        let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
        return type.init(entity: entity, insertInto: context)
    }
}
