import Foundation
import Testing
@testable import GranarySync

/// One test per merge rule (M1–M23 of MergeSemantics.md) on hand-built events. Each graph is computed by
/// the ledger and checked against the reference model, so the worked examples pin both.
@Suite struct LedgerIntegratorTests {
    let b1 = ObjectKey("Book", "b1"), b2 = ObjectKey("Book", "b2"), b3 = ObjectKey("Book", "b3")
    let t1 = ObjectKey("Tag", "t1"), t2 = ObjectKey("Tag", "t2"), t3 = ObjectKey("Tag", "t3")
    let lem = ObjectKey("Author", "lem"), pratchett = ObjectKey("Author", "pratchett")
    let shelf = ObjectKey("Shelf", "s1")

    func devices() -> (LedgerTestDevice, LedgerTestDevice, LedgerTestDevice) {
        (LedgerTestDevice(store: orderedStores[0]), LedgerTestDevice(store: orderedStores[1]),
         LedgerTestDevice(store: orderedStores[2]))
    }

    /// The ledger's graph of `events` (in this arrival order), after checking it is the reference's and
    /// nothing waits.
    func graph(_ events: [Event], sourceLocation: SourceLocation = #_sourceLocation) -> Projection {
        let (projection, waiting) = ledgerProjection(events)
        let reference = ReferenceMergeModel(schema: libraryLedgerSchema).projection(of: events)
        #expect(waiting == 0, "events left waiting", sourceLocation: sourceLocation)
        #expect(projection == reference, "ledger\n\(projection)\nreference\n\(reference)", sourceLocation: sourceLocation)
        return projection
    }

    func book(_ title: String, year: Int64? = nil) -> [String: SyncValue?] {
        ["title": .string(title), "year": year.map { .integer($0) }]
    }

    // MARK: Order

    @Test func m1PositionIsGlobalCountThenStoreID() {
        var (a, b, _) = devices()
        let base = a.record([.insert(b1, book("Solaris"))])
        b.learn(base)
        let a2 = a.record([.update(b1, ["title": .string("a")])], countAtLeast: 5)
        let b2e = b.record([.update(b1, ["title": .string("b")])], countAtLeast: 5)
        #expect(a2.meta.position < b2e.meta.position)
        #expect(graph([base, a2, b2e]).objects[b1]?.attributes["title"] == .string("b"))

        var (c, d, _) = devices()
        let start = c.record([.insert(b1, book("Solaris"))])
        d.learn(start)
        let early = d.record([.update(b1, ["title": .string("from B at 4")])], countAtLeast: 4)
        let late = c.record([.update(b1, ["title": .string("from A at 5")])], countAtLeast: 5)
        #expect(graph([start, late, early]).objects[b1]?.attributes["title"] == .string("from A at 5"))
    }

    @Test func m2NextCountFollowsEveryReceivedEventEvenWaiting() {
        var (a, _, c) = devices()
        _ = a.record([.insert(b1, book("x"))])
        let waiting = a.record([.update(b1, ["title": .string("y")])], countAtLeast: 41)
        var integrator = LedgerIntegrator()
        #expect(integrator.receive(waiting).isEmpty)
        #expect(integrator.nextGlobalCount == 42)
        c.learn(waiting)
        #expect(c.record([]).meta.globalCount == 42)
    }

