import Foundation
import Testing
@testable import Granary

/// Purged history really frees its space: the store's files stay under a fixed size across 100,000 saves
/// when the history is purged every 1,000 saves and the store checkpoints.
@Suite(.serialized) struct PersistentHistorySizeTests {
    /// Measured (see the test): with purging, the files peak at about 0.45 MB (a snapshot holding ~1,000
    /// transactions of one update each, plus at most 1,000 saves of log); without purging the same run's
    /// history alone is over 15 MB. 2 MB leaves room for other entry sizes while failing long before an
    /// unpurged history would reach it (after ~13,000 saves).
    static let bound = 2 << 20

    @Test func aHundredThousandSavesWithPurgingStayUnderAFixedSize() throws {
        let url = scratchURL()
        defer { try? FileManager.default.removeItem(at: url) }
        let (coordinator, context) = try HistorySupport.stack(.durable, at: url)
        let store = coordinator.persistentStores[0]
        var peak = 0
        try context.performAndWait {
            let book = try HistorySupport.insert("Book", ["title": "counter"], into: context)
            for save in 1...100_000 {
                try book.setValue(Int64(save), forKey: "pages")
                try context.save()
                if save % 1_000 == 0 {
                    let token = coordinator.currentPersistentHistoryToken(fromStores: nil)
                    _ = try coordinator.execute(.deleteHistory(before: token))
                    try store.engine.checkpoint()
                    peak = max(peak, try Self.size(of: url))
                }
            }
        }
        let remaining = try HistorySupport.history(coordinator)
        #expect(remaining.count == 1)
        #expect(remaining.first?.token.transactionNumber == 100_001)
        #expect(peak > 0 && peak < Self.bound, "the store's files reached \(peak) bytes")
        print("history size test: peak \(peak) bytes")
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
