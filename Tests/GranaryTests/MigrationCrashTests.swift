import Foundation
import Testing
@testable import Granary

/// A migrating process killed with SIGKILL, at the named points of the engine's switch and at random
/// moments: the store must open afterwards either fully migrated or fully in its old version.
///
/// The child (`granary-crashtest migrate`) owns both model versions; this side checks each store through
/// the model the store records, and learns the versions' hashes from the child.
@Suite(.serialized) struct MigrationCrashTests {
    static let itemCount = 8_000

    /// Runs the migration child, killed after `killAfter` seconds or once it prints `waitFor`.
    func runChild(_ arguments: [String], killAfter: Double? = nil, waitFor line: String? = nil) throws -> (String, Process.TerminationReason) {
        let outcome = try ChildProcess.run("granary-crashtest", ["migrate"] + arguments, killAfter: killAfter, killOnceItPrints: line)
        return (outcome.out, outcome.reason)
    }

    /// A store at version 1 and the two versions' hashes.
    func makeStore() throws -> (URL, [String]) {
        let url = scratchURL()
        let (text, reason) = try runChild(["setup", url.path, String(Self.itemCount)])
        #expect(reason == .exit, "setup failed: \(text)")
        let hashes = try #require(text.split(separator: "\n").first { $0.hasPrefix("models ") }, "setup printed no model hashes: \(text)")
            .split(separator: " ").dropFirst().map(String.init)
        return (url, hashes)
    }

    enum Version: Equatable { case old, new }

    /// Opens the store through the model it records and checks every item against what version 1
    /// wrote or what version 2 makes of it; returns which it found.
    func check(_ url: URL, hashes: [String]) throws -> Version? {
        let engine = try Engine.open(.directory(url), options: .init(readOnly: true, createIfMissing: false))
        let metadata = engine.metadata
        #expect(engine.verify().isSound)
        try engine.close()
        let hash = metadata.userInfo[PersistentStore.modelHashKey]
        let version: Version
        switch hash {
        case hashes[0]: version = .old
        case hashes[1]: version = .new
        default:
            Issue.record("the store's model hash \(hash ?? "nil") is neither version's")
            return nil
        }
        let model = try #require(try StoredModel.from(metadata)).makeModel()
        #expect(model.versionHash == hash, "the recorded model does not match the recorded hash")
        var options = PersistentStore.Options()
        options.migration.shouldMigrateStoreAutomatically = false
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let store = try coordinator.addPersistentStore(type: .durable, at: url, options: options)
        defer { try? coordinator.remove(store) }
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let name = version == .old ? "name" : "title"
            let items = try context.all("Item", sortedBy: name)
            #expect(items.count == Self.itemCount)
            var seen = Set<Int>()
            for item in items {
                let text = try #require(try item.get(name, as: String.self))
                let i = try #require(Int(text.dropFirst("item-".count)))
                seen.insert(i)
                if version == .old {
                    #expect(try item.get("qty", as: Int16.self) == Int16(i % 1000))
                } else {
                    #expect(try item.get("qty", as: Int32.self) == Int32(i % 1000))
                    #expect(try item.get("price", as: Double.self) == 1.5)
                }
                let tag = try #require(try item.get("tag", as: ManagedObject.self))
                #expect(try tag.get("label", as: String.self) == "tag-\(i / 10)")
            }
            #expect(seen.count == Self.itemCount)
            let tags = try context.all("Tag", sortedBy: "label")
            #expect(tags.count == Self.itemCount / 10)
            #expect(try tags.allSatisfy { try $0.get("items", as: Set<ManagedObject>.self)?.count == 10 })
        }
        return version
    }

    @Test(.timeLimit(.minutes(5)))
    func killedAtEachPointOfTheSwitchTheStoreIsOldOrNewNeverBetween() throws {
        let expected: [(String, Version)] = [
            ("rewrite-snapshot-written", .old), ("rewrite-switched", .new), ("rewrite-segment-created", .new),
        ]
        for (point, version) in expected {
            let (url, hashes) = try makeStore()
            let (text, reason) = try runChild(["point", url.path, point])
            #expect(reason == .uncaughtSignal, "the child was not killed at \(point): \(text)")
            #expect(try check(url, hashes: hashes) == version, "killed at \(point)")
            // Opening with the new version afterwards finishes (or needs no) migration, and the store
            // then takes and keeps new commits.
            let (after, _) = try runChild(["run", url.path], waitFor: "migrated")
            #expect(after.contains("migrated"), "\(after)")
            #expect(try check(url, hashes: hashes) == .new)
        }
    }

    @Test(.timeLimit(.minutes(5)))
    func killedAtRandomMomentsTheStoreIsOldOrNewNeverBetween() throws {
        let (template, hashes) = try makeStore()
        // How long a migration takes here, so kills spread over the whole of it.
        let timing = template.deletingLastPathComponent().appendingPathComponent("timing-\(UUID().uuidString).granary")
        try FileManager.default.copyItem(at: template, to: timing)
        let start = Date()
        _ = try runChild(["run", timing.path], waitFor: "migrated")
        let span = Date().timeIntervalSince(start)
        var outcomes: [Version] = []
        for round in 0..<10 {
            let url = template.deletingLastPathComponent().appendingPathComponent("round-\(round)-\(UUID().uuidString).granary")
            try FileManager.default.copyItem(at: template, to: url)
            _ = try runChild(["run", url.path], killAfter: Double.random(in: 0...(span * 1.2)))
            if let version = try check(url, hashes: hashes) { outcomes.append(version) }
        }
        #expect(outcomes.count == 10)
    }
}
