import Foundation
import Testing
@_spi(CrashTesting) @testable import GranarySync

/// A child device records, exports and rebases on a shared folder and is killed with SIGKILL at random
/// moments (§12.7). After each kill: every exported event is still in the cloud or covered by a complete
/// baseline there (removal only after the baseline is visible), every complete baseline reads back, the
/// events marked covered are covered by the store's recorded baseline, and a new device rebuilding from
/// the cloud (baselines joined, remaining events integrated) gets the child's ledger.
@Suite struct RebaseCrashTests {
    @Test func aKilledRebaseNeverLosesAnEventFromTheCloud() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let layout = try CloudLayout(ensembleIdentifier: RebaseCrashChild.ensemble)
        let cloudRoot = scratch.appendingPathComponent("cloud")
        var g = SplitMix(seed: 7)
        var acknowledged: Int64 = 0
        var rebases = 0
        for round in 0..<10 {
            let outcome = try CrashChild.runAndKill(["sync-rebase", scratch.path], afterLine: "recorded \(acknowledged + 2)",
                                                    delay: Double.random(in: 0...0.08, using: &g))
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            for line in outcome.lines {
                let parts = line.split(separator: " ")
                guard parts.count == 2, let n = Int64(parts[1]) else { Issue.record("round \(round): line '\(line)'"); continue }
                if parts[0] == "recorded" { acknowledged = max(acknowledged, n) }
                if parts[0] == "rebased" { rebases += 1 }
            }

            let store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"))
            defer { try? store.close() }
            let state = try store.state()
            #expect(state.nextRevision - 1 >= acknowledged, "round \(round): an acknowledged event is lost")
            let exported = try store.events(withStatus: .exported) + store.events(withStatus: .covered)
            let all = exported + (try store.events(withStatus: .localUnexported))

            // What a new device finds in the cloud.
            let eventFiles = try FileManager.default.contentsOfDirectory(atPath: cloudRoot.appendingPathComponent(layout.eventsDirectory).path)
                .filter { !$0.hasPrefix(".") }.map { try CloudFileName.parse($0) }
            let baselineFiles = try FileManager.default.contentsOfDirectory(atPath: cloudRoot.appendingPathComponent(layout.baselinesDirectory).path)
                .filter { !$0.hasPrefix(".") }.map { try CloudFileName.parse($0) }
            var groups: [String: [CloudFileName]] = [:]
            for name in baselineFiles { groups[BaselineSummary.stem(of: name) ?? "", default: []].append(name) }
            var baselines: [String: Baseline] = [:]
            for (stem, names) in groups {
                guard case let .baseline(_, _, _, part)? = names.first, names.count == (part?.count ?? 1) else { continue }
                let parts = try names.map { ($0, try Data(contentsOf: cloudRoot.appendingPathComponent(layout.path(for: $0)))) }
                do {
                    baselines[stem] = try BaselineFile.decode(parts: parts)
                } catch {
                    Issue.record("round \(round): the complete baseline \(stem) does not read back: \(error)")
                }
            }
            let inCloud = Set(eventFiles.compactMap { name -> EventID? in
                guard case let .event(_, store, revision, _) = name else { return nil }
                return EventID(store: store, revision: revision)
            })
            func coveredInCloud(_ id: EventID) -> Bool { baselines.values.contains { $0.vector[id.store] >= id.revision } }

            for event in exported {
                #expect(inCloud.contains(event.id) || coveredInCloud(event.id),
                        "round \(round): exported event \(event.id) is neither in the cloud nor covered by a baseline there")
            }
            let covered = try store.events(withStatus: .covered)
            if !covered.isEmpty {
                let current = try #require(state.baselineID.flatMap { baselines[$0] }, "round \(round): the recorded baseline is not in the cloud")
                for event in covered {
                    #expect(current.vector[event.id.store] >= event.id.revision, "round \(round): \(event.id) covered but not by \(current.summary.stem)")
                }
            }

            // Rebuild: join every complete baseline, then integrate the remaining cloud events in order.
            var ledger = Ledger(), vector = RevisionVector()
            for baseline in baselines.values.sorted(by: { $0.globalCount < $1.globalCount }) {
                vector = BaselineJoiner.join(baseline, into: &ledger, integrated: vector)
            }
            let remaining = all.filter { inCloud.contains($0.id) && vector[$0.id.store] < $0.id.revision }
                .sorted { $0.id.revision < $1.id.revision }
            for event in remaining {
                #expect(vector[event.id.store] == event.id.revision - 1, "round \(round): a gap before \(event.id)")
                LedgerIntegrator.apply(event, to: &ledger)
                vector[event.id.store] = event.id.revision
            }
            let published = all.filter { vector[$0.id.store] >= $0.id.revision }
            #expect(ledger == integrated(published).ledger, "round \(round): the cloud does not rebuild the child's published ledger")
            acknowledged = max(acknowledged, state.nextRevision - 1)
        }
        #expect(rebases > 0, "no rebase completed in any round")
    }
}
