/// The indexes of an object's changed properties, in ascending order.
///
/// Every write to an object that is not new records its property here, so an import that sets six
/// properties of 100,000 objects inserts 600,000 times. A `Set<Int>` hashes each insertion and
/// allocates storage per changed object; nearly every entity has fewer than 64 properties, whose
/// indexes fit one word of bits, with no allocation. Larger indexes go to a set beside it.
struct PropertyIndexSet: Sequence, Equatable, ExpressibleByArrayLiteral, Sendable {
    private var low: UInt64 = 0
    private var high: Set<Int> = []

    init() {}

    init(arrayLiteral elements: Int...) {
        for i in elements { insert(i) }
    }

    var isEmpty: Bool { low == 0 && high.isEmpty }
    var count: Int { low.nonzeroBitCount + high.count }

    func contains(_ i: Int) -> Bool {
        i >= 0 && i < 64 ? low & (1 << UInt64(i)) != 0 : high.contains(i)
    }

    @inline(__always)
    mutating func insert(_ i: Int) {
        if i >= 0 && i < 64 { low |= 1 << UInt64(i) } else { high.insert(i) }
    }

    mutating func remove(_ i: Int) {
        if i >= 0 && i < 64 { low &= ~(1 << UInt64(i)) } else { high.remove(i) }
    }

    mutating func formUnion<S: Sequence>(_ other: S) where S.Element == Int {
        for i in other { insert(i) }
    }

    /// The indexes in ascending order (the order iteration gives).
    func sorted() -> [Int] { Array(self) }

    func makeIterator() -> Iterator { Iterator(bits: low, high: high.sorted()) }

    struct Iterator: IteratorProtocol {
        var bits: UInt64
        let high: [Int]
        var position = 0

        mutating func next() -> Int? {
            if bits != 0 {
                let i = bits.trailingZeroBitCount
                bits &= bits - 1
                return i
            }
            guard position < high.count else { return nil }
            defer { position += 1 }
            return high[position]
        }
    }
}
