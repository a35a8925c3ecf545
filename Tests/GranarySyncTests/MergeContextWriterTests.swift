import Foundation
import Granary
import Testing
@testable import GranarySync

/// The merge context writes the projection without ever running a delete rule of the model (M20, M21),
/// and changes only what differs.
@Suite struct MergeContextWriterTests {
    let lem = ObjectKey("Author", "lem"), solaris = ObjectKey("Book", "s"), fiasco = ObjectKey("Book", "f")

    /// A deletes Lem and, by its cascade, Solaris; B concurrently adds Fiasco to Lem. On the merging
    /// device Fiasco survives with no author: the replayed delete nullified, it did not cascade.
    @Test(arguments: [DeleteRule.cascade, .deny, .nullify])
    func m20ReplayedDeletesNullifyAndNeverCascade(rule: DeleteRule) throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(authorBooksRule: rule), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let a1 = a.record([.insert(lem, ["name": .string("Lem")]),
                           .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": lem])])
        b.learn(a1)
        let b1 = b.record([.insert(fiasco, ["title": .string("Fiasco")], toOnes: ["author": lem])])
        let a2 = a.record([.delete(lem), .delete(solaris)])
        try stack.merge([a1, b1])
        #expect(try stack.storeGraph().objects[lem]?.toManys["books"] == [fiasco, solaris])

        // M21: with the deny rule the store's own delete would have been refused; the replayed one is not.
        let outcome = try stack.merge([a2])
        #expect(outcome.integrated == [a2.id])
        let graph = try stack.storeGraph()
        #expect(graph.objects[lem] == nil && graph.objects[solaris] == nil)
        #expect(graph.objects[fiasco] != nil, "the replayed delete cascaded to Fiasco")
        #expect(graph.objects[fiasco]?.toOnes["author"] == .some(nil))
        try expectStoreMatchesLedger(stack)
    }

    /// M21's second half: with `Book.author` required, the member the deny rule no longer protects is
    /// left invalid, and that goes to the repair hook as a validation failure (M25), not as a denied delete.
    @Test func m21ABrokenRequiredInverseGoesToTheRepairHook() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(authorBooksRule: .deny, bookAuthorRequired: true), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let a1 = a.record([.insert(lem, ["name": .string("Lem")])])
        b.learn(a1)
        let b1 = b.record([.insert(fiasco, ["title": .string("Fiasco")], toOnes: ["author": lem])])
        let a2 = a.record([.delete(lem)])
        try stack.merge([a1, b1])
        var reported: SyncError?
        var integrator = stack.integrator()
        integrator.hooks.didFailToSave = { _, error, _ in
            reported = error
            return false
        }
        #expect(throws: SyncError.self) { try stack.merge([a2], with: integrator) }
        guard case let .mergeValidationFailed(problems)? = reported else {
            Issue.record("the hook was told \(String(describing: reported))")
            return
        }
        #expect(problems.map(\.propertyName) == ["author"])
        #expect(try stack.storeGraph().objects[lem] != nil, "nothing was saved")
    }

