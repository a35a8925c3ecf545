/// Where a relationship column's data comes from when the relationship itself has no counterpart in the
/// older version: from the older version's inverse of its partner.
///
/// Each relationship the object graph keeps in step has a partner (its inverse, or for a one-sided
/// relationship the hidden inverse the model gives its destination, see
/// `RelationshipDescription.hiddenInverse(of:declaredBy:)`). Both hold the same links seen from either
/// end, so a column that is new in this version can be filled from the partner's partner in the older
/// one. That is what keeps the two ends in agreement when a version:
/// - removes an inverse (the destination's new hidden inverse is filled from the removed inverse),
/// - adds an inverse to a one-sided relationship (the new inverse is filled from the hidden one),
/// - adds a one-sided relationship to an entity with data (both columns start empty), or renames one.
extension InferredMapping {
    /// The older relationship to copy a destination relationship's column from: its own counterpart by
    /// renaming identifier or name when it has one, else its partner's partner in the older version; nil
    /// when neither exists or the older one points at entities this one does not come from.
    func sourceRelationship(
        of relationship: RelationshipDescription, in entity: EntityDescription, from old: EntityDescription
    ) -> RelationshipDescription? {
        func fits(_ candidate: RelationshipDescription) -> RelationshipDescription? {
            sourceOf[relationship.destinationEntityName] == candidate.destinationEntityName ? candidate : nil
        }
        if !relationship.isHiddenInverse, let direct = sourceProperty(of: .relationship(relationship), in: old) {
            return direct.relationship.flatMap(fits)
        }
        guard let partnerEntity = destination.entity(named: relationship.destinationEntityName),
            let partner = partnerEntity.storage.propertiesByName[relationship.graphInverseName]?.relationship,
            let oldPartnerEntityName = sourceOf[partnerEntity.name],
            let oldPartnerEntity = source.entity(named: oldPartnerEntityName),
            let oldPartner = sourceProperty(of: .relationship(partner), in: oldPartnerEntity)?.relationship,
            let candidate = old.storage.propertiesByName[oldPartner.graphInverseName]?.relationship,
            !candidate.isTransient
        else { return nil }
        return fits(candidate)
    }
}
