import Foundation
import Granary
import Testing
@testable import GranarySync

/// The reader of the store's persistent history: batches, gaps, and finding a merge's save by its
/// context name (merge recovery, §12.3).
@Suite struct HistoryReaderTests {
    @Test func transactionsComeInBatchesAfterTheToken() throws {
        let device = try CaptureDevice()
        for i in 0..<5 { try device.save { try device.insert("Author", [CaptureFixture.gid: "a\(i)"], in: $0) } }
        let reader = device.recorder.history
        let first = try reader.transactions(after: nil, limit: 2)
        #expect(first.map(\.transactionNumber) == [1, 2])
        #expect(try reader.transactions(after: first.last?.token, limit: 10).map(\.transactionNumber) == [3, 4, 5])
        #expect(try reader.currentToken().transactionNumber == 5)
        let bytes = try HistoryReader.encode(try reader.currentToken())
        #expect(try reader.decode(bytes) == reader.currentToken())
        #expect(try reader.decode(nil) == nil)
        #expect(throws: SyncError.self) { try reader.decode(Data("not a token".utf8)) }
    }

    @Test func aPurgeBeyondTheTokenIsAGap() throws {
        let device = try CaptureDevice()
        for i in 0..<3 { try device.save { try device.insert("Author", [CaptureFixture.gid: "a\(i)"], in: $0) } }
        let reader = device.recorder.history
        let token = try #require(try reader.transactions(after: nil, limit: 1).last?.token)
        _ = try device.sync.execute(.deleteHistory(before: try reader.currentToken()))
        #expect {
            try reader.transactions(after: token)
        } throws: { error in
            guard case SyncError.historyGap(let number) = error else { return false }
            return number == 1
        }
        #expect(try reader.containsTransaction(contextName: "anything", after: token) == nil, "unknown, not false")
    }

    @Test func aMergeSaveIsFoundByItsContextName() throws {
        let device = try CaptureDevice()
        let before = try device.recorder.history.currentToken()
        let name = SyncConstants.mergeContextNamePrefix + "M1"
        device.context.performAndWait { device.context.name = name }
        try device.save(author: SyncConstants.mergeAuthor) { try device.insert("Author", [CaptureFixture.gid: "m"], in: $0) }
        device.context.performAndWait { device.context.name = nil }
        try device.save { try device.insert("Author", [CaptureFixture.gid: "a"], in: $0) }
        let reader = device.recorder.history
        #expect(try reader.containsTransaction(contextName: name, after: before) == true)
        #expect(try reader.containsTransaction(contextName: SyncConstants.mergeContextNamePrefix + "M2", after: before) == false)
        #expect(try reader.containsTransaction(contextName: name, after: reader.currentToken()) == false)
    }

    @Test func aRecorderThatPurgesKeepsOnlyTheLastCapturedTransaction() throws {
        let device = try CaptureDevice()
        let recorder = LocalChangeRecorder(coordinator: device.sync, store: device.syncStore, eventStore: device.eventStore,
                                           schema: device.schema, identifiers: device.identifiers, purgesHistory: true)
        for i in 0..<3 { try device.save { try device.insert("Author", [CaptureFixture.gid: "a\(i)"], in: $0) } }
        #expect(try recorder.capture()?.changes.count == 3)
        #expect(try device.recorder.history.transactions(after: nil).map(\.transactionNumber) == [3])
        try device.save { try device.object("Author", "a0", in: $0).setValue("Named", forKey: "name") }
        #expect(try recorder.capture()?.changes.map(\.kind) == [.update], "no gap: the captured token's transaction was kept")
        #expect(!recorder.didRescan)
    }
}
