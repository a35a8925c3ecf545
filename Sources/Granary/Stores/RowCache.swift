import Foundation

/// The records a coordinator keeps for contexts with a nonzero `stalenessInterval`, with when each was
/// read from the store (Core Data's row cache, only for the contexts that ask for it).
///
/// It is filled only by those contexts' fault loads, so a coordinator whose contexts keep Granary's
/// default of 0 never holds anything here. The coordinator's own saves replace what they change, so
/// only other coordinators' and processes' changes can be hidden, which is what a staleness interval
/// allows. Bounded: past `limit` records it starts over, the answer to an unbounded cache being another
/// read, never a wrong value.
final class RowCache: @unchecked Sendable {
    // @unchecked: `entries` is only touched under `lock`. Records hold `[Any?]` values that are model
    // values (Sendable) or object IDs, never objects.
    private let lock = NSLock()
    private var entries: [ManagedObjectID: (record: ObjectRecord, read: ContinuousClock.Instant)] = [:]
    let limit: Int

    init(limit: Int = 100_000) { self.limit = limit }

    var isEmpty: Bool { lock.withLock { entries.isEmpty } }

    /// The record kept for `id` if it was read at most `maximumAge` seconds ago (any age when negative).
    func record(for id: ManagedObjectID, maximumAge: TimeInterval) -> ObjectRecord? {
        lock.withLock {
            guard let entry = entries[id] else { return nil }
            if maximumAge >= 0 && entry.read.duration(to: .now) > .seconds(maximumAge) {
                entries[id] = nil
                return nil
            }
            return entry.record
        }
    }

    func keep(_ records: some Sequence<ObjectRecord>) {
        let now = ContinuousClock.now
        lock.withLock {
            for record in records {
                if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
                entries[record.id] = (record, now)
            }
        }
    }

    /// Drops what a save through the coordinator changed or deleted.
    func forget(_ ids: some Sequence<ManagedObjectID>) {
        lock.withLock {
            guard !entries.isEmpty else { return }
            for id in ids { entries[id] = nil }
        }
    }

    /// Drops everything: after a batch request or a store's removal, whose rows are not listed one by one.
    func forgetAll() {
        lock.withLock { entries.removeAll() }
    }
}
