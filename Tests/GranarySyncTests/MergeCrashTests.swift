import Foundation
import Granary
import Testing
@_spi(CrashTesting) @testable import GranarySync

/// A child integrating remote events into a durable store is killed with SIGKILL at random moments and
/// right after each step of the two-phase merge (§12.3); after each kill, recovery leaves the store equal
/// to the ledger's projection, every acknowledged merge integrated, and no object duplicated.
@Suite struct MergeCrashTests {
    @Test func aKilledMergeRecoversWithNothingLostOrDuplicated() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let remote = try #require(StoreID(canonical: MergeCrashChild.remoteStoreText))
        let model = try MergeCrashChild.model()
        var g = SplitMix(seed: 21)
        var acknowledged: Int64 = 0
        // The child's second merge of each run: its first may only finish what a kill interrupted.
        var target: Int64 = 2
        var outcomes: Set<String> = []
        // Kill points: right after the pending record, right after the store save, at random after a merge.
        let points = ["pending", "saved", "merged", "pending", "saved", "merged", "merged", "saved", "pending"]
        for (round, point) in points.enumerated() {
            let outcome = try CrashChild.runAndKill(["sync-merge", scratch.path], afterLine: "\(point) \(target)",
                                                    delay: point == "merged" ? Double.random(in: 0...0.01, using: &g) : 0)
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            for line in outcome.lines {
                let parts = line.split(separator: " ")
                if parts.first == "merged", parts.count == 2, let n = Int64(parts[1]) { acknowledged = max(acknowledged, n) }
            }

            let stack = try MergeTestStack(model: model, in: scratch, storeID: orderedStores[0], durability: .full)
            defer { stack.close() }
            let recovered = try MergeRecovery.recover(stack.eventStore, coordinator: stack.ensembleCoordinator, store: stack.ensembleStore)
            switch recovered {
            case .nothingPending: outcomes.insert("nothing")
            case .discarded: outcomes.insert("discarded")
            case .finalized: outcomes.insert("finalized")
            case .discardedHistoryLost: Issue.record("round \(round): history was never purged")
            }
            let state = try stack.eventStore.state()
            #expect(state.pendingMergeID == nil)
            #expect(state.integrated[remote] >= acknowledged, "round \(round): \(acknowledged) merges acknowledged, \(state.integrated[remote]) integrated")
            try expectStoreMatchesLedger(stack, "round \(round) (\(point)), recovered \(recovered)")
            // One author per integrated event: none lost, none duplicated, every row mapped.
            let graph = try stack.storeGraph()
            #expect(graph.objects.keys.filter { $0.entity == "Author" }.count == Int(state.integrated[remote]), "round \(round)")
            #expect(!graph.objects.keys.contains { $0.globalID.hasPrefix("unmapped-") }, "round \(round): a row without a key")
            let downloaded = try stack.eventStore.events(withStatus: .downloaded).map(\.id.revision).max() ?? 0
            target = max(state.integrated[remote], downloaded) + 2
        }
        #expect(acknowledged >= 3, "the child made too little progress")
        // The kills right after "pending" and "saved" exercised both recovery branches.
        #expect(outcomes.contains("discarded") && outcomes.contains("finalized"), "recoveries seen: \(outcomes)")
    }
}
