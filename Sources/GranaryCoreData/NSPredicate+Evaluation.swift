import Granary

extension NSPredicate {
    /// Whether `object` satisfies the predicate: Core Data's `evaluate(with:)`, for managed objects (as
    /// they are in their context, unsaved changes included; Granary's `ManagedObject.matches(_:)`).
    ///
    /// Where Core Data raises an exception (a key the entity does not have) or evaluates a plain object
    /// by key-value coding, this returns `false`: a predicate that did not parse, an object that is not
    /// a managed object or is in no context. Use `ManagedObject.matches(_:)` to get the error.
    public func evaluate(with object: Any?) -> Bool {
        guard let object = object as? ManagedObject, case .success(let node) = parsed else { return false }
        return (try? object.matches(node)) ?? false
    }
}
