import Foundation
import Testing
@testable import GranarySync

/// Events travelling between two event stores through one cloud: export on one device, download and
/// readiness on the other (§9 steps 5 and 8); damaged files wait, a failing cloud loses nothing.
@Suite struct DownloaderTests {
    @Test(arguments: Backend.allCases) func twoStoresExchangeEventsThroughOneCloud(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let a = try TransferDevice("a", in: scratch, fileSystem: fileSystem)
        let b = try TransferDevice("b", in: scratch, fileSystem: fileSystem)
        try await a.leech()
        try await b.leech()
        let fromA = try a.record(3)
        let exported = try await a.export()
        #expect(exported.exported == fromA.map(\.id))
        #expect(try a.store.events(withStatus: .exported) == fromA)

        let download = try await b.download()
        #expect(download.imported == fromA.map(\.id))
        #expect(download.diagnostics.isEmpty)
        #expect(try b.store.events(withStatus: .downloaded) == fromA)
        // M2: B's next event counts above everything it has seen.
        #expect(try b.store.state().maxGlobalCount == fromA.last?.meta.globalCount)
        let readiness = try b.integrateReady()
        #expect(readiness.ready == fromA)
        #expect(readiness.waiting.isEmpty)

        let fromB = try b.record(2)
        #expect(fromB.allSatisfy { $0.meta.vector[a.storeID] == 3 && $0.meta.globalCount > fromA[2].meta.globalCount })
        try await b.export()
        let back = try await a.download()
        #expect(back.imported == fromB.map(\.id))
        #expect(try a.integrateReady().ready == fromB)

        // Nothing new: both sides download nothing more.
        #expect(try await a.download() == Downloader.Report())
        #expect(try await b.download() == Downloader.Report())
        #expect(try a.allEvents().count == 5)
        #expect(try b.allEvents().count == 5)
    }

    @Test func ownFilesAndHandledNamesCostNoDownloadAndNoEventStoreRead() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        try a.record(2)
        try b.record(2)
        try await a.export()
        try await b.export()
        #expect(try await a.download().imported.count == 2)

