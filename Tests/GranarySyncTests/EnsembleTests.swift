import Foundation
import Granary
@testable import GranarySync
import Testing

/// Two and three devices syncing through one folder, end to end: real durable stores with history, real
/// ensembles, a `LocalDirectoryFileSystem` (or the in-memory one where the test injects faults).
@Suite struct EnsembleTests {
    /// Devices sharing one cloud folder in a scratch directory, leeched unless told otherwise.
    func devices(_ names: [String], leech: Bool = true) async throws -> (URL, [SyncTestDevice]) {
        let root = try makeScratchDirectory()
        let folder = root.appendingPathComponent("cloud", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cloud = LocalDirectoryFileSystem(rootDirectory: folder)
        let model = try syncNotesModel()
        var devices: [SyncTestDevice] = []
        for name in names {
            let device = try SyncTestDevice(name, in: root, model: model, cloud: cloud)
            if leech { try await device.ensemble.leech() }
            devices.append(device)
        }
        return (root, devices)
    }

    @Test func aSaveOnOneDeviceReachesTheOther() async throws {
        let (root, d) = try await devices(["laptop", "phone"])
        defer { removeScratch(root) }
        let (laptop, phone) = (d[0], d[1])
        try laptop.addNote("Buy bread", id: "n1", folder: "Home", tags: ["errand"])
        let exported = try await laptop.ensemble.merge()
        #expect(exported.capturedLocalChanges)
        #expect(exported.exportedEvents >= 1)
        let imported = try await phone.ensemble.merge()
        #expect(imported.integratedEvents >= 1)
        let graph = try phone.graph()
        #expect(graph == (try laptop.graph()))
        #expect(graph.nodes["Note/n1"]?.attributes["text"] == "Buy bread")
        #expect(graph.nodes["Note/n1"]?.relationships["folder"] == ["Folder/Home"])
        #expect(graph.nodes["Folder/Home"]?.relationships["notes"] == ["Note/n1"])
        #expect(graph.nodes["Tag/errand"]?.relationships["notes"] == ["Note/n1"])
        // The phone's app is told what the merge saved, to merge into its view context.
        #expect(phone.recorder.changes.last?.inserted.count == 3)
    }

    @Test func mergingWithNothingNewExchangesNothing() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("one", id: "n1")
        try await mergeAll(d)
        let again = try await d[0].ensemble.merge()
        #expect(!again.capturedLocalChanges)
        #expect(again.integratedEvents == 0 && again.exportedEvents == 0 && again.downloadedEvents == 0)
        #expect(again.changes.isEmpty)
    }

