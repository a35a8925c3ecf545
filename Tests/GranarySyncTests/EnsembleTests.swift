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

    @Test func aMergesOwnSaveIsNotReadAgainByTheNextCapture() async throws {
        let (root, d) = try await devices(["laptop", "phone"])
        defer { removeScratch(root) }
        let (laptop, phone) = (d[0], d[1])
        try laptop.addNote("Buy bread", id: "n1")
        try await laptop.ensemble.merge()
        #expect(try await phone.ensemble.merge().integratedEvents >= 1)
        // The phone captured everything before its merge's save, and the save was the only transaction
        // since: the captured token is the store's newest.
        let eventStore = try #require(phone.ensemble.mutable.withLock { $0.pipeline?.eventStore })
        let history = HistoryReader(coordinator: phone.ensemble.coordinator, store: phone.ensemble.syncStore)
        #expect(try history.decode(eventStore.state().historyToken) == history.currentToken())

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

    /// M8 on one device: an object created under a global identifier the store already has (a default
    /// folder made at first launch after sync brought the other device's) is folded into the existing
    /// one, on this device as on the others.
    @Test func anObjectMadeLocallyUnderAKnownIdentifierIsFoldedIntoIt() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("on a", id: "a1", folder: "Work")
        try await mergeAll(d)
        try d[1].perform { context in
            let folder = SyncFolder(context: context)               // a second "Work" on b
            folder.uniqueIdentifier = "Work"
            folder.name = "Work, renamed on b"
            let note = SyncNote(context: context)
            note.uniqueIdentifier = "b1"
            note.text = "on b"
            note.folder = folder
            try context.save()
        }
        try await mergeAll(d)
        for device in d {
            let graph = try device.graph()
            #expect(graph.duplicates.isEmpty, "\(device.name): \(graph.duplicates)")
            #expect(graph.nodes["Folder/Work"]?.relationships["notes"] == ["Note/a1", "Note/b1"], "\(device.name)")
            #expect(graph.nodes["Folder/Work"]?.attributes["name"] == "Work, renamed on b", "\(device.name)")
        }
        #expect(try d[0].graph() == (try d[1].graph()))
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

    /// A damaged event file is not yet arrived: reported, not integrated, and read once it is whole again.
    @Test func aDamagedEventFileIsReportedAndReadOnceWholeAgain() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("carried by a damaged file", id: "n1")
        try await d[0].ensemble.merge()
        let events = root.appendingPathComponent("cloud/Notes/events", isDirectory: true)
        // a's newest event file: the one carrying the note (b's own files it would never download).
        let eventStore = try #require(d[0].ensemble.mutable.withLock { $0.pipeline?.eventStore })
        let own = try eventStore.state().storeID.description
        let names = try FileManager.default.contentsOfDirectory(atPath: events.path).filter { !$0.hasPrefix(".") && $0.contains(own) }
        let newest = try #require(names.sorted { (Int($0.prefix { $0 != "_" }) ?? 0) < (Int($1.prefix { $0 != "_" }) ?? 0) }.last)
        let file = events.appendingPathComponent(newest)
        let whole = try Data(contentsOf: file)
        var damaged = whole
        damaged[damaged.count / 2] ^= 0xFF
        try damaged.write(to: file)
        let report = try await d[1].ensemble.merge()
        #expect(!report.diagnostics.isEmpty, "the damaged file was not reported")
        #expect(try d[1].graph().nodes["Note/n1"] == nil)
        try whole.write(to: file)
        try await d[1].ensemble.merge()
        #expect(try d[1].graph().nodes["Note/n1"] != nil)
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

    /// Devices sharing one in-memory cloud, leeched, for tests that inject faults or change its identity.
    func memoryDevices(_ names: [String]) async throws -> (URL, MemoryFileSystem, [SyncTestDevice]) {
        let root = try makeScratchDirectory()
        let cloud = MemoryFileSystem()
        let model = try syncNotesModel()
        var devices: [SyncTestDevice] = []
        for name in names {
            let device = try SyncTestDevice(name, in: root, model: model, cloud: cloud)
            try await device.ensemble.leech()
            devices.append(device)
        }
        return (root, cloud, devices)
    }

    @Test func ensemblesAreListedAndARemovedEnsembleDeleechesItsDevices() async throws {
        let (root, cloud, d) = try await memoryDevices(["a", "b"])
        defer { removeScratch(root) }
        try await mergeAll(d)
        #expect(try await PersistentStoreEnsemble.ensembleIdentifiers(in: cloud) == ["Notes"])
        try await PersistentStoreEnsemble.removeEnsemble(identifier: "Notes", in: cloud)
        #expect(try await PersistentStoreEnsemble.ensembleIdentifiers(in: cloud) == [])
        for device in d {
            await #expect(throws: SyncError.self) { try await device.ensemble.merge() }
            #expect(!device.ensemble.isLeeched)
            if case .storeUnregistered? = device.recorder.deleeches.first {} else {
                Issue.record("\(device.name) deleeched for \(device.recorder.deleeches)")
            }
        }
        await #expect(throws: SyncError.self) { try await PersistentStoreEnsemble.removeEnsemble(identifier: "../x", in: cloud) }
    }

    /// Purging history up to the purgeable token loses nothing; the ensemble can also purge by itself.
    @Test func historyPurgedUpToThePurgeableTokenLosesNothing() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("one", id: "n1")
        try await d[0].ensemble.merge()
        let token = try #require(d[0].ensemble.purgeableHistoryToken)
        _ = try d[0].coordinator.execute(PersistentHistoryChangeRequest.deleteHistory(before: token))
        try d[0].addNote("two", id: "n2")
        try await mergeAll(d)
        #expect(Set(try d[1].graph().nodes.keys.filter { $0.hasPrefix("Note/") }) == ["Note/n1", "Note/n2"])
        #expect(try d[1].graph() == (try d[0].graph()))
    }

    @Test func aChangedCloudIdentityDeleechesTheStoreAndSaysWhy() async throws {
        let (root, cloud, d) = try await memoryDevices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("before", id: "n1")
        try await mergeAll(d)
        await cloud.setIdentity(CloudIdentity("another account"))
        await #expect(throws: SyncError.self) { try await d[0].ensemble.merge() }
        #expect(!d[0].ensemble.isLeeched)
        #expect(d[0].recorder.deleeches.count == 1)
        if case .cloudIdentityChanged? = d[0].recorder.deleeches.first {} else {
            Issue.record("deleeched for \(d[0].recorder.deleeches), not a changed identity")
        }
        // The store keeps its data, and leeching again on the new cloud works.
        #expect(try d[0].graph().nodes["Note/n1"] != nil)
        try await d[0].ensemble.leech()
        #expect(d[0].ensemble.isLeeched)
    }

    @Test func aCloudFailingMidMergeLosesAndDuplicatesNothing() async throws {
        let (root, cloud, d) = try await memoryDevices(["a", "b"])
        defer { removeScratch(root) }
        try d[0].addNote("one", id: "n1", tags: ["t"])
        try d[0].addNote("two", id: "n2")
        try await d[0].ensemble.merge()
        await cloud.failNext(.download, with: .unavailable(reason: "the folder went away"))
        do {
            try await d[1].ensemble.merge()
            Issue.record("the merge did not fail")
        } catch {
            #expect(error.isRetryable, "\(error)")
        }
        await cloud.failNext(.upload, with: .unavailable(reason: "the folder went away"))
        try d[1].addNote("three", id: "n3")
        await #expect(throws: SyncError.self) { try await d[1].ensemble.merge() }
        try await mergeAll(d)
        let graph = try d[0].graph()
        #expect(graph == (try d[1].graph()))
        #expect(graph.duplicates.isEmpty)
        #expect(Set(graph.nodes.keys.filter { $0.hasPrefix("Note/") }) == ["Note/n1", "Note/n2", "Note/n3"])
    }

    /// M24: the repair hook's changes are saved with the merge and sent to the other devices.
    @Test func theRepairHookFixesMergedChangesEverywhere() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        let repairer = StarRepairer()
        d[1].ensemble.delegate = repairer
        try d[0].addNote("fix me", id: "n1")
        try await mergeAll(d)
        #expect(repairer.calls > 0)
        let graph = try d[1].graph()
        #expect(graph.nodes["Note/n1"]?.attributes["stars"] == "4", "the repair was not saved")
        #expect(try d[0].graph() == graph, "the repair did not reach the other device")
        d[1].ensemble.delegate = d[1].recorder
    }

    /// M25: a merge the delegate refuses saves nothing; its events wait and integrate at a later merge.
    @Test func aRefusedMergeSavesNothingAndItsEventsWait() async throws {
        let (root, d) = try await devices(["a", "b"])
        defer { removeScratch(root) }
        let refuser = Refuser()
        d[1].ensemble.delegate = refuser
        try d[0].addNote("wait for it", id: "n1")
        try await d[0].ensemble.merge()
        await #expect(throws: SyncError.self) { try await d[1].ensemble.merge() }
        #expect(try d[1].graph().nodes["Note/n1"] == nil)
        d[1].ensemble.delegate = d[1].recorder
        try await d[1].ensemble.merge()
        #expect(try d[1].graph().nodes["Note/n1"] != nil)
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

/// Gives every merged note with text "fix me" four stars, in the reparation context.
final class StarRepairer: PersistentStoreEnsembleDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _calls = 0
    var calls: Int { lock.withLock { _calls } }
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, shouldSaveMergedChangesIn savingContext: ManagedObjectContext,
                                 reparationContext: ManagedObjectContext) -> Bool {
        lock.withLock { _calls += 1 }
        reparationContext.performAndWait {
            let notes = (try? reparationContext.fetch(FetchRequest<SyncNote>(entityName: "Note"))) ?? []
            for note in notes where note.text == "fix me" && note.stars != 4 { note.stars = 4 }
        }
        return true
    }
}

/// Refuses every merge.
final class Refuser: PersistentStoreEnsembleDelegate {
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, shouldSaveMergedChangesIn savingContext: ManagedObjectContext,
                                 reparationContext: ManagedObjectContext) -> Bool { false }
}