    @Test func m3CausalityRespectsPositionOverRandomHistories() {
        for seed in 0..<40 {
            var simulation = LedgerConvergencePropertyTests.Simulation(seed: seed)
            simulation.run(steps: 30)
            let metas = simulation.events.map(\.meta)
            #expect(Set(metas.map(\.position)).count == metas.count, "seed \(seed)")
            for x in metas { for e in metas where x.happensBefore(e) { #expect(x.position < e.position, "seed \(seed)") } }
        }
    }

    @Test func m4TimestampsNeverDecide() {
        var (a, b, _) = devices()
        let base = a.record([.insert(b1, book("Eden"))])
        b.learn(base)
        let hourAhead = Date(timeIntervalSinceReferenceDate: 3_600)
        let fromA = a.record([.update(b1, ["title": .string("A, clock ahead")])], countAtLeast: 3, timestamp: hourAhead)
        let fromB = b.record([.update(b1, ["title": .string("B")])], countAtLeast: 3)
        for order in [[base, fromA, fromB], [base, fromB, fromA]] {
            #expect(graph(order).objects[b1]?.attributes["title"] == .string("B"))
        }
    }

    @Test func m5AnEventWaitsForItsPastWithoutError() {
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("x"))])
        b.learn(a1)
        let b1e = b.record([.update(b1, ["title": .string("from B")])])
        let b2e = b.record([.update(b1, ["year": .integer(1961)])])
        var c = LedgerIntegrator()
        #expect(c.receive(b2e).isEmpty)
        #expect(c.receive(b1e).isEmpty)
        #expect(c.delivery.waiting.count == 2)
        #expect(Projection(of: c.ledger, schema: libraryLedgerSchema).objects.isEmpty)
        #expect(c.receive(a1) == [a1.id, b1e.id, b2e.id])
        #expect(c.delivery.waiting.isEmpty)
        let object = Projection(of: c.ledger, schema: libraryLedgerSchema).objects[b1]
        #expect(object?.attributes["title"] == .string("from B") && object?.attributes["year"] == .integer(1961))
    }

    @Test func m6IntegratingTwiceChangesNothing() {
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("x"), adds: ["tags": [.member(t1)]]), .insert(t1, ["name": .string("t")])])
        b.learn(a1)
        let b1e = b.record([.update(b1, ["title": .string("y")], removes: ["tags": [t1]])])
        var integrator = LedgerIntegrator()
        integrator.receive(a1)
        integrator.receive(b1e)
        let before = integrator.ledger
        #expect(integrator.receive(a1).isEmpty && integrator.receive(b1e).isEmpty)
        #expect(integrator.ledger == before)
        var waitingTwice = LedgerIntegrator()
        waitingTwice.receive(b1e)
        waitingTwice.receive(b1e)
        #expect(waitingTwice.delivery.waiting.count == 1)
        #expect(waitingTwice.receive(a1).count == 2)
        #expect(waitingTwice.ledger == before)
    }

    @Test func m7EveryArrivalOrderGivesOneGraph() {
        // Worked example 6: any order of A1, A2, B1 (example 1) gives title "Solaris!", year 1962.
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("Solaris", year: 1961))])
        b.learn(a1)
        let a2 = a.record([.update(b1, ["title": .string("Solaris (1961)")])])
        let b1e = b.record([.update(b1, ["title": .string("Solaris!"), "year": .integer(1962)])])
        let orders = [[a1, a2, b1e], [a1, b1e, a2], [a2, b1e, a1], [b1e, a1, a2], [a2, a1, b1e], [b1e, a2, a1]]
        let graphs = orders.map { graph($0) }
        #expect(Set(graphs).count == 1)
        #expect(graphs[0].objects[b1]?.attributes == ["title": .string("Solaris!"), "year": .integer(1962)])
    }

    // MARK: Objects and their lifetime

    @Test func m8OneKeyIsOneObjectPerEntity() {
        var (a, b, _) = devices()
        let fromA = a.record([.insert(b1, book("A's"), adds: ["tags": [.member(t1)]]), .insert(t1, ["name": .string("1")]),
                              .insert(ObjectKey("Tag", "x"), ["name": .string("tag x")])])
        let fromB = b.record([.insert(b1, book("B's"), adds: ["tags": [.member(t2)]]), .insert(t2, ["name": .string("2")]),
                              .insert(ObjectKey("Author", "x"), ["name": .string("author x")])])
        let result = graph([fromA, fromB])
        #expect(result.objects.keys.filter { $0.entity == "Book" } == [b1])
        #expect(result.objects[b1]?.toManys["tags"] == [t1, t2])
        #expect(result.objects[b1]?.attributes["title"] == .string("B's"))
        #expect(result.objects[ObjectKey("Tag", "x")] != nil && result.objects[ObjectKey("Author", "x")] != nil)
    }

    @Test func m9AnObjectLivesWhileAnInsertItsDeletesDidNotSeeLives() {
        var (a, b, _) = devices()
        let insertA = a.record([.insert(b1, book("A"))])
        b.learn(insertA)
        let deleteB = b.record([.delete(b1)])
        var c = LedgerTestDevice(store: orderedStores[2])
        let concurrentInsert = c.record([.insert(b1, book("C"))])
        #expect(graph([insertA, deleteB]).objects[b1] == nil)
        #expect(graph([insertA, deleteB, concurrentInsert]).objects[b1]?.attributes["title"] == .string("C"))
    }

    @Test func m10DeleteBeatsAConcurrentUpdateWhateverItsPosition() {
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("Eden"))])
        b.learn(a1)
        let delete = a.record([.delete(b1)], countAtLeast: 7)
        let rename = b.record([.update(b1, ["title": .string("Eden (1959)")])], countAtLeast: 9)
        #expect(delete.meta.position < rename.meta.position)
        #expect(graph([a1, delete, rename]).objects[b1] == nil)
        #expect(graph([a1, rename, delete]).objects[b1] == nil)
    }

    @Test func m11InsertAfterDeleteRecreatesWithoutOldWrites() {
        // Worked example 3.
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("Eden", year: 1959))])
        b.learn(a1)
        let a2 = a.record([.delete(b1)])
        let b1e = b.record([.update(b1, ["title": .string("Eden (1959)")])], countAtLeast: 5)
        b.learn(a2)
        let b2e = b.record([.insert(b1, book("Eden, 2nd ed."))])
        for order in [[a1, a2, b1e, b2e], [a1, b1e, a2, b2e]] {
            let object = graph(order).objects[b1]
            #expect(object?.attributes["title"] == .string("Eden, 2nd ed."))
            #expect(object?.attributes["year"] == .some(nil))
        }
    }

    @Test func m12UpdatesAndDeletesOfNeverInsertedKeysChangeNothing() {
        var (a, _, _) = devices()
        let ghost = ObjectKey("Book", "b-none")
        let update = a.record([.update(ghost, ["title": .string("x")], adds: ["tags": [.member(t1)]])])
        let delete = a.record([.delete(ghost)])
        var integrator = LedgerIntegrator()
        integrator.receive(update)
        integrator.receive(delete)
        #expect(integrator.ledger == Ledger())
        #expect(graph([update, delete]).objects.isEmpty)
    }

    @Test func m13ReplacingInsertKeepsOnlyTheNewValues() {
        var (a, b, _) = devices()
        let a1 = a.record([.insert(b1, book("old", year: 1950), adds: ["tags": [.member(t1)]]), .insert(t1, ["name": .string("t")])])
        b.learn(a1)
        var replacing = ObjectChange.insert(b1, book("new"))
        replacing.kind = .replacingInsert
        let a2 = a.record([replacing])
        let staleEdit = b.record([.update(b1, ["year": .integer(1999)])])
        let object = graph([a1, a2, staleEdit]).objects[b1]
        #expect(object?.attributes == ["title": .string("new"), "year": SyncValue?.none])
        #expect(object?.toManys["tags"] == [])
    }

    // MARK: Attributes

    @Test func m14LastEligibleWriterWinsPerAttribute() {
        var (a, b, _) = devices()
        let base = a.record([.insert(b1, book("Solaris", year: 1961))])
        b.learn(base)
        let title5 = a.record([.update(b1, ["title": .string("a")])], countAtLeast: 5)
        let title6 = b.record([.update(b1, ["title": .string("b")])], countAtLeast: 6)
        #expect(graph([base, title6, title5]).objects[b1]?.attributes["title"] == .string("b"))
        let yearOnly = a.record([.update(b1, ["year": .integer(1962)])])
        let object = graph([base, title5, title6, yearOnly]).objects[b1]
        #expect(object?.attributes == ["title": .string("b"), "year": .integer(1962)])
    }

    @Test func m15ValuesComeOutBitForBit() {
        var (a, _, _) = devices()
        let nan = Double(bitPattern: 0x7FF8_0000_0000_0ABC)
        let values: [SyncValue] = [.double(nan), .double(-0.0), .integer(.min), .float(-.infinity),
                                   .data(Data(repeating: 7, count: 12_000)),
                                   .dataFile(.data(sha256: String(repeating: "ab", count: 32), store: orderedStores[0]))]
        let events = values.indices.map { a.record([.insert(ObjectKey("Book", "v\($0)"), ["title": values[$0]])]) }
        let result = graph(events)
        for (index, value) in values.enumerated() {
            let stored = result.objects[ObjectKey("Book", "v\(index)")]?.attributes["title"] ?? nil
            #expect(stored == value, "\(value)")
        }
    }

    // MARK: Relationships

    @Test func m16ToOneIsLastWriterWinsAndReadsNilForAMissingTarget() {
        var (a, b, _) = devices()
        let base = a.record([.insert(b1, book("x")), .insert(lem, ["name": .string("Lem")]),
                             .insert(pratchett, ["name": .string("Pratchett")])])
        b.learn(base)
        let toLem = a.record([.update(b1, toOnes: ["author": lem])])
        let toPratchett = b.record([.update(b1, toOnes: ["author": pratchett])], countAtLeast: 5)
        #expect(graph([base, toPratchett, toLem]).objects[b1]?.toOnes["author"] == pratchett)
        b.learn(toLem)
        let deletePratchett = b.record([.delete(pratchett)])
        let result = graph([base, toLem, toPratchett, deletePratchett])
        #expect(result.objects[b1]?.toOnes["author"] == .some(nil))
        #expect(result.objects[lem]?.toManys["books"] == [])
    }

    @Test func m17DerivedSidesAndTheLatestOneToOneClaimant() {
        var (a, b, _) = devices()
        let person = ObjectKey("Person", "p"), q1 = ObjectKey("Passport", "q1"), q2 = ObjectKey("Passport", "q2")
        let base = a.record([.insert(person, ["name": .string("P")]), .insert(q1, ["number": .string("1")]),
                             .insert(q2, ["number": .string("2")]), .insert(lem, ["name": .string("Lem")]),
                             .insert(b1, book("x"), toOnes: ["author": lem]), .insert(b2, book("y"), toOnes: ["author": lem])])
        b.learn(base)
        // The later claim comes from the passport whose key sorts first, so key order cannot pass for it.
        let claimA = a.record([.update(q2, toOnes: ["holder": person])])
        let claimB = b.record([.update(q1, toOnes: ["holder": person])], countAtLeast: 5)
        for order in [[base, claimB, claimA], [base, claimA, claimB]] {
            let result = graph(order)
            #expect(result.objects[person]?.toOnes["passport"] == q1)
            #expect(result.objects[q1]?.toOnes["holder"] == person)
            #expect(result.objects[q2]?.toOnes["holder"] == .some(nil))
        }
        let result = graph([base, claimA, claimB])
        #expect(result.objects[lem]?.toManys["books"] == [b1, b2])
    }

    @Test func m18AddWinsOverAConcurrentRemove() {
        // Worked example 2.
        var (a, b, _) = devices()
        let tags = [t1, t2, t3].map { ObjectChange.insert($0, ["name": .string($0.globalID)]) }
        let a1 = a.record(tags + [.insert(b1, book("x"), adds: ["tags": [.member(t1), .member(t2)]])])
        b.learn(a1)
        let a2 = a.record([.update(b1, removes: ["tags": [t1]])])
        let b1e = b.record([.update(b1, adds: ["tags": [.member(t3)]], removes: ["tags": [t1]])])
        let b2e = b.record([.update(b1, adds: ["tags": [.member(t1)]])])
        #expect(graph([a1, a2, b1e, b2e]).objects[b1]?.toManys["tags"] == [t1, t2, t3])
        #expect(graph([a1, b1e, b2e, a2]).objects[b1]?.toManys["tags"] == [t1, t2, t3])
        a.learn(b2e)
        let a3 = a.record([.update(b1, removes: ["tags": [t1]])])
        let result = graph([a1, a2, b1e, b2e, a3])
        #expect(result.objects[b1]?.toManys["tags"] == [t2, t3])
        #expect(result.objects[t2]?.toManys["books"] == [b1])
    }

    @Test func m19OrderedMembersSortByOrderKeyThenGlobalID() {
        var (a, b, _) = devices()
        let c = ObjectKey("Book", "c"), d = ObjectKey("Book", "d"), first = ObjectKey("Book", "a"), second = ObjectKey("Book", "b")
        let base = a.record([first, second, c, d].map { ObjectChange.insert($0, book($0.globalID)) }
                            + [.insert(shelf, ["label": .string("s")], adds: ["books": [.member(first, at: 0), .member(second, at: 1)]])])
        b.learn(base)
        let appendC = a.record([.update(shelf, adds: ["books": [.member(c, at: 2)]])])
        let appendD = b.record([.update(shelf, adds: ["books": [.member(d, at: 2)]])])
        #expect(graph([base, appendD, appendC]).objects[shelf]?.toManys["books"] == [first, second, c, d])
        a.learn(appendD)
        let moveFirstToEnd = a.record([.update(shelf, adds: ["books": [.member(first, at: 3)]])])
        #expect(graph([base, appendC, appendD, moveFirstToEnd]).objects[shelf]?.toManys["books"] == [second, c, d, first])
    }

    // MARK: Deletes

    @Test func m20ReplayedDeletesNullifyAndNeverCascade() {
        var (a, b, _) = devices()
        let base = a.record([.insert(lem, ["name": .string("Lem")]), .insert(b1, book("x"), toOnes: ["author": lem]),
                             .insert(b2, book("y"), toOnes: ["author": lem])])
        b.learn(base)
        let onlyTheAuthor = a.record([.delete(lem)])
        let concurrentBook = b.record([.insert(b3, book("z"), toOnes: ["author": lem])])
        let result = graph([base, onlyTheAuthor, concurrentBook])
        #expect(result.objects[lem] == nil)
        for key in [b1, b2, b3] { #expect(result.objects[key]?.toOnes["author"] == .some(nil), "\(key)") }
    }

    @Test func m21ADeleteIsNotBlockedByAMemberAddedConcurrently() {
        var (a, b, _) = devices()
        let base = a.record([.insert(t1, ["name": .string("t")]), .insert(b1, book("x"))])
        b.learn(base)
        let deleteTag = a.record([.delete(t1)])
        let addMember = b.record([.update(b1, adds: ["tags": [.member(t1)]])])
        let result = graph([base, addMember, deleteTag])
        #expect(result.objects[t1] == nil)
        #expect(result.objects[b1]?.toManys["tags"] == [])
    }

    // MARK: Constraints

    @Test func m22FusedKeysAreOneObjectWithEverythingOfBoth() {
        // Worked example 5, then the stale update and the stale delete of the rule's test.
        var (a, b, c) = devices()
        let survivor = ObjectKey("Author", "a-7f"), loser = ObjectKey("Author", "b-c2")
        let a1 = a.record([.insert(survivor, ["name": .string("Lem")]), .insert(b1, book("s"), toOnes: ["author": survivor])])
        let b1e = b.record([.insert(loser, ["name": .string("Lem")]), .insert(b2, book("f"), toOnes: ["author": loser])])
        c.learn(a1)
        c.learn(b1e)
        a.learn(b1e)
        let fuse = a.record([.fuse(loser, into: survivor)])
        var result = graph([a1, b1e, fuse])
        #expect(result.objects.keys.filter { $0.entity == "Author" } == [survivor])
        #expect(result.objects[survivor]?.toManys["books"] == [b1, b2])
        #expect(result.objects[b2]?.toOnes["author"] == survivor)

        let staleUpdate = c.record([.update(loser, ["name": .string("Stanisław Lem")])])
        result = graph([a1, b1e, fuse, staleUpdate])
        #expect(result.objects[survivor]?.attributes["name"] == .string("Stanisław Lem"))

        let staleDelete = c.record([.delete(survivor)])
        result = graph([a1, b1e, staleUpdate, staleDelete, fuse])
        #expect(result.objects[survivor] != nil, "the loser's incarnation keeps the fused object alive")
        a.learn(staleDelete)
        let informedDelete = a.record([.delete(survivor)])
        #expect(graph([a1, b1e, fuse, staleUpdate, staleDelete, informedDelete]).objects[survivor] == nil)
    }

    @Test func m22ARemoveWithoutKnowledgeOfTheFuseCancelsOnlyTheAddsOfTheKeyItNamed() {
        var (a, b, c) = devices()
        let base = a.record([.insert(b1, book("x"))])
        b.learn(base)
        let tagA = a.record([.insert(t1, ["name": .string("sf")]), .update(b1, adds: ["tags": [.member(t1)]])])
        let tagB = b.record([.insert(t2, ["name": .string("sf")]), .update(b1, adds: ["tags": [.member(t2)]])])
        for event in [tagA, tagB] { a.learn(event); c.learn(event) }
        let fuse = a.record([.fuse(t2, into: t1)])
        let staleRemove = c.record([.update(b1, removes: ["tags": [t1]])])
        var result = graph([base, tagA, tagB, fuse, staleRemove])
        #expect(result.objects.keys.filter { $0.entity == "Tag" } == [t1])
        #expect(result.objects[b1]?.toManys["tags"] == [t1], "t2's add, fused into t1, was not seen as t1's")
        a.learn(staleRemove)
        let informedRemove = a.record([.update(b1, removes: ["tags": [t1]])])
        result = graph([base, tagA, tagB, fuse, staleRemove, informedRemove])
        #expect(result.objects[b1]?.toManys["tags"] == [])
    }

    @Test func m23TwoDevicesRecordingTheSameFuseChangeNothingMore() {
        var (a, b, _) = devices()
        let first = ObjectKey("Author", "x1"), second = ObjectKey("Author", "x2")
        let a1 = a.record([.insert(first, ["name": .string("Lem")])])
        let b1e = b.record([.insert(second, ["name": .string("Lem")])])
        a.learn(b1e)
        b.learn(a1)
        let fuseA = a.record([.fuse(second, into: first)])
        let fuseB = b.record([.fuse(second, into: first)])
        let once = graph([a1, b1e, fuseA])
        #expect(graph([a1, b1e, fuseA, fuseB]) == once)
        #expect(graph([b1e, fuseB, a1, fuseA]) == once)
        #expect(once.objects.keys.sorted() == [first])
    }
}
