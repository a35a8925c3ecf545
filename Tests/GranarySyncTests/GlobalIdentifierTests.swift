import Foundation
import Granary
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
