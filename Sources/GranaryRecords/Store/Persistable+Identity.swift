import Foundation
import Granary

extension Persistable {
    /// The entity of this class in `model`.
    /// - Throws: `RecordsError.unknownEntity`.
    static func entity(in model: ManagedObjectModel?) throws(RecordsError) -> EntityDescription {
        guard let entity = model?.entity(for: Self.self) else { throw .unknownEntity(type: String(describing: Self.self)) }
        return entity
    }

    /// The name of the stored attribute `idKeyPath` reads.
    /// - Throws: `RecordsError.unknownIDProperty`, `.unknownEntity`.
    static func idAttributeName(in model: ManagedObjectModel?) throws(RecordsError) -> String {
        let entity = try entity(in: model)
        guard let model, let names = KeyPathNames.components(of: idKeyPath, entity: entity, model: model), names.count == 1,
              entity.attributesByName[names[0]] != nil
        else { throw .unknownIDProperty(entity: entity.name, keyPath: String(describing: idKeyPath)) }
        return names[0]
    }

    /// The predicate constant of an ID.
    /// - Throws: `RecordsError.unsupportedIDType`.
    static func predicateValue(of id: EntityID, entity: String) throws(RecordsError) -> Value {
        guard let convertible = id as? any PredicateValueConvertible, let value = convertible.predicateValue else {
            throw .unsupportedIDType(entity: entity, type: String(describing: EntityID.self))
        }
        return value
    }

    /// A request for the objects whose ID is one of `ids` (one `IN`; callers keep it to 1,000 IDs).
    static func request(ids: [EntityID], in model: ManagedObjectModel?) throws(RecordsError) -> FetchRequest<Self> {
        let entity = try entity(in: model)
        let name = try idAttributeName(in: model)
        var values: [Value] = []
        values.reserveCapacity(ids.count)
        for id in ids { values.append(try predicateValue(of: id, entity: entity.name)) }
        var request = FetchRequest<Self>(entityName: entity.name)
        request.filter = values.count == 1 ? .compare([name], .equal, .value(values[0])) : .isIn([name], values)
        return request
    }

    /// The object with this ID in `context` (pending inserts count), or nil. Call on the context's queue.
    static func find(_ id: EntityID, in context: ManagedObjectContext) throws -> Self? {
        var request = try request(ids: [id], in: context.model)
        request.fetchLimit = 1
        return try context.fetch(request).first
    }

    /// Checks that the ID attribute has a uniqueness constraint of its own in `model`.
    /// - Throws: `RecordsError.idNotUnique` naming the entity; `.unknownIDProperty`, `.unknownEntity`.
    static func checkUniqueID(in model: ManagedObjectModel) throws(RecordsError) {
        let entity = try entity(in: model)
        let name = try idAttributeName(in: model)
        var current: EntityDescription? = entity
        while let level = current {
            if level.uniquenessConstraints.contains([name]) { return }
            current = level.superentity
        }
        throw .idNotUnique(entity: entity.name, attribute: name)
    }
}
