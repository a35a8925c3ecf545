import Foundation
import Testing
@testable import GranarySync

/// Rebasing on a cloud file system (§12.7, §13, M32): the baseline is written and visible before anything
/// is removed; covered events and dominated baselines go, the rest stays; another device joins the
/// baseline, whatever it had integrated before, and ends with the rebasing device's ledger.
@Suite struct RebaserTests {
    static let a = orderedStores[0], b = orderedStores[1], c = orderedStores[2]

    /// One device: an event store in a scratch directory, with transit folders.
    struct Device {
        let scratch: URL
        let store: EventStore
        var upload: URL { scratch.appendingPathComponent("upload") }
        var download: URL { scratch.appendingPathComponent("download") }

        init(_ id: StoreID) throws {
            scratch = try makeScratchDirectory()
            store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"), creatingWith: id)
            try FileManager.default.createDirectory(at: upload, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: download, withIntermediateDirectories: true)
        }

        func close() {
            try? store.close()
            removeScratch(scratch)
        }

        func rebaser(_ cloud: any CloudFileSystem, maximumPartPayload: Int = SyncConstants.maximumPartPayload) throws -> Rebaser {
            Rebaser(fileSystem: cloud, layout: try RebaserTests.layout(), eventStore: store, transitDirectory: upload,
                    maximumPartPayload: maximumPartPayload)
        }

        func integrator(_ cloud: any CloudFileSystem) throws -> BaselineIntegrator {
            BaselineIntegrator(fileSystem: cloud, layout: try RebaserTests.layout(), eventStore: store, transitDirectory: download)
        }

        /// Integrates downloaded `events` (in causal order) into the stored ledger, as a merge's finalize does.
        func integrate(_ events: [Event]) throws {
            var ledger = try store.loadLedger()
            for event in events {
                try store.importEvent(event)
                LedgerIntegrator.apply(event, to: &ledger)
            }
            try store.commit(EventStoreStep(integrated: events.map(\.id), ledgerObjects: Array(ledger.objects.values)))
        }

        /// Records a local event of `changes`, with its ledger changes.
        @discardableResult
        func record(_ changes: [ObjectChange]) throws -> Event {
            let event = Event(meta: try store.nextLocalMeta(), changes: changes)
            var ledger = try store.loadLedger()
            LedgerIntegrator.apply(event, to: &ledger)
            try store.recordLocalEvent(event, with: EventStoreStep(ledgerObjects: Array(ledger.objects.values)))
            return event
        }
    }

    static func layout() throws -> CloudLayout { try CloudLayout(ensembleIdentifier: "library") }

    static func cloud() async throws -> MemoryFileSystem {
        let cloud = MemoryFileSystem()
        try await cloud.connect()
        for directory in try layout().directories { try await cloud.createDirectory(atPath: directory) }
        return cloud
    }

    static func eventName(_ event: Event) -> CloudFileName {
        .event(globalCount: event.meta.globalCount, store: event.id.store, revision: event.id.revision, part: nil)
    }

    /// Uploads `events` as event files.
    static func publish(_ events: [Event], to cloud: any CloudFileSystem, from device: Device) async throws {
        for event in events {
            let url = try localFile(try EventPayloadCoding.file(.eventPart, of: event), in: device.upload)
            try await cloud.uploadLocalFile(at: url, toPath: try layout().path(for: eventName(event)))
            try FileManager.default.removeItem(at: url)
        }
    }

    static func names(in directory: String, of cloud: any CloudFileSystem) async throws -> [CloudFileName] {
        try await cloud.contentsOfDirectory(atPath: directory).map { try CloudFileName.parse($0.name) }
    }

    static func book(_ index: Int) -> ObjectKey { ObjectKey("Book", "b\(index)") }

    /// A has five events, B two (made after A's third); both published, A has integrated B's.
    static func history(_ cloud: MemoryFileSystem) async throws -> (a: Device, aEvents: [Event], bEvents: [Event]) {
        let deviceA = try Device(a)
        var aEvents: [Event] = []
        for index in 1...3 { aEvents.append(try deviceA.record([.insert(book(index), ["title": .string("A\(index)")])])) }
        var writerB = LedgerTestDevice(store: b)
        for event in aEvents { writerB.learn(event) }
        let bEvents = [writerB.record([.update(book(1), ["title": .string("B1")])]),
                       writerB.record([.delete(book(2)), .insert(ObjectKey("Tag", "t1"), ["name": .string("sf")])])]
        try deviceA.integrate(bEvents)
        for index in 4...5 { aEvents.append(try deviceA.record([.update(book(index - 3), ["year": .integer(Int64(1960 + index))])])) }
        try await publish(aEvents + bEvents, to: cloud, from: deviceA)
        try deviceA.store.markExported(aEvents.map(\.id))
        return (deviceA, aEvents, bEvents)
    }

