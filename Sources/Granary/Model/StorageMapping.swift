/// How a model's entities map onto engine tables: the contract between the model and the store layer.
///
/// Rules:
/// - One table per entity hierarchy, named after its root entity; every entity of the hierarchy stores
///   its objects there, so a fetch of a superentity reads one table.
/// - Column 0 is `_entity` (`.int`, not null): the row's entity code, its position in the hierarchy's
///   entity list (the root, then its sub-entities depth first with siblings ordered by name), so an entity
///   and all its sub-entities have a contiguous range of codes. Column 1 is `_version` (`.int`, not null),
///   the row version for optimistic locking.
/// - Then, entity by entity in that list, the entity's own stored properties ordered by name: attributes
///   first, then relationships (to-one as `.reference`, to-many as `.references`, ordered or not).
///   Transient attributes have no column. The root's columns are named after their properties; a
///   sub-entity's are named `"<Entity>.<property>"`, so sibling entities may reuse a property name.
///   A root's required attributes are not null; sub-entity attributes and all relationships are nullable
///   (a row of another kind leaves them empty; relationship cardinality is the object layer's to check).
/// - Indexes, sorted by name: `"<Entity>_<name>"` for each `Index` and `isIndexed` attribute (named after
///   the attribute), a unique `"<Entity>_unique_<properties joined by _>"` for each uniqueness constraint,
///   and `"<Root>__entity"` on `_entity` when the hierarchy has sub-entities.
///
/// The mapping depends only on what `ManagedObjectModel.versionHash` covers, not on declaration order:
/// equal hashes give equal schemas. Decimal attributes are stored as strings, so an engine index on one
/// orders them as text, not as numbers.
public struct StorageMapping: Sendable {
    /// The name of the entity-code column, first in every table.
    public static let entityColumnName = "_entity"
    /// The name of the row-version column, second in every table.
    public static let versionColumnName = "_version"
    /// The position of `_entity` in every table.
    public static let entityColumn = 0
    /// The position of `_version` in every table.
    public static let versionColumn = 1

    /// One entry per hierarchy, ordered by table name.
    public let tables: [TableMapping]
    private let entitiesByName: [String: EntityMapping]
    private let configurations: [String: Set<String>]

    /// The mapping of every entity of `model`.
    ///
    /// Use it when creating a store's tables and when reading or writing rows. Building it is cheap but
    /// not free: keep one per model.
    public init(model: ManagedObjectModel) {
        var tables: [TableMapping] = []
        var entities: [String: EntityMapping] = [:]
        for root in model.entities where root.superentity == nil {
            let (table, members) = Self.map(hierarchy: root)
            tables.append(table)
            for member in members { entities[member.entityName] = member }
        }
        self.tables = tables.sorted { $0.name < $1.name }
        self.entitiesByName = entities
        self.configurations = model.configurations
    }

    /// Every table's schema, ordered by table name.
    public var tableSchemas: [TableSchema] { tables.map(\.schema) }

    /// The schemas of the tables a store for this configuration needs: the hierarchies with at least one
    /// of its entities; every table for `nil`, none for an unknown configuration.
    public func tableSchemas(forConfiguration name: String?) -> [TableSchema] {
        guard let name else { return tableSchemas }
        guard let names = configurations[name] else { return [] }
        return tables.filter { !names.isDisjoint(with: $0.entityNames) }.map(\.schema)
    }

    /// The mapping of the named entity, or nil when the model has no such entity.
    public func entity(named name: String) -> EntityMapping? {
        entitiesByName[name]
    }

    /// The mapping of the named entity: shorthand for `entity(named:)`.
    public subscript(entityName: String) -> EntityMapping? {
        entitiesByName[entityName]
    }

    /// The mapping of the hierarchy stored in the named table.
    public func table(named name: String) -> TableMapping? {
        tables.first { $0.name == name }
    }

    // MARK: Building

    private static func map(hierarchy root: EntityDescription) -> (TableMapping, [EntityMapping]) {
        let members = [root] + root.allSubentities
        let tableName = root.name
        var columns = [
            Column(entityColumnName, .int, nullable: false),
            Column(versionColumnName, .int, nullable: false),
        ]
        var columnByKey: [PropertyKey: Int] = [:]
        for entity in members {
            let isRoot = entity == root
            // Hidden inverses of one-sided relationships are stored like any to-many (named `_inverse.…`).
            let stored = entity.storage.declaration.properties.filter { !$0.isTransient }
            let attributes = stored.compactMap(\.attribute).sorted { $0.name < $1.name }
            let relationships = stored.compactMap(\.relationship).sorted { $0.name < $1.name }
            for attribute in attributes {
                columnByKey[PropertyKey(entity: entity.name, property: attribute.name)] = columns.count
                columns.append(
                    Column(
                        columnName(attribute.name, entity: entity.name, isRoot: isRoot), attribute.type.columnType,
                        nullable: !isRoot || attribute.isOptional))
            }
            for relationship in relationships {
                columnByKey[PropertyKey(entity: entity.name, property: relationship.name)] = columns.count
                columns.append(
                    Column(
                        columnName(relationship.name, entity: entity.name, isRoot: isRoot),
                        relationship.isToMany ? .references : .reference, nullable: true))
            }
        }
        func column(_ property: PropertyDescription) -> Int? {
            columnByKey[PropertyKey(entity: property.entityName ?? "", property: property.name)]
        }

        var indexes: [IndexDefinition] = []
        if members.count > 1 {
            indexes.append(IndexDefinition(name: entityIndexName(root: root.name), on: entityColumnName))
        }
        for entity in members {
            for planned in plannedIndexes(of: entity.storage.declaration) {
                indexes.append(
                    IndexDefinition(
                        name: planned.name,
                        columns: planned.elements.map { element in
                            // The model checked that every element names a stored property of the entity.
                            let property = entity.propertiesByName[element.propertyName]!
                            return IndexColumn(columns[column(property)!].name, descending: !element.isAscending)
                        },
                        unique: planned.isUnique))
            }
        }
        indexes.sort { $0.name < $1.name }
        let schema = TableSchema(name: tableName, columns: columns, indexes: indexes)

        let entityNames = members.map(\.name)
        let mappings = members.enumerated().map { code, entity in
            var columnByProperty: [String: Int] = [:]
            var propertyByColumn = [PropertyDescription?](repeating: nil, count: columns.count)
            for property in entity.storage.properties {
                guard let index = column(property) else { continue }
                columnByProperty[property.name] = index
                propertyByColumn[index] = property
            }
            return EntityMapping(
                entityName: entity.name, tableSchema: schema, entityCode: Int64(code), isRoot: entity == root,
                subentityCount: entity.allSubentities.count, columnByProperty: columnByProperty,
                propertyByColumn: propertyByColumn,
                indexNames: plannedIndexes(of: entity.storage.declaration).map(\.name))
        }
        return (TableMapping(schema: schema, entityNames: entityNames), mappings)
    }

