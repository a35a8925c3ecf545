/// A link from one entity to another: Core Data's `NSRelationshipDescription`.
///
/// Construct it directly for models built at run time, or declare it with `Relationship(_:to:inverse:)`
/// or `Relationship(_:toMany:inverse:)` inside an `Entity` block. Every relationship names its inverse,
/// which the model checks points back, so the object graph can keep both sides in step; the
/// destination and inverse are resolved by name through the model (`ManagedObjectModel.destinationEntity(of:)`,
/// `inverseRelationship(of:)`).
public struct RelationshipDescription: Sendable, Hashable, CustomStringConvertible {
    /// The relationship's key: unique within its entity and its entity's ancestors.
    public let name: String
    /// The entity the relationship points to, resolved by name in the model.
    public let destinationEntityName: String
    /// The relationship on the destination entity that points back at this one, or nil for a one-sided
    /// relationship.
    public let inverseName: String?
    /// Whether it holds a set (or ordered list) of objects rather than at most one.
    public let isToMany: Bool
    /// Whether a to-many relationship keeps its objects in order (Core Data's `isOrdered`).
    public let isOrdered: Bool
    /// What deleting the source object does to the destinations.
    public let deleteRule: DeleteRule
    /// Whether the relationship may be nil (to-one) or empty (to-many, whatever `minCount` says) when the
    /// object is saved. A non-optional to-many may still be empty when `minCount` is 0, as in Core Data.
    public let isOptional: Bool
    /// The fewest objects a to-many relationship may hold (when it is optional, only once it holds any);
    /// 0 for to-one relationships.
    public let minCount: Int
    /// The most objects a to-many relationship may hold, or nil for no limit; 1 for to-one relationships.
    public let maxCount: Int?
    /// The relationship's name in the previous model version, for migration.
    public let renamingIdentifier: String?
    /// Whether the relationship is kept in memory only: it has no column, and a fetched object starts with
    /// it empty. Its inverse, if it names one, must be transient too.
    public let isTransient: Bool
    /// The name of the relationship the object graph keeps in step with this one: `inverseName`, or for a
    /// one-sided relationship the hidden inverse the model gives its destination (and for a hidden
    /// inverse, the one-sided relationship it serves). Set by the model when it resolves the relationship.
    let graphInverseName: String
    /// Whether this is a hidden inverse the model made for a one-sided relationship: not among the entity's
    /// public properties, not in its version hash, maintained by the object graph only.
    let isHiddenInverse: Bool
    /// The entity that declares this relationship (for inherited ones, the superentity); nil until an
    /// `EntityDescription` holds it.
    public let entityName: String?

    /// A relationship description. `isOptional` defaults to `true`, as in Core Data; with no `inverseName`,
    /// the relationship is one-sided.
    ///
    /// `minCount` and `maxCount` apply to to-many relationships; a to-one relationship always has
    /// `minCount` 0 and `maxCount` 1, whatever is passed.
    public init(
        name: String,
        destinationEntityName: String,
        inverseName: String? = nil,
        isToMany: Bool = false,
        isOrdered: Bool = false,
        deleteRule: DeleteRule = .nullify,
        isOptional: Bool = true,
        minCount: Int = 0,
        maxCount: Int? = nil,
        renamingIdentifier: String? = nil,
        isTransient: Bool = false
    ) {
        self.init(
            name: name, destinationEntityName: destinationEntityName, inverseName: inverseName, isToMany: isToMany,
            isOrdered: isOrdered, deleteRule: deleteRule, isOptional: isOptional,
            minCount: isToMany ? minCount : 0, maxCount: isToMany ? maxCount : 1,
            renamingIdentifier: renamingIdentifier, isTransient: isTransient, graphInverseName: inverseName ?? "",
            isHiddenInverse: false, entityName: nil)
    }

    private init(
        name: String, destinationEntityName: String, inverseName: String?, isToMany: Bool, isOrdered: Bool,
        deleteRule: DeleteRule, isOptional: Bool, minCount: Int, maxCount: Int?, renamingIdentifier: String?,
        isTransient: Bool, graphInverseName: String, isHiddenInverse: Bool, entityName: String?
    ) {
        self.name = name
        self.destinationEntityName = destinationEntityName
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = renamingIdentifier
        self.isTransient = isTransient
        self.graphInverseName = graphInverseName
        self.isHiddenInverse = isHiddenInverse
        self.entityName = entityName
    }

