import Foundation

/// One row of the `item` table as every system under test sees it.
///
/// Codable so that the GRDB records peer can persist it with no hand-written mapping: its property
/// names are the column names.
struct Item: Codable, Sendable, Equatable {
    var id: Int64
    var name: String
    var category: Int64
    var price: Double
    var flag: Bool
    var created: Date

    /// A number that two systems returning the same row agree on; summed over a result, it checks that
    /// every system did the same work, and it keeps the optimizer from discarding decoded rows.
    ///
    /// Dates enter in whole seconds because the records peer stores them as text with milliseconds.
    var checksum: Int {
        Int(truncatingIfNeeded: id) &* 31 &+ name.utf8.count &+ Int(truncatingIfNeeded: category) &* 7
            &+ Int((price * 100).rounded()) &+ (flag ? 1 : 0) &+ Int(created.timeIntervalSince1970)
    }

    /// The bytes of the six column values themselves, with no framing: the "raw data" of workload 10.
    var payloadBytes: Int { 8 + name.utf8.count + 8 + 8 + 1 + 8 }
}

/// A query of workload 4: `category = ? AND price BETWEEN ? AND ? ORDER BY price LIMIT 20`.
struct PriceRangeQuery: Sendable {
    var category: Int64
    var lowestPrice: Double
    var highestPrice: Double
    static let limit = 20
}

/// The data every system is fed, generated from fixed seeds so that all systems (and all runs) see the
/// same rows and the same random keys.
struct Dataset: Sendable {
    let items: [Item]
    /// About 100 rows share each category, whatever the row count.
    let categoryCount: Int64
    let lookupKeys: [Int64]
    let categoryQueries: [Int64]
    let rangeQueries: [PriceRangeQuery]

    init(rows: Int, lookups: Int, queries: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        categoryCount = Int64(max(1, rows / 100))
        items = Dataset.makeItems(ids: 1...Int64(rows), categoryCount: categoryCount, random: &random)
        lookupKeys = (0..<lookups).map { _ in Int64(random.next(below: UInt64(rows))) + 1 }
        categoryQueries = (0..<queries).map { [categoryCount] _ in Int64(random.next(below: UInt64(categoryCount))) }
        rangeQueries = (0..<queries).map { [categoryCount] _ in
            // Prices are uniform in [1, 100), so a width of 50 matches about half of a category's rows:
            // more than the limit, so the sort and the limit both matter.
            let low = Double(random.next(below: 5_000)) / 100 + 1
            return PriceRangeQuery(category: Int64(random.next(below: UInt64(categoryCount))),
                                   lowestPrice: low, highestPrice: low + 50)
        }
    }

    /// Rows with the given keys, categories below `categoryCount`, prices in cents from 1.00 to 99.99 and
    /// creation dates in whole seconds during 2024.
    static func makeItems(ids: ClosedRange<Int64>, categoryCount: Int64, random: inout SplitMix64) -> [Item] {
        let start = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01T00:00:00Z
        var items: [Item] = []
        items.reserveCapacity(ids.count)
        for id in ids {
            let category = Int64(random.next(below: UInt64(categoryCount)))
            let cents = 100 + random.next(below: 9_900)
            let flag = random.next(below: 2) == 1
            let seconds = Double(random.next(below: 366 * 86_400))
            items.append(Item(id: id, name: "item \(id)", category: category, price: Double(cents) / 100, flag: flag,
                              created: start.addingTimeInterval(seconds)))
        }
        return items
    }

    /// The rows of `items` with new prices and flags, for one pass of the update workload: each pass writes
    /// values that differ from the previous pass, so no system can skip a write as a no-op.
    func updatedItems(pass: Int) -> [Item] {
        items.map { item in
            var item = item
            let cents: Int = Int((item.price * 100).rounded())
            let shifted: Int = (cents - 100 + 7 * (pass + 1)) % 9_900 + 100
            item.price = Double(shifted) / 100
            item.flag.toggle()
            return item
        }
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64), so the data does not depend on
/// the platform's random source.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound`; the modulo bias is negligible for the small bounds used here.
    mutating func next(below bound: UInt64) -> UInt64 { next() % bound }
}
