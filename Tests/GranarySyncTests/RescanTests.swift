import Foundation
import Granary
import Testing
@testable import GranarySync

/// Lost history (§8.4): when the app purged transactions sync had not captured, the store is compared
/// with the ledger and the differences become one event.
@Suite struct RescanTests {
    typealias Fixture = CaptureFixture

    static func purgeHistory(_ device: CaptureDevice) throws {
        let current = try device.recorder.history.currentToken()
        var request = PersistentHistoryChangeRequest.deleteHistory(before: current)
        request.affectedStores = [device.syncStore]
        _ = try device.sync.execute(request)
    }

    @Test func purgedHistoryIsFoundByARescanWhoseEventHoldsTheDifferences() throws {
        let device = try CaptureDevice()
        try device.save { context in
            let author = try device.insert("Author", [Fixture.gid: "a1", "name": "Lem"], in: context)
            try device.insert("Book", [Fixture.gid: "b1", "title": "Solaris", "author": author], in: context)
            try device.insert("Book", [Fixture.gid: "b2", "title": "Eden"], in: context)
            try device.insert("Tag", [Fixture.gid: "t1"], in: context)
        }
        _ = try device.recorder.capture()
        try device.save { context in
            try device.object("Book", "b1", in: context).setValue("Solaris (1961)", forKey: "title")
            try device.object("Book", "b1", in: context).add([try device.object("Tag", "t1", in: context)], toRelationship: "tags")
            context.delete(try device.object("Book", "b2", in: context))
            try device.insert("Author", [Fixture.gid: "a2", "name": "Dick"], in: context)
        }
        try device.save { try device.object("Author", "a1", in: $0).setValue("Stanisław Lem", forKey: "name") }
        try Self.purgeHistory(device)
        let event = try #require(try device.recorder.capture())
        #expect(device.recorder.didRescan)
        #expect(event.changes == [
            ObjectChange(key: ObjectKey("Author", "a1"), kind: .update, attributes: ["name": .string("Stanisław Lem")]),
            ObjectChange(key: ObjectKey("Author", "a2"), kind: .insert, attributes: [Fixture.gid: .string("a2"), "name": .string("Dick")]),
            ObjectChange(key: ObjectKey("Book", "b1"), kind: .update, attributes: ["title": .string("Solaris (1961)")],
                         memberAdds: ["tags": [.init(member: ObjectKey("Tag", "t1"))]]),
            ObjectChange(key: ObjectKey("Book", "b2"), kind: .delete),
        ], "only what differs: a1's books and b1's author are unchanged")
        #expect(try device.ledgerProjection() == device.storeGraph())
        // The token moved to where the rescan read: the next capture is an ordinary one.
        try device.save { try device.object("Author", "a2", in: $0).setValue("P. K. Dick", forKey: "name") }
        let next = try #require(try device.recorder.capture())
        #expect(!device.recorder.didRescan)
        #expect(next.changes.map(\.kind) == [.update])
        #expect(try device.ledgerProjection() == device.storeGraph())
    }

    @Test func aRescanOfAnUnchangedStoreRecordsNothing() throws {
        let device = try CaptureDevice()
        try device.save { try device.insert("Author", [Fixture.gid: "a1", "name": "Lem"], in: $0) }
        _ = try device.recorder.capture()
        // Saves that change nothing synced, then purged.
        try device.save { try device.insert("Scratch", ["value": "x"], in: $0) }
        try device.save { try device.insert("Scratch", ["value": "y"], in: $0) }
        try Self.purgeHistory(device)
        #expect(try device.recorder.capture() == nil)
        #expect(device.recorder.didRescan)
        #expect(try device.localEvents().count == 1)
    }

    /// M15: the ledger holds a large value's data file name, the store its bytes; a rescan compares them
    /// by content, so an unchanged value is no change and a changed one is a new data file.
    @Test func aRescanComparesLargeValuesByContent() throws {
        let device = try CaptureDevice()
        var random = SplitMix(seed: 8)
        let first = random.bytes(SyncConstants.inlineDataLimit + 1), second = random.bytes(SyncConstants.inlineDataLimit + 1)
        try device.save { try device.insert("Sample", ["bytes": first], in: $0) }
        let inserted = try #require(try device.recorder.capture())
        let own = try device.eventStore.state().storeID
        #expect(inserted.changes.first?.attributes["bytes"] == .some(.dataFile(.data(sha256: LargeValues.sha256(first), store: own))))
        // Saves that change nothing synced, then purged (the newest transaction is never purged).
        try device.save { try device.insert("Scratch", ["value": "x"], in: $0) }
        try device.save { try device.insert("Scratch", ["value": "y"], in: $0) }
        try Self.purgeHistory(device)
        #expect(try device.recorder.capture() == nil)
        #expect(device.recorder.didRescan)

        try device.save { context in
            let sample = try #require(try context.fetch(FetchRequest<ManagedObject>(entityName: "Sample")).first)
            try sample.setValue(second, forKey: "bytes")
        }
        try device.save { try device.insert("Scratch", ["value": "z"], in: $0) }
        try Self.purgeHistory(device)
        let changed = try #require(try device.recorder.capture())
        #expect(device.recorder.didRescan)
        let name = CloudFileName.data(sha256: LargeValues.sha256(second), store: own)
        #expect(changed.changes.map { $0.attributes["bytes"] } == [.some(.dataFile(name))])
        #expect(try device.eventStore.dataFileBytes(name) == second)
    }
}
