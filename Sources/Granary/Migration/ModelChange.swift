/// One difference between two model versions, as a migration sees it.
///
/// `granary migrate` lists them, `MigrationReport` records them, and an error that refuses a migration
/// lists those with a `problem`.
public struct ModelChange: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case entityAdded
        case entityRemoved
        case entityRenamed(from: String)
        case superentityChanged(from: String?, to: String?)
        case madeAbstract
        case madeConcrete
        case attributeAdded
        case attributeRemoved
        case attributeRenamed(from: String)
        case attributeTypeChanged(from: String, to: String)
        case attributeMadeOptional
        case attributeMadeRequired
        case relationshipAdded
        case relationshipRemoved
        case relationshipRenamed(from: String)
        case relationshipBecameToMany
        case relationshipBecameToOne
        case relationshipOrderingChanged(isOrdered: Bool)
        case relationshipDestinationChanged(from: String, to: String)
        case relationshipMadeOptional
        case relationshipMadeRequired
        /// A to-many relationship's `minCount` or `maxCount` changed; the new ones are given.
        case relationshipCountsChanged(minCount: Int, maxCount: Int?)
        /// The step follows a mapping model (its path given) instead of inference; a problem says why
        /// the mapping model does not fit.
        case mappedByMappingModel(String)
        /// An attribute became a relationship or the reverse.
        case propertyKindChanged
        case indexAdded(String)
        case indexRemoved(String)
        case uniquenessConstraintAdded([String])
        case uniquenessConstraintRemoved([String])
    }

    /// The entity, by its name in the newer version (the older name for a removed entity).
    public let entity: String
    /// The property, by its name in the newer version (the older name for a removed one).
    public let property: String?
    public let kind: Kind
    /// Why inference cannot carry this change out, or nil when it can.
    public let problem: String?
    /// What the stored objects must satisfy for this change to migrate (a required value with nothing
    /// to fill it), or nil when it holds whatever they are. As Core Data does, the migration checks
    /// every migrated object and refuses with `MigrationError.validationFailed` listing those that
    /// fail; an empty store always migrates.
    public let dataRequirement: String?

    init(_ entity: String, _ property: String? = nil, _ kind: Kind, problem: String? = nil, dataRequirement: String? = nil) {
        self.entity = entity
        self.property = property
        self.kind = kind
        self.problem = problem
        self.dataRequirement = dataRequirement
    }

    /// Whether a migration can carry this change out without a custom step.
    public var isInferable: Bool { problem == nil }

    public var description: String {
        let subject = property.map { "\(entity).\($0)" } ?? entity
        let text: String
        switch kind {
        case .entityAdded: text = "entity \(entity) added"
        case .entityRemoved: text = "entity \(entity) removed (its objects are dropped)"
        case .entityRenamed(let old): text = "entity \(old) renamed to \(entity)"
        case .superentityChanged(let old, let new): text = "\(entity)'s superentity changed from \(old ?? "none") to \(new ?? "none")"
        case .madeAbstract: text = "\(entity) made abstract"
        case .madeConcrete: text = "\(entity) made concrete"
        case .attributeAdded: text = "attribute \(subject) added"
        case .attributeRemoved: text = "attribute \(subject) removed"
        case .attributeRenamed(let old): text = "attribute \(entity).\(old) renamed to \(property ?? "")"
        case .attributeTypeChanged(let old, let new): text = "attribute \(subject) changed type from \(old) to \(new)"
        case .attributeMadeOptional: text = "attribute \(subject) made optional"
        case .attributeMadeRequired: text = "attribute \(subject) made required"
        case .relationshipAdded: text = "relationship \(subject) added"
        case .relationshipRemoved: text = "relationship \(subject) removed"
        case .relationshipRenamed(let old): text = "relationship \(entity).\(old) renamed to \(property ?? "")"
        case .relationshipBecameToMany: text = "relationship \(subject) changed from to-one to to-many"
        case .relationshipBecameToOne: text = "relationship \(subject) changed from to-many to to-one"
        case .relationshipOrderingChanged(let ordered): text = "relationship \(subject) made \(ordered ? "ordered" : "unordered")"
        case .relationshipDestinationChanged(let old, let new): text = "relationship \(subject) now points to \(new) instead of \(old)"
        case .relationshipMadeOptional: text = "relationship \(subject) made optional"
        case .relationshipMadeRequired: text = "relationship \(subject) made required"
        case .relationshipCountsChanged(let min, let max):
            text = "relationship \(subject) now holds \(min) to \(max.map(String.init) ?? "any number of") objects"
        case .mappedByMappingModel(let path): text = "migrated by the mapping model \(path)"
        case .propertyKindChanged: text = "\(subject) changed between attribute and relationship"
        case .indexAdded(let name): text = "index \(name) added to \(entity)"
        case .indexRemoved(let name): text = "index \(name) removed from \(entity)"
        case .uniquenessConstraintAdded(let names): text = "uniqueness constraint on \(entity).(\(names.joined(separator: ", "))) added"
        case .uniquenessConstraintRemoved(let names): text = "uniqueness constraint on \(entity).(\(names.joined(separator: ", "))) removed"
        }
        if let problem { return "\(text): cannot be inferred, \(problem)" }
        return dataRequirement.map { "\(text): migrates if the stored objects allow it, \($0)" } ?? text
    }
}
