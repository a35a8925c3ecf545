/// What every `ManagedObject` subclass conforms to through `ManagedObject`, so that class methods can
/// be typed with the subclass: `Employee.fetchRequest()` is a `FetchRequest<Employee>`.
public protocol ManagedObjectClass: AnyObject {}

extension ManagedObject: ManagedObjectClass {}

extension ManagedObjectClass where Self: ManagedObject {
    /// A fetch request for objects of this class (Core Data's generated `fetchRequest()`), with its
    /// entity name set when the models alive in the process agree on it. Otherwise (the class is bound
    /// to no model yet, or to entities of different names) the name stays `nil`, and the fetch finds the
    /// entity by class in the context's model.
    public static func fetchRequest() -> FetchRequest<Self> {
        var request = FetchRequest<Self>()
        let names = Set(ModelClassRegistry.entities(for: self).map(\.entity.name))
        if names.count == 1 { request.entityName = names.first }
        return request
    }
}

extension ManagedObject {
    /// The entity this class is bound to (`Entity("Employee", as: Employee.self)`), found among the
    /// models alive in the process (Core Data's `entity()`).
    ///
    /// When several models bind the class to the same entity (the same name and version hash), that is
    /// the answer. When they bind it to different ones (two versions of a model, or two models naming
    /// the entity differently), the newest model's entity is returned: Core Data warns that it cannot
    /// tell them apart; to choose, ask the model (`model.entity(for:)`) or the context
    /// (`EntityDescription.entity(forEntityName:in:)`). A class bound in no live model is a programmer
    /// error and stops the program, as Core Data's `entity()` fails there.
    public class func entity() -> EntityDescription {
        let found = ModelClassRegistry.entities(for: self)
        guard let newest = found.first else {
            preconditionFailure("\(self) is the class of no entity in any model alive: bind it with Entity(\"Name\", as: \(self).self)")
        }
        return newest.entity
    }
}
