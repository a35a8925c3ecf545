/// A stored row as its encoded bytes, handed to a closure during a scan or lookup and decoded on demand.
///
/// Decoding into a `Row` the caller keeps (`decode(into:)`) reuses that row's storage: a caller that
/// turns every row into something else (the object layer's records) then allocates no array per row,
/// and the objects it builds are laid out in memory one after the other instead of among the freed
/// arrays of rows decoded before them.
///
/// Valid only inside the closure it is handed to: the bytes belong to the tree.
public struct EncodedRow {
    let bytes: UnsafeRawBufferPointer
    let table: String
    /// The row's primary key.
    public let key: Int64

    /// The row, decoded into a new `Row`.
    /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row.
    public func decode() throws -> Row { try RowCodec.decode(bytes, table: table, key: key) }

    /// Decodes the row into `row`, replacing its values and keeping its capacity.
    /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row.
    public func decode(into row: inout Row) throws {
        do {
            var reader = ByteReader(bytes, context: "row")
            try RowCodec.decode(from: &reader, into: &row.values)
            if !reader.isAtEnd { throw reader.corruption("\(reader.remaining) unexpected bytes after the row") }
        } catch StorageError.corruption(_, let offset, let reason) {
            throw StorageError.corruption(file: "table '\(table)' row \(key)", offset: offset, reason: reason)
        }
    }
}
