import Foundation
import Synchronization
import Testing
@testable import Granary

/// Records every delegate call as a line of text, in order.
final class RecordingDelegate<Result: ManagedObject>: FetchedResultsControllerDelegate {
    var calls: [String] = []
    let label: (Result) -> String

    init(label: @escaping (Result) -> String) { self.label = label }

    func controllerWillChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("will") }
    func controllerDidChangeContent(_ controller: FetchedResultsController<Result>) { calls.append("did") }

    func controller(_ controller: FetchedResultsController<Result>, didChange object: Result, at indexPath: IndexPath?,
                    for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
        func show(_ p: IndexPath?) -> String { p.map { "\($0.section).\($0.item)" } ?? "-" }
        calls.append("\(type) \(label(object)) \(show(indexPath))->\(show(newIndexPath))")
    }

    func controller(_ controller: FetchedResultsController<Result>, didChange sectionInfo: FetchedResultsController<Result>.Section,
                    atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {
        calls.append("section \(type) \(sectionInfo.name) \(sectionIndex)")
    }

    func take() -> [String] {
        defer { calls = [] }
        return calls
    }
}

@discardableResult
func makeEmployee(_ context: ManagedObjectContext, _ name: String, salary: Int, company: Company? = nil) -> Employee {
    let e = Employee(context: context)
    e.name = name
    e.salary = salary
    e.email = "\(name.lowercased())@x.io"
    e.company = company
    return e
}

/// The changes another context's saves carry, for merging by hand.
final class SaveRecorder: @unchecked Sendable {
    // @unchecked: `token` is set once in init and read only in deinit.
    private final class Saved: Sendable {
        let list = Mutex<[ContextChanges]>([])
    }
    private let saved = Saved()
    private let token: any NSObjectProtocol

    init(_ context: ManagedObjectContext) {
        let saved = self.saved
        token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) { note in
            if let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges { saved.list.withLock { $0.append(changes) } }
        }
    }

    deinit { NotificationCenter.default.removeObserver(token) }

    func take() -> [ContextChanges] {
        saved.list.withLock { s in
            defer { s = [] }
            return s
        }
    }
}

@Suite struct FetchedResultsControllerTests {
    func names(_ controller: FetchedResultsController<Employee>) -> [String] { controller.fetchedObjects.map(\.name) }

    @Test func insertDeleteMoveAndUpdateAfterASaveInTheSameContext() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let a = makeEmployee(context, "A", salary: 10)
            makeEmployee(context, "B", salary: 20)
            let c = makeEmployee(context, "C", salary: 30)
            let e = makeEmployee(context, "E", salary: 40)
            makeEmployee(context, "Rich", salary: 500)
            try context.save()

