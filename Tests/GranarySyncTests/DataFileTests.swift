import Foundation
import Granary
import PropertyBased
@testable import GranarySync
import Testing

/// Large values end to end (M15, Ensembles' data files): binaryData and transformable values above
/// 10,000 bytes travel as content-named files in `data/`, uploaded before the events naming them;
/// events and baselines whose files have not arrived wait, and files nothing names any more are removed
/// by their writer after a rebase.
@Suite struct DataFileTests {
    static let limit = SyncConstants.inlineDataLimit

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Document") {
                Attribute("uniqueIdentifier", .string)
                Attribute("title", .string, defaultValue: "")
                Attribute("blob", .binaryData, optional: true)
                Attribute("lines", .transformable([String].self, name: "DataFileTestLines"), optional: true)
            }
        }
    }

    /// Devices on one `LocalDirectoryFileSystem` folder (`root/cloud`), leeched unless told otherwise.
    func devices(_ names: [String], in root: URL, leech: Bool = true) async throws -> [SyncTestDevice] {
        let folder = root.appendingPathComponent("cloud", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let cloud = LocalDirectoryFileSystem(rootDirectory: folder)
        let model = try Self.model()
        var devices: [SyncTestDevice] = []
        for name in names {
            let device = try SyncTestDevice(name, in: root, model: model, cloud: cloud)
            if leech { try await device.ensemble.leech() }
            devices.append(device)
        }
        return devices
    }

    func directory(_ name: String, in root: URL) -> URL {
        root.appendingPathComponent("cloud/Notes/\(name)", isDirectory: true)
    }

    /// The visible file names of cloud directory `name`.
    func files(_ name: String, in root: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory(name, in: root).path).filter { !$0.hasPrefix(".") }.sorted()
    }

    func storeID(of device: SyncTestDevice) throws -> StoreID {
        let eventStore = try #require(device.ensemble.mutable.withLock { $0.pipeline?.eventStore })
        return try eventStore.state().storeID
    }

    func insert(_ device: SyncTestDevice, _ id: String, blob: Data? = nil, lines: [String]? = nil) throws {
        try device.perform { context in
            let entity = try #require(device.model.entity(named: "Document"))
            let object = ManagedObject(entity: entity, insertInto: context)
            try object.setValue(id, forKey: "uniqueIdentifier")
            try object.setValue(id, forKey: "title")
            try object.setValue(blob, forKey: "blob")
            try object.setValue(lines, forKey: "lines")
            try context.save()
        }
    }

    func document(_ device: SyncTestDevice, _ id: String) throws -> ManagedObject? {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: device.coordinator)
        return try context.performAndWait {
            try context.fetch(FetchRequest<ManagedObject>(entityName: "Document"))
                .first { (try? $0.value(forKey: "uniqueIdentifier") as? String) == id }
        }
    }

    func blob(_ device: SyncTestDevice, _ id: String) throws -> Data? {
        try document(device, id).flatMap { try $0.value(forKey: "blob") as? Data }
    }

    func setBlob(_ device: SyncTestDevice, _ id: String, _ data: Data) throws {
        try device.perform { context in
            let object = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Document"))
                .first { (try? $0.value(forKey: "uniqueIdentifier") as? String) == id })
            try object.setValue(data, forKey: "blob")
            try context.save()
        }
    }

    func documentCount(_ device: SyncTestDevice) throws -> Int {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: device.coordinator)
        return try context.performAndWait { try context.fetch(FetchRequest<ManagedObject>(entityName: "Document")).count }
    }

    /// Every event `device` wrote that is in the cloud, decoded from its files.
    func cloudEvents(of device: SyncTestDevice, in root: URL) throws -> [Event] {
        let own = try storeID(of: device)
        var events: [Event] = []
        for text in try files("events", in: root) {
            let name = try CloudFileName.parse(text)
            guard name.writer == own else { continue }
            let bytes = try Data(contentsOf: directory("events", in: root).appendingPathComponent(text))
            events.append(try EventFileParts.event(from: [(name, bytes)]))
        }
        return events
    }

    @Test func dataOf10000BytesStaysInlineAnd10001BytesTravelAsAFile() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        var random = SplitMix(seed: 21)
        let small = random.bytes(Self.limit), large = random.bytes(Self.limit + 1)
        try insert(d[0], "small", blob: small)
        try insert(d[0], "large", blob: large)
        try await d[0].ensemble.merge()

        let dataFiles = try files("data", in: root)
        let expected = CloudFileName.data(sha256: LargeValues.sha256(large), store: try storeID(of: d[0]))
        #expect(dataFiles == [expected.fileName])
        let fileBytes = try Data(contentsOf: directory("data", in: root).appendingPathComponent(expected.fileName))
        #expect(try LargeValues.value(inFile: fileBytes, name: expected) == large)
        let changes = try cloudEvents(of: d[0], in: root).flatMap(\.changes)
        let values = Dictionary(changes.compactMap { change in change.attributes["blob"].map { (change.key.globalID, $0) } },
                                uniquingKeysWith: { a, _ in a })
        #expect(values["small"] == .some(.data(small)))
        #expect(values["large"] == .some(.dataFile(expected)))
        // No event file holds the large value, in any form; the small one is inline.
        var payloads = Data()
        for text in try files("events", in: root) {
            let bytes = try Data(contentsOf: directory("events", in: root).appendingPathComponent(text))
            #expect(bytes.range(of: large.prefix(64)) == nil)
            payloads.append(try EventFile(decoding: bytes, name: text).payload)
        }
        #expect(payloads.range(of: Data(large.base64EncodedString().prefix(64).utf8)) == nil)
        #expect(payloads.range(of: Data(small.base64EncodedString().prefix(64).utf8)) != nil)

        try await d[1].ensemble.merge()
        #expect(try blob(d[1], "small") == small)
        #expect(try blob(d[1], "large") == large)
        #expect(d[1].ensemble.status == .idle)
    }

    @Test func aLargeTransformableValueTravelsAsAFileAndArrivesEqual() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let lines = (0..<2_000).map { "line \($0) of a long transformable value" }
        try insert(d[0], "doc", lines: lines)
        try await d[0].ensemble.merge()
        #expect(try files("data", in: root).count == 1)
        try await d[1].ensemble.merge()
        let arrived = try #require(try document(d[1], "doc"))
        #expect(try arrived.value(forKey: "lines") as? [String] == lines)
    }

    @Test func anUpdateWritesANewFileAndTheOldOneGoesAtTheWritersRebase() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        var random = SplitMix(seed: 7)
        let first = random.bytes(Self.limit * 2), second = random.bytes(Self.limit * 3)
        try insert(d[0], "doc", blob: first)
        try await mergeAll(d)
        try setBlob(d[0], "doc", second)
        try await mergeAll(d)
        let own = try storeID(of: d[0])
        let firstName = CloudFileName.data(sha256: LargeValues.sha256(first), store: own).fileName
        let secondName = CloudFileName.data(sha256: LargeValues.sha256(second), store: own).fileName
        #expect(try files("data", in: root) == [firstName, secondName].sorted())
        #expect(try blob(d[1], "doc") == second)

        try await d[0].ensemble.merge(options: .forceRebase)
        #expect(try files("baselines", in: root).count == 1)
        #expect(try files("data", in: root) == [secondName], "the first value's file is still there")
        // a's store keeps only what its ledger and remaining events name.
        let eventStore = try #require(d[0].ensemble.mutable.withLock { $0.pipeline?.eventStore })
        #expect(Set(try eventStore.dataFileEntries().keys.map(\.fileName)) == [secondName])

        try await mergeAll(d)
        #expect(try blob(d[0], "doc") == second)
        #expect(try blob(d[1], "doc") == second)
    }

    /// A device that does not rebase drops what another's baseline made unnecessary: the copies of old
    /// values it received, and its own old files in the cloud.
    @Test func anotherDevicesBaselineLetsADeviceDropItsOldValuesToo() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        var random = SplitMix(seed: 29)
        let a1 = random.bytes(Self.limit + 1), a2 = random.bytes(Self.limit + 2)
        let b1 = random.bytes(Self.limit + 3), b2 = random.bytes(Self.limit + 4)
        try insert(d[0], "from a", blob: a1)
        try insert(d[1], "from b", blob: b1)
        try await mergeAll(d)
        try setBlob(d[0], "from a", a2)
        try setBlob(d[1], "from b", b2)
        try await mergeAll(d)
        let (storeA, storeB) = (try storeID(of: d[0]), try storeID(of: d[1]))
        func name(_ bytes: Data, _ store: StoreID) -> CloudFileName { .data(sha256: LargeValues.sha256(bytes), store: store) }
        let bStore = try #require(d[1].ensemble.mutable.withLock { $0.pipeline?.eventStore })
        #expect(Set(try bStore.dataFileEntries().keys) == [name(a1, storeA), name(a2, storeA), name(b1, storeB), name(b2, storeB)])

        try await d[0].ensemble.merge(options: .forceRebase)
        #expect(try files("data", in: root) == [name(a2, storeA), name(b1, storeB), name(b2, storeB)].map(\.fileName).sorted())
        try await d[1].ensemble.merge()
        #expect(Set(try bStore.dataFileEntries().keys) == [name(a2, storeA), name(b2, storeB)])
        #expect(try files("data", in: root) == [name(a2, storeA), name(b2, storeB)].map(\.fileName).sorted())

        // Nothing needed went: a device joining later gets both values, and both devices keep them.
        let c = try await devices(["c"], in: root)[0]
        try await mergeAll(d + [c])
        for device in d + [c] {
            #expect(try blob(device, "from a") == a2, "\(device.name)")
            #expect(try blob(device, "from b") == b2, "\(device.name)")
        }
    }

    @Test func anEventWhoseFileIsMissingWaitsWithTheEventsAfterItAndArrivesWithTheFile() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let large = SplitMix(seed: 3).bytesOf(Self.limit + 500)
        try insert(d[0], "before")
        try await d[0].ensemble.merge()
        try insert(d[0], "large", blob: large)
        try await d[0].ensemble.merge()
        try insert(d[0], "after")
        try await d[0].ensemble.merge()

        let name = try #require(try files("data", in: root).first)
        let file = directory("data", in: root).appendingPathComponent(name)
        let aside = root.appendingPathComponent(name)
        try FileManager.default.moveItem(at: file, to: aside)
        let waiting = try await d[1].ensemble.merge()
        #expect(waiting.waitingEvents == 2)
        #expect(d[1].ensemble.status == .waitingForDataFiles(names: [name]))
        #expect(try document(d[1], "before") != nil)
        #expect(try document(d[1], "large") == nil && document(d[1], "after") == nil)

        try FileManager.default.moveItem(at: aside, to: file)
        let arrived = try await d[1].ensemble.merge()
        #expect(arrived.waitingEvents == 0)
        #expect(try blob(d[1], "large") == large)
        #expect(try document(d[1], "after") != nil)
        #expect(try documentCount(d[1]) == 3)
        #expect(try d[1].graph().duplicates.isEmpty)
        #expect(d[1].ensemble.status == .idle)
    }

    @Test func aDamagedFileIsNotYetArrivedAndItsWriterPutsBackARemovedOne() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let large = SplitMix(seed: 5).bytesOf(Self.limit * 2)
        try insert(d[0], "large", blob: large)
        try await d[0].ensemble.merge()
        let name = try #require(try files("data", in: root).first)
        let file = directory("data", in: root).appendingPathComponent(name)

        let whole = try Data(contentsOf: file)
        var damaged = whole
        damaged[damaged.count / 2] ^= 0xFF
        try damaged.write(to: file)
        let report = try await d[1].ensemble.merge()
        #expect(report.diagnostics.contains { $0.contains(name) }, "\(report.diagnostics)")
        #expect(report.waitingEvents == 1)
        #expect(try document(d[1], "large") == nil)

        // Cut short (as a sync service may leave it): its writer uploads it again at its next merge.
        try whole.prefix(whole.count / 2).write(to: file)
        try await d[0].ensemble.merge()
        #expect(try Data(contentsOf: file) == whole)

        // Removed altogether: only its writer can put it back, and does at its next merge.
        try FileManager.default.removeItem(at: file)
        try await d[0].ensemble.merge()
        #expect(try Data(contentsOf: file) == whole)
        try await d[1].ensemble.merge()
        #expect(try blob(d[1], "large") == large)
        #expect(try documentCount(d[1]) == 1)
    }

    /// Ensembles' random histories delete the cloud's `data/` directory: sync goes on, and each writer
    /// uploads its files again.
    @Test func aRemovedDataDirectoryIsMadeAgainAndRefilledByTheWriters() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let large = SplitMix(seed: 19).bytesOf(Self.limit * 2)
        try insert(d[0], "large", blob: large)
        try await d[0].ensemble.merge()
        try FileManager.default.removeItem(at: directory("data", in: root))
        let waiting = try await d[1].ensemble.merge()
        #expect(waiting.waitingEvents == 1)
        #expect(try files("data", in: root).isEmpty)
        try await d[0].ensemble.merge()
        #expect(try files("data", in: root).count == 1)
        try await d[1].ensemble.merge()
        #expect(try blob(d[1], "large") == large)
    }

    @Test func aRemovedDataDirectoryIsMadeAgainOnAMemoryFileSystemToo() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let cloud = MemoryFileSystem()
        let model = try Self.model()
        let d = try ["a", "b"].map { try SyncTestDevice($0, in: root, model: model, cloud: cloud) }
        for device in d { try await device.ensemble.leech() }
        let large = SplitMix(seed: 23).bytesOf(Self.limit + 3)
        try insert(d[0], "large", blob: large)
        try await d[0].ensemble.merge()
        try await cloud.removeItem(atPath: "Notes/data")
        #expect(try await cloud.fileExists(atPath: "Notes/data") == FileExistence(exists: false, isDirectory: false))
        try await d[1].ensemble.merge()
        #expect(try await cloud.fileExists(atPath: "Notes/data").isDirectory)
        try await d[0].ensemble.merge()
        try await d[1].ensemble.merge()
        #expect(try blob(d[1], "large") == large)
    }

    @Test func leechingAStoreThatHoldsLargeValuesSeedsThemAsFiles() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root, leech: false)
        let large = SplitMix(seed: 11).bytesOf(Self.limit * 4)
        try insert(d[1], "existing", blob: large)
        try await d[0].ensemble.leech()
        try await d[1].ensemble.leech()
        try await d[1].ensemble.merge()
        #expect(try files("data", in: root) == [CloudFileName.data(sha256: LargeValues.sha256(large), store: try storeID(of: d[1])).fileName])
        for event in try cloudEvents(of: d[1], in: root) {
            for change in event.changes {
                if case .data?? = change.attributes["blob"] { Issue.record("the seed carries the large value inline") }
            }
        }
        try await d[0].ensemble.merge()
        #expect(try blob(d[0], "existing") == large)
    }

    @Test func aBaselineNamesItsFilesAndALaterDeviceLeechesTheBytesFromIt() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let large = SplitMix(seed: 13).bytesOf(Self.limit * 3)
        try insert(d[0], "large", blob: large)
        try await mergeAll(d)
        try await d[0].ensemble.merge(options: .forceRebase)
        #expect(try files("baselines", in: root).count == 1)
        let name = try #require(try files("data", in: root).first)
        let file = directory("data", in: root).appendingPathComponent(name)

        // The baseline's file missing: a device leeching now does not join the baseline…
        let aside = root.appendingPathComponent(name)
        try FileManager.default.moveItem(at: file, to: aside)
        let c = try await devices(["c"], in: root, leech: false)[0]
        try await c.ensemble.leech()
        #expect(try document(c, "large") == nil)
        let report = try await c.ensemble.merge()
        #expect(report.diagnostics.contains { $0.hasPrefix("baseline ") && $0.contains(name) }, "\(report.diagnostics)")
        #expect(try document(c, "large") == nil)
        // …until the file is back.
        try FileManager.default.moveItem(at: aside, to: file)
        try await c.ensemble.merge()
        #expect(try blob(c, "large") == large)
        #expect(try documentCount(c) == 1)
    }
}

