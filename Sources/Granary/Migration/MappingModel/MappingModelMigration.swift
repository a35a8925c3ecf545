import Foundation

/// Carries out one migration step through a mapping model, as Core Data's migration manager does in
/// its three passes: destination objects are made for the source objects of each entity mapping (the
/// associations remembered by mapping name), then their relationships are filled through those
/// associations (and the inverse sides completed), then every object is validated.
///
/// It works on whole tables in memory: a mapping model may turn one object into several of other
/// entities, so rows cannot stream. An object that its entity mapping makes first from a source object
/// of the same table keeps that object's key, so object URIs stay valid where they can.
struct MappingModelMigration {
    static let byEntityMapping = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    static let bySourceRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"

    let step: InferredMapping
    let model: MappingModel
    let policies: [String: EntityMigrationPolicy]
    let store: UUID

    final class SourceObject {
        let entity: EntityDescription
        let table: TableID
        let key: Int64
        let row: Row
        init(entity: EntityDescription, table: TableID, key: Int64, row: Row) {
            self.entity = entity
            self.table = table
            self.key = key
            self.row = row
        }
        var reference: RowReference { RowReference(table: table, key: key) }
    }

    final class DestinationObject {
        let entity: EntityDescription
        let table: TableID
        let key: Int64
        var version: Value = .int(1)
        var values: [String: Value] = [:]
        var relations: [String: [DestinationObject]] = [:]
        init(entity: EntityDescription, table: TableID, key: Int64) {
            self.entity = entity
            self.table = table
            self.key = key
        }

        func relate(_ name: String, _ other: DestinationObject, toMany: Bool) {
            if toMany {
                if !(relations[name] ?? []).contains(where: { $0 === other }) { relations[name, default: []].append(other) }
            } else {
                relations[name] = [other]
            }
        }
    }

    /// What an expression evaluates to.
    enum Result {
        case stored(Value, AttributeType)
        case swift((any Sendable)?)
        case sources([SourceObject])
        case destinations([DestinationObject])
    }

    /// The problems of the mapping against its two versions, found before any row is read.
    static func problems(of model: MappingModel, to destination: ManagedObjectModel,
                         policies: [String: EntityMigrationPolicy]) -> [String] {
        var problems: [String] = []
        let names = Set(model.entityMappings.map(\.name))
        for mapping in model.entityMappings {
            if let policy = mapping.migrationPolicyClassName, policies[policy] == nil {
                problems.append("entity mapping \(mapping.name) names the migration policy \(policy), which is not registered in MigrationOptions.migrationPolicies")
            }
            guard let name = mapping.destinationEntityName, let entity = destination.entity(named: name) else { continue }
            for property in mapping.attributeMappings + mapping.relationshipMappings where entity.propertiesByName[property.name] == nil {
                problems.append("entity mapping \(mapping.name) maps \(name).\(property.name), which the version \(StoreMigrator.label(destination)) does not have")
            }
            for property in mapping.relationshipMappings {
                if case .function(_, byEntityMapping, let arguments)? = property.valueExpression, case .string(let through)? = arguments.first,
                   !names.contains(through) {
                    problems.append("entity mapping \(mapping.name) fills \(name).\(property.name) through the entity mapping \(through), which the mapping model does not have")
                }
            }
        }
        return problems
    }

    // MARK: Running

