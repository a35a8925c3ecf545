import Foundation

/// The compact binary form of a row: a varint column count, then one tagged value per column.
///
/// The tag of each value makes the encoding self-describing, so rows survive schema changes (added
/// columns read as null) and a verifier can check rows without the schema. Tags are part of the file
/// format: never renumber them.
enum RowCodec {
    enum Tag: UInt8 {
        case null = 0, boolFalse = 1, boolTrue = 2, int = 3, double = 4, string = 5, bytes = 6, date = 7,
            uuid = 8, reference = 9, references = 10
    }

    static func encode(_ row: Row) -> [UInt8] {
        var w = ByteWriter(capacity: 8 + row.values.count * 6)
        encode(row, into: &w)
        return w.bytes
    }

    static func encode(_ row: Row, into w: inout ByteWriter) {
        w.writeVarint(UInt64(row.values.count))
        for value in row.values { encode(value, into: &w) }
    }

    static func encode(_ value: Value, into w: inout ByteWriter) {
        switch value {
        case .null: w.write(Tag.null.rawValue)
        case .bool(let b): w.write(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .int(let i):
            w.write(Tag.int.rawValue)
            w.writeSignedVarint(i)
        case .double(let d):
            w.write(Tag.double.rawValue)
            w.writeDouble(d)
        case .string(let s):
            w.write(Tag.string.rawValue)
            w.writeString(s)
        case .bytes(let b):
            w.write(Tag.bytes.rawValue)
            w.writeLengthPrefixed(b)
        case .date(let d):
            w.write(Tag.date.rawValue)
            w.writeDouble(d.timeIntervalSinceReferenceDate)
        case .uuid(let u):
            w.write(Tag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { w.write(contentsOf: $0) }
        case .reference(let r):
            w.write(Tag.reference.rawValue)
            w.writeVarint(UInt64(r.table.rawValue))
            w.writeSignedVarint(r.key)
        case .references(let rs):
            w.write(Tag.references.rawValue)
            w.writeVarint(UInt64(rs.count))
            for r in rs {
                w.writeVarint(UInt64(r.table.rawValue))
                w.writeSignedVarint(r.key)
            }
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, context: String = "row") throws -> Row {
        var r = ByteReader(bytes, context: context)
        let row = try decode(from: &r)
        if !r.isAtEnd { throw r.corruption("\(r.remaining) unexpected bytes after the row") }
        return row
    }

    /// Decodes a stored row. The error context is built only on failure: building it for every row
    /// (string interpolation) would cost more than the decoding.
    static func decode(_ bytes: UnsafeRawBufferPointer, table: String, key: Int64) throws -> Row {
        do {
            return try decode(bytes, context: "row")
        } catch StorageError.corruption(_, let offset, let reason) {
            throw StorageError.corruption(file: "table '\(table)' row \(key)", offset: offset, reason: reason)
        }
    }

    static func decode(_ bytes: [UInt8], table: String, key: Int64) throws -> Row {
        try bytes.withUnsafeBytes { try decode($0, table: table, key: key) }
    }

    static func decode(_ bytes: [UInt8], context: String = "row") throws -> Row {
        try bytes.withUnsafeBytes { try decode($0, context: context) }
    }

    static func decode(from r: inout ByteReader) throws -> Row {
        var values: [Value] = []
        try decode(from: &r, into: &values)
        return Row(values)
    }

    /// Decodes a row's values into `values`, replacing what it held but keeping its capacity.
    static func decode(from r: inout ByteReader, into values: inout [Value]) throws {
        let count = try r.readVarint()
        // Every value takes at least one byte, which bounds a damaged count.
        guard count <= UInt64(r.remaining) else { throw r.corruption("column count \(count) exceeds row size") }
        values.removeAll(keepingCapacity: true)
        values.reserveCapacity(Int(count))
        for _ in 0..<count { values.append(try decodeValue(from: &r)) }
    }

    static func decodeValue(from r: inout ByteReader) throws -> Value {
        let tagByte = try r.readByte()
        guard let tag = Tag(rawValue: tagByte) else { throw r.corruption("unknown value tag \(tagByte)") }
        switch tag {
        case .null: return .null
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .int: return .int(try r.readSignedVarint())
        case .double: return .double(try r.readDouble())
        case .string: return .string(try r.readString())
        case .bytes: return .bytes(Array(try r.readLengthPrefixed()))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try r.readDouble()))
        case .uuid:
            let raw = try r.readBytes(16)
            var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: raw) }
            return .uuid(UUID(uuid: u))
        case .reference:
            return .reference(try readReference(&r))
        case .references:
            let n = try r.readVarint()
            guard n <= UInt64(r.remaining) else { throw r.corruption("reference count \(n) exceeds row size") }
            var refs: [RowReference] = []
            refs.reserveCapacity(Int(n))
            for _ in 0..<n { refs.append(try readReference(&r)) }
            return .references(refs)
        }
    }

    /// Decodes the values at the positions `isWanted` accepts, below `end`, and reads every other value
    /// as null, moving past it without making it; what follows `end` is not read. For what an index
    /// needs of a row it replaces: decoding the whole row (strings, a to-many's thousand references)
    /// was most of an indexed update.
    static func decodeColumns(_ bytes: UnsafeRawBufferPointer, end: Int, table: String, key: Int64,
                              isWanted: (Int) -> Bool) throws -> Row {
        var r = ByteReader(bytes, context: "row")
        do {
            let count = try r.readVarint()
            guard count <= UInt64(r.remaining) else { throw r.corruption("column count \(count) exceeds row size") }
            let n = min(Int(count), end)
            var values: [Value] = []
            values.reserveCapacity(n)
            for position in 0..<n {
                if isWanted(position) { values.append(try decodeValue(from: &r)) } else { try skipValue(from: &r); values.append(.null) }
            }
            return Row(values)
        } catch StorageError.corruption(_, let offset, let reason) {
            throw StorageError.corruption(file: "table '\(table)' row \(key)", offset: offset, reason: reason)
        }
    }

    /// Moves past one value as `decodeValue` would read it, checking the same lengths, without making
    /// it.
    static func skipValue(from r: inout ByteReader) throws {
        let tagByte = try r.readByte()
        guard let tag = Tag(rawValue: tagByte) else { throw r.corruption("unknown value tag \(tagByte)") }
        switch tag {
        case .null, .boolFalse, .boolTrue: return
        case .int: _ = try r.readVarint()
        case .double, .date: try r.need(8); r.offset += 8
        case .string, .bytes: _ = try r.readLengthPrefixed()
        case .uuid: try r.need(16); r.offset += 16
        case .reference:
            _ = try readReference(&r)
        case .references:
            let n = try r.readVarint()
            guard n <= UInt64(r.remaining) else { throw r.corruption("reference count \(n) exceeds row size") }
            for _ in 0..<n { _ = try readReference(&r) }
        }
    }

    private static func readReference(_ r: inout ByteReader) throws -> RowReference {
        let table = try r.readVarint()
        guard table <= UInt64(UInt32.max) else { throw r.corruption("table id \(table) out of range") }
        return RowReference(table: TableID(rawValue: UInt32(table)), key: try r.readSignedVarint())
    }
}