    @Test func aRebaseWritesTheBaselineCommitsThenRemovesCoveredEvents_M32() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, bEvents) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        // B has published up to B2, which saw A3: the cutoff.
        let cutoff = RevisionVector([Self.a: 3, Self.b: 2])
        let stateBefore = try deviceA.store.state()
        let outcome = try await deviceA.rebaser(cloud, maximumPartPayload: 1200).rebase(
            cutoff: cutoff, eventNames: try await Self.names(in: layout.eventsDirectory, of: cloud),
            baselineNames: try await Self.names(in: layout.baselinesDirectory, of: cloud))

        #expect(outcome.isVisible)
        #expect(outcome.parts.count > 1, "expected several parts at 1,200 bytes each")
        #expect(outcome.baseline.vector == stateBefore.integrated)
        #expect(outcome.baseline.globalCount == (aEvents + bEvents).map(\.meta.globalCount).max())
        let remaining = Set(try await Self.names(in: layout.eventsDirectory, of: cloud))
        #expect(remaining == Set(aEvents.suffix(2).map(Self.eventName)))
        #expect(Set(outcome.removedEvents) == Set((aEvents.prefix(3) + bEvents).map(Self.eventName)))

        let state = try deviceA.store.state()
        #expect(state.baselineID == outcome.baseline.stem)
        #expect(try deviceA.store.status(of: aEvents[0].id) == .covered)
        #expect(try deviceA.store.status(of: bEvents[1].id) == .covered)
        #expect(try deviceA.store.status(of: aEvents[3].id) == .exported)
        #expect(try deviceA.store.baselineRecords()[outcome.baseline.stem]?.role == .written)

        // The files hold A's ledger exactly.
        var parts: [(name: CloudFileName, bytes: Data)] = []
        let files = await cloud.snapshotFiles()
        for name in outcome.parts { parts.append((name, try #require(files[layout.path(for: name)]))) }
        let baseline = try BaselineFile.decode(parts: parts)
        #expect(baseline.ledger == (try deviceA.store.loadLedger()))
        #expect(baseline.vector == state.integrated)
    }

    /// A backend that accepts baseline uploads without showing them (yet), as an eventually consistent
    /// store may.
    actor HidingFileSystem: CloudFileSystem {
        let base: MemoryFileSystem
        init(_ base: MemoryFileSystem) { self.base = base }
        var isConnected: Bool { get async { await base.isConnected } }
        func connect() async throws(CloudFileSystemError) { try await base.connect() }
        func fetchUserIdentity() async throws(CloudFileSystemError) -> CloudIdentity? { try await base.fetchUserIdentity() }
        func fileExists(atPath path: String) async throws(CloudFileSystemError) -> FileExistence { try await base.fileExists(atPath: path) }
        func createDirectory(atPath path: String) async throws(CloudFileSystemError) { try await base.createDirectory(atPath: path) }
        func contentsOfDirectory(atPath path: String) async throws(CloudFileSystemError) -> [CloudItem] {
            try await base.contentsOfDirectory(atPath: path)
        }
        func removeItem(atPath path: String) async throws(CloudFileSystemError) { try await base.removeItem(atPath: path) }
        func uploadLocalFile(at localURL: URL, toPath remotePath: String) async throws(CloudFileSystemError) {
            if remotePath.hasSuffix(".gsbase") { return }
            try await base.uploadLocalFile(at: localURL, toPath: remotePath)
        }
        func downloadFile(atPath remotePath: String, toLocalFile localURL: URL) async throws(CloudFileSystemError) {
            try await base.downloadFile(atPath: remotePath, toLocalFile: localURL)
        }
    }

    @Test func nothingIsRemovedUntilTheBaselineIsVisible() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, bEvents) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        let eventNames = try await Self.names(in: layout.eventsDirectory, of: cloud)
        let cutoff = RevisionVector([Self.a: 5, Self.b: 2])

        let hidden = try await deviceA.rebaser(HidingFileSystem(cloud)).rebase(cutoff: cutoff, eventNames: eventNames, baselineNames: [])
        #expect(!hidden.isVisible)
        #expect(hidden.removedEvents.isEmpty)
        #expect(Set(try await Self.names(in: layout.eventsDirectory, of: cloud)) == Set((aEvents + bEvents).map(Self.eventName)))
        #expect(try deviceA.store.state().baselineID == nil)
        #expect(try deviceA.store.status(of: aEvents[0].id) == .exported)

        await cloud.failNext(.upload, with: .unavailable(reason: "offline"))
        await #expect(throws: SyncError.self) {
            try await deviceA.rebaser(cloud).rebase(cutoff: cutoff, eventNames: eventNames, baselineNames: [])
        }
        #expect(Set(try await Self.names(in: layout.eventsDirectory, of: cloud)) == Set((aEvents + bEvents).map(Self.eventName)))
        #expect(try deviceA.store.state().baselineID == nil)
        #expect(try await Self.names(in: layout.baselinesDirectory, of: cloud).isEmpty)
    }

    @Test func anotherDeviceJoinsTheBaselineWhateverItHadIntegrated_M32() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, bEvents) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        let outcome = try await deviceA.rebaser(cloud, maximumPartPayload: 1500).rebase(
            cutoff: RevisionVector([Self.a: 3, Self.b: 2]), eventNames: try await Self.names(in: layout.eventsDirectory, of: cloud),
            baselineNames: [])
        let ledgerA = try deviceA.store.loadLedger()

        // C had integrated A1 and A2 (covered), and downloaded A3 without integrating it.
        let deviceC = try Device(Self.c)
        defer { deviceC.close() }
        try deviceC.integrate(Array(aEvents.prefix(2)))
        try deviceC.store.importEvent(aEvents[2])
        try deviceC.record([.insert(ObjectKey("Tag", "c1"), ["name": .string("own")])])

        var overlay = try deviceC.store.loadLedger()
        let before = try deviceC.store.state().integrated
        let names = try await Self.names(in: layout.baselinesDirectory, of: cloud)
        let result = try await deviceC.integrator(cloud).integrate(names, into: &overlay, integrated: before)
        #expect(result.joined.map(\.summary) == [outcome.baseline])
        #expect(result.baselines.map(\.summary) == [outcome.baseline])
        #expect(result.refused.isEmpty && result.incomplete.isEmpty)
        // Joined again into the ledger it came from (a merge retrying), it changes nothing more.
        var rejoined = overlay
        for baseline in result.baselines { _ = BaselineJoiner.join(baseline, into: &rejoined, integrated: result.integrated) }
        #expect(rejoined == overlay)
        #expect(result.integrated == before.joined(with: outcome.baseline.vector))
        try deviceC.store.commit(EventStoreStep(ledgerObjects: Array(overlay.objects.values), joinedBaselines: result.joined))

        // C's ledger is A's plus its own event; A's later events and C's integrate on top alike.
        let state = try deviceC.store.state()
        #expect(state.integrated == result.integrated)
        #expect(state.maxGlobalCount >= outcome.baseline.globalCount)
        #expect(state.baselineID == outcome.baseline.stem)
        #expect(try deviceC.store.status(of: aEvents[2].id) == .integrated)
        let ownC = try deviceC.store.events(withStatus: .localUnexported)
        let covered = (aEvents + bEvents).filter { outcome.baseline.vector[$0.id.store] >= $0.id.revision }
        #expect(try deviceC.store.loadLedger() == integrated(covered + ownC).ledger)
        var full = try deviceC.store.loadLedger()
        for event in aEvents.suffix(2) { LedgerIntegrator.apply(event, to: &full) }
        var fullA = ledgerA
        for event in ownC { LedgerIntegrator.apply(event, to: &fullA) }
        #expect(full == fullA)

        // The same names again: nothing to do, and the same baseline never joins twice.
        var again = try deviceC.store.loadLedger()
        let second = try await deviceC.integrator(cloud).integrate(names, into: &again, integrated: state.integrated)
        #expect(second.joined.isEmpty)
        #expect(again == (try deviceC.store.loadLedger()))
    }

    @Test func damagedOrIncompleteBaselinesWaitCoveredOnesAreOnlyRecorded() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, _, _) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        let outcome = try await deviceA.rebaser(cloud, maximumPartPayload: 1500).rebase(
            cutoff: RevisionVector(), eventNames: [], baselineNames: [])
        #expect(outcome.parts.count >= 2)
        let files = await cloud.snapshotFiles()
        let secondPath = layout.path(for: outcome.parts[1])
        let good = try #require(files[secondPath])

        let deviceC = try Device(Self.c)
        defer { deviceC.close() }
        var overlay = Ledger()
        #expect(await cloud.corrupt(path: secondPath))
        let names = try await Self.names(in: layout.baselinesDirectory, of: cloud)
        let damaged = try await deviceC.integrator(cloud).integrate(names, into: &overlay, integrated: RevisionVector())
        #expect(damaged.joined.isEmpty)
        #expect(damaged.refused.keys.sorted() == [outcome.baseline.stem])
        #expect(overlay == Ledger())
        #expect(try deviceC.store.baselineRecords().isEmpty)

        let incomplete = try await deviceC.integrator(cloud).integrate(Array(names.dropLast()), into: &overlay, integrated: RevisionVector())
        #expect(incomplete.joined.isEmpty && incomplete.incomplete == [outcome.baseline.stem])

        // Listed, then removed by another device's rebase before the download: skipped, not an error.
        let gone = BaselineSummary(id: UUID(), writer: Self.b, globalCount: 1, vector: RevisionVector([Self.b: 1]))
        let vanished = try await deviceC.integrator(cloud).integrate([gone.fileName(part: nil)], into: &overlay, integrated: RevisionVector())
        #expect(vanished.joined.isEmpty && vanished.vanished == [gone.stem])
        #expect(overlay == Ledger())

        // The writer's copy again (its self-healing re-upload): now it joins.
        let url = try localFile(good, in: deviceC.upload)
        try await cloud.uploadLocalFile(at: url, toPath: secondPath)
        let healed = try await deviceC.integrator(cloud).integrate(names, into: &overlay, integrated: RevisionVector())
        #expect(healed.joined.count == 1)
        #expect(overlay == (try deviceA.store.loadLedger()))

        // A device that already has everything the baseline covers only records it.
        let seen = try await deviceA.integrator(cloud).integrate(names, into: &overlay, integrated: try deviceA.store.state().integrated)
        #expect(seen.joined.isEmpty)
        #expect(try deviceA.store.baselineRecords()[outcome.baseline.stem]?.role == .written)
    }

    @Test func aNewerBaselineRemovesTheBaselinesItDominatesOnly() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, _) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        // B wrote a baseline of its own early history (A1–A3, B1): covered by A, so A records it as seen.
        let old = Baseline(writer: Self.b, globalCount: 4, vector: RevisionVector([Self.a: 3, Self.b: 1]), ledger: Ledger())
        let directory = deviceA.upload.appendingPathComponent("old")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for part in try BaselineFileTests.write(old, to: directory, maximumPayload: 4000) {
            let url = try localFile(part.bytes, in: directory)
            try await cloud.uploadLocalFile(at: url, toPath: layout.path(for: part.name))
        }
        // And one that A has never read: its vector is unknown here, so it stays.
        let unknown = BaselineSummary(id: UUID(), writer: Self.c, globalCount: 2, vector: RevisionVector([Self.c: 1]))
        let unknownURL = try localFile(Data("not read".utf8), in: directory)
        try await cloud.uploadLocalFile(at: unknownURL, toPath: layout.path(for: unknown.fileName(part: nil)))

        var overlay = try deviceA.store.loadLedger()
        let listed = try await Self.names(in: layout.baselinesDirectory, of: cloud)
        let read = try await deviceA.integrator(cloud).integrate(listed.filter { $0.writer == Self.b }, into: &overlay,
                                                                 integrated: try deviceA.store.state().integrated)
        #expect(read.joined.isEmpty)
        #expect(try deviceA.store.baselineRecords()[old.summary.stem]?.role == .seen)

        let outcome = try await deviceA.rebaser(cloud).rebase(cutoff: RevisionVector([Self.a: 1]),
                                                              eventNames: [Self.eventName(aEvents[0])], baselineNames: listed)
        #expect(outcome.removedBaselines == [old.summary.fileName(part: nil)])
        let remaining = Set(try await Self.names(in: layout.baselinesDirectory, of: cloud))
        #expect(remaining == Set([unknown.fileName(part: nil)] + outcome.parts))
        #expect(outcome.removedEvents == [Self.eventName(aEvents[0])])
    }

    @Test func rebaseIfNeededFollowsThePolicyAndAnInactiveStoreDoesNotHoldRemovalBack() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, bEvents) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        let now = Date()
        func listing(_ directory: String) async throws -> [(name: CloudFileName, size: Int64)] {
            try await cloud.contentsOfDirectory(atPath: directory).compactMap { item in
                guard case let .file(name, size) = item else { return nil }
                return (try CloudFileName.parse(name), size)
            }
        }
        var registrations = [Self.a: now - 86_400, Self.b: now - 86_400, Self.c: now - 86_400]
        let rebaser = try deviceA.rebaser(cloud)

        // Seven events, no baseline: the first baseline waits for the policy's minimum.
        let waiting = try await rebaser.rebaseIfNeeded(policy: RebasePolicy(minimumEventsForFirstBaseline: 8), registrations: registrations,
                                                       now: now, events: try await listing(layout.eventsDirectory), baselines: [])
        #expect(waiting == nil)
        #expect(try await Self.names(in: layout.baselinesDirectory, of: cloud).isEmpty)

        // C registered a day ago and has published nothing: it holds every removal back.
        let held = try await rebaser.rebaseIfNeeded(policy: RebasePolicy(minimumEventsForFirstBaseline: 7), registrations: registrations,
                                                    now: now, events: try await listing(layout.eventsDirectory), baselines: [])
        #expect(held?.isVisible == true)
        #expect(held?.removedEvents == [])

        // Silent for 31 days, C no longer counts: B's newest event (B2, after A3) decides.
        registrations[Self.c] = now - 31 * 86_400
        let removed = try await rebaser.rebaseIfNeeded(policy: .default, force: true, registrations: registrations, now: now,
                                                       events: try await listing(layout.eventsDirectory),
                                                       baselines: try await listing(layout.baselinesDirectory))
        #expect(Set(removed?.removedEvents ?? []) == Set((aEvents.prefix(3) + bEvents).map(Self.eventName)))
        #expect(removed?.removedBaselines == held.map { $0.parts })
        #expect(try await Self.names(in: layout.baselinesDirectory, of: cloud) == removed?.parts)
    }

    @Test func concurrentBaselinesOfTwoDevicesJoinOnAThirdAndANewerOneDominatesBoth_M32() async throws {
        let cloud = try await Self.cloud()
        let layout = try Self.layout()
        let deviceA = try Device(Self.a), deviceB = try Device(Self.b), deviceC = try Device(Self.c)
        defer { deviceA.close(); deviceB.close(); deviceC.close() }
        // A and B both insert b1 and edit it without seeing each other, then each rebases.
        let a1 = try deviceA.record([.insert(Self.book(1), ["title": .string("from A")])])
        let a2 = try deviceA.record([.insert(ObjectKey("Tag", "t1"), ["name": .string("a")]),
                                     .update(Self.book(1), adds: ["tags": [.member(ObjectKey("Tag", "t1"))]])])
        let b1 = try deviceB.record([.insert(Self.book(1), ["title": .string("from B"), "year": .integer(1961)])])
        let b2 = try deviceB.record([.delete(Self.book(1))])
        try await Self.publish([a1, a2], to: cloud, from: deviceA)
        try await Self.publish([b1, b2], to: cloud, from: deviceB)
        let baselineA = try await deviceA.rebaser(cloud).rebase(cutoff: RevisionVector(), eventNames: [], baselineNames: [])
        let baselineB = try await deviceB.rebaser(cloud).rebase(cutoff: RevisionVector(), eventNames: [], baselineNames: [])
        #expect(baselineA.baseline.vector.isConcurrent(with: baselineB.baseline.vector))

        // C joins both: the ledger of all four events, whichever order the listing gives.
        var overlay = Ledger()
        let names = try await Self.names(in: layout.baselinesDirectory, of: cloud)
        let result = try await deviceC.integrator(cloud).integrate(names.reversed(), into: &overlay, integrated: RevisionVector())
        #expect(result.joined.count == 2)
        #expect(result.integrated == RevisionVector([Self.a: 2, Self.b: 2]))
        #expect(overlay == integrated([a1, a2, b1, b2]).ledger)
        let projection = Projection(of: overlay, schema: libraryLedgerSchema)
        #expect(projection == ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: [a1, a2, b1, b2]))
        try deviceC.store.commit(EventStoreStep(ledgerObjects: Array(overlay.objects.values), joinedBaselines: result.joined))

        // C rebases with a cutoff covering all four events (as once A and B have published events that
        // saw each other's): both baselines and all events go, once C's baseline is visible.
        let events = try await Self.names(in: layout.eventsDirectory, of: cloud)
        let newer = try await deviceC.rebaser(cloud).rebase(cutoff: RevisionVector([Self.a: 2, Self.b: 2]), eventNames: events,
                                                            baselineNames: names)
        #expect(Set(newer.removedBaselines) == Set(baselineA.parts + baselineB.parts))
        #expect(Set(newer.removedEvents) == Set(events))
        #expect(try await Self.names(in: layout.baselinesDirectory, of: cloud) == newer.parts)
        #expect(newer.baseline.globalCount == max(baselineA.baseline.globalCount, baselineB.baseline.globalCount))

        // A, left with its own ledger, catches up from C's baseline alone.
        var ledgerA = try deviceA.store.loadLedger()
        let caughtUp = try await deviceA.integrator(cloud).integrate(newer.parts, into: &ledgerA, integrated: try deviceA.store.state().integrated)
        #expect(caughtUp.joined.count == 1)
        #expect(ledgerA == overlay)
    }

    @Test func theMergesListingDrivesTheRebaseAndTheJoin() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, aEvents, bEvents) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        let now = Date()
        // B registered two days ago; C forty days ago and silent since.
        for (store, date) in [(Self.b, now - 2 * 86_400), (Self.c, now - 40 * 86_400)] {
            let registration = StoreRegistration(store: store, ensemble: "library", registeredAt: date, library: StoreRegistration.libraryName)
            let url = try localFile(try registration.encoded(), in: deviceA.upload)
            try await cloud.uploadLocalFile(at: url, toPath: layout.path(for: .registration(store: store)))
        }
        let snapshot = try await CloudSnapshot.take(of: cloud, layout: layout)
        let dates = try await snapshot.registrationDates(fileSystem: cloud, layout: layout, directory: deviceA.download, now: now)
        #expect(dates.count == 2)
        #expect(abs((dates[Self.c] ?? now).timeIntervalSince(now - 40 * 86_400)) < 1)

        let suppressed = try await deviceA.rebaser(cloud).rebaseIfNeeded(policy: .default, force: true, suppress: true, snapshot: snapshot,
                                                                          downloadDirectory: deviceA.download, now: now)
        #expect(suppressed == nil)
        let outcome = try #require(try await deviceA.rebaser(cloud).rebaseIfNeeded(
            policy: .default, force: true, snapshot: snapshot, downloadDirectory: deviceA.download, now: now))
        #expect(Set(outcome.removedEvents) == Set((aEvents.prefix(3) + bEvents).map(Self.eventName)))

        // A new device joins from the next listing.
        let deviceC = try Device(Self.c)
        defer { deviceC.close() }
        var overlay = Ledger()
        let joined = try await deviceC.integrator(cloud).integrate(try await CloudSnapshot.take(of: cloud, layout: layout), into: &overlay,
                                                                   integrated: RevisionVector())
        #expect(joined.joined.map(\.summary) == [outcome.baseline])
        #expect(overlay == (try deviceA.store.loadLedger()))
    }

    @Test func aBaselineCoveringRevisionsThisStoreNeverMadeIsAnIdentityCollision() async throws {
        let cloud = try await Self.cloud()
        let (deviceA, _, _) = try await Self.history(cloud)
        defer { deviceA.close() }
        let layout = try Self.layout()
        _ = try await deviceA.rebaser(cloud).rebase(cutoff: RevisionVector(), eventNames: [], baselineNames: [])
        // A second device with A's store ID (a restored backup of A, behind it).
        let copy = try Device(Self.a)
        defer { copy.close() }
        try copy.record([.insert(Self.book(9))])
        var overlay = try copy.store.loadLedger()
        let names = try await Self.names(in: layout.baselinesDirectory, of: cloud)
        let integrated = try copy.store.state().integrated
        let integrator = try copy.integrator(cloud)
        do throws(SyncError) {
            _ = try await integrator.integrate(names, into: &overlay, integrated: integrated)
            Issue.record("a baseline with revisions this store never made was joined")
        } catch {
            guard case let .storeIdentityCollision(storeID) = error else { Issue.record("\(error)"); return }
            #expect(storeID == Self.a.description)
        }
        #expect(overlay == (try copy.store.loadLedger()))
    }
}
