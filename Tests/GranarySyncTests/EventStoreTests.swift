import Foundation
import GranaryStorage
import Testing
@testable import GranarySync

/// The event store on disk: what a reopen keeps, the counters (M2), one commit per step, and the typed
/// refusals of damaged, foreign and future stores.
@Suite struct EventStoreTests {
    static let author = ObjectKey("Author", "a1")

    /// A directory for an event store, with its scratch parent.
    static func storeDirectory() throws -> (scratch: URL, store: URL) {
        let scratch = try makeScratchDirectory()
        return (scratch, scratch.appendingPathComponent("events.granary"))
    }

    /// An event of another store, `revision`, at `count`.
    static func foreign(_ store: StoreID, _ revision: Int64, count: Int64, vector: RevisionVector = RevisionVector(),
                        _ changes: [ObjectChange] = []) -> Event {
        Event(meta: EventMeta(id: EventID(store: store, revision: revision), globalCount: count, vector: vector),
              timestamp: Date(timeIntervalSinceReferenceDate: Double(revision)), changes: changes)
    }

    @Test func reopeningKeepsEventsCountersStateLedgerAndMap() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let own = orderedStores[0], other = orderedStores[1]
        var store = try EventStore.open(at: directory, creatingWith: own)

        let first = try store.addLocalEvent([.insert(Self.author, ["name": .string("Lem")])],
                                            timestamp: Date(timeIntervalSinceReferenceDate: 10))
        let second = try store.addLocalEvent([.update(Self.author, ["name": .string("Stanisław Lem")])],
                                             timestamp: Date(timeIntervalSinceReferenceDate: 11.5))
        try store.markExported([first.id])
        let downloaded = Self.foreign(other, 1, count: 7, [.insert(ObjectKey("Book", "b1"), ["title": .string("Solaris")])])
        #expect(try store.importEvent(downloaded))
        var integrator = LedgerIntegrator()
        for event in [first, second, downloaded] { integrator.receive(event) }
        let token = Data("token-1".utf8)
        try store.commit(EventStoreStep(integrated: [downloaded.id], ledgerObjects: Array(integrator.ledger.objects.values),
                                        localKeys: [Self.author: 41, ObjectKey("Book", "b1"): 41],
                                        historyToken: token, leechState: .leeched))
        let stateBefore = try store.state()
        try store.close()

