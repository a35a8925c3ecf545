import Foundation

/// One object's stored state as the store layer hands it to contexts: its ID, its property values in
/// `EntityLayout` order (relationships as object IDs), and the row version for optimistic locking.
struct ObjectRecord {
    var id: ManagedObjectID
    var values: [Any?]
    var version: Int64
    /// The layout of the record's entity: a fetch makes the object from it without looking its entity
    /// up by name.
    var layout: EntityLayout
}

/// What a save asks a store to write.
struct StoreChanges {
    struct Insert {
        var id: ManagedObjectID
        var entity: EntityDescription
        var values: [Any?]
    }
    struct Update {
        var id: ManagedObjectID
        var entity: EntityDescription
        var values: [Any?]
        var expectedVersion: Int64
    }
    struct Delete {
        var id: ManagedObjectID
        var entity: EntityDescription
        var expectedVersion: Int64
    }
    var inserts: [Insert] = []
    var updates: [Update] = []
    var deletes: [Delete] = []
    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// Thrown inside a save's write transaction when optimistic locking fails, so nothing is written; the
/// context resolves the conflicts with its merge policy and tries again.
struct ConflictsFound: Error, @unchecked Sendable {
    // @unchecked: the records hold plain values, and the error never leaves the saving thread: it is
    // thrown inside the store's write block and caught by the save that started it.
    var conflicts: [MergeConflict]
    /// The store's current state of each conflicting object (absent: deleted in the store).
    var storeRecords: [ManagedObjectID: ObjectRecord]
}

/// Counts of how fetches were answered, so tests and tools can see that indexed fetches do not scan.
public struct FetchStatistics: Sendable, Hashable {
    public var fullScans = 0
    public var indexScans = 0
    /// Rows read from the store by fetches (before residual filtering).
    public var rowsExamined = 0
    /// The plan of the most recent fetch, as `FetchPlan.explain` words it.
    public var lastPlan: String? { lastFetchPlan?.explain }
    /// Kept as the plan, worded only when asked for.
    var lastFetchPlan: FetchPlan?
}
