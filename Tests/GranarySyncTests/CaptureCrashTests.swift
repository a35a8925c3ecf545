import Foundation
import Granary
import Testing
@_spi(CrashTesting) @testable import GranarySync

/// A child saves and captures until it is killed with SIGKILL at random moments (§12.2): a capture is
/// one event-store commit, so after every kill a capture in the parent finds exactly the saves not yet
/// captured, nothing acknowledged is lost and nothing is captured twice.
@Suite struct CaptureCrashTests {
    @Test func aKilledCaptureLosesNothingAndDuplicatesNothing() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let model = try CaptureCrashChild.model()
        let configuration = EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier")
        let schema = LedgerSchema(model: model, configuration: configuration)
        var g = SplitMix(seed: 21)
        var acknowledged = 0
        for round in 0..<8 {
            let outcome = try CrashChild.runAndKill(["sync-capture", scratch.path], afterLine: "saved \(acknowledged + 3)",
                                                    delay: Double.random(in: 0...0.03, using: &g))
            #expect(outcome.killed, "round \(round): the child was not killed: \(outcome.err)")
            for line in outcome.lines where line.hasPrefix("saved ") {
                acknowledged = max(acknowledged, Int(line.dropFirst(6)) ?? 0)
            }

            let app = PersistentStoreCoordinator(managedObjectModel: model)
            let store = try app.addPersistentStore(type: .durable, at: CaptureCrashChild.storeURL(in: scratch),
                                                   options: .init(durability: .full, persistentHistoryTracking: true))
            let sync = PersistentStoreCoordinator(managedObjectModel: model)
            let shared = try sync.addPersistentStore(sharing: store)
            let eventStore = try EventStore.open(at: CaptureCrashChild.eventStoreURL(in: scratch))
            let recorder = LocalChangeRecorder(coordinator: sync, store: shared, eventStore: eventStore, schema: schema,
                                               identifiers: try GlobalIdentifierSource(model: model, attribute: "uniqueIdentifier", delegate: nil))
            _ = try recorder.capture()
            #expect(try recorder.capture() == nil, "round \(round)")

            let graph = try storeGraph(sync: sync, store: shared, eventStore: eventStore, schema: schema)
            #expect(try Projection(of: eventStore.loadLedger(), schema: schema) == graph, "round \(round)")
            #expect(graph.objects[ObjectKey("Author", "a-\(acknowledged)")] != nil, "round \(round): save \(acknowledged) lost")
            #expect(!graph.objects.keys.contains { $0.entity == "unmapped" }, "round \(round): an object never captured")
            // Each key inserted by exactly one event: no window was captured twice.
            var inserts: [ObjectKey: Int] = [:]
            for event in try eventStore.events(withStatus: .localUnexported) {
                for change in event.changes where change.kind == .insert { inserts[change.key, default: 0] += 1 }
            }
            #expect(inserts.values.allSatisfy { $0 == 1 }, "round \(round): \(inserts.filter { $0.value > 1 })")
            #expect(inserts.count == 2 * graph.objects.keys.filter { $0.entity == "Author" }.count, "round \(round)")

            try eventStore.close()
            try sync.remove(shared)
            try app.remove(store)
        }
        #expect(acknowledged >= 8)
    }
}
