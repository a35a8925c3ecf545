import Foundation
import Granary
import Synchronization
import Testing
@testable import GranarySync

/// Where new objects get their global IDs (§7): the delegate first, then a `Syncable` key or the
/// configured attribute, random otherwise; misconfiguration is a typed error, never a crash.
@Suite struct GlobalIdentifierTests {
    typealias Fixture = CaptureFixture

    @Test func eachSourceNamesTheObjectsOfItsEntities() throws {
        let device = try CaptureDevice()
        let noteID = UUID()
        try device.save { context in
            try device.insert("Author", [Fixture.gid: "author-from-attribute"], in: context)
            try device.insert("Note", ["noteID": noteID, "text": "syncable"], in: context)
            try device.insert("Sample", ["text": "no identifier attribute"], in: context)
        }
        let event = try #require(try device.recorder.capture())
        let keys = Set(event.changes.map(\.key))
        #expect(keys.contains(ObjectKey("Author", "author-from-attribute")))
        #expect(keys.contains(ObjectKey("Note", noteID.uuidString)), "a UUID attribute gives its uppercase text")
        let sample = try #require(event.changes.first { $0.key.entity == "Sample" })
        #expect(UUID(uuidString: sample.key.globalID)?.uuidString == sample.key.globalID, "random: an uppercase UUID")
        #expect(device.identifiers.rules == ["Author": .attribute(Fixture.gid), "Book": .attribute(Fixture.gid),
                                             "Tag": .attribute(Fixture.gid), "Shelf": .attribute(Fixture.gid),
                                             "Person": .attribute(Fixture.gid), "Passport": .attribute(Fixture.gid),
                                             "Note": .attribute("noteID"), "Sample": .random, "Scratch": .random])
    }

    @Test func theIDIsFixedAtTheFirstCaptureAndAChangedAttributeIsAPlainValue() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Lem"], in: $0) }
        _ = try device.recorder.capture()
        try device.save { try device.object("Author", "a1", in: $0).setValue("a1-renamed", forKey: Fixture.gid) }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes == [ObjectChange(key: ObjectKey("Author", "a1"), kind: .update,
                                               attributes: [Fixture.gid: .string("a1-renamed")])])
        #expect(device.recorder.changedIdentifiers.map(\.entity) == ["Author"])
        #expect(device.recorder.changedIdentifiers.first?.old == "a1")
        #expect(device.recorder.changedIdentifiers.first?.new == "a1-renamed")
        try device.save { try device.object("Author", "a1-renamed", in: $0).setValue("Lem", forKey: "name") }
        _ = try device.recorder.capture()
        #expect(device.recorder.changedIdentifiers.isEmpty, "reported for the capture that saw the change only")
    }

    @Test func anEmptyIdentifierAttributeGivesARandomIDAndIsCounted() throws {
        let device = try CaptureDevice()
        try device.save { context in
            try device.insert("Author", ["name": "Anonymous"], in: context)
            try device.insert("Author", [Fixture.gid: "", "name": "Blank"], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.count == 2)
        #expect(event.changes.allSatisfy { UUID(uuidString: $0.key.globalID) != nil })
        #expect(device.recorder.missingIdentifiers == ["Author": 2])
    }

    /// Folds the duplicates the last capture reported, as the ensemble does after capturing.
    static func foldDuplicates(_ device: CaptureDevice) throws {
        _ = try LocalDuplicateMerger.merge(device.recorder.localDuplicates, coordinator: device.sync)
    }

    @Test func m8ASecondLiveObjectWithOneGlobalIDIsSentAsThatKeyAndReportedForFolding() throws {
        let device = try CaptureDevice()
        let (first, second) = try device.save { context in
            let first = try device.insert("Author", [Fixture.gid: "dup", "name": "First"], in: context)
            let second = try device.insert("Author", [Fixture.gid: "dup", "name": "Second"], in: context)
            try device.insert("Book", [Fixture.gid: "b1", "author": first], in: context)
            try device.insert("Book", [Fixture.gid: "b2", "author": second], in: context)
            return (first, second)
        }
        let event = try #require(try device.recorder.capture())
        let authors = event.changes.filter { $0.key.entity == "Author" }
        #expect(authors.map(\.key) == [ObjectKey("Author", "dup")], "one key, one object")
        #expect(authors.first?.attributes["name"] == .some(.string("Second")), "the newcomer's values, as the fold leaves them")
        #expect(event.change(ObjectKey("Book", "b2"))?.toOnes["author"] == .some(ObjectKey("Author", "dup")))
        #expect(device.recorder.localDuplicates == [LocalDuplicateMerger.Pair(duplicate: second.objectID, survivor: first.objectID)])
        #expect(device.recorder.duplicateIdentifiers == ["Author": 1])
        try Self.foldDuplicates(device)
        #expect(try device.ledgerProjection() == device.storeGraph(), "folded, the store is the projection again")
        #expect(try device.recorder.capture() == nil, "the fold is the ensemble's own save")

        // Later, while the survivor lives: the newcomer's values win and both books stay with it.
        let third = try device.save { context in
            let third = try device.insert("Author", [Fixture.gid: "dup", "name": "Third"], in: context)
            try device.insert("Book", [Fixture.gid: "b3", "author": third], in: context)
            return third
        }
        let later = try #require(try device.recorder.capture())
        #expect(later.change(ObjectKey("Author", "dup"))?.kind == .insert)
        #expect(later.change(ObjectKey("Author", "dup"))?.attributes["name"] == .some(.string("Third")))
        #expect(device.recorder.localDuplicates.map(\.duplicate) == [third.objectID])
        try Self.foldDuplicates(device)
        #expect(try device.ledgerProjection() == device.storeGraph())
        #expect(try device.ledgerProjection().objects[ObjectKey("Author", "dup")]?.toManys["books"]
                == [ObjectKey("Book", "b1"), ObjectKey("Book", "b2"), ObjectKey("Book", "b3")])

        // Once the key's object is deleted, a new one takes the key over: no duplicate.
        try device.save { context in
            for object in try CapturePropertyTests.objects("Author", in: context) { context.delete(object) }
        }
        _ = try device.recorder.capture()
        try device.save { try device.insert("Author", [Fixture.gid: "dup", "name": "Fourth"], in: $0) }
        #expect(try device.recorder.capture()?.changes.map(\.key) == [ObjectKey("Author", "dup")])
        #expect(device.recorder.localDuplicates.isEmpty)
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func theDelegateWinsAndMayLeaveSomeObjectsOrEntitiesToTheOtherSources() throws {
        let device = try CaptureDevice(delegate: { entity, objects in
            guard entity == "Author" else { return nil }
            return objects.map { object in
                let name = (try? object.value(forKey: "name")) as? String
                return name == "random" ? nil : "delegate-\(name ?? "?")"
            }
        })
        try device.save { context in
            try device.insert("Author", [Fixture.gid: "ignored", "name": "Lem"], in: context)
            try device.insert("Author", [Fixture.gid: "ignored-too", "name": "random"], in: context)
            try device.insert("Book", [Fixture.gid: "b1"], in: context)
        }
        let event = try #require(try device.recorder.capture())
        let authors = event.changes.filter { $0.key.entity == "Author" }.map(\.key.globalID)
        #expect(authors.contains("delegate-Lem"))
        #expect(!authors.contains("ignored") && !authors.contains("ignored-too"))
        #expect(authors.contains { UUID(uuidString: $0) != nil }, "a nil element is a random ID")
        #expect(event.change(ObjectKey("Book", "b1")) != nil, "nil for the whole entity falls through to the attribute")
    }

    @Test func theDelegateIsAskedInBatchesOfAThousandPerEntity() throws {
        let batches = Mutex<[String]>([])
        let device = try CaptureDevice(delegate: { entity, objects in
            batches.withLock { $0.append("\(entity) \(objects.count)") }
            return nil
        })
        try device.save { context in
            for i in 0..<1_500 { try device.insert("Tag", [Fixture.gid: "t\(i)"], in: context) }
            try device.insert("Author", [Fixture.gid: "a1"], in: context)
        }
        let event = try #require(try device.recorder.capture())
        #expect(event.changes.count == 1_501)
        #expect(batches.withLock { $0.sorted() } == ["Author 1", "Tag 1000", "Tag 500"])
    }

    @Test func aDelegateAnsweringWithTheWrongCountIsATypedErrorAndCapturesNothing() throws {
        let device = try CaptureDevice(delegate: { _, objects in Array(repeating: "x", count: objects.count + 1) })
        try device.save { try device.insert("Author", [Fixture.gid: "a1"], in: $0) }
        let tokenBefore = try device.eventStore.state().historyToken
        #expect {
            try device.recorder.capture()
        } throws: { error in
            guard case let SyncError.globalIdentifierCountMismatch(entity, expected, got) = error else { return false }
            return entity == "Author" && expected == 1 && got == 2
        }
        #expect(try device.eventStore.state().historyToken == tokenBefore, "nothing committed: the next capture tries again")
        #expect(try device.localEvents().isEmpty)
    }

    @Test func aConfiguredAttributeThatCannotHoldIDsIsATypedError() throws {
        let model = try CaptureFixture.model()
        #expect {
            _ = try GlobalIdentifierSource(model: model, attribute: "year", delegate: nil)
        } throws: { error in
            guard case let SyncError.invalidGlobalIdentifierAttribute(entity, attribute) = error else { return false }
            return entity == "Book" && attribute == "year"
        }
        // A name no entity has is no error: those entities get random IDs.
        let source = try GlobalIdentifierSource(model: model, attribute: "absent", delegate: nil)
        #expect(source.rules["Author"] == .random)
    }

    @Test func aSyncableKeyNamingNoAttributeIsATypedError() throws {
        let model = try ManagedObjectModel(version: "misnamed") {
            Entity("Note", as: MisnamedNote.self) { Attribute("text", .string, optional: true) }
        }
        #expect {
            _ = try GlobalIdentifierSource(model: model, attribute: nil, delegate: nil)
        } throws: { error in
            guard case let SyncError.invalidGlobalIdentifierAttribute(entity, attribute) = error else { return false }
            return entity == "Note" && attribute == "nowhere"
        }
    }
}
