/// A scan of one secondary index: equality on its leading columns, then optionally a range or a string
/// prefix on the next column, in index order (or reversed), with offset and limit.
///
/// This is the one query shape the engine runs without touching unrelated rows; the Core Data layer's
/// planner translates predicates and sort descriptors into it.
public struct IndexQuery: Sendable, Hashable {
    public var table: String
    public var index: String
    /// Values for the first `equal.count` columns of the index.
    public var equal: [Value]
    /// A range on the column after the equal ones. Ranges never match null values, as in SQL.
    public var range: ValueRange?
    /// A string prefix on the column after the equal ones (instead of `range`).
    public var prefix: String?
    public var reverse: Bool
    public var offset: Int
    public var limit: Int?

    public init(table: String, index: String, equal: [Value] = [], range: ValueRange? = nil, prefix: String? = nil,
                reverse: Bool = false, offset: Int = 0, limit: Int? = nil) {
        self.table = table
        self.index = index
        self.equal = equal
        self.range = range
        self.prefix = prefix
        self.reverse = reverse
        self.offset = offset
        self.limit = limit
    }
}

/// Bounds on one value, each optional and each inclusive or exclusive.
public struct ValueRange: Sendable, Hashable {
    public var lower: Value?
    public var lowerInclusive: Bool
    public var upper: Value?
    public var upperInclusive: Bool

    public init(lower: Value?, lowerInclusive: Bool = true, upper: Value?, upperInclusive: Bool = true) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// `a...b`
    public static func closed(_ a: Value, _ b: Value) -> ValueRange { .init(lower: a, upper: b) }
    /// `a..<b`
    public static func halfOpen(_ a: Value, _ b: Value) -> ValueRange { .init(lower: a, upper: b, upperInclusive: false) }
    /// `>= a`
    public static func atLeast(_ a: Value) -> ValueRange { .init(lower: a, upper: nil) }
    /// `> a`
    public static func greaterThan(_ a: Value) -> ValueRange { .init(lower: a, lowerInclusive: false, upper: nil) }
    /// `<= b`
    public static func atMost(_ b: Value) -> ValueRange { .init(lower: nil, upper: b) }
    /// `< b`
    public static func lessThan(_ b: Value) -> ValueRange { .init(lower: nil, upper: b, upperInclusive: false) }
}

extension IndexQuery {
    /// The key bounds of the scan in the index tree.
    func bounds(in index: IndexState, table: String) throws -> (ByteTree.Bound?, ByteTree.Bound?) {
        let columns = index.definition.columns
        let used = equal.count + (range != nil || prefix != nil ? 1 : 0)
        if used > columns.count {
            throw StorageError.invalidArgument(
                "query on index '\(self.index)' of table '\(table)' constrains \(used) columns but the index has \(columns.count)")
        }
        if range != nil && prefix != nil {
            throw StorageError.invalidArgument("query on index '\(self.index)' gives both a range and a prefix")
        }
        var base: [UInt8] = []
        for (i, value) in equal.enumerated() { try IndexKey.append(value, descending: columns[i].isDescending, to: &base) }
        func successor(_ k: [UInt8]) -> ByteTree.Bound? { ByteTree.prefixSuccessor(k).map { .init(key: $0, isInclusive: false) } }
        func atOrAfter(_ k: [UInt8]) -> ByteTree.Bound? { k.isEmpty ? nil : .init(key: k, isInclusive: true) }
        func after(_ k: [UInt8]) -> ByteTree.Bound? { ByteTree.prefixSuccessor(k).map { .init(key: $0, isInclusive: true) } }
        func before(_ k: [UInt8]) -> ByteTree.Bound? { .init(key: k, isInclusive: false) }

        if let prefix {
            guard let column = columns.dropFirst(equal.count).first else { return (nil, nil) }
            let p = base + IndexKey.stringPrefix(prefix, descending: column.isDescending)
            return (atOrAfter(p), successor(p))
        }
        guard let range else { return (atOrAfter(base), successor(base)) }
        let descending = columns[equal.count].isDescending
        func encoded(_ v: Value) throws -> [UInt8] {
            var k = base
            // Room for the tag and a fixed-width value at once: appending them grew the key twice.
            k.reserveCapacity(base.count + 16)
            try IndexKey.append(v, descending: descending, to: &k)
            return k
        }
        let nullKey = try encoded(.null)
        // In key order, the value-lower bound is the key-lower bound for ascending columns and the
        // key-upper bound for descending ones; nulls sit at the low end of ascending columns and the
        // high end of descending ones, and must be excluded either way.
        var lowKey: ByteTree.Bound?
        var highKey: ByteTree.Bound?
        if let v = range.lower {
            let k = try encoded(v)
            if descending { highKey = range.lowerInclusive ? successor(k) : before(k) } else { lowKey = range.lowerInclusive ? atOrAfter(k) : after(k) }
        } else {
            if descending { highKey = before(nullKey) } else { lowKey = after(nullKey) }
        }
        if let v = range.upper {
            let k = try encoded(v)
            if descending { lowKey = range.upperInclusive ? atOrAfter(k) : after(k) } else { highKey = range.upperInclusive ? successor(k) : before(k) }
        } else {
            if descending { lowKey = atOrAfter(base) } else { highKey = successor(base) }
        }
        return (lowKey, highKey)
    }
}
