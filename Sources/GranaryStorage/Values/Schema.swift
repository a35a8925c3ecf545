/// One column of a table: its name, type and whether it may hold `.null`.
public struct Column: Sendable, Hashable, Codable {
    public var name: String
    public var type: ColumnType
    public var isNullable: Bool

    public init(_ name: String, _ type: ColumnType, nullable: Bool = true) {
        self.name = name
        self.type = type
        self.isNullable = nullable
    }
}

/// One column of an index and the direction in which it sorts.
public struct IndexColumn: Sendable, Hashable, Codable {
    public var name: String
    public var isDescending: Bool
    public init(_ name: String, descending: Bool = false) {
        self.name = name
        self.isDescending = descending
    }
}

/// A secondary index over one or more columns of a table.
///
/// A unique index rejects a transaction that would give two rows the same values in its columns; rows
/// with a `.null` in any indexed column are exempt, as in SQL, so that optional attributes can be unique.
public struct IndexDefinition: Sendable, Hashable, Codable {
    public var name: String
    public var columns: [IndexColumn]
    public var isUnique: Bool

    public init(name: String, columns: [IndexColumn], unique: Bool = false) {
        self.name = name
        self.columns = columns
        self.isUnique = unique
    }

    /// An ascending index on the named columns.
    public init(name: String, on columns: String..., unique: Bool = false) {
        self.init(name: name, columns: columns.map { IndexColumn($0) }, unique: unique)
    }
}

/// The declared shape of a table: its columns in row order and its secondary indexes.
public struct TableSchema: Sendable, Hashable, Codable {
    public var name: String
    public var columns: [Column]
    public var indexes: [IndexDefinition]

    public init(name: String, columns: [Column], indexes: [IndexDefinition] = []) {
        self.name = name
        self.columns = columns
        self.indexes = indexes
    }

    /// The position of the named column in a row, or `nil` when the table has no such column.
    public func columnIndex(_ name: String) -> Int? {
        columns.firstIndex { $0.name == name }
    }
}