    /// Maps every row of `input` and returns the destination tables, staged.
    /// - Throws: `MigrationError.validationFailed` listing the objects that fail the destination model;
    ///   `.invalidObject` for a value that does not fit its attribute; `.mappingModel` for an expression
    ///   the step cannot evaluate; `.transformFailed` when a policy function throws.
    func run(_ input: [MigrationRunner.SourceTable], reserve: () -> TableID, outcome: inout MigrationRunner.Outcome) throws -> [MigrationRunner.StagedTable] {
        var staged: [MigrationRunner.StagedTable] = []
        var sources: [SourceObject] = []
        var sourceByReference: [RowReference: SourceObject] = [:]
        var tableIDs: [String: TableID] = [:]
        var nextKeys: [String: Int64] = [:]
        for table in input {
            if let schema = table.foreignSchema {
                let copy = MigrationRunner.StagedTable(id: table.id, name: table.name, nextKey: table.nextKey, foreignSchema: schema)
                try table.forEachRow { key, row in
                    copy.keys.append(key)
                    copy.rows.append(row)
                }
                staged.append(copy)
                continue
            }
            tableIDs[table.name] = table.id
            nextKeys[table.name] = table.nextKey
            guard let mapping = step.sourceMapping.table(named: table.name) else { continue }
            try table.forEachRow { key, row in
                guard case .int(let code) = row[StorageMapping.entityColumn], let name = mapping.entityName(forCode: code),
                      let entity = step.source.entity(named: name) else { return }
                let object = SourceObject(entity: entity, table: table.id, key: key, row: row)
                sources.append(object)
                sourceByReference[object.reference] = object
            }
        }

        // Pass 1: objects.
        var associations: [String: [RowReference: [DestinationObject]]] = [:]
        var created: [(mapping: MappingModel.EntityMapping, source: SourceObject, object: DestinationObject)] = []
        var byTable: [TableID: [DestinationObject]] = [:]
        var usedKeys: [TableID: Set<Int64>] = [:]
        var mapped = Set<RowReference>()
        for mapping in model.entityMappings where mapping.mappingType != .remove && mapping.mappingType != .add {
            guard let sourceName = mapping.sourceEntityName, let destinationName = mapping.destinationEntityName,
                  let entity = step.destination.entity(named: destinationName),
                  let tableName = step.destinationMapping.entity(named: destinationName)?.tableName else { continue }
            let tableID: TableID
            if let known = tableIDs[tableName] {
                tableID = known
            } else {
                tableID = reserve()
                tableIDs[tableName] = tableID
                nextKeys[tableName] = 1
            }
            let filter = try sourceFilter(of: mapping, entity: sourceName, sourceByReference)
            for source in sources where source.entity.name == sourceName {
                if let filter, !(try filter(source)) { continue }
                // The first object made from a source object of the same table keeps its key; others
                // get keys above every key the table had, so they never take a key still to be kept.
                var key: Int64
                if source.table == tableID, !(usedKeys[tableID]?.contains(source.key) ?? false) {
                    key = source.key
                } else {
                    key = nextKeys[tableName] ?? 1
                    nextKeys[tableName] = key + 1
                }
                usedKeys[tableID, default: []].insert(key)
                let object = DestinationObject(entity: entity, table: tableID, key: key)
                if key == source.key && source.table == tableID { object.version = source.row[StorageMapping.versionColumn] }
                for attribute in entity.attributes where !attribute.isTransient {
                    if let value = attribute.defaultValue { object.values[attribute.name] = try storable(attribute, .swift(value), object) }
                }
                for attribute in entity.attributes where !attribute.isTransient {
                    let mappingEntry = mapping.attributeMappings.first { $0.name == attribute.name }
                    let expression = mappingEntry?.valueExpression
                        ?? (source.entity.attributesByName[attribute.name] != nil ? .variable("source", keyPath: [attribute.name]) : nil)
                    guard let expression else { continue }
                    let result = try evaluate(expression, source: source, mapping: mapping, property: attribute.name, sourceByReference, associations)
                    object.values[attribute.name] = try storable(attribute, result, object)
                }
                if let className = mapping.migrationPolicyClassName, let transform = policies[className]?.transform {
                    var values: [String: any Sendable] = [:]
                    for attribute in entity.attributes where !attribute.isTransient {
                        if let stored = object.values[attribute.name], let value = try? attribute.swiftValue(from: stored) { values[attribute.name] = value }
                    }
                    var new = MigrationObject(entity: entity, key: key, values: values)
                    do { try transform(migrationObject(source), &new) } catch {
                        throw MigrationError.transformFailed(entity: source.entity.name, key: source.key, underlying: SafeDescription.of(error))
                    }
                    if new.isDiscarded { continue }
                    for attribute in entity.attributes where !attribute.isTransient {
                        object.values[attribute.name] = try storable(attribute, .swift(new.values[attribute.name]), object)
                    }
                }
                associations[mapping.name, default: [:]][source.reference, default: []].append(object)
                byTable[tableID, default: []].append(object)
                created.append((mapping, source, object))
                mapped.insert(source.reference)
            }
        }
        outcome.rowsDropped += sources.count - mapped.count

        // Pass 2: relationships, then the inverse sides.
        for (mapping, source, object) in created {
            for relationship in Self.storedRelationships(of: object.entity) {
                let entry = mapping.relationshipMappings.first { $0.name == relationship.name }
                var expression = entry?.valueExpression
                if expression == nil, source.entity.relationshipsByName[relationship.name] != nil {
                    expression = .function(target: .variable("manager", keyPath: []), selector: Self.bySourceRelationship,
                                           arguments: [.string(relationship.name), .variable("source", keyPath: [relationship.name])])
                }
                guard let expression else { continue }
                let result = try evaluate(expression, source: source, mapping: mapping, property: relationship.name, sourceByReference, associations)
                let targets: [DestinationObject]
                switch result {
                case .destinations(let objects): targets = objects
                case .swift(nil): targets = []
                default:
                    throw MigrationError.mappingModel(.mismatch(mapping: mapping.name, reason: "the expression for relationship \(relationship.name) gives no destination objects (\(expression))"))
                }
                let wanted = targets.filter { target in
                    step.destination.entity(named: relationship.destinationEntityName).map { target.entity.isKind(of: $0) } ?? false
                }
                if relationship.isToMany {
                    for target in wanted { object.relate(relationship.name, target, toMany: true) }
                } else if let target = wanted.first {
                    object.relate(relationship.name, target, toMany: false)
                }
            }
        }
        for (_, _, object) in created {
            for relationship in Self.storedRelationships(of: object.entity) {
                // For a one-sided relationship, its hidden inverse (see `RelationshipDescription.hiddenInverse`).
                guard let inverse = step.destination.entity(named: relationship.destinationEntityName)?
                    .storage.relationshipsByName[relationship.graphInverseName]
                else { continue }
                for target in object.relations[relationship.name] ?? [] {
                    target.relate(inverse.name, object, toMany: inverse.isToMany)
                }
            }
        }

        // Pass 3: validation, then rows.
        var failures: [MigrationValidationFailure] = []
        var failureCount = 0
        for (_, _, object) in created {
            var reasons: [(String, ValidationError.Reason)] = []
            for attribute in object.entity.attributes where !attribute.isTransient && !attribute.isOptional {
                if (object.values[attribute.name] ?? .null).isNull { reasons.append((attribute.name, .missing)) }
            }
            for relationship in Self.storedRelationships(of: object.entity) {
                for error in relationship.validate(count: object.relations[relationship.name]?.count ?? 0) {
                    reasons.append((relationship.name, error.reason))
                }
            }
            for (property, reason) in reasons {
                failureCount += 1
                if failures.count < MigrationRunner.listedFailures {
                    failures.append(MigrationValidationFailure(
                        entity: object.entity.name, key: object.key,
                        objectURI: ManagedObjectID(entityName: object.entity.name, store: store, key: object.key).uriRepresentation.absoluteString,
                        property: property, reason: reason))
                }
            }
        }
        if failureCount > 0 {
            throw MigrationError.validationFailed(from: StoreMigrator.label(step.source), to: StoreMigrator.label(step.destination),
                                                  failures: failures, count: failureCount)
        }
        for table in step.destinationMapping.tables {
            guard let id = tableIDs[table.name] else { continue }
            let objects = (byTable[id] ?? []).sorted { $0.key < $1.key }
            let out = MigrationRunner.StagedTable(id: id, name: table.name, nextKey: max(nextKeys[table.name] ?? 1, (objects.last?.key ?? 0) + 1),
                                                  foreignSchema: nil)
            for object in objects {
                guard let entityMapping = step.destinationMapping.entity(named: object.entity.name) else { continue }
                var row = [Value](repeating: .null, count: table.schema.columns.count)
                row[StorageMapping.entityColumn] = .int(entityMapping.entityCode)
                row[StorageMapping.versionColumn] = object.version
                // Hidden inverses included, filled in pass 2 from the one-sided relationships they serve.
                for property in object.entity.storage.properties where !property.isTransient {
                    guard let column = entityMapping.column(forProperty: property.name) else { continue }
                    switch property {
                    case .attribute(let a):
                        row[column] = object.values[a.name] ?? .null
                    case .relationship(let r):
                        let refs = (object.relations[r.name] ?? []).map { RowReference(table: $0.table, key: $0.key) }
                        row[column] = r.isToMany ? .references(refs) : (refs.first.map { .reference($0) } ?? .null)
                    }
                }
                out.keys.append(object.key)
                out.rows.append(Row(row))
            }
            staged.append(out)
        }
        return staged
    }