        store = try EventStore.open(at: directory)
        let state = try store.state()
        #expect(state == stateBefore)
        #expect(state.storeID == own)
        #expect(state.nextRevision == 3)
        #expect(state.maxGlobalCount == 7)
        #expect(state.integrated == RevisionVector([own: 2, other: 1]))
        #expect(state.historyToken == token)
        #expect(state.leechState == .leeched)
        #expect(try store.events(withStatus: .exported) == [first])
        #expect(try store.events(withStatus: .localUnexported) == [second])
        #expect(try store.events(withStatus: .integrated) == [downloaded])
        #expect(try store.events(withStatus: .downloaded).isEmpty)
        #expect(try store.loadLedger() == integrator.ledger)
        #expect(try store.localKey(for: Self.author) == 41)
        #expect(try store.objectKey(entity: "Book", localKey: 41) == ObjectKey("Book", "b1"))
        #expect(try store.objectKey(entity: "Book", localKey: 42) == nil)
        try store.close()
    }

    @Test func aLedgerWhoseLastMemberWasRemovedReadsBackEqual() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let book = ObjectKey("Book", "b1"), tag = ObjectKey("Tag", "t1")
        var device = LedgerTestDevice(store: orderedStores[1])
        let events = [device.record([.insert(tag), .insert(book, adds: ["tags": [.member(tag)]])]),
                      device.record([.update(book, removes: ["tags": [tag]])])]
        let ledger = integrated(events).ledger
        // Rows hold members, not relationships: an empty relationship entry could not be read back.
        #expect(ledger.object(book)?.members["tags"] == nil)
        let store = try EventStore.open(at: directory)
        try store.saveLedger(ledger)
        #expect(try store.loadLedger() == ledger)
        try store.saveLedger(Ledger())
        #expect(try store.loadLedger() == Ledger())
    }

    @Test func aRegisterRowOfAKeyOutsideTheLedgerIsATypedError() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        try EventStore.open(at: directory).close()
        let engine = try Engine.open(.directory(directory))
        let key = try engine.write { tx in
            try tx.insert(["Book", "b9", false, "title", .bytes(Array(#"{"candidates":[]}"#.utf8))], into: "register")
        }
        try engine.close()
        let store = try EventStore.open(at: directory)
        do throws(EventStoreError) {
            _ = try store.loadLedger()
            Issue.record("a register of a key outside the ledger was loaded")
        } catch {
            guard case let .damaged(_, table, rowKey, reason) = error else { Issue.record("unexpected \(error)"); return }
            #expect(table == "register" && rowKey == key)
            #expect(reason.contains("Book/b9"), "\(reason)")
        }
    }

    @Test func countersNeverGoBackAfterReopening() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        var store = try EventStore.open(at: directory, creatingWith: orderedStores[0])
        try store.addLocalEvent([])
        #expect(try store.importEvent(Self.foreign(orderedStores[1], 1, count: 100)))
        // A lower count imported later does not lower the maximum.
        #expect(try store.importEvent(Self.foreign(orderedStores[2], 1, count: 5)))
        try store.close()

        store = try EventStore.open(at: directory)
        let next = try store.addLocalEvent([])
        #expect(next.meta.id.revision == 2)
        #expect(next.meta.globalCount == 101)
        try store.close()
        store = try EventStore.open(at: directory)
        #expect(try store.nextLocalMeta().globalCount == 102)
        #expect(try store.nextLocalMeta().id.revision == 3)
        try store.close()
    }

    @Test func importingAKnownEventChangesNothing() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        let event = Self.foreign(orderedStores[1], 1, count: 3)
        #expect(try store.importEvent(event))
        try store.commit(EventStoreStep(integrated: [event.id]))
        #expect(try store.importEvent(event) == false)
        #expect(try store.status(of: event.id) == .integrated)
        #expect(try store.status(of: EventID(store: orderedStores[1], revision: 2)) == nil)
    }

    @Test func eachStoresNewestEventIsKeptAndRebuiltForStoresMadeWithoutItsTable() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let own = orderedStores[0], other = orderedStores[1]
        var store = try EventStore.open(at: directory, creatingWith: own)
        let local = try store.addLocalEvent([.insert(Self.author)], timestamp: Date(timeIntervalSinceReferenceDate: 50))
        #expect(try store.importEvent(Self.foreign(other, 2, count: 7, vector: RevisionVector([own: 1]))))
        // An older event of the same store arriving later does not replace the newer one.
        #expect(try store.importEvent(Self.foreign(other, 1, count: 4)))
        var newest = try store.newestEventPerStore()
        #expect(newest[own]?.meta == local.meta)
        #expect(newest[own]?.timestamp == Date(timeIntervalSinceReferenceDate: 50))
        #expect(newest[other]?.meta.id.revision == 2)
        #expect(newest[other]?.meta.vector == RevisionVector([own: 1]))

        // A store written before the table existed: rebuilt from the events on first use, then kept.
        try store.engine.write { tx in try tx.dropTable(EventStoreSchema.NewestEvent.name) }
        try store.close()
        store = try EventStore.open(at: directory)
        newest = try store.newestEventPerStore()
        #expect(newest[own]?.meta == local.meta)
        #expect(newest[other]?.meta.id.revision == 2)
        #expect(try store.importEvent(Self.foreign(other, 3, count: 9)))
        #expect(try store.newestEventPerStore()[other]?.meta.id.revision == 3)
        try store.close()
    }

    @Test func downloadedEventsKeepTheBytesTheyArrivedWithAndReadBackEqual() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        let first = Self.foreign(orderedStores[1], 1, count: 3, [.insert(Self.author, ["name": .string("Lem")])])
        let second = Self.foreign(orderedStores[1], 2, count: 4, [.update(Self.author, ["name": .string("Le Guin")])])
        // The arrived bytes of `first` with a space the canonical encoding never writes: kept as they are.
        var arrived = try EventPayloadCoding.encode(first)
        arrived.append(0x20)
        let imported = try store.importDownloaded([first, second], payloads: [first.id: arrived],
                                                  files: [RemoteFileRecord(name: "x.gsevent", kind: .eventPart, size: 1)])
        #expect(imported == [first.id, second.id])
        #expect(try store.storedPayload(of: first.id)?.event.payload == arrived)
        #expect(try store.storedPayload(of: second.id)?.event.payload == EventPayloadCoding.encode(second))
        // The first read takes the events kept from the import, the second decodes the rows: the same.
        #expect(try store.events(withStatus: .downloaded) == [first, second])
        #expect(store.recentDownloads.withLock { $0.isEmpty })
        #expect(try store.events(withStatus: .downloaded) == [first, second])
        // Already stored: not imported again, not kept again.
        #expect(try store.importDownloaded([first], files: []) == [])
        #expect(store.recentDownloads.withLock { $0.isEmpty })
    }

    @Test func aStepThatFailsPartWayWritesNothing() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        let downloaded = Self.foreign(orderedStores[1], 1, count: 3, [.insert(Self.author)])
        try store.importEvent(downloaded)
        var integrator = LedgerIntegrator()
        integrator.receive(downloaded)
        let before = try store.state()
        // Two keys of one entity mapped to one local key: the unique index refuses the second, after the
        // status, ledger and first mapping were written in the same transaction.
        #expect(throws: EventStoreError.self) {
            try store.commit(EventStoreStep(integrated: [downloaded.id], ledgerObjects: Array(integrator.ledger.objects.values),
                                            localKeys: [Self.author: 1, ObjectKey("Author", "a2"): 1],
                                            historyToken: Data([1]), leechState: .registered))
        }
        #expect(try store.state() == before)
        #expect(try store.status(of: downloaded.id) == .downloaded)
        #expect(try store.loadLedger() == Ledger())
        #expect(try store.localKey(for: Self.author) == nil)

        // Marking exported is all or nothing too: the second ID is not a local event.
        let local = try store.addLocalEvent([])
        #expect(throws: EventStoreError.wrongStatus(path: directory.path, id: downloaded.id, found: .downloaded,
                                                    expected: .localUnexported)) {
            try store.markExported([local.id, downloaded.id])
        }
        #expect(try store.status(of: local.id) == .localUnexported)
        #expect(throws: EventStoreError.unknownEvent(path: directory.path, id: EventID(store: orderedStores[3], revision: 1))) {
            try store.commit(EventStoreStep(integrated: [EventID(store: orderedStores[3], revision: 1)]))
        }
    }

    @Test func aLocalEventMadeFromOldCountersIsRefused() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        let stale = Event(meta: try store.nextLocalMeta(), changes: [])
        try store.addLocalEvent([])
        #expect(throws: EventStoreError.staleLocalEvent(path: directory.path, id: stale.id, nextRevision: 2)) {
            try store.recordLocalEvent(stale)
        }
        #expect(try store.events(withStatus: .localUnexported).count == 1)
    }

    @Test func aSecondOpenOfTheSameDirectoryIsATypedError() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        do throws(EventStoreError) {
            _ = try EventStore.open(at: directory)
            Issue.record("a second open succeeded")
        } catch {
            guard case .storage(path: directory.path, operation: "open", reason: _) = error else {
                Issue.record("unexpected \(error)"); return
            }
        }
        try store.close()
    }

    @Test func aStoreOfANewerSchemaVersionIsRefused() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        try EventStore.open(at: directory).close()
        try Self.rewriteMetadata(directory, schemaVersion: EventStoreSchema.versionPrefix + "2")
        #expect(throws: EventStoreError.newerVersion(path: directory.path, found: 2, supported: 1)) {
            _ = try EventStore.open(at: directory)
        }
    }

    @Test func anEngineStoreOfAnotherKindIsRefused() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let engine = try Engine.open(.directory(directory))
        try engine.write { tx in _ = try tx.createTable(TableSchema(name: "book", columns: [Column("title", .string)])) }
        try engine.close()
        #expect(throws: EventStoreError.notAnEventStore(path: directory.path, found: nil)) {
            _ = try EventStore.open(at: directory)
        }
    }

    @Test func aDamagedStateRowIsATypedError() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        try EventStore.open(at: directory).close()
        let engine = try Engine.open(.directory(directory))
        try engine.write { tx in
            var row = try #require(try tx.row(in: "state", key: 1))
            row.values[EventStoreSchema.State.storeID] = "not-a-store"
            try tx.update(row, in: "state", key: 1)
        }
        try engine.close()
        do throws(EventStoreError) {
            _ = try EventStore.open(at: directory)
            Issue.record("a store with a damaged state row opened")
        } catch {
            guard case let .damaged(path, table, key, reason) = error else { Issue.record("unexpected \(error)"); return }
            #expect(path == directory.path && table == "state" && key == 1)
            #expect(reason.contains("not-a-store"))
        }
    }

    @Test func aDamagedSnapshotIsATypedError() throws {
        let (scratch, directory) = try Self.storeDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: directory)
        for _ in 0..<20 { try store.addLocalEvent([.insert(Self.author, ["name": .string(String(repeating: "x", count: 200))])]) }
        try store.checkpoint()
        try store.close()
        let snapshot = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .first { $0.hasSuffix(".snap") })
        let url = directory.appendingPathComponent(snapshot)
        var bytes = try Data(contentsOf: url)
        var g = SplitMix(seed: 21)
        // Past the header, so the damage is in checksummed content rather than a version field.
        let offset = Int.random(in: 64..<bytes.count, using: &g)
        bytes[offset] ^= 0xFF
        try bytes.write(to: url)
        do throws(EventStoreError) {
            _ = try EventStore.open(at: directory)
            Issue.record("a store with a damaged snapshot (byte \(offset)) opened")
        } catch {
            guard case let .storage(path, operation, reason) = error else { Issue.record("unexpected \(error)"); return }
            #expect(path == directory.path && operation == "open")
            #expect(reason.contains(snapshot), "\(reason)")
        }
    }

    static func rewriteMetadata(_ directory: URL, schemaVersion: String) throws {
        let engine = try Engine.open(.directory(directory))
        try engine.write { tx in
            var metadata = tx.metadata
            metadata.schemaVersion = schemaVersion
            try tx.setMetadata(metadata)
        }
        try engine.close()
    }
}