extension DataFileTests {
    /// M24 with M15: a large value the repair hook sets travels in the merge event as a data file.
    @Test func aLargeValueSetByTheRepairHookTravelsAsAFile() async throws {
        let root = try makeScratchDirectory()
        defer { removeScratch(root) }
        let d = try await devices(["a", "b"], in: root)
        let large = SplitMix(seed: 17).bytesOf(Self.limit + 1)
        let repairer = BlobRepairer(bytes: large)
        d[1].ensemble.delegate = repairer
        try insert(d[0], "doc")
        try await mergeAll(d)
        d[1].ensemble.delegate = d[1].recorder
        #expect(try blob(d[1], "doc") == large, "the repair was not saved")
        #expect(try files("data", in: root) == [CloudFileName.data(sha256: LargeValues.sha256(large), store: try storeID(of: d[1])).fileName])
        for event in try cloudEvents(of: d[1], in: root) {
            for change in event.changes {
                if case .data?? = change.attributes["blob"] { Issue.record("the merge event carries the large value inline") }
            }
        }
        #expect(try blob(d[0], "doc") == large, "the repair did not reach the other device")
    }
}

extension DataFileTests {
    /// The convergence property's random histories (attachments inline and as files, removed data files
    /// and `data/`, relaunches), with forced rebases among them, so that clean-ups after baselines run
    /// while values change: in the end every device holds the same graph, large values compared by
    /// content.
    @Test func devicesConvergeWithLargeValuesRemovedFilesAndRebases() async {
        await propertyCheck(count: 10, input: Gen.int(in: 0...Int.max)) { seed in
            // propertyCheck drops what its body throws: an error must be an issue.
            // The default policy: rebases keep what active devices have not integrated.
            do {
                try await RebaseEnsembleTests.checkWithRebases(seed: seed, steps: 40, policy: RebasePolicy(), expectIdle: true)
            } catch {
                Issue.record("seed \(seed): \(error)")
            }
        }
    }
}

