import Foundation
@testable import Granary

final class RuleOwner: ManagedObject {
    @Managed var name: String
    @Managed var cascadeItems: [RuleItem]
    @Managed var nullifyItems: Set<RuleItem>
    @Managed var denyItems: Set<RuleItem>
    @Managed var noActionItems: [RuleItem]
    @Managed var tags: Set<RuleItem>
    @Managed var badge: RuleItem?
    @Managed var watched: Set<RuleItem>
    @Managed var pinned: [RuleItem]
    @Managed var favorite: RuleItem?
}

final class RuleItem: ManagedObject {
    @Managed var name: String
    @Managed var cascadeOwner: RuleOwner?
    @Managed var nullifyOwner: RuleOwner?
    @Managed var denyOwner: RuleOwner?
    @Managed var noActionOwner: RuleOwner?
    @Managed var taggedBy: Set<RuleOwner>
    @Managed var parent: RuleItem?
    @Managed var children: [RuleItem]
    @Managed var badgeOf: RuleOwner?
    @Managed var blocker: RuleOwner?
    @Managed var seeAlso: [RuleItem]
}

/// A model with every delete rule on every kind of relationship, for the delete-rule tests: owners hold
/// items under cascade, nullify, deny and no action (ordered and unordered), tag them many-to-many
/// (cascade one way, no action the other), and wear one as a badge (one-to-one, cascade one way); items
/// form trees that cascade from parent to children and deny deleting a child that still has its parent,
/// so that cascades chain and run into deny rules. One-sided relationships (no inverse) come in every
/// rule too: owners watch items (to-many, nullify), pin them (ordered, cascade) and have a favorite
/// (to-one, no action); an item may be blocked by an owner (to-one, deny: it cannot be deleted while
/// blocked) and point at other items (ordered, no action). Deleting the destination of a one-sided
/// relationship takes it out of every referrer at once (Granary's rule; Core Data leaves it dangling).
///
/// `relationships` lists the same relationships for the reference model, which must not learn Core
/// Data's rules from the code under test.
enum DeleteRuleModel {
    struct Spec: Hashable {
        let entity: String
        let name: String
        let destination: String
        /// Nil for a one-sided relationship.
        let inverse: String?
        let isToMany: Bool
        let isOrdered: Bool
        let rule: DeleteRule
    }

    /// Each entity's relationships in declaration order (the order a context applies their rules in).
    static let relationships: [String: [Spec]] = [
        "Owner": [
            Spec(entity: "Owner", name: "cascadeItems", destination: "Item", inverse: "cascadeOwner", isToMany: true, isOrdered: true, rule: .cascade),
            Spec(entity: "Owner", name: "nullifyItems", destination: "Item", inverse: "nullifyOwner", isToMany: true, isOrdered: false, rule: .nullify),
            Spec(entity: "Owner", name: "denyItems", destination: "Item", inverse: "denyOwner", isToMany: true, isOrdered: false, rule: .deny),
            Spec(entity: "Owner", name: "noActionItems", destination: "Item", inverse: "noActionOwner", isToMany: true, isOrdered: true, rule: .noAction),
            Spec(entity: "Owner", name: "tags", destination: "Item", inverse: "taggedBy", isToMany: true, isOrdered: false, rule: .cascade),
            Spec(entity: "Owner", name: "badge", destination: "Item", inverse: "badgeOf", isToMany: false, isOrdered: false, rule: .cascade),
            Spec(entity: "Owner", name: "watched", destination: "Item", inverse: nil, isToMany: true, isOrdered: false, rule: .nullify),
            Spec(entity: "Owner", name: "pinned", destination: "Item", inverse: nil, isToMany: true, isOrdered: true, rule: .cascade),
            Spec(entity: "Owner", name: "favorite", destination: "Item", inverse: nil, isToMany: false, isOrdered: false, rule: .noAction),
        ],
        "Item": [
            Spec(entity: "Item", name: "cascadeOwner", destination: "Owner", inverse: "cascadeItems", isToMany: false, isOrdered: false, rule: .nullify),
            Spec(entity: "Item", name: "nullifyOwner", destination: "Owner", inverse: "nullifyItems", isToMany: false, isOrdered: false, rule: .noAction),
            Spec(entity: "Item", name: "denyOwner", destination: "Owner", inverse: "denyItems", isToMany: false, isOrdered: false, rule: .nullify),
            Spec(entity: "Item", name: "noActionOwner", destination: "Owner", inverse: "noActionItems", isToMany: false, isOrdered: false, rule: .nullify),
            Spec(entity: "Item", name: "taggedBy", destination: "Owner", inverse: "tags", isToMany: true, isOrdered: false, rule: .noAction),
            Spec(entity: "Item", name: "parent", destination: "Item", inverse: "children", isToMany: false, isOrdered: false, rule: .deny),
            Spec(entity: "Item", name: "children", destination: "Item", inverse: "parent", isToMany: true, isOrdered: true, rule: .cascade),
            Spec(entity: "Item", name: "badgeOf", destination: "Owner", inverse: "badge", isToMany: false, isOrdered: false, rule: .nullify),
            Spec(entity: "Item", name: "blocker", destination: "Owner", inverse: nil, isToMany: false, isOrdered: false, rule: .deny),
            Spec(entity: "Item", name: "seeAlso", destination: "Item", inverse: nil, isToMany: true, isOrdered: true, rule: .noAction),
        ],
    ]

