import Granary

/// The net change of each object over the transactions of one capture window (§8.1 step 2).
///
/// An object inserted and deleted in one window never existed for the other devices, and one updated and
/// then deleted only needs its delete: sending less is what makes one event per window (M30) as good as
/// one per save. Object IDs are never reused by the store, so an ID inserted after a delete is a new
/// object; the re-insert of a deleted object's global ID (M13) is found later, once global IDs are known.
struct CaptureWindow {
    enum Net: Hashable, Sendable {
        case inserted
        /// The union of the property names history reported changed.
        case updated(Set<String>)
        case deleted
    }

    /// Net change per object, in the order each object first appeared, so that a capture of one window is
    /// the same every time.
    private(set) var changes: [ManagedObjectID: Net] = [:]
    private(set) var order: [ManagedObjectID] = []
    /// Objects inserted and deleted within the window: nothing is sent for them.
    private(set) var vanished: Set<ManagedObjectID> = []

    init() {}

    /// Folds the changes of `transaction`, keeping those of entities `isSynced` accepts.
    mutating func add(_ transaction: PersistentHistoryTransaction, isSynced: (String) -> Bool) {
        for change in transaction.changes where isSynced(change.changedObjectID.entityName) {
            fold(change.changedObjectID, change.changeType, change.updatedProperties ?? [])
        }
    }

    mutating func fold(_ id: ManagedObjectID, _ type: PersistentHistoryChange.ChangeType, _ properties: Set<String> = []) {
        let previous = changes[id]
        if previous == nil && !vanished.contains(id) { order.append(id) }
        switch (previous, type) {
        case (nil, .insert): changes[id] = .inserted
        case (nil, .update): changes[id] = .updated(properties)
        case (nil, .delete): changes[id] = .deleted
        case (.inserted, .update): break
        case (.inserted, .delete):
            changes[id] = nil
            vanished.insert(id)
        case let (.updated(earlier), .update): changes[id] = .updated(earlier.union(properties))
        case (.updated, .delete): changes[id] = .deleted
        // An ID is inserted once and never changes after its delete; history reporting otherwise would be
        // a bug there, and the latest report is the best guess of the row's state.
        case (.inserted, .insert), (.updated, .insert): changes[id] = .inserted
        case (.deleted, _): break
        }
    }

    /// The net changes in first-appearance order.
    var netChanges: [(id: ManagedObjectID, net: Net)] {
        order.compactMap { id in changes[id].map { (id, $0) } }
    }

    var isEmpty: Bool { changes.isEmpty }
}
