import GranaryStorage

/// What fetching needs to know about one entity's stored rows: where each field lives in a row, what
/// kind of value it holds, which indexes cover it, and which rows of a shared table belong to the fetch.
///
/// This is the only interface between fetching and the model layer: the model builds one per entity
/// (and per fetch, for `entityCodes`), so that predicate evaluation and query planning never depend on
/// entity or attribute descriptions.
///
/// Stored values are assumed to use one `Value` case per kind (see `FieldKind`); the planner relies on
/// it to translate constants into index keys.
public struct FetchSchema: Sendable {
    /// The entity's name, used in error messages and in `FetchPlan.explain`.
    public var entityName: String
    /// Stored fields (attributes and relationships) by name.
    public var fields: [String: FieldInfo]
    /// Secondary indexes of the entity's table, by field name (or `FetchSchema.entityKey`).
    public var indexes: [PlannerIndex]
    /// The column holding each row's entity code, when the table is shared by an entity hierarchy and
    /// the fetch must skip rows of other entities. Leave it `nil` when every row of the table matches
    /// (the fetched entity is the hierarchy's root, or the table is its own).
    public var entityColumn: Int?
    /// The codes of the fetched entity and its sub-entities; used only when `entityColumn` is set.
    public var entityCodes: Set<Int64>

    /// The key under which predicates and indexes refer to the entity column.
    public static let entityKey = "_entity"

    /// Describes an entity's stored fields and indexes for evaluation and planning.
    public init(entityName: String, fields: [String: FieldInfo], indexes: [PlannerIndex] = [],
                entityColumn: Int? = nil, entityCodes: Set<Int64> = []) {
        self.entityName = entityName
        self.fields = fields
        self.indexes = indexes
        self.entityColumn = entityColumn
        self.entityCodes = entityCodes
    }

    /// The field with this name; `entityKey` names the entity column when there is one.
    public func field(_ name: String) -> FieldInfo? {
        if let info = fields[name] { return info }
        if name == Self.entityKey, let entityColumn { return FieldInfo(column: entityColumn, kind: .integer) }
        return nil
    }
}

/// Where a field is stored in a row and what it holds.
public struct FieldInfo: Sendable, Hashable {
    /// The position of the field's value in the row.
    public var column: Int
    public var kind: FieldKind

    /// Describes one stored field.
    public init(column: Int, kind: FieldKind) {
        self.column = column
        self.kind = kind
    }
}

/// The kind of value a field holds, and with it the `Value` case rows store it as.
///
/// `integer` → `.int` (every integer width), `double` → `.double` (also `Float`), `bool` → `.bool`,
/// `string` → `.string`, `decimal` → `.string` holding the decimal's description (compared numerically,
/// never by index order), `date` → `.date`, `uuid` → `.uuid`, `binary` → `.bytes`, `uri` → `.string`
/// holding the absolute string, `toOne` → `.reference`, `toMany` → `.references`.
public enum FieldKind: Sendable, Hashable {
    case integer, double, bool, string, decimal, date, uuid, binary, uri
    case toOne(destination: String)
    case toMany(destination: String)

    /// The kind a stored property's column holds, as the model's store mapping writes it.
    init(_ property: PropertyDescription) {
        switch property {
        case .attribute(let a): self.init(a.type)
        case .relationship(let r):
            self = r.isToMany ? .toMany(destination: r.destinationEntityName) : .toOne(destination: r.destinationEntityName)
        }
    }

    /// The kind an attribute of this type's column holds.
    init(_ type: AttributeType) {
        switch type {
        case .integer16, .integer32, .integer64: self = .integer
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .boolean: self = .bool
        case .string: self = .string
        case .date: self = .date
        case .uuid: self = .uuid
        case .uri: self = .uri
        case .binaryData, .transformable, .undefined: self = .binary
        }
    }

    /// Whether the field is a relationship (its values point at rows of the destination entity).
    public var isRelationship: Bool {
        switch self {
        case .toOne, .toMany: return true
        default: return false
        }
    }
}

/// A secondary index the planner may use: the storage index's name, its columns by field name (in
/// index order, each ascending or descending), and whether it is unique.
public struct PlannerIndex: Sendable {
    public var name: String
    public var columns: [(name: String, descending: Bool)]
    public var isUnique: Bool

    /// Describes one index of the entity's table.
    public init(name: String, columns: [(name: String, descending: Bool)], isUnique: Bool = false) {
        self.name = name
        self.columns = columns
        self.isUnique = isUnique
    }

    /// An ascending index on the named fields.
    public init(name: String, on columns: String..., isUnique: Bool = false) {
        self.init(name: name, columns: columns.map { ($0, false) }, isUnique: isUnique)
    }
}
