import Foundation

extension PersistentStoreCoordinator {
    /// The record of `id` kept from a read at most `maximumAge` seconds ago (any age when negative), or
    /// else read from the store now and kept (see `ManagedObjectContext.stalenessInterval`).
    func cachedRecord(for id: ManagedObjectID, maximumAge: TimeInterval) throws -> ObjectRecord? {
        if let kept = rowCache.record(for: id, maximumAge: maximumAge) { return kept }
        guard let record = try record(for: id) else { return nil }
        rowCache.keep(CollectionOfOne(record))
        return record
    }

    /// `records(for:)` through the kept records, as `cachedRecord(for:maximumAge:)`.
    func cachedRecords(for ids: [ManagedObjectID], maximumAge: TimeInterval) throws -> [ObjectRecord?] {
        var result = ids.map { rowCache.record(for: $0, maximumAge: maximumAge) }
        let missing = result.indices.filter { result[$0] == nil }
        guard !missing.isEmpty else { return result }
        let read = try records(for: missing.map { ids[$0] })
        for (i, record) in zip(missing, read) { result[i] = record }
        rowCache.keep(read.compactMap { $0 })
        return result
    }
}
