import Foundation

/// The mapping of one migration step, from one model version to the next: which source entity and
/// property each destination one comes from, what changed, and which changes inference cannot carry
/// out.
///
/// Matching follows Core Data: a destination element whose renaming identifier names a source element
/// comes from it; otherwise the source element of the same name. A custom step's entity migrations
/// take precedence, and waive the attribute problems of the entities they transform (the transform
/// supplies those values; a missing one is an error at migration time).
struct InferredMapping: Sendable {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let sourceMapping: StorageMapping
    let destinationMapping: StorageMapping
    /// Every difference, inferable or not, in destination declaration order then removals.
    private(set) var changes: [ModelChange] = []
    /// Source entity name by destination entity name.
    private(set) var sourceOf: [String: String] = [:]
    /// Destination entity name by source entity name; absent for dropped entities.
    private(set) var destinationOf: [String: String] = [:]
    let custom: [String: EntityMigration]
    /// The mapping model this step follows instead of inference, if one covers it.
    let mappingModel: MappingModel?
    let migrationPolicies: [String: EntityMigrationPolicy]
    /// Removals the app said are meant, so a same-typed addition beside them is not a rename.
    let acknowledgedRemovals: Set<String>
    let allowsUnannouncedRenames: Bool
    /// Removals that may be renames inference was not told about; each is also a problem change.
    private(set) var unannouncedRenames: [UnannouncedRename] = []

    /// Whether the step may drop some objects of a table it keeps (a removed sub-entity, a custom
    /// transform that discards), so that references to them must be found and removed.
    var dropsObjects: Bool {
        if custom.values.contains(where: { $0.transform != nil }) { return true }
        return source.entities.contains { entity in
            destinationOf[entity.name] == nil
                && ([entity.rootEntity] + entity.rootEntity.allSubentities).contains { destinationOf[$0.name] != nil }
        }
    }

    /// Changes that inference cannot carry out.
    var problems: [ModelChange] { changes.filter { !$0.isInferable } }

    /// Changes that hold or not depending on the stored objects: the migration checks every migrated
    /// object against them, and an empty store always passes.
    var dataRequirements: [ModelChange] { changes.filter { $0.dataRequirement != nil } }

    init(from source: ManagedObjectModel, to destination: ManagedObjectModel, step: MigrationStep?,
         options: MigrationOptions = MigrationOptions(), mappingModel: MappingModel? = nil) {
        self.source = source
        self.destination = destination
        sourceMapping = StorageMapping(model: source)
        destinationMapping = StorageMapping(model: destination)
        custom = step?.entities ?? [:]
        acknowledgedRemovals = options.acknowledgedRemovals
        allowsUnannouncedRenames = options.allowsUnannouncedRenames
        migrationPolicies = options.migrationPolicies
        self.mappingModel = step == nil ? mappingModel : nil
        matchEntities()
        for entity in destination.entities { compare(entity) }
        let added = destination.entities.filter { sourceOf[$0.name] == nil }
        for entity in source.entities where destinationOf[entity.name] == nil {
            let candidates = custom[entity.name] != nil ? [] : added.filter { Self.mayBeRenamed(entity, to: $0) }.map(\.name)
            changes.append(removal(entity.name, nil, .entityRemoved, kind: .entity, candidates: candidates))
        }
        if let mappingModel = self.mappingModel {
            // The mapping model says what becomes of each change: inference's objections do not apply,
            // and its own problems take their place.
            changes = changes.map { ModelChange($0.entity, $0.property, $0.kind) }
            unannouncedRenames = []
            let problems = MappingModelMigration.problems(of: mappingModel, to: destination, policies: options.migrationPolicies)
            changes.insert(ModelChange("*", nil, .mappedByMappingModel(mappingModel.path)), at: 0)
            for problem in problems { changes.append(ModelChange("*", nil, .mappedByMappingModel(mappingModel.path), problem: problem)) }
        }
    }

    /// An added entity may be a renamed removed one when it stores the same attributes (names and
    /// types); entities without attributes are left alone, since nothing would tell them apart.
    private static func mayBeRenamed(_ old: EntityDescription, to new: EntityDescription) -> Bool {
        func signature(_ e: EntityDescription) -> Set<String> {
            Set(e.attributes.filter { !$0.isTransient }.map { "\($0.name):\($0.type.description)" })
        }
        let a = signature(old)
        return !a.isEmpty && a == signature(new)
    }

