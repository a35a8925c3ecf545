import Foundation
import Granary
import Testing
@testable import GranarySync

/// Capture from persistent history on real durable stores: one event per window (M30), the ensemble's
/// own saves skipped (M29), the re-insert of a global ID (M13), and after every capture the ledger's
/// projection equal to the store's graph, which is what the other devices will build.
@Suite struct CaptureTests {
    typealias Fixture = CaptureFixture

    static func author(_ gid: String) -> ObjectKey { ObjectKey("Author", gid) }
    static func book(_ gid: String) -> ObjectKey { ObjectKey("Book", gid) }
    static func tag(_ gid: String) -> ObjectKey { ObjectKey("Tag", gid) }

    @Test func m30TwoSavesThenACaptureRecordOneEventHoldingBoth() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Le Guin"], in: $0) }
        try device.save { context in
            try device.insert("Book", [Fixture.gid: "b1", "title": "The Dispossessed",
                                       "author": try device.object("Author", "a1", in: context)], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.map(\.key) == [Self.author("a1"), Self.book("b1")])
        #expect(event.change(Self.author("a1"))?.kind == .insert)
        #expect(event.change(Self.author("a1"))?.attributes == [Fixture.gid: .string("a1"), "name": .string("Le Guin")],
                "every synced attribute, and no transient")
        let book = try #require(event.change(Self.book("b1")))
        #expect(book.kind == .insert)
        #expect(book.toOnes == ["author": Self.author("a1")])
        #expect(book.attributes["year"] == .some(.integer(0)))
        #expect(try device.localEvents() == [event])
        #expect(try device.ledgerProjection() == device.storeGraph())
        #expect(try device.recorder.capture() == nil, "nothing saved since")
        #expect(try device.localEvents().count == 1)
    }

    @Test func m30SaveCaptureSaveCaptureRecordTwoEventsWithOnlyWhatChanged() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Book", [Fixture.gid: "b1", "title": "Kindred", "year": Int64(1979)], in: $0) }
        let first = try #require(try device.recorder.capture())
        try device.save { try device.object("Book", "b1", in: $0).setValue("Kindred (2nd ed.)", forKey: "title") }
        let second = try #require(try device.recorder.capture())
        #expect(second.changes == [ObjectChange(key: Self.book("b1"), kind: .update, attributes: ["title": .string("Kindred (2nd ed.)")])])
        #expect(second.meta.id.revision == first.meta.id.revision + 1)
        #expect(second.meta.globalCount > first.meta.globalCount)
        #expect(try device.localEvents() == [first, second])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func m30AWindowOfUnsyncedChangesRecordsNothingButMovesTheToken() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Lem"], in: $0) }
        _ = try device.recorder.capture()
        let tokenBefore = try device.eventStore.state().historyToken
        // An excluded entity, and a transient property.
        try device.save { try device.insert("Scratch", ["value": "local only"], in: $0) }
        try device.save { try device.object("Author", "a1", in: $0).setValue("summary", forKey: "cachedSummary") }
        #expect(try device.recorder.capture() == nil)
        #expect(try device.localEvents().count == 1)
        let tokenAfter = try device.eventStore.state().historyToken
        #expect(tokenAfter != tokenBefore)
        let current = try #require(device.sync.currentPersistentHistoryToken(fromStores: [device.syncStore]))
        #expect(try device.recorder.history.decode(tokenAfter) == current)
    }

    @Test func m27ExcludedPropertiesAreNeverSent() throws {
        var configuration = Fixture.configuration
        configuration.excludedProperties = ["Book.title", "Book.tags"]
        let device = try CaptureDevice(configuration: configuration)
        try device.save { context in
            let book = try device.insert("Book", [Fixture.gid: "b1", "title": "Local title", "year": Int64(1961)], in: context)
            try book.add([try device.insert("Tag", [Fixture.gid: "t1"], in: context)], toRelationship: "tags")
        }
        let inserted = try #require(try device.recorder.capture())
        let book = try #require(inserted.change(Self.book("b1")))
        #expect(book.attributes.keys.sorted() == [Fixture.gid, "year"])
        #expect(book.memberAdds.isEmpty)
        try device.save { try device.object("Book", "b1", in: $0).setValue("Changed", forKey: "title") }
        #expect(try device.recorder.capture() == nil, "a window changing only an excluded property records nothing")
    }

    @Test func m29TheEnsemblesOwnMergeSavesAreNeverCaptured() throws {
        let device = try CaptureDevice()
        try device.save(author: SyncConstants.mergeAuthor) {
            try device.insert("Author", [Fixture.gid: "merged", "name": "From elsewhere"], in: $0)
        }
        #expect(try device.recorder.capture() == nil)
        try device.save(author: SyncConstants.mergeAuthor) { try device.object("Author", "merged", in: $0).setValue("Renamed", forKey: "name") }
        try device.save(author: "importer") { try device.insert("Author", [Fixture.gid: "local", "name": "Mine"], in: $0) }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.map(\.key) == [Self.author("local")], "only the app's save; other authors are captured")
    }

    @Test func objectsTheMapLacksAreSentAsInsertsWhenUpdatedOrNamed() throws {
        let device = try CaptureDevice()
        // Rows no capture saw (saved under the merge author, as a merge whose finalize never ran would).
        try device.save(author: SyncConstants.mergeAuthor) { context in
            try device.insert("Author", [Fixture.gid: "orphan", "name": "Unmapped"], in: context)
            try device.insert("Tag", [Fixture.gid: "t-orphan"], in: context)
        }
        #expect(try device.recorder.capture() == nil)
        try device.save { context in
            try device.object("Author", "orphan", in: context).setValue("Edited", forKey: "name")
            try device.insert("Book", [Fixture.gid: "b1", "tags": Set([try device.object("Tag", "t-orphan", in: context)])], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.change(Self.author("orphan"))?.kind == .insert, "updated, never sent: sent whole")
        #expect(event.change(Self.author("orphan"))?.attributes["name"] == .some(.string("Edited")))
        #expect(event.change(Self.tag("t-orphan"))?.kind == .insert, "named by a sent relationship")
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func insertThenDeleteInOneWindowSendsNothingAndUpdateThenDeleteSendsTheDelete() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "kept", "name": "K"], in: $0) }
        _ = try device.recorder.capture()
        try device.save { try device.insert("Author", [Fixture.gid: "fleeting", "name": "F"], in: $0) }
        try device.save { $0.delete(try device.object("Author", "fleeting", in: $0)) }
        try device.save { try device.object("Author", "kept", in: $0).setValue("K2", forKey: "name") }
        try device.save { $0.delete(try device.object("Author", "kept", in: $0)) }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes == [ObjectChange(key: Self.author("kept"), kind: .delete)])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func m13DeleteAndReinsertOfOneGlobalIDInOneWindowIsOneReplacingInsert() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Old"], in: $0) }
        let first = try #require(try device.recorder.capture())
        let oldKey = try #require(try device.eventStore.localKey(for: Self.author("a1")))
        try device.save { context in
            context.delete(try device.object("Author", "a1", in: context))
            try device.insert("Author", [Fixture.gid: "a1", "name": "New"], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.count == 1)
        let change = try #require(event.change(Self.author("a1")))
        #expect(change.kind == .replacingInsert)
        #expect(change.attributes["name"] == .some(.string("New")))
        let newKey = try #require(try device.eventStore.localKey(for: Self.author("a1")))
        #expect(newKey != oldKey, "the key is mapped to the new row")
        let ledger = try device.eventStore.loadLedger()
        let incarnations = try #require(ledger.object(Self.author("a1"))?.incarnations)
        #expect(incarnations.map(\.insert.id) == [first.id, event.id])
        #expect(incarnations.map(\.isKilled) == [true, false], "the replacing insert kills the one its device saw")
        #expect(try device.ledgerProjection() == device.storeGraph())

        // Across two saves of one window too.
        try device.save { $0.delete(try device.object("Author", "a1", in: $0)) }
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Newer"], in: $0) }
        let third = try #require(try device.recorder.capture())
        #expect(third.changes.map(\.kind) == [.replacingInsert])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func aDeleteInOneWindowAndAnInsertInTheNextIsADeleteThenAnInsert() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Old"], in: $0) }
        _ = try device.recorder.capture()
        try device.save { $0.delete(try device.object("Author", "a1", in: $0)) }
        #expect(try device.recorder.capture()?.changes.map(\.kind) == [.delete])
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Again"], in: $0) }
        #expect(try device.recorder.capture()?.changes.map(\.kind) == [.insert])
        #expect(try device.ledgerProjection() == device.storeGraph(), "the key is remapped to the new row")
    }

    // MARK: Relationships

    @Test func manyToManyChangesAreMemberDeltasOnTheCanonicalSideWhicheverSideWasSet() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let book = try device.insert("Book", [Fixture.gid: "b1", "title": "Solaris"], in: context)
            let t1 = try device.insert("Tag", [Fixture.gid: "t1", "name": "sf"], in: context)
            try device.insert("Tag", [Fixture.gid: "t2", "name": "classic"], in: context)
            try book.add([t1], toRelationship: "tags")
        }
        let inserted = try #require(try device.recorder.capture())
        #expect(inserted.change(Self.book("b1"))?.memberAdds == ["tags": [.init(member: Self.tag("t1"))]])
        #expect(inserted.change(Self.tag("t1"))?.memberAdds == [:], "Tag.books is derived, never sent")

        // Set from the non-canonical side: sent as the book's add.
        try device.save { context in
            try device.object("Tag", "t2", in: context).add([try device.object("Book", "b1", in: context)], toRelationship: "books")
        }
        let added = try #require(try device.recorder.capture())
        #expect(added.changes == [ObjectChange(key: Self.book("b1"), kind: .update, memberAdds: ["tags": [.init(member: Self.tag("t2"))]])])

        try device.save { context in
            try device.object("Book", "b1", in: context).remove([try device.object("Tag", "t1", in: context)], fromRelationship: "tags")
        }
        let removed = try #require(try device.recorder.capture())
        #expect(removed.changes == [ObjectChange(key: Self.book("b1"), kind: .update, memberRemoves: ["tags": [Self.tag("t1")]])])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func oneToManyLinksSetOnTheToManySideAreSentAsTheMembersToOnes() throws {
        let device = try CaptureDevice()
        try device.save { context in
            try device.insert("Author", [Fixture.gid: "a1", "name": "Butler"], in: context)
            try device.insert("Author", [Fixture.gid: "a2", "name": "Delany"], in: context)
            try device.insert("Book", [Fixture.gid: "b1", "title": "Kindred"], in: context)
            try device.insert("Book", [Fixture.gid: "b2", "title": "Dhalgren"], in: context)
        }
        _ = try device.recorder.capture()
        try device.save { context in
            try device.object("Author", "a1", in: context).add([try device.object("Book", "b1", in: context)], toRelationship: "books")
        }
        let linked = try #require(try device.recorder.capture())
        #expect(linked.changes == [ObjectChange(key: Self.book("b1"), kind: .update, toOnes: ["author": Self.author("a1")])])
        // Moving b1 to a2 through a2's set, and b2 in with it: one write per book whose author changed.
        try device.save { context in
            try device.object("Author", "a2", in: context).add([try device.object("Book", "b1", in: context),
                                                                 try device.object("Book", "b2", in: context)], toRelationship: "books")
        }
        let moved = try #require(try device.recorder.capture())
        #expect(moved.changes == [ObjectChange(key: Self.book("b1"), kind: .update, toOnes: ["author": Self.author("a2")]),
                                  ObjectChange(key: Self.book("b2"), kind: .update, toOnes: ["author": Self.author("a2")])])
        try device.save { context in
            try device.object("Author", "a2", in: context).remove([try device.object("Book", "b2", in: context)], fromRelationship: "books")
        }
        let unlinked = try #require(try device.recorder.capture())
        #expect(unlinked.changes == [ObjectChange(key: Self.book("b2"), kind: .update, toOnes: ["author": ObjectKey?.none])])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func aOneToOneSetOnItsDerivedSideIsSentOnTheCanonicalSide() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let person = try device.insert("Person", [Fixture.gid: "p1", "name": "Ann"], in: context)
            try device.insert("Person", [Fixture.gid: "p2", "name": "Bo"], in: context)
            let passport = try device.insert("Passport", [Fixture.gid: "x1", "number": "X-1"], in: context)
            try person.setValue(passport, forKey: "passport")
        }
        let inserted = try #require(try device.recorder.capture())
        #expect(inserted.change(ObjectKey("Passport", "x1"))?.toOnes == ["holder": ObjectKey("Person", "p1")])
        #expect(inserted.change(ObjectKey("Person", "p1"))?.toOnes == [:])
        try device.save { context in
            try device.object("Person", "p2", in: context).setValue(try device.object("Passport", "x1", in: context), forKey: "passport")
        }
        let moved = try #require(try device.recorder.capture())
        #expect(moved.changes == [ObjectChange(key: ObjectKey("Passport", "x1"), kind: .update, toOnes: ["holder": ObjectKey("Person", "p2")])])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func m19OrderedMembersAreAddedWithTheirIndexAndMovesAreNewAdds() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let books = try (1...3).map { try device.insert("Book", [Fixture.gid: "b\($0)", "title": "T\($0)"], in: context) }
            let shelf = try device.insert("Shelf", [Fixture.gid: "s1", "label": "Top"], in: context)
            try shelf.setValue(Array(books.prefix(2)), forKey: "books")
        }
        let inserted = try #require(try device.recorder.capture())
        #expect(inserted.change(ObjectKey("Shelf", "s1"))?.memberAdds
                == ["books": [.init(member: Self.book("b1"), orderKey: 0), .init(member: Self.book("b2"), orderKey: 1)]])
        try device.save { context in
            let shelf = try device.object("Shelf", "s1", in: context)
            try shelf.setValue(try ["b3", "b2", "b1"].map { try device.object("Book", $0, in: context) }, forKey: "books")
        }
        let moved = try #require(try device.recorder.capture())
        #expect(moved.changes == [ObjectChange(key: ObjectKey("Shelf", "s1"), kind: .update, memberAdds: ["books": [
            .init(member: Self.book("b3"), orderKey: 0), .init(member: Self.book("b1"), orderKey: 2)]])],
                "b2 kept its index; b1 moved and b3 is new")
        #expect(try device.ledgerProjection() == device.storeGraph())
        try device.save { context in
            let shelf = try device.object("Shelf", "s1", in: context)
            try shelf.setValue(try ["b3", "b2"].map { try device.object("Book", $0, in: context) }, forKey: "books")
        }
        let removed = try #require(try device.recorder.capture())
        #expect(removed.changes == [ObjectChange(key: ObjectKey("Shelf", "s1"), kind: .update, memberRemoves: ["books": [Self.book("b1")]])])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func deletingAMemberOfADerivedSideSendsTheDeleteOnly() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let author = try device.insert("Author", [Fixture.gid: "a1"], in: context)
            try device.insert("Book", [Fixture.gid: "b1", "author": author], in: context)
            try device.insert("Book", [Fixture.gid: "b2", "author": author], in: context)
        }
        _ = try device.recorder.capture()
        try device.save { $0.delete(try device.object("Book", "b1", in: $0)) }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes == [ObjectChange(key: Self.book("b1"), kind: .delete)],
                "the author's books lost b1 because b1 is gone: no write of b2's unchanged author")
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    /// The changes a window holding only the non-canonical side's reports assembles to: what capture
    /// sends if history named a link on the side that does not store it (§8.1 step 6).
    static func assembleReportsOfNonCanonicalSide(_ device: CaptureDevice, entity: String) throws -> [ObjectChange] {
        let state = try device.eventStore.state()
        let transactions = try device.recorder.history.transactions(after: try device.recorder.history.decode(state.historyToken))
        var window = CaptureWindow()
        for transaction in transactions {
            for change in transaction.changes where change.changedObjectID.entityName == entity {
                window.fold(change.changedObjectID, change.changeType, change.updatedProperties ?? [])
            }
        }
        #expect(!window.isEmpty)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: device.sync)
        let reader = StoreObjectReader(context: context, store: device.syncStore, eventStore: device.eventStore)
        let assembler = CaptureAssembler(reader: reader, schema: device.schema, identifiers: device.identifiers,
                                         slice: LedgerSlice(eventStore: device.eventStore))
        return try context.performAndWait { try assembler.assemble(window).changes }
    }

    @Test func aLinkReportedOnlyOnItsNonCanonicalSideIsTranslatedToTheCanonicalSide() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let author = try device.insert("Author", [Fixture.gid: "a1"], in: context)
            try device.insert("Book", [Fixture.gid: "b1", "author": author], in: context)
            try device.insert("Book", [Fixture.gid: "b2"], in: context)
            try device.insert("Tag", [Fixture.gid: "t1"], in: context)
            try device.insert("Person", [Fixture.gid: "p1"], in: context)
            try device.insert("Passport", [Fixture.gid: "x1"], in: context)
        }
        _ = try device.recorder.capture()
        // One-to-many from the to-many side: b2 joins, b1 leaves. A member leaving is not looked up from
        // the author's side (the ledger has no index of to-one targets): b1's own row changed, and history
        // reports it there (checked below, with the Book reports in the window).
        try device.save { context in
            let author = try device.object("Author", "a1", in: context)
            try author.remove([try device.object("Book", "b1", in: context)], fromRelationship: "books")
            try author.add([try device.object("Book", "b2", in: context)], toRelationship: "books")
        }
        #expect(try Self.assembleReportsOfNonCanonicalSide(device, entity: "Author") == [
            ObjectChange(key: Self.book("b2"), kind: .update, toOnes: ["author": Self.author("a1")]),
        ])
        #expect(try device.recorder.capture()?.changes == [
            ObjectChange(key: Self.book("b1"), kind: .update, toOnes: ["author": ObjectKey?.none]),
            ObjectChange(key: Self.book("b2"), kind: .update, toOnes: ["author": Self.author("a1")]),
        ])
        _ = try device.recorder.capture()
        // Many-to-many from the derived side.
        try device.save { context in
            try device.object("Tag", "t1", in: context).add([try device.object("Book", "b2", in: context)], toRelationship: "books")
        }
        #expect(try Self.assembleReportsOfNonCanonicalSide(device, entity: "Tag") == [
            ObjectChange(key: Self.book("b2"), kind: .update, memberAdds: ["tags": [.init(member: Self.tag("t1"))]]),
        ])
        _ = try device.recorder.capture()
        try device.save { context in
            try device.object("Tag", "t1", in: context).remove([try device.object("Book", "b2", in: context)], fromRelationship: "books")
        }
        #expect(try Self.assembleReportsOfNonCanonicalSide(device, entity: "Tag") == [
            ObjectChange(key: Self.book("b2"), kind: .update, memberRemoves: ["tags": [Self.tag("t1")]]),
        ])
        _ = try device.recorder.capture()
        // One-to-one from the derived side.
        try device.save { context in
            try device.object("Person", "p1", in: context).setValue(try device.object("Passport", "x1", in: context), forKey: "passport")
        }
        #expect(try Self.assembleReportsOfNonCanonicalSide(device, entity: "Person") == [
            ObjectChange(key: ObjectKey("Passport", "x1"), kind: .update, toOnes: ["holder": ObjectKey("Person", "p1")]),
        ])
        _ = try device.recorder.capture()
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    // MARK: Values

    @Test func m15EveryAttributeTypeIsReadExactlyFromARealStore() throws {
        let device = try CaptureDevice()
        let nan = Double(bitPattern: 0x7FF8_0000_0000_0ABC)
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let url = try #require(URL(string: "https://example.com/a%20b?q=1"))
        let decimal = try #require(Decimal(string: "12345678901234567890.123456789", locale: Locale(identifier: "en_US_POSIX")))
        try device.save { context in
            try device.insert("Sample", ["i16": Int16.min, "i32": Int32.max, "i64": Int64.min, "double": nan,
                                         "float": -Float.infinity, "decimal": decimal, "flag": false, "text": "Ærø ✓ \u{0}",
                                         "date": date, "bytes": Data([0, 255, 7]), "uuid": uuid, "link": url,
                                         "archived": ["a", "b"]], in: context)
            try device.insert("Sample", ["double": -0.0, "float": Float(bitPattern: 0x7FC0_0001)], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.count == 2)
        let archived = try #require(try device.model.entity(named: "Sample")?.attributesByName["archived"]?.storageValue(for: ["a", "b"]))
        guard case let .bytes(archivedBytes) = archived else { Issue.record("a transformable is stored as bytes"); return }
        let expected: [String: SyncValue?] = [
            "i16": .integer(Int64(Int16.min)), "i32": .integer(Int64(Int32.max)), "i64": .integer(.min), "double": .double(nan),
            "float": .float(-.infinity), "decimal": .decimal(decimal), "flag": .boolean(false), "text": .string("Ærø ✓ \u{0}"),
            "date": .date(date), "bytes": .data(Data([0, 255, 7])), "uuid": .uuid(uuid), "link": .uri(url),
            "archived": .data(Data(archivedBytes)),
        ]
        let full = try #require(event.changes.first { $0.attributes["i64"] != .some(nil) })
        #expect(full.attributes == expected)
        let sparse = try #require(event.changes.first { $0.attributes["i64"] == .some(nil) })
        #expect(sparse.attributes["double"] == .some(.double(-0.0)), "−0 is not 0")
        #expect(sparse.attributes["double"] != .some(.double(0.0)))
        #expect(sparse.attributes["float"] == .some(.float(Float(bitPattern: 0x7FC0_0001))), "a NaN keeps its payload")
        #expect(sparse.attributes["text"] == .some(nil), "a missing optional value is sent as null")
        #expect(sparse.attributes.count == expected.count)
        // Both objects have random IDs: Sample has no identifier attribute.
        #expect(event.changes.allSatisfy { UUID(uuidString: $0.key.globalID)?.uuidString == $0.key.globalID })
        // And the file round trip keeps every bit.
        let bytes = try EventPayloadCoding.encode(event)
        #expect(try EventPayloadCoding.decode(Event.self, from: bytes, name: "capture") == event)
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    // MARK: Races and reopening

    @Test func aSaveDuringCaptureIsCapturedAgainNextTimeAndNeverLost() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Book", [Fixture.gid: "b1", "title": "Draft"], in: $0) }
        try device.save { try device.insert("Book", [Fixture.gid: "gone", "title": "Short-lived"], in: $0) }
        device.recorder.afterReadingHistory = {
            // After the window's history was read: an update of a row in the window, a new object, and
            // the delete of an object the window inserted.
            _ = try? device.save { context in
                try device.object("Book", "b1", in: context).setValue("Final", forKey: "title")
                try device.insert("Book", [Fixture.gid: "b2", "title": "Later"], in: context)
                context.delete(try device.object("Book", "gone", in: context))
                // A new object that a row of the window now names: sent with it, under its own ID.
                try device.object("Book", "b1", in: context)
                    .setValue(try device.insert("Author", [Fixture.gid: "a9", "name": "New"], in: context), forKey: "author")
            }
        }
        let first = try #require(try device.recorder.capture())
        device.recorder.afterReadingHistory = nil
        #expect(first.change(Self.book("b1"))?.attributes["title"] == .some(.string("Final")), "rows are read as they are now")
        #expect(first.change(Self.book("gone")) == nil, "its row is gone: skipped, and its delete is in the next window")
        #expect(first.change(Self.book("b2")) == nil, "not in the window")
        #expect(first.change(Self.book("b1"))?.toOnes["author"] == .some(Self.author("a9")))
        #expect(first.change(Self.author("a9"))?.kind == .insert, "named by a row of the window, so sent with it")
        let second = try #require(try device.recorder.capture())
        #expect(second.change(Self.book("b2"))?.kind == .insert)
        #expect(second.change(Self.book("b1"))?.attributes["title"] == .some(.string("Final")), "captured again: re-sent")
        #expect(second.change(Self.book("gone")) == nil, "never sent, so its delete is dropped")
        #expect(second.change(Self.author("a9"))?.kind == .update, "already sent: its insert is not sent twice")
        #expect(try device.ledgerProjection() == device.storeGraph())
        #expect(try device.recorder.capture() == nil)
    }

    @Test func reopeningTheEventStoreKeepsTheTokenSoNothingIsCapturedTwice() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1"], in: $0) }
        let first = try #require(try device.recorder.capture())
        try device.reopenEventStore()
        #expect(try device.recorder.capture() == nil)
        try device.save { try device.object("Author", "a1", in: $0).setValue("Named", forKey: "name") }
        let second = try #require(try device.recorder.capture())
        #expect(second.changes.map(\.kind) == [.update], "the map survived: a1 is known")
        #expect(second.meta.id.revision == first.meta.id.revision + 1)
        #expect(try device.ledgerProjection() == device.storeGraph())
    }
}
