import Foundation

/// The one `state` row: this store's identity and the counters every new local event is made from.
///
/// The counters live here rather than being recomputed from the events, so that they never go back
/// (M2) even once covered events are deleted by a rebase, and so that reading them costs no scan.
struct EventStoreState: Hashable, Sendable {
    var storeID: StoreID
    var leechState: LeechState = .notLeeched
    /// The history token of the app's store up to which local saves were captured (its JSON).
    var historyToken: Data? = nil
    /// The revision the next local event gets.
    var nextRevision: Int64 = 1
    /// The highest global count of any event recorded or imported: the next local event's count is one
    /// more (M2).
    var maxGlobalCount: Int64 = 0
    /// For each store, the highest revision integrated into the ledger, this store's own included.
    var integrated = RevisionVector()
    var baselineID: String? = nil
    var pendingMergeID: String? = nil

    init(storeID: StoreID) { self.storeID = storeID }
}
