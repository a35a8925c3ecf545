import Granary

/// The ledger schema of a Granary model: which attributes are synced and which side of each relationship
/// is canonical (the terms of MergeSemantics.md, M17, M27).
extension LedgerSchema {
    /// The synced shape of `model`. Transient properties and derived attributes are left out: they are
    /// never sent (M27).
    ///
    /// Relationships that are their own inverse (`Person.friends` ↔ `Person.friends`) are left out too:
    /// the rule recording each link on the end whose global ID sorts first needs the capture, which comes
    /// with it.
    init(model: ManagedObjectModel) {
        var entities: [String: Entity] = [:]
        for description in model.entities {
            var entity = Entity(superentity: description.superentityName)
            entity.attributes = description.attributes
                .filter { !$0.isTransient && $0.derivationExpression == nil }
                .map(\.name).sorted()
            for relationship in description.relationships where !relationship.isTransient {
                let inverse = model.inverseRelationship(of: relationship)
                if let inverse, inverse.name == relationship.name,
                   inverse.destinationEntityName == relationship.destinationEntityName { continue }
                guard Self.isCanonical(relationship, of: description.name, inverse: inverse) else { continue }
                if relationship.isToMany {
                    entity.toManys[relationship.name] = ToMany(destination: relationship.destinationEntityName,
                                                               isOrdered: relationship.isOrdered, inverse: inverse?.name)
                } else {
                    let derived: ToOneInverse = inverse.map { $0.isToMany ? .toMany($0.name) : .toOne($0.name) } ?? .none
                    entity.toOnes[relationship.name] = ToOne(destination: relationship.destinationEntityName, inverse: derived)
                }
            }
            entities[description.name] = entity
        }
        self.init(entities: entities)
    }

    /// The side whose changes are sent: the to-one side of a one-to-many, else the side whose
    /// `Entity.relationship` name sorts first by bytes; a relationship without an inverse is its own.
    static func isCanonical(_ relationship: RelationshipDescription, of entity: String,
                            inverse: RelationshipDescription?) -> Bool {
        guard let inverse else { return true }
        if relationship.isToMany != inverse.isToMany { return !relationship.isToMany }
        let mine = "\(relationship.entityName ?? entity).\(relationship.name)"
        let theirs = "\(inverse.entityName ?? relationship.destinationEntityName).\(inverse.name)"
        return mine.utf8.lexicographicallyPrecedes(theirs.utf8)
    }
}
