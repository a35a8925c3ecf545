import Foundation
import Testing
@testable import GranarySync

/// Merges that read only the part of the ledger their events name must write what a whole-ledger merge
/// writes; where they cannot know, they read the whole ledger.
@Suite struct SlicedMergeTests {
    let book = ObjectKey("Book", "b4"), tag = ObjectKey("Tag", "t3")

    /// Found by the collision property test on a model without one-to-ones: a tag deleted while a book
    /// still named it, then inserted again, is back among the book's tags, though the event that
    /// revives it names only the tag.
    @Test func m11AKeyInsertedAgainReturnsToTheToManysThatStillNameIt() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(oneToOne: false), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let first = try stack.merge([a.record([.insert(tag, ["name": .string("Le Guin")])])])
        #expect(!first.readWholeLedger)
        a.learn(try #require(stack.eventStore.events(withStatus: .integrated).first))
        try stack.merge([a.record([.insert(book, ["title": .string("z")], adds: ["tags": [.member(tag)]]), .delete(tag)])])
        #expect((try stack.storeGraph().objects[book]?.toManys["tags"] ?? []).isEmpty)
        try expectStoreMatchesLedger(stack)

        b.learn(try #require(stack.eventStore.events(withStatus: .integrated).first))
        let revival = try stack.merge([b.record([.insert(tag, ["name": .string("Le Guin")])])])
        #expect(revival.readWholeLedger)
        #expect(try stack.storeGraph().objects[book]?.toManys["tags"] == [tag])
        try expectStoreMatchesLedger(stack)
    }

    /// An edit of an object whose tag is alive reads only its part of the ledger.
    @Test func anEditReadsOnlyTheKeysItNames() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(oneToOne: false), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(tag), .insert(book, ["title": .string("z")], adds: ["tags": [.member(tag)]])])])
        let edit = try stack.merge([a.record([.update(book, ["title": .string("y")])])])
        #expect(!edit.readWholeLedger)
        #expect(try stack.storeGraph().objects[book]?.attributes["title"] == .some(.string("y")))
        try expectStoreMatchesLedger(stack)
    }
}