            let request = FetchRequest<Employee>(predicate: #Predicate { $0.salary < 100 }, sortBy: [SortDescriptor(\.salary)])
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            var differences: [FetchedResultsDifference] = []
            controller.onChange = { differences.append($0) }
            try controller.performFetch()
            #expect(names(controller) == ["A", "B", "C", "E"])
            #expect(controller.sections.count == 1 && controller.sections[0].name == "" && controller.sections[0].numberOfObjects == 4)
            #expect(controller.indexPath(forObject: c) == IndexPath(item: 2, section: 0))
            #expect(controller.object(at: IndexPath(item: 3, section: 0)) === e)

            makeEmployee(context, "D", salary: 15)
            context.delete(c)
            a.salary = 25
            e.name = "E2"
            try context.save()

            #expect(names(controller) == ["D", "B", "A", "E2"])
            #expect(delegate.take() == ["will", "delete C 0.2->-", "insert D -->0.0", "move A 0.0->0.2", "update E2 0.3->0.3", "did"])
            var expected = FetchedResultsDifference()
            expected.deleted = [IndexPath(item: 2, section: 0)]
            expected.inserted = [IndexPath(item: 0, section: 0)]
            expected.moved = [.init(from: IndexPath(item: 0, section: 0), to: IndexPath(item: 2, section: 0))]
            expected.updated = [IndexPath(item: 3, section: 0)]
            #expect(differences == [expected])

            // An object leaving the predicate is a delete; one that matches nothing changes nothing.
            e.salary = 1000
            let rich = try #require(try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.salary == 500 })).first)
            rich.name = "Richer"
            try context.save()
            #expect(names(controller) == ["D", "B", "A"])
            #expect(delegate.take() == ["will", "delete E2 0.3->-", "did"])
            let company = Company(context: context)
            company.name = "Unrelated"
            try context.save()
            #expect(delegate.take().isEmpty)
            #expect(differences.count == 2)
        }
    }

    @Test func unsavedChangesRollbackAndDeletingAnUnsavedInsert() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            makeEmployee(context, "A", salary: 10)
            try context.save()
            let controller = FetchedResultsController(fetchRequest: FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]),
                                                      managedObjectContext: context)
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            try controller.performFetch()

            let b = makeEmployee(context, "B", salary: 20)
            context.processPendingChanges()
            #expect(delegate.take() == ["will", "insert B -->0.1", "did"])
            context.delete(b)  // never saved: it just goes, and the controller is told
            context.processPendingChanges()
            #expect(delegate.take() == ["will", "delete B 0.1->-", "did"])

            makeEmployee(context, "C", salary: 30)
            let a = controller.fetchedObjects[0]
            a.name = "Z"
            context.processPendingChanges()
            #expect(names(controller) == ["C", "Z"])
            // Z kept its order relative to the other survivors (there are none): an update, not a move.
            #expect(delegate.take() == ["will", "insert C -->0.0", "update Z 0.0->0.1", "did"])
            context.rollback()
            #expect(names(controller) == ["A"])
            #expect(delegate.take() == ["will", "delete C 0.0->-", "update A 0.1->0.0", "did"])
        }
    }

    @Test func mergesFromAnotherContextInsertUpdateMoveAndDelete() throws {
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let recorder = SaveRecorder(other)
        let controller = FetchedResultsController(
            fetchRequest: FetchRequest<Employee>(predicate: #Predicate { $0.salary < 100 }, sortBy: [SortDescriptor(\.salary)]),
            managedObjectContext: context)
        let delegate = RecordingDelegate<Employee> { $0.name }
        try context.performAndWait {
            makeEmployee(context, "A", salary: 10)
            makeEmployee(context, "B", salary: 20)
            makeEmployee(context, "C", salary: 30)
            makeEmployee(context, "D", salary: 60)
            try context.save()
            controller.delegate = delegate
            try controller.performFetch()
        }
        try other.performAndWait {
            makeEmployee(other, "Out", salary: 700)
            try other.save()
        }
        context.performAndWait {
            for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
            #expect(delegate.take().isEmpty)
        }
        try other.performAndWait {
            let all = try other.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]))
            let (b, c, d, out) = (all[1], all[2], all[3], all[4])
            makeEmployee(other, "F", salary: 5)  // inserted elsewhere
            b.salary = 1  // moves to the front
            other.delete(c)
            d.name = "D2"  // changes in place
            out.salary = 40  // never loaded here, now matches
            try other.save()
        }
        context.performAndWait {
            for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
            #expect(names(controller) == ["B", "F", "A", "Out", "D2"])
            #expect(delegate.take() == [
                "will", "delete C 0.2->-", "insert F -->0.1", "insert Out -->0.3", "move B 0.1->0.0", "update D2 0.3->0.4", "did",
            ])
        }
    }

    @Test func automaticMergesReachTheAsyncSequence() async throws {
        let (coordinator, view) = try makeStack()
        view.automaticallyMergesChangesFromParent = true
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let controller = FetchedResultsController(fetchRequest: FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]),
                                                  managedObjectContext: view)
        let stream = try view.performAndWait {
            try controller.performFetch()
            return controller.differences()
        }
        try background.performAndWait {
            makeEmployee(background, "A", salary: 1)
            makeEmployee(background, "B", salary: 2)
            try background.save()
        }
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.inserted == [IndexPath(item: 0, section: 0), IndexPath(item: 1, section: 0)])
        let count = view.performAndWait { controller.fetchedObjects.count }
        #expect(count == 2)
        withExtendedLifetime(controller) {}
    }

    @Test func sectionsByAnAttribute() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            for (name, salary) in [("a", 10), ("b", 10), ("c", 20), ("d", 30)] { makeEmployee(context, name, salary: salary) }
            try context.save()
            var request = FetchRequest<Employee>()
            request.sortKeys = [SortKey("salary"), SortKey("name")]
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "salary")
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            try controller.performFetch()
            #expect(controller.sections.map(\.name) == ["10", "20", "30"])
            #expect(controller.sections.map(\.numberOfObjects) == [2, 1, 1])
            #expect(controller.sectionIndexTitles == ["1", "2", "3"])
            #expect(controller.indexPath(forObject: controller.fetchedObjects[2]) == IndexPath(item: 0, section: 1))

            // c joins section 10 (its section is gone); a new section 15 appears.
            let c = controller.object(at: IndexPath(item: 0, section: 1))
            c.salary = 10
            makeEmployee(context, "e", salary: 15)
            try context.save()
            #expect(controller.sections.map(\.name) == ["10", "15", "30"])
            #expect(controller.sections[0].objects.map(\.name) == ["a", "b", "c"])
            #expect(delegate.take() == ["will", "section delete 20 1", "section insert 15 1", "insert e -->1.0", "move c 1.0->0.2", "did"])
        }
    }

    @Test func sectionsThroughARelationshipFollowChangesOfTheRelatedObjects() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let acme = Company(context: context)
            acme.name = "Acme"
            let beta = Company(context: context)
            beta.name = "Beta"
            makeEmployee(context, "Ann", salary: 1, company: acme)
            makeEmployee(context, "Bob", salary: 1, company: acme)
            makeEmployee(context, "Cy", salary: 1, company: beta)
            try context.save()
            let request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.company?.name), SortDescriptor(\.name)])
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "company.name")
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            try controller.performFetch()
            #expect(controller.sections.map(\.name) == ["Acme", "Beta"])
            #expect(controller.sections.map { $0.objects.map(\.name) } == [["Ann", "Bob"], ["Cy"]])

            // Renaming a company moves its section: only the company changed.
            acme.name = "Zeta"
            try context.save()
            #expect(controller.sections.map(\.name) == ["Beta", "Zeta"])
            #expect(delegate.take() == ["will", "section delete Acme 0", "section insert Zeta 1", "move Ann 0.0->1.0", "move Bob 0.1->1.1", "did"])

            // Moving an employee between companies moves it between sections.
            controller.fetchedObjects[0].company = acme
            try context.save()
            #expect(controller.sections.map { $0.objects.map(\.name) } == [["Ann", "Bob", "Cy"]])
            #expect(delegate.take() == ["will", "section delete Beta 0", "move Cy 0.0->0.2", "did"])
        }
    }

    @Test func requestsTheControllerCannotFollowAreRejected() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            let unsorted = FetchedResultsController(fetchRequest: FetchRequest<Employee>(), managedObjectContext: context)
            let error = #expect(throws: ContextError.self) { try unsorted.performFetch() }
            guard case .invalidRequest(let entity, let reason)? = error else {
                Issue.record("unexpected \(String(describing: error))")
                return
            }
            #expect(entity == "Employee" && reason.contains("sort"))
            let byRelationship = FetchedResultsController(fetchRequest: FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]),
                                                          managedObjectContext: context, sectionNameKeyPath: "company")
            #expect(throws: ContextError.self) { try byRelationship.performFetch() }
        }
    }

    @Test func anUpdateThatFailsKeepsTheResultsAndSaysWhy() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            var request = FetchRequest<Employee>()
            request.sortKeys = [SortKey("nickname")]  // no such property; nothing to sort yet
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            try controller.performFetch()
            #expect(controller.trackingError == nil)
            makeEmployee(context, "A", salary: 1)
            context.processPendingChanges()
            #expect(controller.fetchedObjects.isEmpty)
            #expect(controller.trackingError is PredicateParseError)
        }
    }

    @Test func fetchLimitsAreFollowedByFetchingAgain() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            for i in 0..<5 { makeEmployee(context, "E\(i)", salary: i) }
            try context.save()
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.fetchLimit = 3
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            let delegate = RecordingDelegate<Employee> { $0.name }
            controller.delegate = delegate
            try controller.performFetch()
            #expect(names(controller) == ["E0", "E1", "E2"])
            controller.fetchedObjects[0].salary = 100
            try context.save()
            #expect(names(controller) == ["E1", "E2", "E3"])
            #expect(delegate.take() == ["will", "delete E0 0.0->-", "insert E3 -->0.2", "did"])
        }
    }

    @Test func differencesReplayOntoTheOldResults() {
        // The diff alone: sections reordered, objects moved between sections, inserted and deleted.
        let old: [(name: String, items: [Int])] = [("a", [1, 2, 3]), ("b", [4, 5]), ("c", [6])]
        let new: [(name: String, items: [Int])] = [("c", [6, 2]), ("a", [1, 3, 7]), ("d", [5])]
        let (difference, _) = FetchedResultsDifference.between(old: old, new: new, changed: [1, 6])
        #expect(FetchedResultsReplay.apply(difference, to: old, new: new) == new.map(\.items))
        #expect(difference.updated.count + difference.moved.count + difference.inserted.count > 0)
    }
}

