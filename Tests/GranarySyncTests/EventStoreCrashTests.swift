import Foundation
import Synchronization
import Testing
@_spi(CrashTesting) @testable import GranarySync

/// A child process records steps into an event store and is killed with SIGKILL at random moments;
/// after each kill the reopened store holds every acknowledged step and each step either whole or not
/// at all (§12.2, §12.3).
@Suite struct EventStoreCrashTests {
    @Test func aKilledWriterLeavesEveryStepWholeOrAbsent() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let directory = scratch.appendingPathComponent("events.granary")
        let remote = try #require(StoreID(canonical: EventStoreCrashChild.remoteStoreText))
        var g = SplitMix(seed: 4)
        var acknowledged = (local: Int64(0), imported: Int64(0), integrated: Int64(0))
        var previousRevision: Int64 = 0
        // The same directory every round, so later rounds also reopen what a kill left.
        for round in 0..<8 {
            let outcome = try EventStoreChild.runAndKill(directory: directory, afterLine: "local \(previousRevision + 3)",
                                                         delay: Double.random(in: 0...0.05, using: &g))
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            for line in outcome.lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let n = Int64(parts[1]) else { Issue.record("round \(round): line '\(line)'"); continue }
                switch parts[0] {
                case "local": acknowledged.local = max(acknowledged.local, n)
                case "imported": acknowledged.imported = max(acknowledged.imported, n)
                case "integrated": acknowledged.integrated = max(acknowledged.integrated, n)
                default: Issue.record("round \(round): line '\(line)'")
                }
            }

            let store = try EventStore.open(at: directory)
            defer { try? store.close() }
            let state = try store.state()
            let ledger = try store.loadLedger()
            let last = state.nextRevision - 1
            // Durability: nothing acknowledged is lost.
            #expect(last >= acknowledged.local, "round \(round): \(acknowledged.local) local events acknowledged, \(last) stored")
            #expect(last > previousRevision, "round \(round): the child made no progress")
            previousRevision = last
            // A local event, its ledger object, its mapping and its history token were one commit.
            let local = try store.events(withStatus: .localUnexported)
            #expect(local.map(\.id.revision) == Array(stride(from: 1, through: last, by: 1)), "round \(round)")
            #expect(state.historyToken == Data(String(last).utf8), "round \(round): token \(String(decoding: state.historyToken ?? Data(), as: UTF8.self)) after event \(last)")
            for revision in stride(from: max(1, last - 20), through: last, by: 1) {
                let key = ObjectKey("Author", "own-\(revision)")
                #expect(ledger.object(key) != nil, "round \(round): \(key) not in the ledger")
                #expect(try store.localKey(for: key) == revision, "round \(round): \(key) not mapped")
            }
            #expect(ledger.object(ObjectKey("Author", "own-\(last + 1)")) == nil, "round \(round): a ledger object without its event")
            #expect(try store.localKey(for: ObjectKey("Author", "own-\(last + 1)")) == nil, "round \(round)")

            // Remote events: integrated ones with their ledger object and mapping, downloaded ones with neither.
            let integrated = try store.events(withStatus: .integrated)
            let downloaded = try store.events(withStatus: .downloaded)
            #expect(integrated.count + downloaded.count <= Int(last), "round \(round)")
            for event in integrated + downloaded {
                #expect(event.id.store == remote)
                let key = ObjectKey("Book", "remote-\(event.id.revision)")
                let isIntegrated = try store.status(of: event.id) == .integrated
                #expect((ledger.object(key) != nil) == isIntegrated, "round \(round): \(key) ledger vs status")
                #expect((try store.localKey(for: key) != nil) == isIntegrated, "round \(round): \(key) mapping vs status")
                // M2: the counter is above every event the store holds.
                #expect(state.maxGlobalCount >= event.meta.globalCount, "round \(round): \(event.id)")
            }
            #expect(state.integrated[remote] == integrated.map(\.id.revision).max() ?? 0, "round \(round): integrated vector")
            if acknowledged.imported > 0 {
                #expect(try store.status(of: EventID(store: remote, revision: acknowledged.imported)) != nil, "round \(round): an acknowledged import is lost")
            }
            if acknowledged.integrated > 0 {
                #expect(try store.status(of: EventID(store: remote, revision: acknowledged.integrated)) == .integrated,
                        "round \(round): an acknowledged integration is lost")
            }
        }
    }
}

/// Runs `granary-crashtest sync-events` and kills it with SIGKILL `delay` seconds after it printed a line.
enum EventStoreChild {
    static func runAndKill(directory: URL, afterLine line: String, delay: Double) throws -> CrashChild.Outcome {
        try CrashChild.runAndKill(["sync-events", directory.path], afterLine: line, delay: delay)
    }
}
