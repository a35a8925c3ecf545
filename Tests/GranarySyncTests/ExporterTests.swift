import Foundation
import Testing
@testable import GranarySync

/// Export (§9 step 8, §12.4): local events in count order, atomic uploads, marked exported after them;
/// a re-export after a kill writes the same names with the same bytes; another device under this store's
/// identity is a collision.
@Suite struct ExporterTests {
    /// The files an event must have in the cloud: a pure function of its stored payload.
    static func expectedFiles(_ event: Event, layout: CloudLayout, partPayloadLimit: Int = SyncConstants.maximumPartPayload) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for (name, bytes) in EventFileParts.files(id: event.id, globalCount: event.meta.globalCount,
                                                  payload: try EventPayloadCoding.encode(event), partPayloadLimit: partPayloadLimit) {
            files[layout.path(for: name)] = bytes
        }
        return files
    }

    @Test func eventsGoInCountOrderInBatchesAndTheRegistrationAfterThem() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let memory = MemoryFileSystem()
        let cloud = InterruptingFileSystem(memory)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud, batchSize: 2)
        try await a.leech()
        let events = try a.record(5)
        let leechUploads = await cloud.uploads
        let report = try await a.export()
        #expect(report.exported == events.map(\.id))
        #expect(report.uploaded == events.map { CloudFileName.event(globalCount: $0.meta.globalCount, store: $0.id.store, revision: $0.id.revision, part: nil).fileName })
        #expect(report.registered)
        #expect(try a.store.state().leechState == .registered)
        #expect(try a.store.events(withStatus: .localUnexported).isEmpty)
        #expect(await cloud.uploads - leechUploads == 6)

        let files = await memory.snapshotFiles()
        for event in events {
            for (path, bytes) in try Self.expectedFiles(event, layout: a.layout) { #expect(files[path] == bytes, "\(path)") }
        }
        let registrationPath = a.layout.path(for: .registration(store: a.storeID))
        let registration = try EventPayloadCoding.value(StoreRegistration.self, ofKind: .registration,
                                                        inFile: try #require(files[registrationPath]), name: registrationPath)
        #expect(registration.store == a.storeID)
        #expect(registration.ensemble == "library")
        #expect(registration.modelHash == "model-1")

        // Nothing left: no upload, no commit.
        let again = try await a.export()
        #expect(again == Exporter.Report())
        #expect(await cloud.uploads - leechUploads == 6)
    }

    @Test func anUploadFailingKeepsTheBatchesAlreadyUpAndTheNextRunSendsTheRestOnce() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let memory = MemoryFileSystem()
        let cloud = InterruptingFileSystem(memory)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud, batchSize: 2)
        try await a.leech()
        let events = try a.record(5)
        // The fourth event's upload fails (the leech uploaded format.json before).
        await cloud.failUpload(number: await cloud.uploads + 4)
        do { _ = try await a.export(); Issue.record("no error") } catch let error as SyncError {
            guard case .cloud(.unavailable) = error else { Issue.record("\(error)"); return }
        }
        // Events 1–3 are up; 1 and 2 were committed as a batch, 3 committed before the error was thrown.
        #expect(try a.store.events(withStatus: .exported) == Array(events.prefix(3)))
        #expect(try a.store.state().leechState == .leeched)
        let report = try await a.export()
        #expect(report.exported == events.suffix(2).map(\.id))
        #expect(report.uploaded.count == 2)
        #expect(report.alreadyPresent.isEmpty)
        #expect(await memory.snapshotFiles().keys.filter { $0.hasSuffix(".gsevent") }.count == 5)
    }

    @Test(arguments: Backend.allCases)
    func aReExportAfterAKillBetweenUploadAndMarkWritesNothingNewAndDuplicatesNothing(backend: Backend) async throws {
        let (fileSystem, scratch, cleanup) = try await backend.make()
        defer { cleanup() }
        let a = try TransferDevice("a", in: scratch, fileSystem: fileSystem)
        let b = try TransferDevice("b", in: scratch, fileSystem: fileSystem)
        try await a.leech()
        try await b.leech()
        let events = try a.record(3)
        // What a run killed after its uploads and before its commit leaves: the files up, the events unexported.
        let stored = try a.store.unexportedEventPayloads()
        for event in stored.prefix(2) {
            for (name, bytes) in EventFileParts.files(id: event.id, globalCount: event.globalCount, payload: event.payload) {
                try await fileSystem.uploadLocalFile(at: localFile(bytes, in: scratch), toPath: a.layout.path(for: name))
            }
        }
        // A peer downloads them in between.
        #expect(try await b.download().imported == events.prefix(2).map(\.id))

        try a.reopen()
        let report = try await a.export()
        #expect(report.exported == events.map(\.id))
        #expect(report.alreadyPresent.count == 2)
        #expect(report.uploaded.count == 1)
        let names = try await fileSystem.contentsOfDirectory(atPath: a.layout.eventsDirectory).map(\.name)
        #expect(names.count == 3)
        for event in events {
            for (path, bytes) in try Self.expectedFiles(event, layout: a.layout) {
                let local = scratch.appendingPathComponent("check-\(UUID().uuidString)")
                try await fileSystem.downloadFile(atPath: path, toLocalFile: local)
                #expect(try Data(contentsOf: local) == bytes)
            }
        }
        // The peer takes the third only, once.
        #expect(try await b.download().imported == [events[2].id])
        #expect(try b.allEvents().count == 3)
    }

    @Test func aDamagedCopyOfAnUnexportedEventIsReplaced() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        let events = try a.record(1)
        let (path, bytes) = try #require(try Self.expectedFiles(events[0], layout: a.layout).first)
        try await cloud.uploadLocalFile(at: localFile(bytes.prefix(bytes.count - 3), in: scratch), toPath: path)
        let report = try await a.export()
        #expect(report.replaced == [String(path.split(separator: "/").last!)])
        #expect(report.exported == [events[0].id])
        #expect(await cloud.snapshotFiles()[path] == bytes)
    }

    @Test func aTruncatedCopyOfAnExportedFileIsUploadedAgainByItsWriterAndThenReachesItsReaders() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, cloud) = try sharedFolder(in: scratch)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let events = try a.record(2)
        try await a.export()
        let (path, bytes) = try #require(try Self.expectedFiles(events[0], layout: a.layout).first)
        let file = root.appendingPathComponent(path)
        // A sync service left a cut copy.
        try bytes.prefix(bytes.count / 2).write(to: file)
        #expect(try await b.download().imported == [events[1].id])

        // The writer's next merge finds the size wrong and uploads the whole file again, once.
        let repair = try await a.export()
        #expect(repair.repaired == [String(path.split(separator: "/").last!)])
        #expect(repair.uploaded.isEmpty && repair.exported.isEmpty)
        #expect(try Data(contentsOf: file) == bytes)
        #expect(try await a.export() == Exporter.Report())
        #expect(try await b.download().imported == [events[0].id])

        // A new process of the writer checks its files once more, finds them whole, uploads nothing.
        try a.reopen()
        #expect(try await a.export() == Exporter.Report())
    }

    /// The sizes of exported files are recorded with the export, so a new process compares the listing
    /// with them instead of reading back every event it ever exported; a copy cut short while the writer
    /// was not running is still found and replaced.
    @Test func exportedFileSizesOutliveTheProcessAndStillFindACutCopy() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let (root, cloud) = try sharedFolder(in: scratch)
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        let events = try a.record(2)
        try await a.export()
        let expected = try events.flatMap { try Self.expectedFiles($0, layout: a.layout) }
        let recorded = try a.store.ownFileSizes()
        #expect(recorded.count == expected.count)
        for (path, bytes) in expected {
            #expect(recorded[String(path.split(separator: "/").last!)] == Int64(bytes.count), "\(path)")
        }

        try a.reopen()
        let (path, bytes) = try #require(expected.last)
        try bytes.prefix(3).write(to: root.appendingPathComponent(path))
        let repair = try await a.export()
        #expect(repair.repaired == [String(path.split(separator: "/").last!)])
        #expect(try Data(contentsOf: root.appendingPathComponent(path)) == bytes)
    }

    @Test func aFlippedByteInAnExportedFileIsRepairedAtThePeriodicContentCheck() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud, contentCheckInterval: 3)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let events = try a.record(2)
        try await a.export()                                   // export 1
        let (path, bytes) = try #require(try Self.expectedFiles(events[1], layout: a.layout).first)
        #expect(await cloud.corrupt(path: path))
        #expect(try await b.download().imported == [events[0].id])

        // Same size: the size check cannot see it; the content check of the third export does.
        #expect(try await a.export().repaired.isEmpty)         // export 2
        let third = try await a.export()                       // export 3
        #expect(third.repaired == [String(path.split(separator: "/").last!)])
        #expect(await cloud.snapshotFiles()[path] == bytes)
        #expect(try await b.download().imported == [events[1].id])
        // The next content check finds everything whole.
        for _ in 0..<3 { #expect(try await a.export().repaired.isEmpty) }
    }

    /// M15: a data file is uploaded before its event; a copy damaged at its own size is found by the
    /// periodic content check and replaced, and the peer then takes it.
    @Test func dataFilesGoUpBeforeTheirEventAndTheContentCheckRepairsADamagedOne() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud, contentCheckInterval: 3)
        let b = try TransferDevice("b", in: scratch, fileSystem: cloud)
        try await a.leech()
        try await b.leech()
        let value = SplitMix(seed: 9).bytesOf(SyncConstants.inlineDataLimit + 1)
        let meta = try a.store.nextLocalMeta()
        let (changes, files) = LargeValues.extract([.insert(ObjectKey("Book", "b1"), ["cover": .data(value)])], writer: a.storeID)
        try a.store.recordLocalEvent(Event(meta: meta, changes: changes), with: EventStoreStep(dataFiles: files))
        let first = try await a.export()                       // export 1
        let name = try #require(files.first?.name)
        #expect(first.uploadedDataFiles == [name.fileName])
        #expect(first.uploaded.count == 1)
        #expect(try a.store.unexportedDataFiles().isEmpty)
        let path = a.layout.path(for: name)
        let whole = try #require(await cloud.snapshotFiles()[path])
        #expect(await cloud.corrupt(path: path))
        let refused = try await b.download()
        #expect(refused.imported == [meta.id])
        #expect(refused.storedDataFiles.isEmpty && refused.diagnostics.contains { $0.description.contains(name.fileName) })

        #expect(try await a.export().repaired.isEmpty)         // export 2: the size is right
        let third = try await a.export()                       // export 3: the content check
        #expect(third.repaired == [name.fileName])
        #expect(await cloud.snapshotFiles()[path] == whole)
        #expect(try await b.download().storedDataFiles == [name])
        #expect(try b.store.dataFileBytes(name) == value)
    }

    @Test func theFirstExportOfAProcessRemovesAbandonedUploadsThenNotAgainWithinTheHour() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let root = scratch.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        let a = try TransferDevice("a", in: scratch, fileSystem: LocalDirectoryFileSystem(rootDirectory: root))
        try await a.leech()
        func abandon(_ name: String) throws -> URL {
            let part = root.appendingPathComponent("library/events/.\(name).part")
            try Data("half".utf8).write(to: part)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: part.path)
            return part
        }
        let first = try abandon("1_X_1.gsevent.A")
        try a.record(1)
        #expect(try await a.export().removedAbandonedUploads == 1)
        #expect(!FileManager.default.fileExists(atPath: first.path))
        let second = try abandon("2_X_2.gsevent.B")
        #expect(try await a.export().removedAbandonedUploads == 0)
        #expect(FileManager.default.fileExists(atPath: second.path))
        // A new process sweeps at its first export.
        try a.reopen()
        #expect(try await a.export().removedAbandonedUploads == 1)
    }

    @Test func anotherDeviceWithThisStoresIdentityIsACollision() async throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let cloud = MemoryFileSystem()
        let a = try TransferDevice("a", in: scratch, fileSystem: cloud)
        try await a.leech()
        try a.record(1)
        try await a.export()
        // A restored backup of A: the same store ID and counters, different changes.
        let twin = try TransferDevice("twin", in: scratch, fileSystem: cloud, storeID: a.storeID)
        try await twin.leech()
        try twin.record(1, prefix: "other")
        do { _ = try await twin.export(); Issue.record("no error") } catch let error as SyncError {
            guard case let .storeIdentityCollision(storeID) = error else { Issue.record("\(error)"); return }
            #expect(storeID == a.storeID.description)
        }
        #expect(try twin.store.events(withStatus: .localUnexported).count == 1)

        // A whole file of another size under an exported name of A: a collision found by A, not repaired.
        let twinFile = try #require(try twin.store.unexportedEventPayloads().first)
        let longer = Event(meta: EventMeta(id: twinFile.id, globalCount: twinFile.globalCount, vector: RevisionVector()),
                           changes: [.insert(ObjectKey("Book", "a-much-longer-global-identifier"))])
        let name = CloudFileName.event(globalCount: twinFile.globalCount, store: a.storeID, revision: 1, part: nil)
        let fileBytes = EventFile(kind: .eventPart, payload: try EventPayloadCoding.encode(longer)).encoded()
        let original = try #require(await cloud.snapshotFiles()[a.layout.path(for: name)])
        #expect(fileBytes.count != original.count)
        try await cloud.uploadLocalFile(at: localFile(fileBytes, in: scratch), toPath: a.layout.path(for: name))
        do { _ = try await a.export(); Issue.record("no error") } catch let error as SyncError {
            guard case .storeIdentityCollision = error else { Issue.record("\(error)"); return }
        }
        #expect(await cloud.snapshotFiles()[a.layout.path(for: name)] == fileBytes)
        try await cloud.uploadLocalFile(at: localFile(original, in: scratch), toPath: a.layout.path(for: name))

        // A's own next export finds a revision it has not made yet in the cloud.
        try twin.record(1, prefix: "more")
        let extra = try twin.store.unexportedEventPayloads()[1]
        for (name, bytes) in EventFileParts.files(id: extra.id, globalCount: extra.globalCount, payload: extra.payload) {
            try await cloud.uploadLocalFile(at: localFile(bytes, in: scratch), toPath: a.layout.path(for: name))
        }
        try a.record(0)
        do { _ = try await a.export(); Issue.record("no error") } catch let error as SyncError {
            guard case .storeIdentityCollision = error else { Issue.record("\(error)"); return }
        }
    }
}