    /// A hand-made event that deletes only Lem leaves both books, with no author, whatever Lem's rule.
    @Test func m20ADeleteWithoutItsCascadeDeletesOnlyWhatItNames() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(authorBooksRule: .cascade), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(lem, ["name": .string("Lem")]),
                                   .insert(solaris, ["title": .string("Solaris")], toOnes: ["author": lem]),
                                   .insert(fiasco, ["title": .string("Fiasco")], toOnes: ["author": lem])])])
        let outcome = try stack.merge([a.record([.delete(lem)])])
        #expect(outcome.changes.deleted.count == 1)
        let graph = try stack.storeGraph()
        #expect(graph.objects.keys.sorted() == [fiasco, solaris])
        #expect(graph.objects[solaris]?.toOnes["author"] == .some(nil) && graph.objects[fiasco]?.toOnes["author"] == .some(nil))
    }

    /// An update writes only what differs: an event setting a value the store already holds changes no
    /// object, so the delegate hears of nothing and the save records no transaction.
    @Test func onlyDifferencesAreWritten() throws {
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: try libraryModel(), in: scratch)
        defer { stack.close() }
        var a = LedgerTestDevice(store: orderedStores[0]), b = LedgerTestDevice(store: orderedStores[1])
        let a1 = a.record([.insert(solaris, ["title": .string("Solaris"), "year": .integer(1961)])])
        b.learn(a1)
        try stack.merge([a1])
        let before = stack.appCoordinator.currentPersistentHistoryToken(fromStores: [stack.appStore])
        let outcome = try stack.merge([b.record([.update(solaris, ["title": .string("Solaris")])])])
        #expect(outcome.changes.isEmpty)
        #expect(stack.appCoordinator.currentPersistentHistoryToken(fromStores: [stack.appStore]) == before)
        let changed = try stack.merge([b.record([.update(solaris, ["year": .integer(1962)])])])
        #expect(changed.changes.updated.count == 1)
        #expect(try stack.storeGraph().objects[solaris]?.attributes["year"] == .some(.integer(1962)))
        // The merge's transaction carries the merge author and a merge context name (M29, §12.3).
        let transactions = try stack.appCoordinator.execute(.fetchHistory(after: before)).transactions
        #expect(transactions.count == 1)
        #expect(transactions.first?.author == SyncConstants.mergeAuthor)
        #expect(transactions.first?.contextName?.hasPrefix(SyncConstants.mergeContextNamePrefix) == true)
    }

    /// Every attribute type travels through the store exactly (M15).
    @Test func everyAttributeTypeRoundTripsThroughTheStore() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Thing") {
                Attribute("i16", .integer16, optional: true)
                Attribute("i32", .integer32, optional: true)
                Attribute("i64", .integer64, optional: true)
                Attribute("d", .double, optional: true)
                Attribute("f", .float, optional: true)
                Attribute("m", .decimal, optional: true)
                Attribute("b", .boolean, optional: true)
                Attribute("s", .string, optional: true)
                Attribute("t", .date, optional: true)
                Attribute("x", .binaryData, optional: true)
                Attribute("u", .uuid, optional: true)
                Attribute("r", .uri, optional: true)
            }
        }
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        let values: [String: SyncValue?] = [
            "i16": .integer(-32768), "i32": .integer(2_147_483_647), "i64": .integer(.min), "d": .double(-0.0),
            "f": .float(.leastNonzeroMagnitude), "m": .decimal(Decimal(string: "12345678901234567890.123")!), "b": .boolean(true),
            "s": .string("e\u{301}"), "t": .date(Date(timeIntervalSinceReferenceDate: 1e-300)), "x": .data(Data([0, 255, 7])),
            "u": .uuid(UUID()), "r": .uri(URL(string: "https://example.com/a?b=c")!),
        ]
        let thing = ObjectKey("Thing", "t1")
        var a = LedgerTestDevice(store: orderedStores[0])
        try stack.merge([a.record([.insert(thing, values)])])
        #expect(try stack.storeGraph().objects[thing]?.attributes == values)
        try expectStoreMatchesLedger(stack)
    }

    /// M15: a data file reference is written as the file's bytes; one the event store does not hold is a
    /// typed error naming the attribute and the file, never a crash or a wrong value.
    @Test func aDataFileReferenceIsWrittenAsItsBytes() throws {
        let model = try ManagedObjectModel(version: "1") {
            Entity("Thing") { Attribute("x", .binaryData, optional: true) }
        }
        let scratch = try makeScratchDirectory()
        defer { removeScratch(scratch) }
        let stack = try MergeTestStack(model: model, in: scratch)
        defer { stack.close() }
        var random = SplitMix(seed: 31)
        let held = LargeValues.record(of: random.bytes(SyncConstants.inlineDataLimit + 1), writer: orderedStores[0])
        let missing = LargeValues.record(of: random.bytes(SyncConstants.inlineDataLimit + 1), writer: orderedStores[0])
        try stack.eventStore.storeDataFiles([held])
        var a = LedgerTestDevice(store: orderedStores[0])
        let thing = ObjectKey("Thing", "t1")
        try stack.merge([a.record([.insert(thing, ["x": .dataFile(held.name)])])])
        #expect(try stack.storeGraph().objects[thing]?.attributes["x"] == .some(.data(held.bytes)))

        #expect {
            try stack.merge([a.record([.update(thing, ["x": .dataFile(missing.name)])])])
        } throws: { error in
            guard case let SyncError.eventStore(message) = error else { return false }
            return message.contains("Thing.x") && message.contains(missing.name.fileName)
        }
        #expect(try stack.storeGraph().objects[thing]?.attributes["x"] == .some(.data(held.bytes)))
    }
}
