import Foundation

extension ManagedObjectContext {
    /// Computes the derived attributes of every object the save writes, after the `willSave()` hooks
    /// (whose changes they must see) and before validation (which checks their values like any other).
    ///
    /// Core Data recomputes a derived attribute when its object is saved. An object is saved when it
    /// changed, and changing a relationship changes both sides, so `books.@count` follows books being
    /// added and removed. A derived value may also read a related object's attribute (`author.name`,
    /// `books.@sum.pages`); when such a related object changes, the objects that read it through the
    /// inverse relationship are recomputed (and saved) too, one level deep. Deleted objects are left alone.
    /// Every object of one save sees the same `now()`.
    ///
    /// - Throws: `ContextError.derivationFailed` for a value the attribute's type cannot hold.
    func updateDerivedAttributes() throws {
        // Most models have no derivations: one pass over the changed objects, no copy, decides.
        guard changed.values.contains(where: { !$0.layout.derivedIndexes.isEmpty || !$0.layout.derivationDependents.isEmpty }) else {
            return
        }
        let saved = Array(changed.values)
        let now = Date()
        for object in saved where !object.deletedState && !object.layout.derivedIndexes.isEmpty {
            try object.updateDerivedAttributes(now: now)
        }
        // Then the objects that read changed ones, saved or not: an object computed above may have read a
        // related object's derived value before that object was computed itself.
        var done = Set<ObjectIdentifier>()
        for object in saved where !object.layout.derivationDependents.isEmpty {
            // A deleted object's related objects lost it: their counts and sums change as well.
            let values = object.deletedState ? (object.committed ?? object.values) : object.values
            var related: [ManagedObjectID] = []
            for i in object.layout.derivationDependents {
                if let id = values[i] as? ManagedObjectID { related.append(id) }
                if let ids = values[i] as? [ManagedObjectID] { related += ids }
            }
            for id in related {
                guard let dependent = registeredOrFault(id), !dependent.deletedState,
                    !dependent.layout.derivedIndexes.isEmpty, done.insert(ObjectIdentifier(dependent)).inserted
                else { continue }
                try dependent.updateDerivedAttributes(now: now)
            }
        }
    }
}