    /// The test a mapping's filter predicate makes of a source object, or nil without a filter: the
    /// predicate evaluated on the object's row, key paths followed through to-one relationships.
    private func sourceFilter(of mapping: MappingModel.EntityMapping, entity name: String,
                              _ sourceByReference: [RowReference: SourceObject]) throws -> ((SourceObject) throws -> Bool)? {
        guard let format = mapping.sourceFilter else { return nil }
        let predicate: PredicateNode
        do { predicate = try PredicateParser.parse(format) } catch {
            throw MigrationError.mappingModel(.badExpression(path: model.path, mapping: mapping.name, property: "(filter)", reason: "\(error)"))
        }
        func schema(_ entityName: String) -> FetchSchema {
            var fields: [String: FieldInfo] = [:]
            guard let entity = step.source.entity(named: entityName), let m = step.sourceMapping.entity(named: entityName) else {
                return FetchSchema(entityName: entityName, fields: [:])
            }
            for property in entity.properties {
                guard let column = m.column(forProperty: property.name) else { continue }
                fields[property.name] = FieldInfo(column: column, kind: FieldKind(property))
            }
            return FetchSchema(entityName: entityName, fields: fields)
        }
        let evaluator = RowEvaluator(schema: schema(name)) { _, reference in
            sourceByReference[reference].map { ($0.row, schema($0.entity.name)) }
        }
        return { source in
            do { return try evaluator.matches(predicate, row: source.row, reference: source.reference) } catch {
                throw MigrationError.mappingModel(.badExpression(path: model.path, mapping: mapping.name, property: "(filter)", reason: "\(error)"))
            }
        }
    }