    private struct PropertyKey: Hashable {
        let entity: String
        let property: String
    }

    private static func columnName(_ property: String, entity: String, isRoot: Bool) -> String {
        isRoot ? property : "\(entity).\(property)"
    }

    // MARK: Index names (shared with the model's checks)

    struct PlannedIndex {
        let name: String
        let elements: [FetchIndexElement]
        let isUnique: Bool
    }

    static func entityIndexName(root: String) -> String {
        "\(root)_\(entityColumnName)"
    }

    /// The engine indexes an entity's own declarations call for: uniqueness constraints, then indexes,
    /// then indexed attributes, each in declared order.
    static func plannedIndexes(of entity: EntityDeclaration) -> [PlannedIndex] {
        var result: [PlannedIndex] = []
        for constraint in entity.uniquenessConstraints {
            result.append(
                PlannedIndex(
                    name: "\(entity.name)_unique_" + constraint.joined(separator: "_"),
                    elements: constraint.map { FetchIndexElement(propertyName: $0) }, isUnique: true))
        }
        for index in entity.indexes {
            result.append(PlannedIndex(name: "\(entity.name)_\(index.name)", elements: index.elements, isUnique: false))
        }
        for case .attribute(let attribute) in entity.properties where attribute.isIndexed {
            result.append(
                PlannedIndex(
                    name: "\(entity.name)_\(attribute.name)", elements: [FetchIndexElement(propertyName: attribute.name)],
                    isUnique: false))
        }
        return result
    }

    static func indexNames(of entity: EntityDeclaration) -> [String] {
        plannedIndexes(of: entity).map(\.name)
    }
}

/// The table of one entity hierarchy and the entities stored in it.
public struct TableMapping: Sendable {
    /// The table's columns and indexes, ready for `WriteTransaction.createTable(_:)`.
    public let schema: TableSchema
    /// The hierarchy's entity names; an entity's position is its entity code.
    public let entityNames: [String]

    /// The table's name: the root entity's name.
    public var name: String { schema.name }

    /// The entity a row belongs to, from its `_entity` value.
    public func entityName(forCode code: Int64) -> String? {
        guard code >= 0, code < Int64(entityNames.count) else { return nil }
        return entityNames[Int(code)]
    }
}

/// Where one entity's objects live: its table, its entity code and the column of each of its properties.
public struct EntityMapping: Sendable {
    /// The entity this mapping describes.
    public let entityName: String
    /// The schema of the hierarchy's table, shared by every entity of the hierarchy.
    public let tableSchema: TableSchema
    /// The `_entity` value of rows of exactly this entity.
    public let entityCode: Int64
    /// Whether this entity is the root of its hierarchy.
    public let isRoot: Bool
    let subentityCount: Int
    let columnByProperty: [String: Int]
    let propertyByColumn: [PropertyDescription?]
    /// The engine names of the indexes this entity declares itself: its uniqueness constraints, then its
    /// `Index`es, then its indexed attributes, each in declared order.
    public let indexNames: [String]

    /// The table holding this entity's objects: its root entity's name.
    public var tableName: String { tableSchema.name }

    /// The column of a stored property (own or inherited), or nil for a transient or unknown property.
    public func column(forProperty name: String) -> Int? {
        columnByProperty[name]
    }

    /// The property stored at a column, or nil for `_entity`, `_version` and columns of other entities
    /// of the hierarchy.
    public func property(atColumn column: Int) -> PropertyDescription? {
        guard propertyByColumn.indices.contains(column) else { return nil }
        return propertyByColumn[column]
    }

    /// The columns of the entity's stored properties (own and inherited), in property order.
    public var propertyColumns: [Int] {
        propertyByColumn.indices.filter { propertyByColumn[$0] != nil }
    }

    /// The `_entity` values a fetch of this entity matches: just its own code, or its code and those of
    /// all its sub-entities (a contiguous range, see `entityCodeRange`).
    public func entityCodes(includingSubentities: Bool) -> [Int64] {
        includingSubentities ? Array(entityCodeRange) : [entityCode]
    }

    /// This entity's code and its sub-entities' codes, which are contiguous: a range scan of the
    /// `_entity` index finds every row of the entity and its sub-entities.
    public var entityCodeRange: ClosedRange<Int64> {
        entityCode...(entityCode + Int64(subentityCount))
    }
}