/// The rule's pieces without devices: which values are extracted, how files are named, framed and checked.
@Suite struct LargeValuesTests {
    let writer = StoreID(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))

    @Test func onlyDataAboveTheLimitIsExtractedAndTheReferenceNamesItsContent() throws {
        var random = SplitMix(seed: 1)
        let small = random.bytes(SyncConstants.inlineDataLimit), large = random.bytes(SyncConstants.inlineDataLimit + 1)
        let key = ObjectKey("Document", "d")
        let change = ObjectChange(key: key, kind: .insert, attributes: ["small": .data(small), "large": .data(large), "none": .none,
                                                                       "text": .string(String(repeating: "x", count: 20_000))])
        let (changes, files) = LargeValues.extract([change], writer: writer)
        let name = CloudFileName.data(sha256: LargeValues.sha256(large), store: writer)
        #expect(files == [DataFileRecord(name: name, bytes: large)])
        #expect(changes[0].attributes["large"] == .some(.dataFile(name)))
        #expect(changes[0].attributes["small"] == .some(.data(small)))
        #expect(changes[0].attributes["text"] == change.attributes["text"], "only Data values travel as files")
        #expect(LargeValues.references(in: changes) == [name])
        // The store's bytes are the reference's value, whoever wrote the file; other bytes are not.
        let other = StoreID(UUID(uuid: (9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9)))
        #expect(LargeValues.isSameValue(.dataFile(.data(sha256: LargeValues.sha256(large), store: other)), .data(large)))
        #expect(!LargeValues.isSameValue(.dataFile(name), .data(random.bytes(SyncConstants.inlineDataLimit + 1))))
        #expect(!LargeValues.isSameValue(.dataFile(name), nil))
    }

    @Test func aDataFileIsFramedAndRefusedWhenDamagedOrNotItsName() throws {
        let value = SplitMix(seed: 2).bytesOf(SyncConstants.inlineDataLimit + 100)
        let record = LargeValues.record(of: value, writer: writer)
        let bytes = LargeValues.fileBytes(of: record)
        #expect(try LargeValues.value(inFile: bytes, name: record.name) == value)
        var damaged = bytes
        damaged[damaged.count / 2] ^= 1
        #expect(throws: EventFileError.self) { try LargeValues.value(inFile: damaged, name: record.name) }
        let otherName = CloudFileName.data(sha256: String(repeating: "0", count: 64), store: writer)
        #expect(throws: EventFileError.self) { try LargeValues.value(inFile: bytes, name: otherName) }
        let event = EventFile(kind: .eventPart, payload: value).encoded()
        #expect(throws: EventFileError.self) { try LargeValues.value(inFile: event, name: record.name) }
    }
}