/// Applies a difference the way `FetchedResultsDifference` documents, independently of the controller.
enum FetchedResultsReplay {
    static func apply<ID: Hashable>(_ difference: FetchedResultsDifference, to old: [(name: String, items: [ID])],
                                    new: [(name: String, items: [ID])]) -> [[ID]] {
        var sections: [[ID?]] = old.map { $0.items.map { Optional($0) } }
        var carried: [IndexPath: ID] = [:]
        for move in difference.moved { carried[move.to] = old[move.from.section].items[move.from.item] }
        // 1. Objects out (old coordinates), marked first so indexes stay valid.
        for path in difference.deleted + difference.moved.map(\.from) { sections[path.section][path.item] = nil }
        var compacted = sections.map { $0.compactMap { $0 } }
        // 2. Sections out; they must be empty by now.
        for change in difference.deletedSections.reversed() {
            precondition(compacted[change.index].isEmpty, "deleted section \(change.name) still holds objects")
            compacted.remove(at: change.index)
        }
        // 3. Sections in, ascending.
        for change in difference.insertedSections { compacted.insert([], at: change.index) }
        // 4. Objects in, ascending: inserted ones from the new results, moved ones carried over.
        let arrivals = (difference.inserted.map { ($0, new[$0.section].items[$0.item]) } + carried.map { ($0.key, $0.value) })
            .sorted { $0.0 < $1.0 }
        for (path, id) in arrivals { compacted[path.section].insert(id, at: path.item) }
        return compacted
    }
}
