import Foundation
import Granary
import GranaryRecords
import PropertyBased
import Synchronization
import Testing

/// The changes a context's saves carry, for merging into another context by hand.
private final class SaveCapture: @unchecked Sendable {
    // @unchecked: `token` is set once in init and read only in deinit.
    private final class Saved: Sendable {
        let list = Mutex<[ContextChanges]>([])
    }
    private let saved = Saved()
    private var token: (any NSObjectProtocol)?

    init(_ context: ManagedObjectContext) {
        token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) { [saved] note in
            if let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges { saved.list.withLock { $0.append(changes) } }
        }
    }

    deinit { token.map { NotificationCenter.default.removeObserver($0) } }

    func take() -> [ContextChanges] {
        saved.list.withLock { s in
            defer { s = [] }
            return s
        }
    }
}

/// Applies a batch to a copy of the previous results, as a table view would.
private func apply(_ batch: [Results<Customer>.Change], to mirror: inout [Customer]) {
    let removed = batch.filter { $0.type == .delete || $0.type == .move }.compactMap { $0.indexPath?.item }.sorted(by: >)
    for i in removed { mirror.remove(at: i) }
    let inserted = batch.filter { $0.type == .insert || $0.type == .move }
        .compactMap { c in c.newIndexPath.map { ($0.item, c.object) } }.sorted { $0.0 < $1.0 }
    for (i, object) in inserted { mirror.insert(object, at: i) }
}

private func makeCustomer(_ context: ManagedObjectContext, _ id: String, _ name: String, orders: Int) {
    let u = Customer(context: context)
    u.uuid = id
    u.name = name
    u.numberOfOrders = orders
    u.birthDate = Date(timeIntervalSinceReferenceDate: 0)
}

@Suite struct ResultsTests {
    @Test func randomSavesAndMergesKeepAMirroredArrayEqualToTheResults() async throws {
        await propertyCheck(count: 12, input: Gen.int(in: 0...Int.max)) { seed in
            do {
                var g = SplitMixGenerator(seed: seed)
                let (coordinator, main) = try makeQueryStack()
                let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                let capture = SaveCapture(background)
                var nextID = 0
                let results = try main.performAndWait {
                    try Results<Customer>(context: main, filterBy: \Customer.numberOfOrders >= 2,
                                      sortedBy: [.ascending(\Customer.name), .ascending(\Customer.uuid)])
                }
                var mirror: [Customer] = []
                var batches = 0
                main.performAndWait {
                    mirror = results.toArray()
                    results.registerForChanges { batch in
                        batches += 1
                        #expect(Set(batch.map { ObjectIdentifier($0.object) }).count == batch.count, "an object twice in a batch, seed \(seed)")
                        for c in batch {
                            switch c.type {
                            case .insert: #expect(c.indexPath == nil && c.newIndexPath != nil)
                            case .delete: #expect(c.indexPath != nil && c.newIndexPath == nil)
                            case .move, .update: #expect(c.indexPath != nil && c.newIndexPath != nil)
                            }
                        }
                        apply(batch, to: &mirror)
                    }
                }
                for _ in 0..<25 {
                    let onMain = Bool.random(using: &g)
                    let context = onMain ? main : background
                    let edits = Int.random(in: 1...4, using: &g)
                    var plan: [(Int, Int, String, Int)] = []
                    for _ in 0..<edits {
                        plan.append((Int.random(in: 0...2, using: &g), Int.random(in: 0...1000, using: &g),
                                     ["Ada", "Bob", "Cy", "Di"].randomElement(using: &g)!, Int.random(in: 0...4, using: &g)))
                    }
                    let firstID = nextID
                    nextID += edits
                    try context.performAndWait {
                        let users = try context.fetch(FetchRequest<Customer>(nil, sortedBy: [.ascending(\Customer.uuid)], in: context))
                        var deleted = Set<ObjectIdentifier>()
                        for (i, (kind, pick, name, orders)) in plan.enumerated() {
                            let live = users.filter { !deleted.contains(ObjectIdentifier($0)) }
                            if kind == 0 || live.isEmpty {
                                makeCustomer(context, "u\(firstID + i)", name, orders: orders)
                            } else if kind == 1 {
                                let u = live[pick % live.count]
                                if pick % 2 == 0 { u.name = name } else { u.numberOfOrders = orders }
                            } else {
                                let u = live[pick % live.count]
                                deleted.insert(ObjectIdentifier(u))
                                context.delete(u)
                            }
                        }
                        try context.save()
                    }
                    let before = batches
                    main.performAndWait {
                        if !onMain { for changes in capture.take() { main.mergeChanges(fromContextDidSave: changes) } }
                        #expect(batches - before <= 1, "one batch per save or merge, seed \(seed)")
                        #expect(mirror.map(\.objectID) == results.toArray().map(\.objectID), "seed \(seed)")
                    }
                }
            } catch {
                Issue.record("\(seed): \(error)")
            }
        }
    }