    /// A removal change, refused when it may be an unannounced rename the app did not acknowledge.
    private mutating func removal(_ entity: String, _ property: String?, _ change: ModelChange.Kind,
                                  kind: UnannouncedRename.Kind, candidates: [String]) -> ModelChange {
        let key = property.map { "\(entity).\($0)" } ?? entity
        guard !candidates.isEmpty, !allowsUnannouncedRenames, !acknowledgedRemovals.contains(key) else {
            return ModelChange(entity, property, change)
        }
        let rename = UnannouncedRename(kind: kind, entity: entity, removed: property ?? entity, added: candidates)
        unannouncedRenames.append(rename)
        return ModelChange(entity, property, change, problem: rename.reason)
    }

    // MARK: Matching

    private mutating func matchEntities() {
        var claimed = Set<String>()
        func claim(_ src: String, _ dst: String) {
            sourceOf[dst] = src
            destinationOf[src] = dst
            claimed.insert(src)
        }
        for (name, migration) in custom.sorted(by: { $0.key < $1.key }) {
            guard source.entity(named: name) != nil else {
                changes.append(ModelChange(name, nil, .entityRemoved, problem: "the custom step names source entity '\(name)', which the older version does not have"))
                continue
            }
            claimed.insert(name)
            guard let dst = migration.destinationEntity else { continue }
            if destination.entity(named: dst) == nil {
                changes.append(ModelChange(dst, nil, .entityAdded, problem: "the custom step maps \(name) to entity '\(dst)', which the newer version does not have"))
            } else if sourceOf[dst] != nil {
                changes.append(ModelChange(dst, nil, .entityAdded, problem: "the custom step maps two source entities to \(dst)"))
            } else {
                claim(name, dst)
            }
        }
        for entity in destination.entities where sourceOf[entity.name] == nil {
            guard let identifier = entity.renamingIdentifier else { continue }
            // The identifier names the older entity, or (as Xcode keeps it in later versions) the older
            // entity carries the same identifier.
            let old = source.entity(named: identifier)?.name ?? source.entities.first { $0.renamingIdentifier == identifier }?.name
            if let old, !claimed.contains(old) { claim(old, entity.name) }
        }
        for entity in destination.entities where sourceOf[entity.name] == nil {
            if source.entity(named: entity.name) != nil, !claimed.contains(entity.name) { claim(entity.name, entity.name) }
        }
    }

    /// The source property a destination property comes from: by renaming identifier, then by name;
    /// transient properties have no data to carry.
    func sourceProperty(of property: PropertyDescription, in entity: EntityDescription) -> PropertyDescription? {
        var candidates: [PropertyDescription?] = []
        if let identifier = property.renamingIdentifier {
            candidates.append(entity.propertiesByName[identifier])
            candidates.append(entity.properties.first { $0.renamingIdentifier == identifier })
        }
        candidates.append(entity.propertiesByName[property.name])
        return candidates.lazy.compactMap { $0 }.first { !$0.isTransient }
    }

    // MARK: Comparing

