import Foundation

/// Phase one of a merge (§10.4 step 4, §12.3): everything the finalize commit will write, committed to
/// the event store before the app's store is saved, so that a kill between the two saves leaves enough
/// to finish (the save committed) or to forget (it did not) without recomputing anything.
///
/// Local events (a seed, the merge event) are kept here and only become event rows at finalize: a
/// revision handed out to a merge that is then discarded would leave a gap no peer could ever fill (M5).
struct PendingMerge: Hashable, Sendable, Codable {
    /// One key's place in the app's store.
    struct Mapping: Hashable, Sendable, Codable {
        var key: ObjectKey
        var localKey: Int64
    }

    var mergeID: String
    /// The store's history token before the save: recovery looks for the save's transaction after it.
    var tokenBefore: Data?
    /// Downloaded events the merge integrates.
    var integrated: [EventID] = []
    /// Local events the merge makes (the seed of a leech, the merge event of fuses and repairs), in
    /// revision order.
    var localEvents: [Event] = []
    /// The ledger objects the merge changed, whole.
    @BinaryLedgerObjects var ledgerObjects: [LedgerObject] = []
    /// Keys whose rows the merge deleted or gave to another key of their fuse group: their local key is
    /// cleared before `mapped` is written, so a row moved to a fuse survivor never has two keys.
    var unmapped: [ObjectKey] = []
    /// Keys mapped to rows the merge inserted (with the keys `obtainPermanentIDs` reserved) or adopted.
    var mapped: [Mapping] = []
    /// The history token a leech's seed was read at; nil leaves the state's token as it is.
    var historyToken: Data? = nil
    /// The leech state after finalize; nil leaves it as it is.
    var leechState: LeechState? = nil
    /// Baselines the merge joined (M32), recorded by the finalize; optional so that records written
    /// before baselines existed still read.
    var joinedBaselines: [BaselineRecord]? = nil

    /// The context name of the merge's save, which its history transaction carries.
    var contextName: String { SyncConstants.mergeContextNamePrefix + mergeID }
}

extension LeechState: Codable {}

/// Ledger objects kept in a pending record in `LedgerBinaryCoding`'s form (as base64 in the record's
/// JSON): a seed or a large merge changes every object, and their JSON cost as much as the merge's save.
@propertyWrapper
struct BinaryLedgerObjects: Hashable, Sendable, Codable {
    var wrappedValue: [LedgerObject]

    init(wrappedValue: [LedgerObject]) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Data(LedgerBinaryCoding.encode(wrappedValue)))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Records written before the binary form hold the objects as a JSON array.
        if let objects = try? container.decode([LedgerObject].self) {
            wrappedValue = objects
            return
        }
        let bytes = try container.decode(Data.self)
        do {
            wrappedValue = try LedgerBinaryCoding.objects(bytes)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "the ledger objects \(error)")
        }
    }
}
