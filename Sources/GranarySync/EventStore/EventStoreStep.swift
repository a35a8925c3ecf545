import Foundation

/// Everything one capture or merge step writes to the event store, committed as one engine transaction
/// (§12.2, §12.3): a kill leaves the store as it was before the step or as it is after, never between.
///
/// A step that integrated events without saving their ledger changes, or that saved a history token
/// without the event that captured up to it, would lose or duplicate changes on the next run.
struct EventStoreStep: Sendable {
    /// Downloaded events the step integrated: their status becomes integrated and the integrated vector
    /// covers them.
    var integrated: [EventID] = []
    /// The ledger objects the step changed, whole.
    var ledgerObjects: [LedgerObject] = []
    /// Keys whose object the step mapped to a primary key of the app's store.
    var localKeys: [ObjectKey: Int64] = [:]
    /// The history token captured up to; `nil` leaves it unchanged.
    var historyToken: Data? = nil
    /// The new leech state; `nil` leaves it unchanged.
    var leechState: LeechState? = nil
    /// Baselines joined into the ledger: the integrated vector and global count rise to theirs, and the
    /// downloaded events they cover become integrated (`EventStore.applyBaselines`).
    var joinedBaselines: [BaselineRecord] = []
    /// The large values the step's event refers to (M15), stored with it so that no event is ever held
    /// without its data files.
    var dataFiles: [DataFileRecord] = []

    init(integrated: [EventID] = [], ledgerObjects: [LedgerObject] = [], localKeys: [ObjectKey: Int64] = [:],
         historyToken: Data? = nil, leechState: LeechState? = nil, joinedBaselines: [BaselineRecord] = [],
         dataFiles: [DataFileRecord] = []) {
        self.integrated = integrated
        self.ledgerObjects = ledgerObjects
        self.localKeys = localKeys
        self.historyToken = historyToken
        self.leechState = leechState
        self.joinedBaselines = joinedBaselines
        self.dataFiles = dataFiles
    }
}