    @Test func filterAndSortKeepTheRegistrationAlive() throws {
        let (_, context) = try makeQueryStack()
        try context.performAndWait {
            let results = try Results<Customer>(context: context)
            #expect(results.isEmpty && results.numberOfObjectsInFirstSection == 0 && results.numberOfSections == 1)
            var calls: [[Results<Customer>.Change]] = []
            results.registerForChanges { calls.append($0) }
            makeCustomer(context, "b", "Bob", orders: 1)
            makeCustomer(context, "a", "Ada", orders: 3)
            try context.save()
            #expect(calls.count == 1 && calls.last?.count == 2)
            #expect(results.toArray().map(\.uuid) == ["a", "b"])    // the ID order by default
            try results.filterBy(\Customer.numberOfOrders > 2).sortBy(.descending(\Customer.name))
            #expect(results.toArray().map(\.uuid) == ["a"])
            makeCustomer(context, "c", "Cy", orders: 5)
            try context.save()
            #expect(calls.count == 2)
            #expect(calls.last?.first?.type == .insert && calls.last?.first?.newIndexPath == IndexPath(item: 0, section: 0))
            #expect(results.toArray().map(\.uuid) == ["c", "a"])
            #expect(results.numberOfObjectsInFirstSection == 2 && results.object(at: IndexPath(item: 1, section: 0)).uuid == "a")
            #expect(!results.isEmpty && results.numberOfObjects(in: 3) == 0)
            #expect(throws: ContextError.self) { try results.sortBy([]) }    // no order: refused, nothing changes
            #expect(throws: KeyPathQueryError.self) { try results.filterBy(\Customer.greeting == "hello") }
            #expect(results.toArray().map(\.uuid) == ["c", "a"])
            makeCustomer(context, "d", "Dan", orders: 9)
            try context.save()
            #expect(calls.count == 3 && results.toArray().map(\.uuid) == ["d", "c", "a"])
            #expect(results.objects(for: [IndexPath(item: 2, section: 0), IndexPath(item: 1, section: 0)]).map(\.uuid) == ["a", "c"])
        }
    }

    @Test func releasedResultsStopHearingChangesAndFinishTheirStreams() async throws {
        let (_, context) = try makeQueryStack()
        let calls = Mutex(0)
        var stream: AsyncStream<[Results<Customer>.Change]>?
        try context.performAndWait {
            var results: Results<Customer>? = try Results<Customer>(context: context)
            results?.registerForChanges { _ in calls.withLock { $0 += 1 } }
            stream = results?.changes
            makeCustomer(context, "a", "Ada", orders: 1)
            try context.save()
            #expect(calls.withLock { $0 } == 1)
            weak let released = results
            results = nil
            #expect(released == nil)
            makeCustomer(context, "b", "Bob", orders: 1)
            try context.save()
        }
        #expect(calls.withLock { $0 } == 1)
        var delivered: [[String]] = []
        for await batch in try #require(stream) { delivered.append(batch.map { "\($0.type) \($0.newIndexPath?.item ?? -1)" }) }
        #expect(delivered == [["insert 0"]])    // buffered before the release, then finished
    }