    private mutating func compare(_ entity: EntityDescription) {
        let name = entity.name
        guard let sourceName = sourceOf[name], let old = source.entity(named: sourceName) else {
            changes.append(ModelChange(name, nil, .entityAdded))
            return
        }
        let isCustom = custom[sourceName]?.transform != nil
        if sourceName != name { changes.append(ModelChange(name, nil, .entityRenamed(from: sourceName))) }

        let oldRoot = old.rootEntity.name
        let newRoot = entity.rootEntity.name
        let oldSuper = old.superentity.map { destinationOf[$0.name] ?? "(removed) \($0.name)" }
        if sourceOf[newRoot] != oldRoot {
            changes.append(ModelChange(name, nil, .superentityChanged(from: old.superentity?.name, to: entity.superentity?.name),
                                       problem: "its objects would move to another entity hierarchy (from \(oldRoot)'s to \(newRoot)'s)"))
        } else if oldSuper != entity.superentity?.name {
            changes.append(ModelChange(name, nil, .superentityChanged(from: old.superentity?.name, to: entity.superentity?.name)))
        }
        if entity.isAbstract && !old.isAbstract {
            changes.append(ModelChange(name, nil, .madeAbstract, problem: isCustom ? nil : "its existing objects would have no concrete entity"))
        } else if !entity.isAbstract && old.isAbstract {
            changes.append(ModelChange(name, nil, .madeConcrete))
        }

        for property in entity.declaredProperties where !property.isTransient {
            compare(property, of: entity, with: old, isCustom: isCustom)
        }
        // Destination names by the source names they carry on, inherited properties included.
        var rename: [String: String] = [:]
        for property in entity.properties {
            if let previous = sourceProperty(of: property, in: old) { rename[previous.name] = property.name }
        }
        let added = entity.declaredProperties.filter { !$0.isTransient && sourceProperty(of: $0, in: old) == nil }
        for property in old.declaredProperties where !property.isTransient && rename[property.name] == nil {
            let candidates = custom[sourceName] != nil ? [] : added.filter { mayBeRenamed(property, to: $0) }.map(\.name)
            if property.attribute != nil {
                changes.append(removal(name, property.name, .attributeRemoved, kind: .attribute, candidates: candidates))
            } else {
                changes.append(removal(name, property.name, .relationshipRemoved, kind: .relationship, candidates: candidates))
            }
        }
        compareIndexes(of: entity, with: old, rename: rename)
    }

    private mutating func compare(_ property: PropertyDescription, of entity: EntityDescription, with old: EntityDescription,
                                  isCustom: Bool) {
        let name = entity.name
        guard let previous = sourceProperty(of: property, in: old) else {
            switch property {
            case .attribute(let a):
                let check = !a.isOptional && a.defaultValue == nil && !isCustom
                changes.append(ModelChange(name, a.name, .attributeAdded,
                                           dataRequirement: check ? "it is required and has no default value, so the store must hold no \(name) object" : nil))
            case .relationship(let r):
                changes.append(ModelChange(name, r.name, .relationshipAdded,
                                           dataRequirement: isCustom ? nil : Self.emptyRelationshipRequirement(r, entity: name)))
            }
            return
        }
        switch (property, previous) {
        case (.attribute(let a), .attribute(let p)):
            if p.name != a.name { changes.append(ModelChange(name, a.name, .attributeRenamed(from: p.name))) }
            if p.type != a.type {
                let ok = Self.isWidening(from: p.type, to: a.type) || isCustom
                changes.append(ModelChange(name, a.name, .attributeTypeChanged(from: p.type.description, to: a.type.description),
                                           problem: ok ? nil : "only widening integers (16 to 32 to 64 bits) and float to double are inferred"))
            }
            if p.isOptional && !a.isOptional {
                let filled = a.defaultValue != nil || isCustom
                changes.append(ModelChange(name, a.name, .attributeMadeRequired,
                                           dataRequirement: filled ? nil : "it has no default value, so every \(name) object must already have a value for it"))
            } else if !p.isOptional && a.isOptional {
                changes.append(ModelChange(name, a.name, .attributeMadeOptional))
            }
        case (.relationship(let r), .relationship(let p)):
            if p.name != r.name { changes.append(ModelChange(name, r.name, .relationshipRenamed(from: p.name))) }
            if sourceOf[r.destinationEntityName] != p.destinationEntityName {
                changes.append(ModelChange(name, r.name, .relationshipDestinationChanged(from: p.destinationEntityName, to: r.destinationEntityName),
                                           problem: "its existing destinations are not \(r.destinationEntityName) objects"))
            }
            if r.isToMany && !p.isToMany {
                changes.append(ModelChange(name, r.name, .relationshipBecameToMany))
            } else if !r.isToMany && p.isToMany {
                changes.append(ModelChange(name, r.name, .relationshipBecameToOne,
                                           problem: "objects with several destinations would lose all but one"))
            } else if r.isToMany && r.isOrdered != p.isOrdered {
                changes.append(ModelChange(name, r.name, .relationshipOrderingChanged(isOrdered: r.isOrdered)))
            }
            if p.isOptional && !r.isOptional {
                let requirement = r.isToMany
                    ? (r.minCount > 0 ? "every \(name) object must already hold at least \(r.minCount) of them" : nil)
                    : "every \(name) object must already have a destination for it"
                changes.append(ModelChange(name, r.name, .relationshipMadeRequired, dataRequirement: isCustom ? nil : requirement))
            } else if !p.isOptional && r.isOptional {
                changes.append(ModelChange(name, r.name, .relationshipMadeOptional))
            }
            if r.isToMany && p.isToMany && (r.minCount != p.minCount || r.maxCount != p.maxCount) {
                let tighter = r.minCount > p.minCount || (r.maxCount.map { new in p.maxCount.map { new < $0 } ?? true } ?? false)
                changes.append(ModelChange(name, r.name, .relationshipCountsChanged(minCount: r.minCount, maxCount: r.maxCount),
                                           dataRequirement: tighter && !isCustom ? "every \(name) object's count must already fit" : nil))
            }
        default:
            changes.append(ModelChange(name, property.name, .propertyKindChanged,
                                       problem: "an attribute's values cannot become a relationship's or the reverse"))
        }
    }

