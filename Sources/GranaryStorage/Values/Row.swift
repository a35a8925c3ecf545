/// The column values of one row, in the order of its table's columns.
///
/// Rows are positional rather than keyed by name because the table schema already names the columns,
/// and the encoding is then a plain sequence of values. A row shorter than its schema (written before a
/// column was added) reads the missing columns as `.null`.
public struct Row: Sendable, Hashable, RandomAccessCollection, MutableCollection, ExpressibleByArrayLiteral {
    public var values: [Value]

    public init(_ values: [Value]) { self.values = values }
    public init(arrayLiteral elements: Value...) { self.values = elements }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { values.count }

    /// Reading past the end yields `.null`, so that rows written before a column was added stay readable.
    /// Inlinable: the object layer reads a few columns of every row it saves or fetches, and a call
    /// across the module boundary per read (with a copy of the value) was a visible share of a save.
    @inlinable public subscript(position: Int) -> Value {
        get { position < values.count ? values[position] : .null }
        set {
            if position >= values.count {
                values.append(contentsOf: repeatElement(.null, count: position - values.count + 1))
            }
            values[position] = newValue
        }
    }
}

extension Row {
    /// The size of this row in the engine's row encoding, as it is stored in memory and in the log.
    public var encodedByteCount: Int { RowCodec.encode(self).count }
}