    /// The relationships that have a column (transient ones hold nothing to migrate).
    static func storedRelationships(of entity: EntityDescription) -> [RelationshipDescription] {
        entity.properties.filter { !$0.isTransient }.compactMap(\.relationship)
    }

    // MARK: Expressions

    private func evaluate(_ expression: MappingExpression, source: SourceObject, mapping: MappingModel.EntityMapping, property: String,
                          _ sourceByReference: [RowReference: SourceObject],
                          _ associations: [String: [RowReference: [DestinationObject]]]) throws -> Result {
        func fail(_ reason: String) -> MigrationError {
            .mappingModel(.badExpression(path: model.path, mapping: mapping.name, property: property, reason: "\(expression): \(reason)"))
        }
        func recurse(_ e: MappingExpression) throws -> Result {
            try evaluate(e, source: source, mapping: mapping, property: property, sourceByReference, associations)
        }
        switch expression {
        case .string(let s): return .swift(s)
        case .number(let n): return .swift(n)
        case .bool(let b): return .swift(b)
        case .null: return .swift(nil)
        case .variable("source", let path):
            var objects = [source]
            for (index, key) in path.enumerated() {
                var next: [SourceObject] = []
                var values: [Result] = []
                for object in objects {
                    guard let column = step.sourceMapping.entity(named: object.entity.name)?.column(forProperty: key),
                          let described = object.entity.propertiesByName[key] else {
                        throw fail("the source entity \(object.entity.name) has no property '\(key)'")
                    }
                    switch (described, object.row[column]) {
                    case (.attribute(let a), let value):
                        guard index == path.count - 1 else { throw fail("'\(key)' is an attribute, and the key path goes on") }
                        values.append(.stored(value, a.type))
                    case (.relationship, .reference(let ref)):
                        if let found = sourceByReference[ref] { next.append(found) }
                    case (.relationship, .references(let refs)):
                        next.append(contentsOf: refs.compactMap { sourceByReference[$0] })
                    default:
                        break
                    }
                }
                if !values.isEmpty { return values.count == 1 ? values[0] : .swift(nil) }
                if index == path.count - 1 || next.isEmpty {
                    if path.count > index + 1 && next.isEmpty { return .swift(nil) }
                }
                objects = next
            }
            return .sources(objects)
        case .function(.variable("manager", []), let selector, let arguments) where selector == Self.byEntityMapping || selector == Self.bySourceRelationship:
            guard arguments.count == 2, case .string(let name) = arguments[0] else { throw fail("\(selector) takes a name in quotes and the source objects") }
            let instances: [SourceObject]
            switch try recurse(arguments[1]) {
            case .sources(let objects): instances = objects
            case .swift(nil): instances = []
            default: throw fail("its second argument gives no source objects")
            }
            var result: [DestinationObject] = []
            for instance in instances {
                if selector == Self.byEntityMapping {
                    guard let table = associations[name] else {
                        if model.entityMappings.contains(where: { $0.name == name }) { continue }
                        throw fail("the mapping model has no entity mapping named \(name)")
                    }
                    result += table[instance.reference] ?? []
                } else {
                    for candidate in model.entityMappings where candidate.sourceEntityName == instance.entity.name {
                        result += associations[candidate.name]?[instance.reference] ?? []
                    }
                }
            }
            return .destinations(result)
        case .function(.variable("entityPolicy", []), let selector, let arguments):
            guard let className = mapping.migrationPolicyClassName, let policy = policies[className] else {
                throw fail("$entityPolicy needs the entity mapping's migration policy registered in MigrationOptions.migrationPolicies")
            }
            guard let function = policy.functions[selector] else { throw fail("the policy \(className) has no function for '\(selector)'") }
            var values: [(any Sendable)?] = []
            for argument in arguments { values.append(try swiftValue(try recurse(argument), fail: fail)) }
            do { return .swift(try function(values)) } catch {
                throw MigrationError.transformFailed(entity: source.entity.name, key: source.key, underlying: SafeDescription.of(error))
            }
        default:
            throw fail("only $source key paths, constants, FUNCTION($manager, \"\(Self.byEntityMapping)\", …) and FUNCTION($entityPolicy, …) are supported")
        }
    }