    @Test func concurrentEditsOfDifferentPropertiesBothApply() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("draft", id: "n1")
        try await mergeAll(d)
        try d[0].edit("n1") { $0.text = "final" }
        try d[1].edit("n1") { $0.stars = 5 }
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.nodes["Note/n1"]?.attributes["text"] == "final")
        #expect(graph.nodes["Note/n1"]?.attributes["stars"] == "5")
    }

    @Test func concurrentEditsOfOnePropertyEndEqualOnBothDevices() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("draft", id: "n1")
        try await mergeAll(d)
        try d[0].edit("n1") { $0.text = "from a" }
        try d[1].edit("n1") { $0.text = "from b" }
        // Merge in both orders on purpose: the result must not depend on who merged first.
        try await d[1].ensemble.merge()
        try await d[0].ensemble.merge()
        try await d[1].ensemble.merge()
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(["from a", "from b"].contains(graph.nodes["Note/n1"]?.attributes["text"] ?? ""))
    }

    /// M8: inserts of one global identifier on two devices are one object, with the to-many members of
    /// both; a to-one is a register (M16), so the later insert's value wins there.
    @Test func objectsCreatedOnTwoDevicesWithOneIdentifierBecomeOne() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("on a", id: "a1", folder: "Work", tags: ["x"])
        try d[0].addNote("same", id: "shared", tags: ["x"])
        try d[1].addNote("on b", id: "b1", folder: "Work")
        try d[1].addNote("same", id: "shared", tags: ["y"])
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.duplicates.isEmpty)
        #expect(graph.nodes.keys.filter { $0.hasPrefix("Folder/") } == ["Folder/Work"])
        #expect(graph.nodes["Folder/Work"]?.relationships["notes"] == ["Note/a1", "Note/b1"])
        #expect(graph.nodes.keys.filter { $0.hasPrefix("Note/shared") }.count == 1)
        #expect(graph.nodes["Note/shared"]?.relationships["tags"] == ["Tag/x", "Tag/y"])
        #expect(graph.nodes["Tag/x"]?.relationships["notes"] == ["Note/a1", "Note/shared"])
    }

    @Test func toManyChangesMergePerMember() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("n", id: "n1", tags: ["keep", "drop"])
        try await mergeAll(d)
        try d[0].perform { context in
            let note = try #require(try d[0].note("n1", in: context))
            note.tags.insert(try d[0].tag("fromA", in: context))
            note.tags = note.tags.filter { $0.uniqueIdentifier != "drop" }
            try context.save()
        }
        try d[1].perform { context in
            let note = try #require(try d[1].note("n1", in: context))
            note.tags.insert(try d[1].tag("fromB", in: context))
            try context.save()
        }
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.nodes["Note/n1"]?.relationships["tags"] == ["Tag/fromA", "Tag/fromB", "Tag/keep"])
    }

    @Test func aDeleteBeatsAConcurrentUpdate() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("doomed", id: "n1", folder: "F")
        try await mergeAll(d)
        try d[0].perform { context in
            context.delete(try #require(try d[0].note("n1", in: context)))
            try context.save()
        }
        try d[1].edit("n1") { $0.text = "edited meanwhile" }
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.nodes["Note/n1"] == nil)
        // A replayed delete nullifies; it does not cascade to the folder.
        #expect(graph.nodes["Folder/F"]?.relationships["notes"] == [])
    }

    @Test func leechingStoresThatHaveDataKeepsTheDataOfBoth() async throws {
        let (root, d) = try await devices(["a", "b"], leech: false)
        defer { removeScratch(root) }
        try d[0].addNote("only on a", id: "a1", folder: "Home")
        try d[0].addNote("on both", id: "both", tags: ["x"])
        try d[1].addNote("only on b", id: "b1")
        try d[1].addNote("on both", id: "both", tags: ["y"])
        try await d[0].ensemble.leech()
        try await d[1].ensemble.leech()
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.duplicates.isEmpty)
        #expect(Set(graph.nodes.keys.filter { $0.hasPrefix("Note/") }) == ["Note/a1", "Note/both", "Note/b1"])
        #expect(graph.nodes["Note/both"]?.relationships["tags"] == ["Tag/x", "Tag/y"])
    }

    @Test func leechTwiceIsAnError() async throws {
        let (root, d) = try await devices(["a"])
        defer { removeScratch(root) }
        await #expect(throws: SyncError.self) { try await d[0].ensemble.leech() }
        #expect(d[0].ensemble.isLeeched)
    }

    @Test func aLeechedStoreStaysLeechedAcrossRelaunches() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].relaunch()
        #expect(d[0].ensemble.isLeeched)
        try d[0].addNote("after relaunch", id: "n1")
        try await mergeAll(d)
        #expect(try d[1].graph().nodes["Note/n1"] != nil)
    }

    @Test func deleechThenLeechAgainResyncsWithoutDuplicates() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("first", id: "n1")
        try await mergeAll(d)
        try await d[1].ensemble.deleech()
        #expect(!d[1].ensemble.isLeeched)
        await #expect(throws: SyncError.self) { try await d[1].ensemble.merge() }
        try d[0].addNote("while b was away", id: "n2")
        try d[1].addNote("made while not syncing", id: "n3")
        try await d[0].ensemble.merge()
        try await d[1].ensemble.leech()
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.duplicates.isEmpty)
        #expect(Set(graph.nodes.keys.filter { $0.hasPrefix("Note/") }) == ["Note/n1", "Note/n2", "Note/n3"])
    }

    @Test func aDeletedLocalStoreComesBackFromTheCloud() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("kept in the cloud", id: "n1", folder: "F", tags: ["t"])
        try await mergeAll(d)
        try d[1].deleteStoreAndRecreate()
        #expect(!d[1].ensemble.isLeeched)
        #expect(try d[1].graph().nodes.isEmpty)
        try await d[1].ensemble.leech()
        try await d[1].ensemble.merge()
        #expect(try d[1].graph() == (try d[0].graph()))
    }

    @Test func aRemovedRegistrationDeleechesTheStoreAndSaysWhy() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try await mergeAll(d)
        let storesDirectory = root.appendingPathComponent("cloud/Notes/stores", isDirectory: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: storesDirectory.path) {
            try FileManager.default.removeItem(at: storesDirectory.appendingPathComponent(name))
        }
        await #expect(throws: SyncError.self) { try await d[1].ensemble.merge() }
        #expect(!d[1].ensemble.isLeeched)
        #expect(d[1].recorder.deleeches.count == 1)
    }

    @Test func threeDevicesConverge() async throws {
        let (root, d) = try await devices(["a", "b", "c"])
        defer { removeScratch(root) }
        try d[0].addNote("from a", id: "a1", folder: "Shared")
        try d[1].addNote("from b", id: "b1", folder: "Shared", tags: ["t1"])
        try d[2].addNote("from c", id: "c1", tags: ["t1"])
        try await d[2].ensemble.merge()
        try await d[0].ensemble.merge()
        try d[0].edit("c1") { $0.stars = 3 }
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph == (try d[2].graph()))
        #expect(graph.duplicates.isEmpty)
        #expect(graph.nodes["Folder/Shared"]?.relationships["notes"] == ["Note/a1", "Note/b1"])
        #expect(graph.nodes["Note/c1"]?.attributes["stars"] == "3")
    }
}
