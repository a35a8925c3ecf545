import Foundation
import PropertyBased
import Testing
@testable import Granary

/// The incremental update of a one-section controller (the few objects an event names, found and put
/// back by binary search, the difference worked out from them) against the general one (old and new
/// results compared whole): the same differences, the same delegate calls, the same results, on random
/// edits of 1 to 5 objects of up to 300 results.
@Suite struct FetchedResultsIncrementalUpdateTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    /// A size for random results: small ones often, where every edge is near.
    static func size(_ r: inout Random) -> Int {
        switch r.int(3) {
        case 0: return r.int(5)
        case 1: return r.int(40)
        default: return r.int(301)
        }
    }

    // MARK: The difference alone

    /// The tie rule of the heaviest run, against every subsequence of short arrays.
    @Test func theHeaviestRunIsTheFirstOfTheHeaviest() async {
        await propertyCheck(count: 3000, input: Gen.int(in: 0...Int.max)) { seed in
            var r = Random(state: UInt64(seed))
            let count = r.int(10)
            let bound = count + r.int(3)
            let values = Array(Array(0..<bound).shuffled(using: &r).prefix(count))
            // Few distinct weights, so that ties are common.
            let weights = values.map { _ in 1 + r.int(2) }
            var best: (weight: Int, run: [Int]) = (0, [])
            for mask in 0..<(1 << count) {
                let run = (0..<count).filter { mask & (1 << $0) != 0 }
                guard zip(run, run.dropFirst()).allSatisfy({ values[$0] < values[$1] }) else { continue }
                let weight = run.map { weights[$0] }.reduce(0, +)
                if weight > best.weight || (weight == best.weight && run.lexicographicallyPrecedes(best.run)) { best = (weight, run) }
            }
            #expect(FetchedResultsDifference.heaviestIncreasingRun(values, weights: weights, bound: bound) == best.run,
                    "seed \(seed): \(values) weighing \(weights)")
        }
    }

    struct Change: Hashable {
        var type: FetchedResultsChangeType
        var old: IndexPath?
        var new: IndexPath?
    }

    /// `forOneSection` from the named objects alone equals `between` on the whole lists.
    @Test func theOneSectionDifferenceIsTheGeneralOne() async {
        await propertyCheck(count: 4000, input: Gen.int(in: 0...Int.max)) { seed in
            var r = Random(state: UInt64(seed))
            let old = Array(0..<Self.size(&r))
            let named = Array(old.shuffled(using: &r).prefix(r.int(6)))
            let deletedIDs = Set(named.filter { _ in r.int(3) == 0 })
            let replacedIDs = named.filter { !deletedIDs.contains($0) }
            let arrivingIDs = Array(1000..<(1000 + r.int(4)))
            var new = old.filter { !named.contains($0) }
            for id in (replacedIDs + arrivingIDs).shuffled(using: &r) {
                // Often near where it was: that is where runs of equal weight hide.
                let near = r.bool() ? old.firstIndex(of: id) : nil
                let at = near.map { min(new.count, max(0, $0 + r.int(3) - 1)) } ?? r.int(new.count + 1)
                new.insert(id, at: at)
            }
            let changed = Set(replacedIDs.filter { _ in r.bool() })

            let general = FetchedResultsDifference.between(old: [("", old)], new: [("", new)], changed: changed)
            let fast = FetchedResultsDifference.forOneSection(
                oldCount: old.count, deleted: deletedIDs.map { old.firstIndex(of: $0)! }, inserted: arrivingIDs.map { new.firstIndex(of: $0)! },
                replaced: replacedIDs.map { .init(old: old.firstIndex(of: $0)!, new: new.firstIndex(of: $0)!, isChanged: changed.contains($0)) })
            let label = "seed \(seed): \(old.count) objects, deleted \(deletedIDs.sorted()), replaced \(replacedIDs), changed \(changed.sorted())"
            #expect(fast.difference == general.difference, "\(label)")
            #expect(fast.changes.map { Change(type: $0.type, old: $0.old, new: $0.new) }
                    == general.changes.map { Change(type: $0.type, old: $0.old, new: $0.new) }, "\(label)")
        }
    }

    // MARK: The controller

    enum Order: CaseIterable {
        /// A total order: a fresh fetch must give the same results.
        case bySalaryThenEmail
        /// Salaries only, descending: most objects tie, and ties keep their earlier order.
        case bySalaryDescending
        /// Names, ignoring case and accents, digits as numbers: many names tie without being equal.
        case byNameLocalized
    }

    static func request(_ order: Order) -> FetchRequest<Employee> {
        var request = FetchRequest<Employee>()
        request.filter = .compare(["salary"], .notEqual, .value(.int(20)))
        switch order {
        case .bySalaryThenEmail: request.sortKeys = [SortKey("salary"), SortKey("email")]
        case .bySalaryDescending: request.sortKeys = [SortKey("salary", ascending: false)]
        case .byNameLocalized: request.sortKeys = [SortKey("name", comparison: .localized)]
        }
        return request
    }

    /// Every delegate call, with the object by identity.
    final class CallLog: FetchedResultsControllerDelegate {
        var calls: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController<Employee>) { calls.append("will") }
        func controller(_ controller: FetchedResultsController<Employee>, didChange object: Employee, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            calls.append("\(type) \(ObjectIdentifier(object)) \(indexPath.map { "\($0)" } ?? "-") \(newIndexPath.map { "\($0)" } ?? "-")")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController<Employee>) { calls.append("did") }
    }

    static func check(seed: Int, order: Order) throws {
        var r = Random(state: UInt64(seed))
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let recorder = SaveRecorder(other)
        var serial = 0
        var log: [String] = []
        let salaries = [10, 20, 30, 40, 50]
        let names = ["Ann", "ann", "Émile", "emile", "N2", "n10", "Zoë", "zoe"]

        func insert(into context: ManagedObjectContext, _ r: inout Random) {
            serial += 1
            let e = Employee(context: context)
            e.name = r.pick(names)
            e.email = "n\(serial)@x.io"
            e.salary = r.pick(salaries)
            log.append("insert n\(serial) \(e.name) \(e.salary)")
        }

        /// One random edit: an insert, a delete, a salary change (the sort key; to 20, out of the
        /// results; possibly to the same value), the same salary for a few neighbours in the results
        /// (so that several objects jump a few others together: the ties of the heaviest run), or a
        /// rename (not the sort key). `order` is the results' order, by ID.
        func edit(_ context: ManagedObjectContext, pool: [Employee], order: [ManagedObjectID], _ r: inout Random) {
            let live = pool.filter { $0.managedObjectContext === context && !$0.isDeleted }
            let choice = r.int(9)
            guard choice < 2 || !live.isEmpty else { return insert(into: context, &r) }
            switch choice {
            case 0, 1:
                insert(into: context, &r)
            case 2:
                let e = r.pick(live)
                log.append("delete \(e.email!)")
                context.delete(e)
            case 3, 4:
                let e = r.pick(live)
                e.salary = r.pick(salaries)
                log.append("salary \(e.email!) \(e.salary)")
            case 5, 6:
                guard !order.isEmpty else { return }
                let start = r.int(order.count)
                let salary = r.pick(salaries)
                let byID = Dictionary(live.map { ($0.objectID, $0) }, uniquingKeysWith: { a, _ in a })
                for id in order[start..<min(order.count, start + 1 + r.int(3))] {
                    guard let e = byID[id] else { continue }
                    e.salary = salary
                    log.append("salary \(e.email!) \(e.salary)")
                }
            default:
                let e = r.pick(live)
                e.name = r.bool() ? e.name + "'" : r.pick(names)
                log.append("rename \(e.email!) \(e.name)")
            }
        }

        func ids(_ objects: [Employee]) -> [ObjectIdentifier] { objects.map(ObjectIdentifier.init) }

        try context.performAndWait {
            for _ in 0..<Self.size(&r) { insert(into: context, &r) }
            try context.save()

            let request = Self.request(order)
            let general = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            general.updatePath = .general
            let incremental = FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            incremental.updatePath = .incremental
            let generalCalls = CallLog()
            let incrementalCalls = CallLog()
            general.delegate = generalCalls
            incremental.delegate = incrementalCalls
            var generalDifferences: [FetchedResultsDifference] = []
            var incrementalDifferences: [FetchedResultsDifference] = []
            general.onChange = { generalDifferences.append($0) }
            incremental.onChange = { incrementalDifferences.append($0) }
            try general.performFetch()
            try incremental.performFetch()
            var mirror = ids(incremental.fetchedObjects)

            for step in 0..<12 {
                log = []
                let pool = try context.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.email)]))
                let resultIDs = incremental.fetchedObjects.map(\.objectID)
                let ending = r.int(5)
                if ending == 4 && !context.hasChanges {
                    log.append("in other context:")
                    try other.performAndWait {
                        other.reset()
                        let theirs = try other.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.email)]))
                        for _ in 0..<(1 + r.int(5)) { edit(other, pool: theirs, order: resultIDs, &r) }
                        try other.save()
                    }
                    log.append("merge")
                    for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
                } else {
                    for _ in 0..<(1 + r.int(5)) { edit(context, pool: pool, order: resultIDs, &r) }
                    switch ending {
                    case 0, 1:
                        log.append("processPendingChanges")
                        context.processPendingChanges()
                    case 2:
                        log.append("save")
                        try context.save()
                    default:
                        log.append("rollback")
                        context.rollback()
                    }
                }
                let label = "seed \(seed) \(order) step \(step): \(log.joined(separator: ", "))"

                #expect(incrementalDifferences == generalDifferences, "\(label)")
                #expect(incrementalCalls.calls == generalCalls.calls, "\(label)")
                #expect(ids(incremental.fetchedObjects) == ids(general.fetchedObjects), "\(label)")
                #expect(incremental.sections.count == 1 && ids(incremental.sections[0].objects) == ids(incremental.fetchedObjects), "\(label)")
                let now = ids(incremental.fetchedObjects)
                for difference in incrementalDifferences {
                    mirror = FetchedResultsReplay.apply(difference, to: [("", mirror)], new: [("", now)])[0]
                }
                #expect(mirror == now, "\(label): the differences replayed")
                mirror = now
                if order == .bySalaryThenEmail {
                    #expect(ids(try context.fetch(request)) == now, "\(label): a fresh fetch")
                }
                for (i, e) in incremental.fetchedObjects.enumerated() {
                    #expect(incremental.indexPath(forObject: e) == IndexPath(item: i, section: 0), "\(label)")
                }
                for e in pool where !now.contains(ObjectIdentifier(e)) {
                    #expect(incremental.indexPath(forObject: e) == nil, "\(label)")
                }
                generalDifferences = []
                incrementalDifferences = []
                generalCalls.calls = []
                incrementalCalls.calls = []
                withExtendedLifetime(pool) {}
            }
            #expect(general.incrementalUpdateCount == 0)
            #expect(incremental.incrementalUpdateCount > 0, "seed \(seed) \(order): the incremental path was never taken")
        }
    }

    @Test(arguments: Order.allCases)
    func theIncrementalPathReportsWhatTheGeneralPathReports(_ order: Order) async {
        await propertyCheck(count: 40, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed, order: order) }
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<12 {
            for order in Order.allCases { try Self.check(seed: seed, order: order) }
        }
    }

    /// An object inserted here reaches the results with a temporary ID, gets a permanent one at the
    /// save, and is deleted by another context: the merge detaches it before the event names it, so the
    /// controller finds it by its ID among the results, not through the context.
    @Test func aResultSavedHereAndDeletedElsewhereLeaves() throws {
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let recorder = SaveRecorder(other)
        try context.performAndWait {
            for i in 0..<40 {
                let e = Employee(context: context)
                e.name = "N\(i)"
                e.email = "n\(i)@x.io"
                e.salary = 10
            }
            try context.save()
            let controller = FetchedResultsController(fetchRequest: Self.request(.bySalaryThenEmail), managedObjectContext: context)
            var differences: [FetchedResultsDifference] = []
            controller.onChange = { differences.append($0) }
            try controller.performFetch()

            let late = Employee(context: context)
            late.name = "Late"
            late.email = "late@x.io"
            late.salary = 30
            context.processPendingChanges()
            // Another object new to the context: the controller looks for it among the results' IDs,
            // and takes the late one's ID while it is still temporary.
            try other.performAndWait {
                let e = Employee(context: other)
                e.name = "Other"
                e.email = "other@x.io"
                e.salary = 40
                try other.save()
            }
            for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
            try context.save()
            let id = late.objectID
            #expect(!id.isTemporaryID)
            differences = []
            let incrementalBefore = controller.incrementalUpdateCount
            try other.performAndWait {
                other.delete(try other.existingObject(with: id))
                try other.save()
            }
            for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
            #expect(controller.fetchedObjects.map(\.email) == (0..<40).map { "n\($0)@x.io" }.sorted() + ["other@x.io"])
            #expect(differences.map(\.deleted) == [[IndexPath(item: 40, section: 0)]])
            #expect(controller.incrementalUpdateCount == incrementalBefore + 1)
        }
    }

    /// Arrivals' ranks follow ID order (key, then URI): the URIs made only for keys that tie give
    /// the order of comparing URIs always, with saved employees and contractors and unsaved ones (no
    /// key: their URIs decide).
    @Test func idOrderComparesURIsOnlyForTiedKeys() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            func people(_ count: Int) -> [Person] {
                (0..<count).map { i -> Person in
                    let person: Person = i % 2 == 0 ? Employee(context: context) : Contractor(context: context)
                    person.name = "P\(i)"
                    return person
                }
            }
            let saved = people(30)
            try context.save()
            let ids = (saved + people(14)).map(\.objectID).shuffled()
            let expected = ids.sorted { ($0.primaryKey ?? .max, $0.description) < ($1.primaryKey ?? .max, $1.description) }
            #expect(FetchedResultsController<Employee>.sortedInIDOrder(ids) == expected)
            #expect(ids.filter(\.isTemporaryID).count == 14)
        }
    }

    /// Few named objects among many take the incremental path by themselves; many take the general one.
    @Test func theAutomaticChoiceFollowsHowManyObjectsAnEventNames() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            var employees: [Employee] = []
            for i in 0..<200 {
                let e = Employee(context: context)
                e.name = "N\(i)"
                e.email = "n\(i)@x.io"
                e.salary = 10 * (i % 7)
                employees.append(e)
            }
            try context.save()
            let controller = FetchedResultsController(fetchRequest: Self.request(.bySalaryThenEmail), managedObjectContext: context)
            try controller.performFetch()
            employees[3].salary = 35
            context.processPendingChanges()
            #expect(controller.incrementalUpdateCount == 1)
            for e in employees.prefix(100) { e.name += "'" }
            context.processPendingChanges()
            #expect(controller.incrementalUpdateCount == 1)
        }
    }
}
