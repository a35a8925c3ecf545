import Foundation

/// Checks a model's declarations and resolves them into a `ModelGraph`: the work behind
/// `ManagedObjectModel.init`, kept apart so the model type reads as its public surface.
///
/// Checks run in phases (names, attributes, inheritance, relationships and indexes, engine index names,
/// configurations), each over the entities in declared order, and the first problem is thrown.
struct ModelResolver {
    let declarations: [EntityDeclaration]
    let configurations: [String: Set<String>]

    private(set) var indexByName: [String: Int] = [:]
    private(set) var superIndex: [Int?] = []
    private(set) var ownProperties: [[PropertyDescription]] = []
    /// Fetched properties per entity, inherited first (`resolveFetchedProperties`).
    var resolvedFetchedProperties: [[FetchedPropertyDescription]] = []
    private(set) var resolvedProperties: [[PropertyDescription]] = []
    private(set) var resolvedByName: [[String: PropertyDescription]] = []

    struct Result {
        let graph: ModelGraph
        let entityVersionHashes: [String: String]
        let versionHash: String
    }

    init(declarations: [EntityDeclaration], configurations: [String: Set<String>]) {
        self.declarations = declarations
        self.configurations = configurations
    }

    mutating func resolve() throws(ModelError) -> Result {
        try checkEntityNames()
        for declaration in declarations {
            ownProperties.append(try checkOwnProperties(of: declaration))
        }
        addHiddenInverses()
        try resolveSuperentities()
        let order = hierarchyOrder()
        try resolveProperties(in: order)
        try resolveFetchedProperties(in: order)
        for (index, declaration) in declarations.enumerated() {
            try checkRelationships(of: index)
            try checkDerivedAttributes(of: index)
            try checkFetchedProperties(of: index)
            for constraint in declaration.uniquenessConstraints {
                try checkUniquenessConstraint(constraint, of: index)
            }
            for fetchIndex in declaration.indexes {
                try checkName(fetchIndex.name, entity: declaration.name)
                try checkIndexElements(fetchIndex.elements.map(\.propertyName), usage: .index(fetchIndex.name), of: index)
            }
        }
        let graph = makeGraph()
        try checkEngineIndexNames(graph)
        try checkConfigurations()
        var hashes: [String: String] = [:]
        for storage in graph.entities {
            hashes[storage.declaration.name] = VersionHash.entityHash(storage.declaration)
        }
        return Result(graph: graph, entityVersionHashes: hashes, versionHash: VersionHash.modelHash(hashes))
    }

    // MARK: Names

    private static let reservedPrefix = "_"

