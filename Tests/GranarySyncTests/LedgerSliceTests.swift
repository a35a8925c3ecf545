import Foundation
import Testing
@testable import GranarySync

/// Loading the part of the stored ledger a capture needs: each key with its fuse group, owners with
/// their members, and owners found through a member.
@Suite struct LedgerSliceTests {
    @Test func aSliceHoldsTheKeysTheirFuseGroupsAndOnRequestTheirMembers() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let store = try EventStore.open(at: scratch.appendingPathComponent("events.granary"))
        defer { try? store.close() }
        let a1 = ObjectKey("Author", "a1"), a2 = ObjectKey("Author", "a2"), a3 = ObjectKey("Author", "a3")
        let book = ObjectKey("Book", "b1"), t1 = ObjectKey("Tag", "t1"), t2 = ObjectKey("Tag", "t2")
        var device = LedgerTestDevice(store: orderedStores[1])
        let events = [
            device.record([.insert(a1, ["name": .string("Lem")]), .insert(a2), .insert(a3), .insert(t1), .insert(t2),
                           .insert(book, toOnes: ["author": a3], adds: ["tags": [.member(t1), .member(t2)]])]),
            device.record([.fuse(a2, into: a1)]),
        ]
        let full = integrated(events).ledger
        try store.saveLedger(full)

        let slice = LedgerSlice(eventStore: store)
        try slice.load([a1])
        #expect(Set(slice.ledger.objects.keys) == [a1, a2], "a fuse group comes whole")
        try slice.load([book])
        #expect(Set(slice.ledger.objects.keys) == [a1, a2, book], "a to-one target is not needed")
        try slice.load([book], members: true)
        #expect(Set(slice.ledger.objects.keys) == [a1, a2, book, t1, t2])
        for (key, object) in slice.ledger.objects { #expect(full.object(key) == object, "\(key) reads as stored") }
        #expect(try slice.owners(of: t1, in: "tags") == [book])
        #expect(try slice.owners(of: t1, in: "other").isEmpty)
        try slice.load([ObjectKey("Author", "never")])
        #expect(slice.ledger.object(ObjectKey("Author", "never")) == nil)
    }
}
