/// The model checks of the two kinds of computed properties: derived attributes (computed at save,
/// stored) and fetched properties (computed when read, never stored).
extension ModelResolver {
    // MARK: Fetched properties

    /// Fetched properties are inherited like other properties: a sub-entity's list is its ancestors'
    /// followed by its own, and no name may repeat along the way or clash with a stored property.
    mutating func resolveFetchedProperties(in order: [Int]) throws(ModelError) {
        resolvedFetchedProperties = Array(repeating: [], count: declarations.count)
        for index in order {
            let entity = declarations[index].name
            let inherited = superIndex[index].map { resolvedFetchedProperties[$0] } ?? []
            var names = Set(inherited.map(\.name))
            for fetched in declarations[index].fetchedProperties {
                try checkFetchedName(fetched.name, entity: entity)
                if let stored = resolvedByName[index][fetched.name] {
                    throw stored.entityName == entity
                        ? .duplicateProperty(entity: entity, property: fetched.name)
                        : .shadowedProperty(entity: entity, property: fetched.name, superentity: stored.entityName ?? "")
                }
                if !names.insert(fetched.name).inserted {
                    if let shadowed = inherited.first(where: { $0.name == fetched.name }) {
                        throw .shadowedProperty(entity: entity, property: fetched.name, superentity: shadowed.entityName ?? "")
                    }
                    throw .duplicateProperty(entity: entity, property: fetched.name)
                }
            }
            resolvedFetchedProperties[index] = inherited + declarations[index].fetchedProperties
        }
        // A sub-entity's stored property may not reuse an inherited fetched property's name either.
        for index in order {
            guard let parent = superIndex[index] else { continue }
            for fetched in resolvedFetchedProperties[parent] {
                if let property = ownProperties[index].first(where: { $0.name == fetched.name }) {
                    throw .shadowedProperty(
                        entity: declarations[index].name, property: property.name, superentity: fetched.entityName ?? "")
                }
            }
        }
    }

    private func checkFetchedName(_ name: String, entity: String) throws(ModelError) {
        if name.isEmpty || name.hasPrefix("_") || name.contains(".")
            || name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        {
            throw .invalidName(
                name, entity: entity,
                reason: "a property name cannot be empty, start with '_', or contain '.', whitespace or control characters")
        }
    }

    /// The destination exists, the predicate parses with Core Data's two variables, and the sort keys
    /// name properties of the destination.
    func checkFetchedProperties(of index: Int) throws(ModelError) {
        let entity = declarations[index].name
        for fetched in declarations[index].fetchedProperties {
            func invalid(_ reason: String) -> ModelError {
                .invalidFetchedProperty(entity: entity, property: fetched.name, reason: reason)
            }
            guard let destination = indexByName[fetched.destinationEntityName] else {
                throw invalid("it fetches entity '\(fetched.destinationEntityName)', which the model does not declare")
            }
            if let format = fetched.predicateFormat {
                do {
                    try PredicateParser.check(
                        format,
                        variables: [FetchedPropertyDescription.sourceVariable, FetchedPropertyDescription.propertyVariable])
                } catch {
                    throw invalid("its predicate \(format) does not parse: \(error)")
                }
            }
            for key in fetched.sortKeys {
                if case .failure(let reason) = walk(key.keyPath, from: destination, toOneOnly: true) {
                    throw invalid("sort key \(key.keyPath.joined(separator: ".")) \(reason)")
                }
            }
        }
    }

    // MARK: Derived attributes