    /// Names become engine column and index names and key-path components, so they stay plain.
    private func checkName(_ name: String, entity: String?) throws(ModelError) {
        if name.isEmpty {
            throw .invalidName(name, entity: entity, reason: "a name cannot be empty")
        }
        if name.hasPrefix(Self.reservedPrefix) {
            throw .invalidName(name, entity: entity, reason: "names starting with '_' are reserved for storage columns")
        }
        if name.contains(".") {
            throw .invalidName(name, entity: entity, reason: "'.' separates the components of a key path")
        }
        if name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
            throw .invalidName(name, entity: entity, reason: "names cannot contain whitespace or control characters")
        }
    }

    private mutating func checkEntityNames() throws(ModelError) {
        for (index, declaration) in declarations.enumerated() {
            try checkName(declaration.name, entity: nil)
            if indexByName.updateValue(index, forKey: declaration.name) != nil {
                throw .duplicateEntity(declaration.name)
            }
        }
    }

    // MARK: Attributes

    /// Checks what an entity's own properties say about themselves and returns them with attribute defaults
    /// in canonical form.
    private func checkOwnProperties(of declaration: EntityDeclaration) throws(ModelError) -> [PropertyDescription] {
        var seen = Set<String>()
        var result: [PropertyDescription] = []
        for property in declaration.properties {
            try checkName(property.name, entity: declaration.name)
            if !seen.insert(property.name).inserted {
                throw .duplicateProperty(entity: declaration.name, property: property.name)
            }
            switch property {
            case .attribute(let attribute):
                result.append(.attribute(try checkAttribute(attribute, entity: declaration.name)))
            case .relationship:
                result.append(property)
            }
        }
        return result
    }

    private func checkAttribute(_ attribute: AttributeDescription, entity: String) throws(ModelError) -> AttributeDescription {
        // A transformable type's codec is not checked here: it is looked up when a value is stored or read,
        // so a model loads before the app registers its transformers, and one it never uses needs none.
        let name = attribute.name
        for rule in attribute.validationRules {
            try checkRule(rule, of: attribute, entity: entity)
        }
        if attribute.type == .undefined {
            guard attribute.isTransient else { throw .undefinedTypeNotTransient(entity: entity, attribute: name) }
        }
        if attribute.isTransient && attribute.isIndexed {
            throw .transientConflict(entity: entity, attribute: name, reason: "it has no column to index")
        }
        if attribute.isTransient && !attribute.isOptional && attribute.defaultValue == nil {
            throw .transientConflict(
                entity: entity, attribute: name,
                reason: "a required transient attribute needs a default value: fetched objects start without "
                    + "its value, so they could never be saved again")
        }
        guard let defaultValue = attribute.defaultValue, attribute.type != .undefined else { return attribute }
        let stored: Value
        do {
            stored = try attribute.storageValue(for: defaultValue)
        } catch {
            throw .invalidDefaultValue(entity: entity, attribute: name, reason: error.description)
        }
        if case .transformable = attribute.type { return attribute }
        return attribute.withDefaultValue(try? attribute.type.swiftValue(from: stored))
    }

    private func checkRule(_ rule: ValidationRule, of attribute: AttributeDescription, entity: String) throws(ModelError) {
        func inapplicable(_ reason: String) -> ModelError {
            .inapplicableValidationRule(entity: entity, attribute: attribute.name, rule: rule.description, reason: reason)
        }
        let type = attribute.type
        switch rule {
        case .range(let min, let max):
            let bounds = [min, max].compactMap { $0 }
            if type.isNumeric {
                if !bounds.allSatisfy(\.isNumeric) { throw inapplicable("a \(type) attribute needs numeric bounds") }
            } else if type == .date {
                if bounds.contains(where: \.isNumeric) { throw inapplicable("a date attribute needs date bounds") }
            } else {
                throw inapplicable("ranges apply to numbers and dates, not \(type)")
            }
            if let min, let max, max.compare(min.comparableValue) == .orderedDescending {
                throw inapplicable("the minimum is above the maximum")
            }
        case .length(let min, let max):
            guard type == .string || type == .binaryData else {
                throw inapplicable("lengths apply to strings and binary data, not \(type)")
            }
            if (min ?? 0) < 0 || (max ?? 0) < 0 { throw inapplicable("lengths cannot be negative") }
            if let min, let max, min > max { throw inapplicable("the minimum is above the maximum") }
        case .regex(let pattern):
            guard type == .string else { throw inapplicable("regular expressions apply to strings, not \(type)") }
            do {
                _ = try NSRegularExpression(pattern: pattern)
            } catch {
                throw .invalidRegex(entity: entity, attribute: attribute.name, pattern: pattern, reason: SafeDescription.of(error))
            }
        case .custom:
            break
        }
    }

    // MARK: Inheritance

    private mutating func resolveSuperentities() throws(ModelError) {
        superIndex = try declarations.map { (declaration) throws(ModelError) -> Int? in
            guard let name = declaration.superentityName else { return nil }
            guard let index = indexByName[name] else {
                throw .unknownSuperentity(entity: declaration.name, superentity: name)
            }
            return index
        }
        for start in declarations.indices {
            var path = [start]
            var seen: Set<Int> = [start]
            var current = superIndex[start]
            while let index = current {
                if index == start { throw .inheritanceCycle(path.map { declarations[$0].name }) }
                // A loop that does not pass through `start` is reported from one of its own members.
                if !seen.insert(index).inserted { break }
                path.append(index)
                current = superIndex[index]
            }
        }
    }

    private func depth(of index: Int) -> Int {
        var depth = 0
        var current = superIndex[index]
        while let next = current {
            depth += 1
            current = superIndex[next]
        }
        return depth
    }

    /// Entity indexes ordered so that every superentity comes before its sub-entities.
    private func hierarchyOrder() -> [Int] {
        declarations.indices.sorted { (depth(of: $0), $0) < (depth(of: $1), $1) }
    }

    private mutating func resolveProperties(in order: [Int]) throws(ModelError) {
        resolvedProperties = Array(repeating: [], count: declarations.count)
        resolvedByName = Array(repeating: [:], count: declarations.count)
        for index in order {
            let inherited = superIndex[index].map { resolvedProperties[$0] } ?? []
            let inheritedByName = superIndex[index].map { resolvedByName[$0] } ?? [:]
            for property in ownProperties[index] {
                if let shadowed = inheritedByName[property.name] {
                    throw .shadowedProperty(
                        entity: declarations[index].name, property: property.name,
                        superentity: shadowed.entityName ?? declarations[index].superentityName ?? "")
                }
            }
            resolvedProperties[index] = inherited + ownProperties[index]
            resolvedByName[index] = inheritedByName.merging(ownProperties[index].map { ($0.name, $0) }) { a, _ in a }
        }
    }

    private func isKind(_ index: Int, of other: Int) -> Bool {
        var current: Int? = index
        while let next = current {
            if next == other { return true }
            current = superIndex[next]
        }
        return false
    }

    // MARK: Relationships

    /// Gives the destination of every one-sided relationship a hidden to-many inverse (see
    /// `RelationshipDescription.hiddenInverse(of:declaredBy:)`), and tells the relationship its name, so that
    /// the object graph, the store's repair pass and fetches keep using the two-sided machinery. A
    /// relationship whose destination is unknown gets none; `checkRelationships` reports it.
    private mutating func addHiddenInverses() {
        for index in declarations.indices {
            let entity = declarations[index].name
            for (position, property) in ownProperties[index].enumerated() {
                guard case .relationship(let relationship) = property, relationship.inverseName == nil,
                    !relationship.isHiddenInverse, let destination = indexByName[relationship.destinationEntityName]
                else { continue }
                let hidden = RelationshipDescription.hiddenInverse(of: relationship, declaredBy: entity)
                ownProperties[index][position] = .relationship(relationship.servedBy(hiddenInverse: hidden.name))
                ownProperties[destination].append(.relationship(hidden))
            }
        }
    }

    private func checkRelationships(of index: Int) throws(ModelError) {
        let entity = declarations[index].name
        for case .relationship(let relationship) in ownProperties[index] where !relationship.isHiddenInverse {
            let name = relationship.name
            guard let destination = indexByName[relationship.destinationEntityName] else {
                throw .unknownDestination(entity: entity, relationship: name, destination: relationship.destinationEntityName)
            }
            if relationship.isOrdered && !relationship.isToMany {
                throw .invalidRelationship(entity: entity, relationship: name, reason: "only a to-many relationship can be ordered")
            }
            if relationship.isToMany {
                if relationship.minCount < 0 {
                    throw .invalidRelationship(entity: entity, relationship: name, reason: "minCount \(relationship.minCount) is negative")
                }
                if let max = relationship.maxCount, max < Swift.max(1, relationship.minCount) {
                    throw .invalidRelationship(
                        entity: entity, relationship: name,
                        reason: "maxCount \(max) is below \(Swift.max(1, relationship.minCount))")
                }
            }
            // One-sided: its hidden inverse was added by `addHiddenInverses`.
            guard let inverseName = relationship.inverseName else { continue }
            guard let inverseProperty = resolvedByName[destination][inverseName] else {
                throw .missingInverse(
                    entity: entity, relationship: name, destination: relationship.destinationEntityName,
                    inverse: inverseName)
            }
            func mismatch(_ reason: String) -> ModelError {
                .inverseMismatch(entity: entity, relationship: name, inverse: inverseName, reason: reason)
            }
            guard case .relationship(let inverse) = inverseProperty, !inverse.isHiddenInverse else {
                throw mismatch("'\(inverseProperty.qualifiedName)' is an attribute")
            }
            guard let back = inverse.inverseName else {
                throw mismatch("'\(inverse.qualifiedName)' has no inverse (leave this one without an inverse too)")
            }
            if back != name {
                throw mismatch("'\(inverse.qualifiedName)' names '\(back)' as its inverse")
            }
            if inverse.isTransient != relationship.isTransient {
                throw mismatch("one of the two is transient and the other is stored")
            }
            // An unknown destination of the inverse is reported when its own entity is checked.
            if let back = indexByName[inverse.destinationEntityName], !isKind(index, of: back) {
                throw mismatch("'\(inverse.qualifiedName)' points to '\(inverse.destinationEntityName)', which '\(entity)' is not a kind of")
            }
        }
    }

    // MARK: Uniqueness constraints and indexes

    private func checkUniquenessConstraint(_ properties: [String], of index: Int) throws(ModelError) {
        try checkIndexElements(properties, usage: .uniquenessConstraint(properties), of: index)
        let entity = declarations[index].name
        if let superentity = declarations[index].superentityName,
            properties.allSatisfy({ resolvedByName[index][$0]?.entityName != entity })
        {
            throw .inheritedUniquenessConstraint(entity: entity, properties: properties, superentity: superentity)
        }
    }

    private func checkIndexElements(_ names: [String], usage: ModelError.Usage, of index: Int) throws(ModelError) {
        let entity = declarations[index].name
        if names.isEmpty { throw .invalidIndex(entity: entity, usage: usage, reason: "it names no properties") }
        var seen = Set<String>()
        for name in names {
            if !seen.insert(name).inserted {
                throw .invalidIndex(entity: entity, usage: usage, reason: "it names '\(name)' twice")
            }
            guard let property = resolvedByName[index][name] else {
                throw .unknownProperty(entity: entity, property: name, usage: usage)
            }
            if property.isTransient {
                throw .unindexableProperty(entity: entity, property: name, usage: usage, reason: "transient properties are not stored")
            }
            if property.relationship?.isToMany == true {
                throw .unindexableProperty(
                    entity: entity, property: name, usage: usage, reason: "a to-many relationship has no single value to index")
            }
        }
    }

    private func checkEngineIndexNames(_ graph: ModelGraph) throws(ModelError) {
        for (rootIndex, root) in graph.entities.enumerated() where root.superIndex == nil {
            var used: Set<String> = []
            if !root.descendantIndices.isEmpty { used.insert(StorageMapping.entityIndexName(root: root.declaration.name)) }
            for member in [rootIndex] + root.descendantIndices {
                let declaration = graph.entities[member].declaration
                for name in StorageMapping.indexNames(of: declaration) where !used.insert(name).inserted {
                    throw .duplicateIndex(entity: declaration.name, index: name)
                }
            }
        }
    }

    // MARK: Configurations

    private func checkConfigurations() throws(ModelError) {
        for name in configurations.keys.sorted() {
            try checkName(name, entity: nil)
            for entity in configurations[name]!.sorted() where indexByName[entity] == nil {
                throw .unknownConfigurationEntity(configuration: name, entity: entity)
            }
        }
    }

    // MARK: Graph

    private func makeGraph() -> ModelGraph {
        var subIndices = Array(repeating: [Int](), count: declarations.count)
        for (index, parent) in superIndex.enumerated() {
            if let parent { subIndices[parent].append(index) }
        }
        for index in subIndices.indices {
            subIndices[index].sort { declarations[$0].name < declarations[$1].name }
        }
        func descendants(of index: Int) -> [Int] {
            subIndices[index].flatMap { [$0] + descendants(of: $0) }
        }
        func root(of index: Int) -> Int {
            var current = index
            while let parent = superIndex[current] { current = parent }
            return current
        }
        let entities = declarations.indices.map { index in
            let declaration = declarations[index]
            return EntityStorage(
                declaration: EntityDeclaration(
                    name: declaration.name, objectType: declaration.objectType, isAbstract: declaration.isAbstract,
                    superentityName: declaration.superentityName, properties: ownProperties[index],
                    uniquenessConstraints: declaration.uniquenessConstraints, indexes: declaration.indexes,
                    renamingIdentifier: declaration.renamingIdentifier, fetchedProperties: declaration.fetchedProperties,
                    userInfo: declaration.userInfo),
                superIndex: superIndex[index], subIndices: subIndices[index], descendantIndices: descendants(of: index),
                rootIndex: root(of: index), properties: resolvedProperties[index],
                fetchedProperties: resolvedFetchedProperties[index])
        }
        return ModelGraph(entities: entities)
    }
}

extension ValidationBound {
    /// The bound as a value that `compare(_:)` accepts, for checking one bound against the other.
    var comparableValue: Any {
        switch self {
        case .integer(let i): return i
        case .double(let d): return d
        case .decimal(let d): return d
        case .date(let d): return d
        }
    }
}
