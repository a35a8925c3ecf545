/// Makes a file's relationships agree about their inverses before the model is built, as Core Data
/// loads them: a relationship whose inverse does not point back at it is loaded as one-sided, with a
/// warning, instead of refusing the model.
///
/// Xcode warns about such a relationship ("inverse relationship does not point back") but saves and
/// compiles it, and Core Data then maintains only the side that names the inverse. Granary's object graph
/// keeps both sides of a pair in step, so it keeps a pair only when both ends name each other; every
/// other relationship is one-sided, and the model gives its destination a hidden inverse.
///
/// A relationship keeps its inverse when the destination (or one of its superentities) has a relationship
/// of that name that names it back, whose destination is the relationship's entity or one of its
/// superentities, and that is transient exactly when it is. Dropping one end can break the pair of
/// another (an inverse found only through inheritance), so the check repeats until nothing changes.
struct XcodeInverseCheck {
    let sourceMap: XcodeSourceMap
    let diagnostics: XcodeDiagnostics

    func reconcile(_ entities: inout [EntityDescription]) {
        let byName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var dropped: Set<Key> = []
        var reasons: [(Key, inverse: String, reason: String)] = []

        func lookup(_ property: String, from entity: String) -> (owner: String, property: PropertyDescription)? {
            var current: String? = entity
            var seen: Set<String> = []
            while let name = current, seen.insert(name).inserted, let declared = byName[name] {
                if let found = declared.declaredProperties.first(where: { $0.name == property }) { return (name, found) }
                current = declared.superentityName
            }
            return nil
        }
        func isKind(_ entity: String, of other: String) -> Bool {
            var current: String? = entity
            var seen: Set<String> = []
            while let name = current, seen.insert(name).inserted {
                if name == other { return true }
                current = byName[name]?.superentityName
            }
            return false
        }
        /// Why `relationship` of `entity` cannot keep its inverse, or nil when it can.
        func problem(_ relationship: RelationshipDescription, of entity: String, inverse: String) -> String? {
            guard byName[relationship.destinationEntityName] != nil else { return nil }  // reported by the model
            guard let (owner, property) = lookup(inverse, from: relationship.destinationEntityName) else {
                return "'\(relationship.destinationEntityName)' has no property of that name"
            }
            guard case .relationship(let back) = property else { return "'\(owner).\(inverse)' is an attribute" }
            guard let backName = back.inverseName else { return "'\(owner).\(inverse)' has no inverse" }
            if backName != relationship.name { return "'\(owner).\(inverse)' names '\(backName)' as its inverse" }
            if !isKind(entity, of: back.destinationEntityName) {
                return "'\(owner).\(inverse)' points to '\(back.destinationEntityName)', which '\(entity)' is not a kind of"
            }
            if back.isTransient != relationship.isTransient {
                return "one of the two is transient and the other is stored"
            }
            // Checked last, so that each end of a broken pair says what is wrong with the pair itself.
            if dropped.contains(Key(entity: owner, relationship: inverse)) {
                return "'\(owner).\(inverse)' is loaded as one-sided"
            }
            return nil
        }

        var changed = true
        while changed {
            changed = false
            for entity in entities {
                for case .relationship(let relationship) in entity.declaredProperties {
                    let key = Key(entity: entity.name, relationship: relationship.name)
                    guard let inverse = relationship.inverseName, !dropped.contains(key),
                        let reason = problem(relationship, of: entity.name, inverse: inverse)
                    else { continue }
                    dropped.insert(key)
                    reasons.append((key, inverse, reason))
                    changed = true
                }
            }
        }
        guard !dropped.isEmpty else { return }
        for (key, inverse, reason) in reasons {
            diagnostics.warn(
                .inverseNotPointingBack(
                    sourceMap.propertyLocation(key.relationship, of: key.entity), entity: key.entity,
                    relationship: key.relationship, inverse: inverse, reason: reason))
        }
        entities = entities.map { entity in
            guard entity.declaredProperties.contains(where: { dropped.contains(Key(entity: entity.name, relationship: $0.name)) })
            else { return entity }
            let properties = entity.declaredProperties.map { property -> PropertyDescription in
                guard case .relationship(let r) = property, dropped.contains(Key(entity: entity.name, relationship: r.name))
                else { return property }
                return .relationship(r.withoutInverse())
            }
            let declaration = entity.storage.declaration
            return EntityDescription(
                storage: EntityStorage(
                    standalone: EntityDeclaration(
                        name: declaration.name, objectType: declaration.objectType, isAbstract: declaration.isAbstract,
                        superentityName: declaration.superentityName, properties: properties,
                        uniquenessConstraints: declaration.uniquenessConstraints, indexes: declaration.indexes,
                        renamingIdentifier: declaration.renamingIdentifier, fetchedProperties: declaration.fetchedProperties,
                    userInfo: declaration.userInfo)),
                graph: nil)
        }
    }

    private struct Key: Hashable {
        let entity: String
        let relationship: String
    }
}
