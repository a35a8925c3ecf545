import Foundation

/// A typed column value stored in a row.
///
/// The set is deliberately small: it covers what Core Data attributes need once mapped (integers of
/// every width become `int`, `float` becomes `double`, decimals and URIs become strings or bytes) and
/// what an object graph needs to store relationships (`reference` and `references`).
public enum Value: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    /// A point in time, kept as seconds since 2001-01-01 so that it round-trips exactly.
    case date(Date)
    case uuid(UUID)
    /// A to-one relationship: the key of a row in some table.
    case reference(RowReference)
    /// A to-many relationship in the order given (ordered relationships keep it; others may ignore it).
    case references([RowReference])

    /// The column type this value belongs to, or `nil` for `.null`, which fits any nullable column.
    public var type: ColumnType? {
        switch self {
        case .null: return nil
        case .bool: return .bool
        case .int: return .int
        case .double: return .double
        case .string: return .string
        case .bytes: return .bytes
        case .date: return .date
        case .uuid: return .uuid
        case .reference: return .reference
        case .references: return .references
        }
    }

    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: return "null"
        case .bool(let b): return String(b)
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .string(let s): return "\"\(s)\""
        case .bytes(let b): return "<\(b.count) bytes>"
        case .date(let d): return SafeDescription.iso8601(d)
        case .uuid(let u): return u.uuidString
        case .reference(let r): return r.description
        case .references(let rs): return "[" + rs.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

/// Identifies a table inside one store; assigned by the store when the table is created and never reused.
public struct TableID: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: TableID, b: TableID) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// A pointer to one row: the table it lives in and its primary key.
public struct RowReference: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var table: TableID
    public var key: Int64
    public init(table: TableID, key: Int64) {
        self.table = table
        self.key = key
    }
    public static func < (a: RowReference, b: RowReference) -> Bool {
        (a.table.rawValue, a.key) < (b.table.rawValue, b.key)
    }
    public var description: String { "\(table)/\(key)" }
}
