import Foundation
import Logging
import Synchronization
import Testing
@testable import GranarySync

/// A handler keeping what it is given, for one test to read back.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var store: String?
    }

    static let entries = Mutex<[Entry]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let store = event.metadata?["store"].map { "\($0)" }
        Self.entries.withLock { $0.append(Entry(level: event.level, message: event.message.description, store: store)) }
    }
}

/// Ensembles' logging levels through swift-log. One test changes the process-wide level, so the suite is
/// serialized and restores `.error` at the end; other suites' messages are told apart by the store path.
@Suite(.serialized) struct SyncLogTests {
    @Test func verboseLoggingShowsEachMergeStepAndNoneShowsNothing() async throws {
        SyncLog.setHandler { _ in CapturingLogHandler() }
        defer { SyncLog.level = .error }
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let cloud = MemoryFileSystem()
        let model = try syncNotesModel()
        let laptop = try SyncTestDevice("laptop", in: root, model: model, cloud: cloud)
        let phone = try SyncTestDevice("phone", in: root, model: model, cloud: cloud)
        func mine() -> [CapturingLogHandler.Entry] {
            CapturingLogHandler.entries.withLock { $0 }.filter { $0.store?.hasPrefix(root.path) == true }
        }

        SyncLog.level = .verbose
        try await laptop.ensemble.leech()
        try await phone.ensemble.leech()
        try laptop.addNote("Buy bread", id: "n1")
        try await laptop.ensemble.merge()
        try await phone.ensemble.merge()
        let messages = mine().map(\.message)
        #expect(messages.filter { $0 == "leeched the store" }.count == 2)
        #expect(messages.contains { $0.hasPrefix("recorded local changes in ") })
        #expect(messages.contains { $0.hasPrefix("integrated 1 events in ") })
        let summaries = mine().filter { $0.message.hasPrefix("merged in ") }
        #expect(summaries.count == 2)
        #expect(summaries.allSatisfy { $0.level == .info })
        #expect(summaries.last?.message.contains("1 integrated") == true)
        #expect(mine().contains { $0.level == .debug })

        // Trace: the summaries, not the steps.
        CapturingLogHandler.entries.withLock { $0 = [] }
        SyncLog.level = .trace
        try laptop.addNote("Buy milk", id: "n2")
        try await laptop.ensemble.merge()
        #expect(mine().map(\.message).filter { $0.hasPrefix("merged in ") }.count == 1)
        #expect(!mine().contains { $0.level == .debug })

        // None: nothing at all, even for a failure.
        CapturingLogHandler.entries.withLock { $0 = [] }
        SyncLog.level = .none
        try await laptop.ensemble.deleech()
        await #expect(throws: SyncError.self) { try await laptop.ensemble.merge() }
        try await phone.ensemble.merge()
        #expect(mine().isEmpty)

        // Error: a forced deleech is said, with its reason.
        SyncLog.level = .error
        await cloud.setIdentity(CloudIdentity("another account"))
        await #expect(throws: SyncError.self) { try await phone.ensemble.merge() }
        let errors = mine().filter { $0.level == .error }
        #expect(errors.contains { $0.message.hasPrefix("deleeched the store because") })
    }
}