    static func spec(_ entity: String, _ name: String) -> Spec {
        relationships[entity]!.first { $0.name == name }!
    }

    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Owner", as: RuleOwner.self) {
                Attribute("name", .string)
                Relationship("cascadeItems", toMany: "Item", ordered: true, inverse: "cascadeOwner", deleteRule: .cascade)
                Relationship("nullifyItems", toMany: "Item", inverse: "nullifyOwner", deleteRule: .nullify)
                Relationship("denyItems", toMany: "Item", inverse: "denyOwner", deleteRule: .deny)
                Relationship("noActionItems", toMany: "Item", ordered: true, inverse: "noActionOwner", deleteRule: .noAction)
                Relationship("tags", toMany: "Item", inverse: "taggedBy", deleteRule: .cascade)
                Relationship("badge", to: "Item", inverse: "badgeOf", deleteRule: .cascade)
                Relationship("watched", toMany: "Item", deleteRule: .nullify)
                Relationship("pinned", toMany: "Item", ordered: true, deleteRule: .cascade)
                Relationship("favorite", to: "Item", deleteRule: .noAction)
                Index("byName", "name")
            }
            Entity("Item", as: RuleItem.self) {
                Attribute("name", .string)
                Relationship("cascadeOwner", to: "Owner", inverse: "cascadeItems", deleteRule: .nullify)
                Relationship("nullifyOwner", to: "Owner", inverse: "nullifyItems", deleteRule: .noAction)
                Relationship("denyOwner", to: "Owner", inverse: "denyItems", deleteRule: .nullify)
                Relationship("noActionOwner", to: "Owner", inverse: "noActionItems", deleteRule: .nullify)
                Relationship("taggedBy", toMany: "Owner", inverse: "tags", deleteRule: .noAction)
                Relationship("parent", to: "Item", inverse: "children", deleteRule: .deny)
                Relationship("children", toMany: "Item", ordered: true, inverse: "parent", deleteRule: .cascade)
                Relationship("badgeOf", to: "Owner", inverse: "badge", deleteRule: .nullify)
                Relationship("blocker", to: "Owner", deleteRule: .deny)
                Relationship("seeAlso", toMany: "Item", ordered: true, deleteRule: .noAction)
                Index("byName", "name")
            }
        }
    }
}

/// A coordinator with one store of `DeleteRuleModel` and a private-queue context on it.
func makeRuleStack(_ type: PersistentStore.StoreType = .inMemory) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try DeleteRuleModel.make())
    try coordinator.addPersistentStore(type: type, at: type == .durable ? scratchURL("rules") : nil)
    return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
}