        // Any download now would throw this; the listing is unchanged, so none is attempted.
        await cloud.failNext(.download, with: .injected("a download after nothing changed"))
        #expect(try await a.download() == Downloader.Report())
        #expect(try await a.download() == Downloader.Report())
        // The fault is still queued: proof that no download ran.
        await #expect(throws: CloudFileSystemError.injected("a download after nothing changed")) {
            try await cloud.downloadFile(atPath: a.layout.formatFile, toLocalFile: scratch.appendingPathComponent("probe"))
        }

        // A new process reads the handled names from `remoteFile` and downloads nothing either.
        try a.reopen()
        await cloud.failNext(.download, with: .injected("a download after a reopen"))
        #expect(try await a.download() == Downloader.Report())
        #expect(try a.store.remoteFileNames().count == 2)
    }

    @Test(arguments: ["flipped byte", "truncated"])
    func aDamagedFileIsNotYetArrivedAndIntegratesOnceItArrivesWhole(damage: String) async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, cloud) = try sharedFolder(in: scratch)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let events = try a.record(3)
        try await a.export()
        let victim = EventFileParts.files(id: events[1].id, globalCount: events[1].meta.globalCount,
                                          payload: try EventPayloadCoding.encode(events[1]))[0].name
        let file = root.appendingPathComponent(a.layout.path(for: victim))
        let whole = try Data(contentsOf: file)
        var damaged = whole
        if damage == "truncated" { damaged = whole.prefix(whole.count - 7) } else { damaged[40] ^= 0x20 }
        try damaged.write(to: file)

        let first = try await b.download()
        #expect(first.imported == [events[0].id, events[2].id])
        #expect(first.diagnostics.count == 1)
        if case let .damagedFile(name, _) = first.diagnostics.first { #expect(name == victim.fileName) } else { Issue.record("\(first.diagnostics)") }
        #expect(try b.store.status(of: events[1].id) == nil)
        #expect(!(try b.store.remoteFileNames().contains(victim.fileName)))
        // Never integrated: event 3 of A waits for it.
        let readiness = try b.integrateReady()
        #expect(readiness.ready.map(\.id) == [events[0].id])
        #expect(readiness.waiting == [.init(id: events[2].id, reason: .missingDependency(events[1].id))])

        // Still damaged at the next merge: downloaded again, still refused.
        let second = try await b.download()
        #expect(second.imported.isEmpty && second.downloadedFiles == 1 && second.diagnostics.count == 1)

        try whole.write(to: file)
        let third = try await b.download()
        #expect(third.imported == [events[1].id])
        #expect(try b.integrateReady().ready.map(\.id) == [events[1].id, events[2].id])
        #expect(try b.allEvents().values.sorted { $0.meta.position < $1.meta.position } == events)
    }

    @Test func aFileWhoseContentsContradictItsNameIsDamaged() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let events = try a.record(1)
        try await a.export()
        let files = await cloud.snapshotFiles()
        let original = a.layout.path(for: .event(globalCount: events[0].meta.globalCount, store: a.storeID, revision: 1, part: nil))
        let bytes = try #require(files[original])
        let forged = CloudFileName.event(globalCount: 99, store: a.storeID, revision: 2, part: nil)
        try await cloud.uploadLocalFile(at: localFile(bytes, in: scratch), toPath: a.layout.path(for: forged))
        let report = try await b.download()
        #expect(report.imported == [events[0].id])
        #expect(report.diagnostics.count == 1)
        if case let .damagedFile(name, _) = report.diagnostics.first { #expect(name == forged.fileName) } else { Issue.record("\(report.diagnostics)") }
    }

    @Test(arguments: Backend.allCases) func aMultipartEventWaitsForAllItsPartsThenJoins(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let a = try TransferDevice("a", in: scratch, fileSystem: fileSystem, partPayloadLimit: 64)
        let b = try TransferDevice("b", in: scratch, fileSystem: fileSystem)
        try await a.leech()
        try await b.leech()
        let events = try a.record(2)
        let report = try await a.export()
        let parts = report.uploaded.filter { $0.hasPrefix("\(events[0].meta.globalCount)_") }
        #expect(parts.count >= 3 && parts.allSatisfy { $0.contains("of\(parts.count).gsevent") }, "\(report.uploaded)")

        // One part not there yet (a sync service still copying it).
        let held = scratch.appendingPathComponent("held")
        let path = a.layout.eventsDirectory + "/" + parts[1]
        try await fileSystem.downloadFile(atPath: path, toLocalFile: held)
        try await fileSystem.removeItem(atPath: path)
        let first = try await b.download()
        #expect(first.imported == [events[1].id])
        #expect(first.diagnostics == [.incompleteEvent(name: parts[0], partsListed: parts.count - 1, parts: parts.count)])

        try await fileSystem.uploadLocalFile(at: held, toPath: path)
        let second = try await b.download()
        #expect(second.imported == [events[0].id])
        #expect(try b.store.events(withStatus: .downloaded).sorted { $0.meta.position < $1.meta.position } == events)
    }

    @Test func theFolderDisappearingMidDownloadLosesNothingAndTheNextRunCompletesWithoutDuplicates() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, shared) = try sharedFolder(in: scratch)
        let a = try TransferDevice("a", in: scratch, fileSystem: shared)
        try await a.leech()
        let events = try a.record(10)
        try await a.export()

        let cloud = InterruptingFileSystem(shared)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud, batchSize: 3)
        try await b.leech()
        let aside = scratch.appendingPathComponent("aside")
        // The share goes away before the eighth download: format.json at leech, then six events.
        await cloud.onDownload { n in
            if n == 8 { try? FileManager.default.moveItem(at: root, to: aside) }
        }
        do { _ = try await b.download(); Issue.record("no error") } catch let error as SyncError {
            guard case .cloud(.unavailable) = error else { Issue.record("\(error)"); return }
        }
        // The six verified ones are kept (two batches of three committed, then the rest committed before the error).
        let kept = try b.store.events(withStatus: .downloaded)
        #expect(kept == Array(events.prefix(6)))
        #expect(try b.store.remoteFileNames().count == 6)
        #expect(try b.store.state().maxGlobalCount == events[5].meta.globalCount)

        await cloud.onDownload(nil)
        try FileManager.default.moveItem(at: aside, to: root)
        // A new process: the handled names come from the event store.
        try b.reopen()
        let downloadsBefore = await cloud.downloads
        let rest = try await b.download()
        #expect(rest.imported == events.dropFirst(6).map(\.id))
        #expect(await cloud.downloads - downloadsBefore == 4)
        #expect(try b.store.events(withStatus: .downloaded) == events)
        #expect(try b.allEvents().count == 10)
    }

    @Test func namesNoLongerListedAreForgottenAndAReappearingCopyAddsNoDuplicate() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let events = try a.record(3)
        try await a.export()
        try await b.download()
        try b.integrateReady()
        #expect(try b.store.remoteFileNames().count == 3)

        // A rebase removed the first two.
        let files = await cloud.snapshotFiles()
        let removed = events.prefix(2).map { a.layout.path(for: .event(globalCount: $0.meta.globalCount, store: a.storeID, revision: $0.id.revision, part: nil)) }
        for path in removed { try await cloud.removeItem(atPath: path) }
        #expect(try await b.download() == Downloader.Report())
        #expect(try b.store.remoteFileNames().count == 1)

        // A stale copy comes back (a sync service): downloaded once more, never a second event.
        try await cloud.uploadLocalFile(at: localFile(try #require(files[removed[0]]), in: scratch), toPath: removed[0])
        let again = try await b.download()
        #expect(again.imported.isEmpty && again.downloadedFiles == 1)
        #expect(try b.allEvents().count == 3)
        #expect(try b.store.status(of: events[0].id) == .integrated)
        #expect(try await b.download() == Downloader.Report())
    }

    @Test func aFileRemovedBetweenListingAndDownloadIsSkippedNotAnError() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let memory = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: memory)
        try await a.leech()
        let events = try a.record(2)
        try await a.export()
        let cloud = InterruptingFileSystem(memory)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await b.leech()
        let snapshot = try await b.snapshot()
        let first = snapshot.events[0]
        try await memory.removeItem(atPath: b.layout.path(for: first))
        let report = try await b.downloader.download(snapshot)
        #expect(report.imported == [events[1].id])
        #expect(report.diagnostics == [.vanishedFile(name: first.fileName)])
    }
}