    @Test func theChangesStreamCarriesAMergedBatch() async throws {
        let (coordinator, main) = try makeQueryStack()
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let capture = SaveCapture(background)
        let results = try main.performAndWait {
            try Results<Customer>(context: main, filterBy: .beginsWith(\Customer.name, "A"))
        }
        let stream = main.performAndWait { results.changes }
        try background.performAndWait {
            makeCustomer(background, "2", "Ann", orders: 0)
            makeCustomer(background, "1", "Ada", orders: 0)
            makeCustomer(background, "3", "Bob", orders: 0)
            try background.save()
        }
        main.performAndWait { for changes in capture.take() { main.mergeChanges(fromContextDidSave: changes) } }
        var iterator = stream.makeAsyncIterator()
        let batch = try #require(await iterator.next())
        #expect(batch.map(\.type) == [.insert, .insert])
        #expect(batch.compactMap(\.newIndexPath?.item).sorted() == [0, 1])
        main.performAndWait {
            #expect(results.toArray().map(\.uuid) == ["1", "2"])
            #expect(Set(batch.map { $0.object.uuid }) == ["1", "2"])
        }
    }

    @Test func aToOnePathFilterFollowsAMergedChangeOfTheRelatedObject() throws {
        let (coordinator, main) = try makeQueryStack()
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let capture = SaveCapture(background)
        try background.performAndWait {
            let bob = Customer(context: background)
            bob.uuid = "2"; bob.name = "Bob"; bob.birthDate = Date()
            let order = Purchase(context: background)
            order.title = "o"
            order.user = bob
            try background.save()
        }
        _ = capture.take()
        let results = try main.performAndWait {
            try Results<Purchase>(context: main, filterBy: \Purchase.user?.name == "Ada", sortedBy: [.ascending(\Purchase.title)])
        }
        var batches: [[Results<Purchase>.Change.ChangeType]] = []
        main.performAndWait {
            #expect(results.isEmpty)
            results.registerForChanges { batches.append($0.map(\.type)) }
        }
        try background.performAndWait {
            let bob = try #require(try background.fetch(FetchRequest<Customer>(\Customer.uuid == "2", in: background)).first)
            bob.name = "Ada"
            try background.save()
        }
        main.performAndWait {
            for changes in capture.take() { main.mergeChanges(fromContextDidSave: changes) }
            #expect(batches == [[.insert]])
            #expect(results.toArray().map(\.title) == ["o"])
        }
    }

    // A Results straight from a store manager (CorePersistence's `Results<User>()`): in its main context,
    // ordered by the ID, told of each write of the manager's writer once.
    @Test func resultsFromAStoreManagerFollowTheWritersSaves() async throws {
        let manager = try RecordsTestModel.makeManager()
        try await User.parse(jsonArray: [["uuid": "b", "name": "Bea"]], in: manager)
        let main = manager.mainContext
        let batches = Mutex<[[String]]>([])
        let (results, filtered) = try main.performAndWait {
            let results = try Results<User>(store: manager)
            results.registerForChanges { changes in batches.withLock { $0.append(changes.map { "\($0.type) \($0.object.uuid)" }) } }
            let filtered = try Results<User>(store: manager, filterBy: \User.name != "Bea", sortedBy: [.descending(\User.uuid)])
            return (results, filtered)
        }
        #expect(main.performAndWait { results.context === main && results.toArray().map(\.uuid) == ["b"] })
        try await User.parse(jsonArray: [["uuid": "c", "name": "Cy"], ["uuid": "a", "name": "Al"]], in: manager)
        main.performAndWait {
            #expect(results.toArray().map(\.uuid) == ["a", "b", "c"])
            #expect(filtered.toArray().map(\.uuid) == ["c", "a"])
        }
        #expect(batches.withLock { $0 }.map { $0.sorted() } == [["insert a", "insert c"]])
    }
}
