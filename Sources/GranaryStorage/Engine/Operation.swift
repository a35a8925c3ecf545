import Foundation

/// One change inside a committed transaction, as recorded in the log and replayed on recovery.
///
/// A transaction's log payload is a format byte, an operation count, and the operations in the order
/// they were made. Rows travel already encoded, so replay costs no re-encoding. Schemas and metadata
/// are rare and small, so they travel as JSON, which keeps them readable in a hex dump and extensible.
enum Operation {
    case createTable(TableID, TableSchema)
    case dropTable(TableID)
    case addColumn(TableID, Column)
    case createIndex(TableID, IndexDefinition)
    case dropIndex(TableID, String)
    case insert(TableID, Int64, [UInt8])
    case update(TableID, Int64, [UInt8])
    case delete(TableID, Int64)
    case setMetadata(StoreMetadata)
    case renameTable(TableID, String)
    /// Moves a table's next key to at least this value, so keys below it are never handed out again.
    case reserveKeys(TableID, Int64)

    enum Code: UInt8 {
        case createTable = 1, dropTable, addColumn, createIndex, dropIndex, insert, update, delete, setMetadata, renameTable, reserveKeys
    }

    static let payloadFormat: UInt8 = 1

    func encode(into w: inout ByteWriter) {
        switch self {
        case .createTable(let t, let schema): Self.header(.createTable, t, &w); w.writeLengthPrefixed(Self.json(schema))
        case .dropTable(let t): Self.header(.dropTable, t, &w)
        case .addColumn(let t, let c): Self.header(.addColumn, t, &w); w.writeLengthPrefixed(Self.json(c))
        case .createIndex(let t, let d): Self.header(.createIndex, t, &w); w.writeLengthPrefixed(Self.json(d))
        case .dropIndex(let t, let name): Self.header(.dropIndex, t, &w); w.writeString(name)
        case .insert(let t, let key, let row):
            Self.header(.insert, t, &w); w.writeSignedVarint(key); w.writeLengthPrefixed(row)
        case .update(let t, let key, let row):
            Self.header(.update, t, &w); w.writeSignedVarint(key); w.writeLengthPrefixed(row)
        case .delete(let t, let key): Self.header(.delete, t, &w); w.writeSignedVarint(key)
        case .setMetadata(let m): w.write(Code.setMetadata.rawValue); w.writeLengthPrefixed(Self.json(m))
        case .renameTable(let t, let name): Self.header(.renameTable, t, &w); w.writeString(name)
        case .reserveKeys(let t, let next): Self.header(.reserveKeys, t, &w); w.writeSignedVarint(next)
        }
    }

    private static func header(_ code: Code, _ table: TableID, _ w: inout ByteWriter) {
        w.write(code.rawValue)
        w.writeVarint(UInt64(table.rawValue))
    }

    static func json<T: Encodable>(_ value: T) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding our own plain structs cannot fail.
        return Array(try! encoder.encode(value))
    }

    static func unjson<T: Decodable>(_ type: T.Type, _ r: inout ByteReader) throws -> T {
        let raw = try r.readLengthPrefixed()
        do { return try JSONDecoder().decode(type, from: Data(raw)) } catch {
            throw r.corruption("cannot decode \(type): \(error)")
        }
    }

    static func decode(from r: inout ByteReader) throws -> Operation {
        let byte = try r.readByte()
        guard let code = Code(rawValue: byte) else { throw r.corruption("unknown operation code \(byte)") }
        if code == .setMetadata { return .setMetadata(try unjson(StoreMetadata.self, &r)) }
        let rawTable = try r.readVarint()
        guard rawTable <= UInt64(UInt32.max) else { throw r.corruption("table id \(rawTable) out of range") }
        let t = TableID(rawValue: UInt32(rawTable))
        switch code {
        case .createTable: return .createTable(t, try unjson(TableSchema.self, &r))
        case .dropTable: return .dropTable(t)
        case .addColumn: return .addColumn(t, try unjson(Column.self, &r))
        case .createIndex: return .createIndex(t, try unjson(IndexDefinition.self, &r))
        case .dropIndex: return .dropIndex(t, try r.readString())
        case .insert: return .insert(t, try r.readSignedVarint(), Array(try r.readLengthPrefixed()))
        case .update: return .update(t, try r.readSignedVarint(), Array(try r.readLengthPrefixed()))
        case .delete: return .delete(t, try r.readSignedVarint())
        case .renameTable: return .renameTable(t, try r.readString())
        case .reserveKeys: return .reserveKeys(t, try r.readSignedVarint())
        case .setMetadata: fatalError("handled above")
        }
    }

    /// Decodes a whole transaction payload.
    static func decodeTransaction(_ payload: UnsafeRawBufferPointer, context: String, offset: Int64) throws -> [Operation] {
        var r = ByteReader(payload, context: context, baseOffset: offset)
        let format = try r.readByte()
        guard format == payloadFormat else { throw StorageError.unsupportedFormat(file: context, version: Int(format)) }
        let count = try r.readVarint()
        guard count <= UInt64(r.remaining) else { throw r.corruption("operation count \(count) exceeds the payload") }
        var ops: [Operation] = []
        ops.reserveCapacity(Int(count))
        for _ in 0..<count { ops.append(try decode(from: &r)) }
        if !r.isAtEnd { throw r.corruption("\(r.remaining) unexpected bytes after the last operation") }
        return ops
    }
}
