import Foundation
import Granary

/// Turns the changes an app made in the reparation context into object changes of the merge event, so
/// that every peer receives the repair (M24).
///
/// Only synced properties and canonical sides are recorded, as capture records a local save: a change
/// made on a derived side (an author's `books`) shows on the canonical side too (each book's `author`),
/// where inverse maintenance put it.
struct RepairRecorder {
    let schema: LedgerSchema

    /// The repairs in `reparation`, read on its queue; call it before saving the context into its parent.
    /// `key` names an object the merge context already had; `newGlobalID` gives an inserted one its
    /// global ID. Returns the changes in key order and the keys given to inserted objects, by their
    /// (temporary) object IDs, which the parent's copies share.
    /// - Throws: `SyncError.dataCorruption` for a value that does not convert, or a changed object whose
    ///   key is unknown.
    func changes(in reparation: ManagedObjectContext, key: @escaping (ManagedObjectID) -> ObjectKey?,
                 newGlobalID: @escaping (ManagedObject) -> String) throws(SyncError) -> (changes: [ObjectChange], inserted: [ManagedObjectID: ObjectKey]) {
        var result: Result<([ObjectChange], [ManagedObjectID: ObjectKey]), SyncError> = .success(([], [:]))
        reparation.performAndWait {
            do throws(SyncError) {
                result = .success(try read(reparation, key: key, newGlobalID: newGlobalID))
            } catch {
                result = .failure(error)
            }
        }
        let (changes, inserted) = try result.get()
        return (changes, inserted)
    }

    private func read(_ context: ManagedObjectContext, key known: (ManagedObjectID) -> ObjectKey?,
                      newGlobalID: (ManagedObject) -> String) throws(SyncError) -> ([ObjectChange], [ManagedObjectID: ObjectKey]) {
        var inserted: [ManagedObjectID: ObjectKey] = [:]
        for object in context.insertedObjects.sorted(by: { $0.objectID.description < $1.objectID.description })
        where schema.entities[object.entity.name] != nil {
            inserted[object.objectID] = ObjectKey(object.entity.name, newGlobalID(object))
        }
        func key(of id: ManagedObjectID) throws(SyncError) -> ObjectKey {
            if let key = inserted[id] ?? known(id) { return key }
            throw .dataCorruption("the reparation context changed \(id), which the merge does not know")
        }
        var changes: [ObjectChange] = []
        for object in context.insertedObjects where inserted[object.objectID] != nil {
            changes.append(try change(of: object, key: try key(of: object.objectID), kind: .insert, names: nil, key: key))
        }
        for object in context.updatedObjects where schema.entities[object.entity.name] != nil {
            let names = Set(object.changedValues().keys)
            let change = try change(of: object, key: try key(of: object.objectID), kind: .update, names: names, key: key)
            if !change.attributes.isEmpty || !change.toOnes.isEmpty || !change.memberAdds.isEmpty || !change.memberRemoves.isEmpty {
                changes.append(change)
            }
        }
        for object in context.deletedObjects where schema.entities[object.entity.name] != nil && inserted[object.objectID] == nil {
            changes.append(ObjectChange(key: try key(of: object.objectID), kind: .delete))
        }
        return (changes.sorted { $0.key < $1.key }, inserted)
    }

    /// The change recording `names` of `object` (every synced property when nil).
    private func change(of object: ManagedObject, key: ObjectKey, kind: ObjectChange.Kind, names: Set<String>?,
                        key keyOf: (ManagedObjectID) throws(SyncError) -> ObjectKey) throws(SyncError) -> ObjectChange {
        var change = ObjectChange(key: key, kind: kind)
        guard let shape = schema.entities[object.entity.name] else { return change }
        func value(_ name: String) throws(SyncError) -> Any? {
            do { return try object.value(forKey: name) } catch {
                throw .dataCorruption("reading \(object.entity.name).\(name) of a repair failed: \(error)")
            }
        }
        for name in shape.attributes where names?.contains(name) ?? true {
            guard let attribute = object.entity.attributesByName[name] else { continue }
            change.attributes[name] = .some(try MergeValues.syncValue(of: try value(name), attribute: attribute))
        }
        for name in shape.toOnes.keys where names?.contains(name) ?? true {
            if let target = try value(name) as? ManagedObject {
                change.toOnes[name] = .some(try keyOf(target.objectID))
            } else {
                change.toOnes[name] = .some(nil)
            }
        }
        for (name, relationship) in shape.toManys where names?.contains(name) ?? true {
            let members: [ManagedObject]
            if relationship.isOrdered {
                members = try value(name) as? [ManagedObject] ?? []
            } else {
                members = (try value(name) as? Set<ManagedObject> ?? []).sorted { $0.objectID.description < $1.objectID.description }
            }
            let before = Set(names == nil ? [] : object.committedValues(forKeys: [name])[name].flatMap { $0 as? [ManagedObjectID] } ?? [])
            var adds: [ObjectChange.MemberAdd] = []
            for (index, member) in members.enumerated() where relationship.isOrdered || !before.contains(member.objectID) {
                adds.append(.init(member: try keyOf(member.objectID), orderKey: relationship.isOrdered ? Double(index) : nil))
            }
            let now = Set(members.map(\.objectID))
            var removes: [ObjectKey] = []
            for id in before.sorted(by: { $0.description < $1.description }) where !now.contains(id) {
                removes.append(try keyOf(id))
            }
            if !adds.isEmpty { change.memberAdds[name] = adds.sorted { $0.member < $1.member } }
            if !removes.isEmpty { change.memberRemoves[name] = removes.sorted() }
        }
        return change
    }
}