/// The `dataFile` table: files stored in the commit of the event naming them, listed without their
/// bytes, marked exported, counted as referenced while an uncovered event or the ledger names them.
@Suite struct DataFileTableTests {
    @Test func filesAreStoredWithTheirEventAndReferencedWhileSomethingNamesThem() throws {
        let (scratch, directory) = try EventStoreTests.storeDirectory()
        defer { removeScratch(scratch) }
        let own = orderedStores[0], other = orderedStores[1]
        var store = try EventStore.open(at: directory, creatingWith: own)
        let value = SplitMix(seed: 4).bytesOf(SyncConstants.inlineDataLimit + 1)
        let key = ObjectKey("Document", "d")
        let (changes, files) = LargeValues.extract([ObjectChange(key: key, kind: .insert, attributes: ["blob": .data(value)])], writer: own)
        let event = Event(meta: try store.nextLocalMeta(), changes: changes)
        try store.recordLocalEvent(event, with: EventStoreStep(dataFiles: files))
        let name = try #require(files.first?.name)
        let fileSize = Int64(LargeValues.fileBytes(of: files[0]).count)
        #expect(try store.dataFileEntries() == [name: DataFileEntry(name: name, isOwn: true, isExported: false, fileSize: fileSize)])
        #expect(try store.dataFileBytes(name) == value)
        #expect(try store.unexportedDataFiles() == files)
        #expect(try store.referencedDataFiles() == [name])

        // A downloaded file is not this store's; one nothing names is not referenced.
        let foreign = LargeValues.record(of: SplitMix(seed: 5).bytesOf(SyncConstants.inlineDataLimit + 7), writer: other)
        try store.storeDataFiles([foreign, foreign])
        #expect(try store.dataFileEntries()[foreign.name]?.isOwn == false)
        #expect(try store.unexportedDataFiles() == files)
        #expect(try store.referencedDataFiles() == [name])

        try store.markDataFilesExported([name])
        #expect(try store.unexportedDataFiles().isEmpty)
        #expect(try store.heldDataFiles(among: [name, foreign.name]) == [name, foreign.name])
        try store.removeDataFiles([foreign.name])
        #expect(try store.dataFileBytes(foreign.name) == nil)
        #expect(try store.heldDataFiles(among: [name, foreign.name]) == [name])

        // A store made before the table existed gets an empty one when opened.
        try store.engine.write { tx in try tx.dropTable(DataFileTable.name) }
        try store.close()
        store = try EventStore.open(at: directory)
        #expect(try store.dataFileEntries().isEmpty)
        try store.storeDataFiles([foreign])
        #expect(try store.dataFileBytes(foreign.name) == foreign.bytes)
        try store.close()
    }
}

/// Sets every document without a blob to `bytes`, in the reparation context.
final class BlobRepairer: PersistentStoreEnsembleDelegate, @unchecked Sendable {
    let bytes: Data
    init(bytes: Data) { self.bytes = bytes }
    func persistentStoreEnsemble(_ ensemble: PersistentStoreEnsemble, shouldSaveMergedChangesIn savingContext: ManagedObjectContext,
                                 reparationContext: ManagedObjectContext) -> Bool {
        reparationContext.performAndWait {
            let documents = (try? reparationContext.fetch(FetchRequest<ManagedObject>(entityName: "Document"))) ?? []
            for document in documents where ((try? document.value(forKey: "blob")) as? Data) == nil {
                try? document.setValue(bytes, forKey: "blob")
            }
        }
        return true
    }
}

extension SplitMix {
    /// `count` bytes of this generator, from a fresh copy (so a test's values do not depend on order).
    func bytesOf(_ count: Int) -> Data {
        var copy = self
        return copy.bytes(count)
    }
}
