/// The synced shape of a model as the ledger sees it: each entity's attributes and the canonical side of
/// each relationship with the name of its derived inverse (the terms and M17 of MergeSemantics.md).
///
/// Only canonical sides are sent; the projection computes the other side from them, so the schema says
/// for each canonical side which inverse to fill.
struct LedgerSchema: Hashable, Sendable {
    /// How the inverse of a canonical to-one is derived.
    enum ToOneInverse: Hashable, Sendable {
        case none
        /// The destination's to-many holding every object that names it.
        case toMany(String)
        /// One-to-one: the destination's to-one naming its latest claimant only.
        case toOne(String)
    }

    struct ToOne: Hashable, Sendable {
        var destination: String
        var inverse: ToOneInverse
    }

    struct ToMany: Hashable, Sendable {
        var destination: String
        var isOrdered: Bool
        /// The derived to-many of a many-to-many on the destination, `nil` without an inverse.
        var inverse: String?
    }

    struct Entity: Hashable, Sendable {
        /// The entity this one inherits from: derived sides of relationships to the superentity are
        /// filled on its subentities' objects too.
        var superentity: String? = nil
        var attributes: [String] = []
        var toOnes: [String: ToOne] = [:]
        var toManys: [String: ToMany] = [:]
    }

    var entities: [String: Entity]

    /// The relationship names of `entity` that only the projection fills, each with whether it is to-one.
    func derivedRelationships(of entity: String) -> [String: Bool] {
        var lineage: Set<String> = []
        var next: String? = entity
        while let name = next, lineage.insert(name).inserted { next = entities[name]?.superentity }
        var derived: [String: Bool] = [:]
        for shape in entities.values {
            for relationship in shape.toOnes.values where lineage.contains(relationship.destination) {
                switch relationship.inverse {
                case .none: break
                case let .toMany(name): derived[name] = false
                case let .toOne(name): derived[name] = true
                }
            }
            for relationship in shape.toManys.values where lineage.contains(relationship.destination) {
                if let inverse = relationship.inverse { derived[inverse] = false }
            }
        }
        return derived
    }
}