    /// What an added relationship asks of existing objects, which start with no destination: nothing
    /// when it is optional or a to-many with no minimum (an empty non-optional to-many is valid, as in
    /// Core Data, whose counts only bind a non-empty or positive-minimum to-many).
    static func emptyRelationshipRequirement(_ r: RelationshipDescription, entity: String) -> String? {
        if r.isOptional { return nil }
        if r.isToMany {
            return r.minCount > 0 ? "it needs at least \(r.minCount) destinations, so the store must hold no \(entity) object" : nil
        }
        return "it is required and existing objects have no destination for it, so the store must hold no \(entity) object"
    }

    static func isWidening(from old: AttributeType, to new: AttributeType) -> Bool {
        let integers: [AttributeType] = [.integer16, .integer32, .integer64]
        if let a = integers.firstIndex(of: old), let b = integers.firstIndex(of: new) { return a < b }
        return old == .float && new == .double
    }

    /// An added property may be a renamed removed one when it is of the same kind and holds the same
    /// values: an attribute of the same type, a relationship to the same entity with the same arity.
    private func mayBeRenamed(_ old: PropertyDescription, to new: PropertyDescription) -> Bool {
        switch (old, new) {
        case (.attribute(let a), .attribute(let b)):
            return a.type == b.type
        case (.relationship(let a), .relationship(let b)):
            return destinationOf[a.destinationEntityName] == b.destinationEntityName && a.isToMany == b.isToMany
        default:
            return false
        }
    }

    /// Indexes and constraints compared by what they cover, with source property names translated to
    /// destination names, so a renamed attribute's index is not reported as replaced.
    private mutating func compareIndexes(of entity: EntityDescription, with old: EntityDescription, rename: [String: String]) {
        func translate(_ names: [String]) -> [String] { names.map { rename[$0] ?? "(removed) \($0)" } }
        func indexes(_ e: EntityDescription, _ map: ([String]) -> [String]) -> [String: [String]] {
            var result: [String: [String]] = [:]
            for index in e.indexes {
                result[index.name] = map(index.elements.map(\.propertyName)).enumerated().map {
                    $1 + (index.elements[$0].isAscending ? "" : " desc")
                }
            }
            for attribute in e.declaredProperties.compactMap(\.attribute) where attribute.isIndexed {
                result["\(attribute.name) (indexed attribute)"] = map([attribute.name])
            }
            return result
        }
        let before = indexes(old, translate)
        let after = indexes(entity) { $0 }
        for (name, elements) in after.sorted(by: { $0.key < $1.key }) where !before.values.contains(elements) {
            changes.append(ModelChange(entity.name, nil, .indexAdded(name)))
        }
        for (name, elements) in before.sorted(by: { $0.key < $1.key }) where !after.values.contains(elements) {
            changes.append(ModelChange(entity.name, nil, .indexRemoved(name)))
        }
        let oldConstraints = old.uniquenessConstraints.map(translate)
        for constraint in entity.uniquenessConstraints where !oldConstraints.contains(constraint) {
            changes.append(ModelChange(entity.name, nil, .uniquenessConstraintAdded(constraint)))
        }
        for constraint in oldConstraints where !entity.uniquenessConstraints.contains(constraint) {
            changes.append(ModelChange(entity.name, nil, .uniquenessConstraintRemoved(constraint)))
        }
    }
}
