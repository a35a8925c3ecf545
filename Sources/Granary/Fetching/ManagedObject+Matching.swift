import Foundation

extension ManagedObject {
    /// Whether this object, as it is now in its context (unsaved changes included), satisfies
    /// `predicate`: Core Data's `NSPredicate.evaluate(with:)` on a managed object.
    ///
    /// Use it to test an object in hand against the same predicate a fetch uses, with the same semantics
    /// (the evaluator fetches run on unsaved objects). Key paths may go through relationships.
    /// - Throws: `ContextError.invalidRequest` when the object is in no context (its relationships cannot be
    ///   followed); `PredicateParseError` for a key the entity does not have.
    public func matches(_ predicate: PredicateNode) throws -> Bool {
        guard let context = managedObjectContext else {
            throw ContextError.invalidRequest(entity: entity.name, reason: "the object \(objectID) is in no context, so it cannot be evaluated")
        }
        return try ObjectEvaluator(context: context).matches(predicate, self)
    }
}