    /// A result in its Swift form, for a policy function: a single source object as a `MigrationObject`.
    private func swiftValue(_ result: Result, fail: (String) -> MigrationError) throws -> (any Sendable)? {
        switch result {
        case .swift(let value): return value
        case .stored(let value, let type):
            do { return try type.swiftValue(from: value) } catch { throw fail("a source value cannot be read: \(error)") }
        case .sources(let objects):
            let single: [any Sendable] = objects.map(migrationObject)
            return single.count == 1 ? single[0] : single
        case .destinations:
            throw fail("destination objects cannot be passed to a policy function")
        }
    }

    /// A source object as a policy sees it: its attributes in their Swift form (a value that cannot be
    /// decoded, such as a transformable with no registered transformer, is left out).
    private func migrationObject(_ object: SourceObject) -> MigrationObject {
        var values: [String: any Sendable] = [:]
        for attribute in object.entity.attributes where !attribute.isTransient {
            if let column = step.sourceMapping.entity(named: object.entity.name)?.column(forProperty: attribute.name),
               let value = try? attribute.swiftValue(from: object.row[column]) {
                values[attribute.name] = value
            }
        }
        return MigrationObject(entity: object.entity, key: object.key, values: values)
    }

    /// A result as the stored value of a destination attribute.
    private func storable(_ attribute: AttributeDescription, _ result: Result, _ object: DestinationObject) throws -> Value {
        do {
            switch result {
            case .stored(let value, let type) where type == attribute.type || InferredMapping.isWidening(from: type, to: attribute.type):
                return value
            case .stored(let value, let type):
                return try attribute.storageValue(for: try type.swiftValue(from: value))
            case .swift(let value):
                return try attribute.storageValue(for: value)
            case .sources, .destinations:
                throw MigrationError.invalidObject(entity: object.entity.name, key: object.key,
                                                   reason: "the mapping gives objects, not a value, for attribute \(attribute.name)")
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError.invalidObject(entity: object.entity.name, key: object.key, reason: "\(attribute.name): \(SafeDescription.of(error))")
        }
    }
}
