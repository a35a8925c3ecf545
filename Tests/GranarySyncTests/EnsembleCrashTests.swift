import Foundation
import Granary
@testable import GranarySync
import Testing

/// A device killed with SIGKILL during its leech, its merges and its uploads, data files included (a child
/// process saving and merging through a shared folder, killed at random moments after it starts one), while the other device
/// keeps working: after reopening and merging both until quiet, every save the killed device acknowledged
/// is on the other device exactly once, and both hold the same notes.
@Suite struct EnsembleCrashTests {
    /// The child's model (`ensembleCrashModel()` in granary-crashtest).
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Note") {
                Attribute("uniqueIdentifier", .string)
                Attribute("text", .string)
                Attribute("attachment", .binaryData, optional: true)
            }
        }
    }

    static func open(_ directory: URL, folder: URL, model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, PersistentStoreEnsemble) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: directory.appendingPathComponent("store.granary"),
                                                       options: .init(persistentHistoryTracking: true))
        let ensemble = try PersistentStoreEnsemble(ensembleIdentifier: "Crash", persistentStore: store, managedObjectModel: model,
                                                   cloudFileSystem: LocalDirectoryFileSystem(rootDirectory: folder),
                                                   configuration: EnsembleConfiguration(globalIdentifierAttribute: "uniqueIdentifier"))
        return (coordinator, ensemble)
    }

    /// `ensembleCrashAttachment(for:)` of granary-crashtest.
    static func attachment(for id: String) -> Data {
        let text = Array(id.utf8)
        return Data((0..<12_000).map { text[$0 % text.count] ^ UInt8(truncatingIfNeeded: $0) })
    }

    static func graph(_ coordinator: PersistentStoreCoordinator, _ model: ManagedObjectModel) throws -> SyncGraph {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try context.performAndWait { try SyncGraph(context: context, model: model) }
    }

    /// Runs `body`, which blocks while it waits for its child, on a thread of its own: blocking one of
    /// the few threads of Swift's cooperative pool would stall the other tests' tasks (and ensembles'
    /// automatic merges) for as long.
    static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func aDeviceKilledDuringLeechMergeAndExportConverges() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let folder = root.appendingPathComponent("cloud", isDirectory: true)
        let a = root.appendingPathComponent("a", isDirectory: true)
        let b = root.appendingPathComponent("b", isDirectory: true)
        for directory in [folder, a, b] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        let model = try Self.model()
        let (bCoordinator, bEnsemble) = try Self.open(b, folder: folder, model: model)
        defer { bEnsemble.dismantle() }
        try await bEnsemble.leech()

        var acknowledged: Set<String> = []
        let seed = Int(Date().timeIntervalSince1970)
        var g = SplitMix(seed: seed)
        var killedDuring: [String] = []
        for run in 0..<10 {
            // The first kill lands in the leech; later ones after a merge starts, at a random moment in it.
            let line = run == 0 ? "leeching" : "merging"
            let delay = Double(Int.random(in: 0...60, using: &g)) / 1000
            let outcome = try await Self.offThePool {
                try CrashChild.runAndKill(["sync-device", a.path, folder.path, String(run + 1)], afterLine: line, delay: delay)
            }
            #expect(outcome.killed, "run \(run): the child was not killed: \(outcome.err)\n\(outcome.lines.suffix(5))")
            #expect(!outcome.lines.contains { $0.hasPrefix("error") }, "run \(run): \(outcome.lines.filter { $0.hasPrefix("error") })")
            for line in outcome.lines where line.hasPrefix("saved ") { acknowledged.insert(String(line.dropFirst(6))) }
            killedDuring.append(outcome.lines.last ?? "")
            // The other device works meanwhile, so the killed one has events to download and integrate.
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: bCoordinator)
            try context.performAndWait {
                let note = ManagedObject(entity: model.entity(named: "Note")!, insertInto: context)
                try note.setValue("b-\(run)", forKey: "uniqueIdentifier")
                try note.setValue("written by b", forKey: "text")
                try context.save()
            }
            try await bEnsemble.merge()
        }
        #expect(acknowledged.count >= 10, "the children acknowledged only \(acknowledged.count) saves")

        let (aCoordinator, aEnsemble) = try Self.open(a, folder: folder, model: model)
        defer { aEnsemble.dismantle() }
        if !aEnsemble.isLeeched { try await aEnsemble.leech() }
        for _ in 0..<3 {
            try await aEnsemble.merge()
            try await bEnsemble.merge()
        }
        let aGraph = try Self.graph(aCoordinator, model), bGraph = try Self.graph(bCoordinator, model)
        #expect(aGraph.duplicates.isEmpty && bGraph.duplicates.isEmpty, "\(aGraph.duplicates) \(bGraph.duplicates)")
        let missing = acknowledged.filter { bGraph.nodes["Note/\($0)"] == nil }
        #expect(missing.isEmpty, "seed \(seed): acknowledged on a, missing on b: \(missing.sorted()); kills after: \(killedDuring)")
        #expect((0..<10).allSatisfy { aGraph.nodes["Note/b-\($0)"] != nil })
        #expect(aGraph == bGraph, "seed \(seed): a:\n\(aGraph)\nb:\n\(bGraph)")
        // Large values (data files) arrived whole: every other round's note carries one.
        for id in acknowledged where (Int(id.split(separator: "-").last ?? "") ?? 1) % 2 == 0 {
            #expect(bGraph.nodes["Note/\(id)"]?.attributes["attachment"] == "data:" + LargeValues.sha256(Self.attachment(for: id)),
                    "seed \(seed): \(id)'s attachment")
        }
    }
}
