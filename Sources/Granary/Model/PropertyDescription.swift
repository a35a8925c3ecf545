/// Either kind of property an entity declares: Core Data's `NSPropertyDescription`, as an enum.
///
/// Entities list their properties as `PropertyDescription`s so that attributes and relationships keep
/// one declared order; switch over it, or use `attribute` / `relationship` to pick a kind.
public enum PropertyDescription: Sendable, CustomStringConvertible {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)

    /// The property's key within its entity.
    public var name: String {
        switch self {
        case .attribute(let a): return a.name
        case .relationship(let r): return r.name
        }
    }

    /// The entity that declares the property; nil until an `EntityDescription` holds it.
    public var entityName: String? {
        switch self {
        case .attribute(let a): return a.entityName
        case .relationship(let r): return r.entityName
        }
    }

    /// Whether the property may be nil (or, for to-many, empty) on save.
    public var isOptional: Bool {
        switch self {
        case .attribute(let a): return a.isOptional
        case .relationship(let r): return r.isOptional
        }
    }

    /// Whether the property has no column and lives in memory only.
    public var isTransient: Bool {
        switch self {
        case .attribute(let a): return a.isTransient
        case .relationship(let r): return r.isTransient
        }
    }

    /// Whether this is a hidden inverse the model made for a one-sided relationship.
    var isHiddenInverse: Bool {
        if case .relationship(let r) = self { return r.isHiddenInverse }
        return false
    }

    /// The property's name in the previous model version, for migration.
    public var renamingIdentifier: String? {
        switch self {
        case .attribute(let a): return a.renamingIdentifier
        case .relationship(let r): return r.renamingIdentifier
        }
    }

    /// The attribute, when the property is one.
    public var attribute: AttributeDescription? {
        if case .attribute(let a) = self { return a }
        return nil
    }

    /// The relationship, when the property is one.
    public var relationship: RelationshipDescription? {
        if case .relationship(let r) = self { return r }
        return nil
    }

    /// `"Entity.property"`, or just the name before an entity holds the property.
    public var qualifiedName: String {
        switch self {
        case .attribute(let a): return a.qualifiedName
        case .relationship(let r): return r.qualifiedName
        }
    }

    public var description: String {
        switch self {
        case .attribute(let a): return a.description
        case .relationship(let r): return r.description
        }
    }

    func declared(in entity: String) -> PropertyDescription {
        switch self {
        case .attribute(let a): return .attribute(a.declared(in: entity))
        case .relationship(let r): return .relationship(r.declared(in: entity))
        }
    }
}
