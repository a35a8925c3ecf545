/// Where each declaration of a model file is, so that a problem `ManagedObjectModel.init` finds in the
/// model as a whole (a `ModelError`, which knows entity and property names but not files) can be reported
/// at the element that caused it.
struct XcodeSourceMap {
    /// The `contents` file; the location of errors no element can be found for.
    let path: String
    private var entities: [String: XcodeModelError.Location] = [:]
    private var properties: [String: XcodeModelError.Location] = [:]
    private var indexes: [String: XcodeModelError.Location] = [:]
    private var constraints: [String: XcodeModelError.Location] = [:]
    private var configurations: [String: XcodeModelError.Location] = [:]
    private var members: [String: XcodeModelError.Location] = [:]

    init(path: String) {
        self.path = path
    }

    // A name declared twice keeps its last location: that is the declaration a duplicate error is about.

    mutating func recordEntity(_ entity: String, at location: XcodeModelError.Location) {
        entities[entity] = location
    }

    mutating func recordProperty(_ property: String, of entity: String, at location: XcodeModelError.Location) {
        properties[entity + "\u{0}" + property] = location
    }

    mutating func recordIndex(_ index: String, of entity: String, at location: XcodeModelError.Location) {
        indexes[entity + "\u{0}" + index] = location
    }

    mutating func recordConstraint(_ properties: [String], of entity: String, at location: XcodeModelError.Location) {
        constraints[entity + "\u{0}" + properties.joined(separator: "\u{0}")] = location
    }

    mutating func recordConfiguration(_ configuration: String, at location: XcodeModelError.Location) {
        configurations[configuration] = location
    }

    mutating func recordMember(_ entity: String, of configuration: String, at location: XcodeModelError.Location) {
        members[configuration + "\u{0}" + entity] = location
    }

    /// The element a model error is about: the property, index, constraint or configuration member it
    /// names when the file declares one, else the entity or configuration, else the file itself.
    func location(of error: ModelError) -> XcodeModelError.Location {
        switch error {
        case .duplicateEntity(let entity), .unknownSuperentity(let entity, _):
            return entityLocation(entity)
        case .inheritanceCycle(let cycle):
            return cycle.first.map(entityLocation) ?? file
        case .invalidName(let name, let owner, _):
            if let owner {
                return properties[owner + "\u{0}" + name] ?? indexes[owner + "\u{0}" + name] ?? entityLocation(owner)
            }
            return entities[name] ?? configurations[name] ?? file
        case .duplicateProperty(let entity, let property), .shadowedProperty(let entity, let property, _),
            .unknownDestination(let entity, let property, _), .missingInverse(let entity, let property, _, _),
            .inverseMismatch(let entity, let property, _, _), .invalidRelationship(let entity, let property, _),
            .transientConflict(let entity, let property, _), .invalidDefaultValue(let entity, let property, _),
            .invalidRegex(let entity, let property, _, _), .inapplicableValidationRule(let entity, let property, _, _),
            .undefinedTypeNotTransient(let entity, let property),
            .invalidDerivation(let entity, let property, _, _), .invalidFetchedProperty(let entity, let property, _):
            return propertyLocation(property, of: entity)
        case .unknownProperty(let entity, _, let usage), .unindexableProperty(let entity, _, let usage, _),
            .invalidIndex(let entity, let usage, _):
            return place(usage, of: entity)
        case .inheritedUniquenessConstraint(let entity, let properties, _):
            return place(.uniquenessConstraint(properties), of: entity)
        case .duplicateIndex(let entity, let engineName):
            // Engine index names are "<Entity>_<index or attribute name>".
            let name = String(engineName.dropFirst(entity.count + 1))
            return indexes[entity + "\u{0}" + name] ?? properties[entity + "\u{0}" + name] ?? entityLocation(entity)
        case .unknownConfigurationEntity(let configuration, let entity):
            return members[configuration + "\u{0}" + entity] ?? configurations[configuration] ?? file
        case .duplicateConfiguration(let configuration):
            return configurations[configuration] ?? file
        }
    }

    private var file: XcodeModelError.Location { XcodeModelError.Location(path: path) }

    private func entityLocation(_ name: String) -> XcodeModelError.Location {
        entities[name] ?? file
    }

    func propertyLocation(_ name: String, of entity: String) -> XcodeModelError.Location {
        properties[entity + "\u{0}" + name] ?? entityLocation(entity)
    }

    private func place(_ usage: ModelError.Usage, of entity: String) -> XcodeModelError.Location {
        switch usage {
        case .index(let name):
            return indexes[entity + "\u{0}" + name] ?? entityLocation(entity)
        case .uniquenessConstraint(let properties):
            return constraints[entity + "\u{0}" + properties.joined(separator: "\u{0}")] ?? entityLocation(entity)
        }
    }
}