    private func copy(
        inverseName: String?? = nil, graphInverseName: String? = nil, entityName: String?? = nil
    ) -> RelationshipDescription {
        RelationshipDescription(
            name: name, destinationEntityName: destinationEntityName, inverseName: inverseName ?? self.inverseName,
            isToMany: isToMany, isOrdered: isOrdered, deleteRule: deleteRule, isOptional: isOptional, minCount: minCount,
            maxCount: maxCount, renamingIdentifier: renamingIdentifier, isTransient: isTransient,
            graphInverseName: graphInverseName ?? self.graphInverseName, isHiddenInverse: isHiddenInverse,
            entityName: entityName ?? self.entityName)
    }

    func declared(in entity: String) -> RelationshipDescription {
        copy(entityName: .some(entity))
    }

    /// The relationship with no inverse: the loader's answer to an inverse that does not point back.
    func withoutInverse() -> RelationshipDescription {
        copy(inverseName: .some(nil), graphInverseName: "")
    }

    /// A one-sided relationship, told the name of the hidden inverse the model made for it.
    func servedBy(hiddenInverse name: String) -> RelationshipDescription {
        copy(graphInverseName: name)
    }

    /// The name of the hidden inverse of `relationship`, declared by `entity`. Names starting with `_` are
    /// reserved, and `.` cannot occur in entity or property names, so it never clashes with a declared one.
    static func hiddenInverseName(entity: String, relationship: String) -> String {
        "_inverse.\(entity).\(relationship)"
    }

    /// The hidden inverse the model gives the destination of a one-sided relationship: a to-many back to
    /// the declaring entity, whose nullify rule takes a deleted destination out of every referrer.
    static func hiddenInverse(of relationship: RelationshipDescription, declaredBy entity: String) -> RelationshipDescription {
        let name = hiddenInverseName(entity: entity, relationship: relationship.name)
        return RelationshipDescription(
            name: name, destinationEntityName: entity, inverseName: nil, isToMany: true, isOrdered: false,
            deleteRule: .nullify, isOptional: true, minCount: 0, maxCount: nil, renamingIdentifier: nil,
            isTransient: relationship.isTransient, graphInverseName: relationship.name, isHiddenInverse: true,
            entityName: relationship.destinationEntityName)
    }

    /// `"Entity.relationship"`, or just the name before an entity holds the relationship.
    public var qualifiedName: String {
        entityName.map { "\($0).\(name)" } ?? name
    }

    public var description: String {
        let arrow = isToMany ? (isOrdered ? "->> (ordered)" : "->>") : "->"
        let inverse = inverseName.map { "inverse \($0)" } ?? "no inverse"
        return "relationship \(qualifiedName) \(arrow) \(destinationEntityName) (\(inverse)\(isTransient ? ", transient" : ""))"
    }

    /// Every way a relationship holding `count` objects (0 or 1 for a to-one) fails this description,
    /// by Core Data's rules for `NSRelationshipDescription`:
    /// - an optional relationship may be empty, whatever `minCount` says ("the counts are only enforced if
    ///   the relationship value in the containing object is not nil");
    /// - a non-optional to-one must hold an object (`missing`);
    /// - a to-many relationship is never nil, only empty, so a non-optional one is held to its counts
    ///   alone: empty is valid with `minCount` 0 (the default), `tooFew` below a positive one;
    /// - a non-empty to-many holds at least `minCount` and at most `maxCount` objects.
    ///
    /// Use it before saving.
    public func validate(count: Int) -> [ValidationError] {
        func failure(_ reason: ValidationError.Reason) -> [ValidationError] {
            [ValidationError(entityName: entityName, propertyName: name, reason: reason)]
        }
        if count == 0 && isOptional { return [] }
        guard isToMany else { return count == 0 ? failure(.missing) : [] }
        if count < minCount { return failure(.tooFew(count: count, minimum: minCount)) }
        if let maxCount, count > maxCount { return failure(.tooMany(count: count, maximum: maxCount)) }
        return []
    }
}
