/// Where an event stands in the global order every device agrees on (M1): its Lamport global count,
/// then its store ID as the tie-break.
///
/// Timestamps take no part: clocks of devices disagree, and an order that depended on them would not be
/// the same everywhere.
struct EventPosition: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    var globalCount: Int64
    var store: StoreID

    static func < (lhs: EventPosition, rhs: EventPosition) -> Bool {
        lhs.globalCount != rhs.globalCount ? lhs.globalCount < rhs.globalCount : lhs.store < rhs.store
    }

    var description: String { "\(globalCount)@\(store)" }

    // Encoded as a two-element array, `[count, "store"]`: positions are stored with every write in the
    // ledger and baselines, where key names would double their size.
    init(globalCount: Int64, store: StoreID) {
        self.globalCount = globalCount
        self.store = store
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        globalCount = try container.decode(Int64.self)
        store = try container.decode(StoreID.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "an event position has two elements")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(globalCount)
        try container.encode(store)
    }
}
