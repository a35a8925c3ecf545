/// A stored row as its encoded bytes, handed to a closure during a scan or lookup and decoded on demand.
///
/// A caller that turns every row into something else (the object layer's records) reads the values
/// one at a time (`values()`), or decodes into one `Row` it reuses (`decode(into:)`), and allocates no
/// array per row.
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

    /// The row's values one at a time, in column order, without building a `Row`. An iterator rather
    /// than a closure: a closure retained and released what it captured on every value.
    /// - Throws: `StorageError.corruption` naming the table and key if the column count is damaged.
    public func values() throws -> Values {
        var reader = ByteReader(bytes, context: "row")
        let count = try located { () throws -> Int in
            let count = try reader.readVarint()
            // Every value takes at least one byte, which bounds a damaged count.
            guard count <= UInt64(reader.remaining) else { throw reader.corruption("column count \(count) exceeds row size") }
            return Int(count)
        }
        return Values(row: self, reader: reader, count: count)
    }

    /// An iterator over a row's values (see `values()`).
    public struct Values {
        let row: EncodedRow
        var reader: ByteReader
        /// The number of columns the row holds (a row written before its table gained columns holds
        /// fewer than the table has).
        public let count: Int
        /// The position of the value `next()` returns next.
        public private(set) var column = 0

        /// The next value, or `nil` after the last one.
        /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row.
        public mutating func next() throws -> Value? {
            guard column < count else {
                let end = reader
                try row.located { if !end.isAtEnd { throw end.corruption("\(end.remaining) unexpected bytes after the row") } }
                return nil
            }
            column += 1
            return try row.located { try RowCodec.decodeValue(from: &reader) }
        }

        /// Steps over the next value without decoding it; `false` after the last one: for a caller walking
        /// a row value by value that has no use for some of them (a string passed is never made). A scan
        /// that knows its columns beforehand reads them with `read(columns:into:)`, faster.
        /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row.
        public mutating func skip() throws -> Bool {
            guard column < count else { return false }
            column += 1
            try row.located { try RowCodec.skipValue(from: &reader) }
            return true
        }
    }

    /// Runs a read of the row's bytes, naming the table and key in a corruption it reports.
    func located<T>(_ read: () throws -> T) throws -> T {
        do { return try read() } catch StorageError.corruption(_, let offset, let reason) {
            throw StorageError.corruption(file: "table '\(table)' row \(key)", offset: offset, reason: reason)
        }
    }

    /// Decodes the row into `row`, replacing its values and keeping its capacity.
    /// - Throws: `StorageError.corruption` naming the table and key if the bytes are not a valid row.
    public func decode(into row: inout Row) throws {
        try located {
            var reader = ByteReader(bytes, context: "row")
            try RowCodec.decode(from: &reader, into: &row.values)
            if !reader.isAtEnd { throw reader.corruption("\(reader.remaining) unexpected bytes after the row") }
        }
    }
}
