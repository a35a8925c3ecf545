import Foundation
import Testing
@testable import Granary

/// Purged history really frees its space: the store's files stay under a fixed size across 100,000 saves
/// when the history is purged every 1,000 saves and the store checkpoints.
@Suite(.serialized) struct PersistentHistorySizeTests {
    /// Chosen from measurement. The log's segment is preallocated in 1 MiB chunks, so the files never
    /// weigh less than 1 MiB; with purging they peaked at 1,049,710 bytes (the segment, its ≤ 1,000 saves
    /// of log fitting in the first chunk, and a snapshot of ~1.2 KB holding the counter object and one
    /// transaction). Without purging the snapshot grows by ~10 bytes a transaction (these transactions
    /// are alike and compress well; real ones weigh more): 20,000 saves peaked at 1,247,024 bytes. 64 KiB
    /// over the chunk is 60 times the purged snapshot, and an unpurged history passes it after ~6,500
    /// saves.
    static let bound = (1 << 20) + (64 << 10)

    @Test func aHundredThousandSavesWithPurgingStayUnderAFixedSize() throws {
        let peak = try Self.saveRepeatedly(100_000, purging: true)
        #expect(peak > 0 && peak < Self.bound, "the store's files reached \(peak) bytes")
    }

    /// The same saves without purging outgrow the bound: the bound is tight enough to catch history
    /// that is never freed.
    @Test func withoutPurgingTheSameSavesOutgrowTheBound() throws {
        let peak = try Self.saveRepeatedly(20_000, purging: false)
        #expect(peak > Self.bound)
    }

    /// Updates one object `count` times, one save each, checkpointing every 1,000 saves (after purging
    /// the history before the current token, if `purging`); returns the largest size the store's files
    /// had, measured just before each purge and after each checkpoint.
    static func saveRepeatedly(_ count: Int, purging: Bool) throws -> Int {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (coordinator, context) = try HistorySupport.stack(.durable, at: url)
        let store = coordinator.persistentStores[0]
        var peak = 0
        try context.performAndWait {
            let book = try HistorySupport.insert("Book", ["title": "counter"], into: context)
            for save in 1...count {
                try book.setValue(Int64(save), forKey: "pages")
                try context.save()
                if save % 1_000 == 0 {
                    peak = max(peak, try size(of: url))
                    if purging {
                        _ = try coordinator.execute(.deleteHistory(before: coordinator.currentPersistentHistoryToken(fromStores: nil)))
                    }
                    try store.engine.checkpoint()
                    peak = max(peak, try size(of: url))
                }
            }
        }
        let remaining = try HistorySupport.history(coordinator)
        #expect(remaining.count == (purging ? 1 : count))
        #expect(remaining.last?.token.transactionNumber == Int64(count))
        return peak
    }

    /// The bytes of every file under `url`.
    static func size(of url: URL) throws -> Int {
        var total = 0
        let files = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey])
        while let file = files?.nextObject() as? URL {
            total += try file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
        }
        return total
    }
}