    /// Each derived attribute's expression parses, leads through the model to a property of the kind the
    /// form needs, and yields values the attribute's type holds.
    func checkDerivedAttributes(of index: Int) throws(ModelError) {
        let entity = declarations[index].name
        for case .attribute(let attribute) in ownProperties[index] {
            guard let text = attribute.derivationExpression, let parsed = attribute.derivation else { continue }
            func invalid(_ reason: String) -> ModelError {
                .invalidDerivation(entity: entity, attribute: attribute.name, expression: text, reason: reason)
            }
            let expression: DerivationExpression
            switch parsed {
            case .success(let value): expression = value
            case .failure(let failure): throw invalid(failure.reason)
            }
            if attribute.isTransient {
                throw invalid("a derived attribute is stored, so it cannot be transient")
            }
            if expression.path.first == attribute.name {
                throw invalid("it derives from itself")
            }
            let type = attribute.type
            switch expression.form {
            case .now:
                if type != .date { throw invalid("now() is a date, and the attribute is \(type)") }
            case .keyPath(let path):
                let source = try attributeType(at: path, from: index, invalid)
                if !(source == type || (source.isNumeric && type.isNumeric)) {
                    throw invalid("\(path.joined(separator: ".")) is \(source), and the attribute is \(type)")
                }
            case .function(let function, let path):
                let source = try attributeType(at: path, from: index, invalid)
                if source != .string { throw invalid("\(function.rawValue): needs a string, and \(path.joined(separator: ".")) is \(source)") }
                if type != .string { throw invalid("\(function.rawValue): gives a string, and the attribute is \(type)") }
            case .count(let path):
                _ = try toManyDestination(at: path, from: index, invalid)
                if !type.isNumeric { throw invalid("@count is a number, and the attribute is \(type)") }
            case .aggregate(let aggregate, let path, let name):
                let destination = try toManyDestination(at: path, from: index, invalid)
                let source = try attributeType(at: [name], from: destination, invalid)
                switch aggregate {
                case .sum, .avg:
                    if !source.isNumeric { throw invalid("@\(aggregate.rawValue) needs a number, and \(name) is \(source)") }
                    if !type.isNumeric { throw invalid("@\(aggregate.rawValue) is a number, and the attribute is \(type)") }
                case .max, .min:
                    if !(source.isNumeric || source == .date || source == .string) {
                        throw invalid("@\(aggregate.rawValue) needs numbers, dates or strings, and \(name) is \(source)")
                    }
                    if !(source == type || (source.isNumeric && type.isNumeric)) {
                        throw invalid("@\(aggregate.rawValue).\(name) is \(source), and the attribute is \(type)")
                    }
                }
            }
        }
    }

    private func attributeType(
        at path: [String], from index: Int, _ invalid: (String) -> ModelError
    ) throws(ModelError) -> AttributeType {
        switch walk(path, from: index, toOneOnly: true) {
        case .failure(let reason): throw invalid("\(path.joined(separator: ".")) \(reason)")
        case .success(let end):
            guard case .attribute(let attribute) = end.property else {
                throw invalid("\(path.joined(separator: ".")) is a relationship; a derivation reads an attribute")
            }
            return attribute.type
        }
    }

    private func toManyDestination(
        at path: [String], from index: Int, _ invalid: (String) -> ModelError
    ) throws(ModelError) -> Int {
        let joined = path.joined(separator: ".")
        guard let last = path.last else { throw invalid("@count and aggregates need a to-many relationship before them") }
        switch walk(Array(path.dropLast()), from: index, toOneOnly: true, allowsEmpty: true) {
        case .failure(let reason): throw invalid("\(joined) \(reason)")
        case .success(let end):
            guard case .relationship(let relationship)? = resolvedByName[end.entity][last], relationship.isToMany,
                let destination = indexByName[relationship.destinationEntityName]
            else {
                throw invalid("\(joined) is not a to-many relationship of '\(declarations[end.entity].name)'")
            }
            return destination
        }
    }

    struct PathEnd {
        /// The entity the last component is looked up in.
        let entity: Int
        /// The last component's property; nil for an empty path.
        let property: PropertyDescription?
    }

    /// Follows `path` from entity `index`: every component but the last must be a relationship (to-one
    /// when `toOneOnly`), and the last must exist. On failure, a reason that completes "path …".
    func walk(
        _ path: [String], from index: Int, toOneOnly: Bool, allowsEmpty: Bool = false
    ) -> Swift.Result<PathEnd, PathFailure> {
        if path.isEmpty {
            return allowsEmpty ? .success(PathEnd(entity: index, property: nil)) : .failure(PathFailure("is empty"))
        }
        var current = index
        for (position, name) in path.enumerated() {
            guard let property = resolvedByName[current][name] else {
                return .failure(PathFailure("names '\(name)', which entity '\(declarations[current].name)' does not have"))
            }
            if position == path.count - 1 { return .success(PathEnd(entity: current, property: property)) }
            guard case .relationship(let relationship) = property, let next = indexByName[relationship.destinationEntityName] else {
                return .failure(PathFailure("goes through '\(name)', which is not a relationship"))
            }
            if toOneOnly && relationship.isToMany {
                return .failure(PathFailure("goes through to-many relationship '\(name)', which has no single value"))
            }
            current = next
        }
        return .failure(PathFailure("is empty"))
    }
}

/// Why a key path does not lead through a model.
struct PathFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
