import Foundation

/// Everything the storage engine can throw. Each message names the file, offset, table, index or value
/// involved, so that a user reading a log line knows what broke and where.
public enum StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A checksum, length or structure check failed while reading a store file.
    case corruption(file: String, offset: Int64, reason: String)
    /// A file was written by a newer or unknown format version.
    case unsupportedFormat(file: String, version: Int)
    /// Another process (or another open in this one) holds the store's lock.
    case lockHeld(path: String)
    /// A system call failed; `errno` says why (a full disk is `ENOSPC`).
    case io(operation: String, path: String, errno: Int32)
    /// A sync or write failed earlier, so the engine cannot know what reached the disk and refuses writes.
    case poisoned(reason: String)
    /// The store was opened read-only, or the transaction was a read.
    case readOnly(path: String)
    /// The store was closed.
    case closed
    case noSuchTable(String)
    case tableExists(String)
    case noSuchColumn(table: String, column: String)
    case noSuchIndex(table: String, index: String)
    case indexExists(table: String, index: String)
    case noSuchRow(table: String, key: Int64)
    case duplicateKey(table: String, key: Int64)
    case typeMismatch(table: String, column: String, expected: ColumnType, value: String)
    case nullViolation(table: String, column: String)
    case uniqueViolation(table: String, index: String, value: String)
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .corruption(let file, let offset, let reason):
            return "corruption in \(file) at offset \(offset): \(reason)"
        case .unsupportedFormat(let file, let version):
            return "\(file) has format version \(version), which this version of Granary cannot read"
        case .lockHeld(let path):
            return "the store at \(path) is already open for writing by another process or handle"
        case .io(let operation, let path, let code):
            let reason = code == ENOSPC ? "the disk is full" : String(cString: strerror(code))
            return "\(operation) failed on \(path): \(reason) (errno \(code))"
        case .poisoned(let reason):
            return "the store refuses writes after an earlier failure (\(reason)); reopen it to recover from its log"
        case .readOnly(let path):
            return "the store at \(path) is open read-only"
        case .closed:
            return "the store is closed"
        case .noSuchTable(let name):
            return "no table named '\(name)'"
        case .tableExists(let name):
            return "a table named '\(name)' already exists"
        case .noSuchColumn(let table, let column):
            return "table '\(table)' has no column '\(column)'"
        case .noSuchIndex(let table, let index):
            return "table '\(table)' has no index '\(index)'"
        case .indexExists(let table, let index):
            return "table '\(table)' already has an index '\(index)'"
        case .noSuchRow(let table, let key):
            return "table '\(table)' has no row with key \(key)"
        case .duplicateKey(let table, let key):
            return "table '\(table)' already has a row with key \(key)"
        case .typeMismatch(let table, let column, let expected, let value):
            return "column '\(table).\(column)' holds \(expected) values, not \(value)"
        case .nullViolation(let table, let column):
            return "column '\(table).\(column)' may not be null"
        case .uniqueViolation(let table, let index, let value):
            return "unique index '\(index)' on table '\(table)' already has an entry for \(value)"
        case .invalidArgument(let message):
            return message
        }
    }
}
