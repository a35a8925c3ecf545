import Foundation
import PropertyBased
import Testing
@testable import Granary

/// Random batches of edits (inserts, deletes, salary and company changes, renames of employees and
/// companies), each ended by `processPendingChanges()`, a save, a rollback, or another context's save
/// merged in. After every batch: replaying the reported difference on the old results must give exactly
/// the new results; the results must equal a fresh fetch (sections included); every edited object that
/// survived must be reported as updated or moved; and one event gives at most one difference.
@Suite struct FetchedResultsControllerPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    enum Layout: CaseIterable {
        /// A typed predicate and sort, no sections: the incremental path.
        case flat
        /// Sections by salary, descending, with a predicate node.
        case bySalary
        /// Sections by company name: changes of companies make the controller fetch again.
        case byCompany
    }

    static func request(_ layout: Layout) -> FetchRequest<Employee> {
        switch layout {
        case .flat:
            return FetchRequest<Employee>(predicate: #Predicate { $0.salary != 20 }, sortBy: [SortDescriptor(\.salary), SortDescriptor(\.email)])
        case .bySalary:
            var request = FetchRequest<Employee>()
            request.filter = .compare(["salary"], .less, .value(.int(40)))
            request.sortKeys = [SortKey("salary", ascending: false), SortKey("email")]
            return request
        case .byCompany:
            var request = FetchRequest<Employee>()
            request.sortKeys = [SortKey("company.name"), SortKey("email")]
            return request
        }
    }

    static func sectionName(_ e: Employee, _ layout: Layout) -> String {
        switch layout {
        case .flat: return ""
        case .bySalary: return String(e.salary)
        case .byCompany: return e.company?.name ?? ""
        }
    }

    static func check(seed: Int, layout: Layout) throws {
        var r = Random(state: UInt64(seed))
        let (coordinator, context) = try makeStack()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let recorder = SaveRecorder(other)
        var serial = 0
        var log: [String] = []
        let salaries = [10, 20, 30, 40]
        let companyNames = ["Acme", "Beta", "Cobalt", "Dyn", "Ember"]

        func insert(into context: ManagedObjectContext, companies: [Company], _ r: inout Random) {
            serial += 1
            let e = Employee(context: context)
            e.name = "N\(serial)"
            e.email = "n\(serial)@x.io"
            e.salary = r.pick(salaries)
            e.company = r.int(4) == 0 ? nil : r.pick(companies)
            log.append("insert \(e.name) \(e.salary) \(e.company?.name ?? "-")")
        }

        /// One random edit of `pool` in `context`; returns the edited object, if it was an existing one.
        func edit(_ context: ManagedObjectContext, pool: [Employee], companies: [Company], _ r: inout Random) -> Employee? {
            let live = pool.filter { $0.managedObjectContext === context && !$0.isDeleted }
            switch r.int(7) {
            case 0, 1:
                insert(into: context, companies: companies, &r)
                return nil
            case 2:
                guard let e = live.isEmpty ? nil : r.pick(live) else { return nil }
                log.append("delete \(e.name)")
                context.delete(e)
                return nil
            case 3:
                guard let e = live.isEmpty ? nil : r.pick(live) else { return nil }
                e.salary = r.pick(salaries)
                log.append("salary \(e.name) \(e.salary)")
                return e
            case 4:
                guard let e = live.isEmpty ? nil : r.pick(live) else { return nil }
                let company = r.int(4) == 0 ? nil : r.pick(companies)
                if company === e.company { return nil }  // no change at all
                e.company = company
                log.append("company \(e.name) \(e.company?.name ?? "-")")
                return e
            case 5:
                guard let e = live.isEmpty ? nil : r.pick(live) else { return nil }
                log.append("rename \(e.name)")
                e.name = e.name + "'"
                return e
            default:
                let company = r.pick(companies)
                company.name = r.pick(companyNames)
                log.append("company renamed \(company.name)")
                return nil
            }
        }

        try context.performAndWait {
            let companies = (0..<3).map { i -> Company in
                let c = Company(context: context)
                c.name = companyNames[i]
                return c
            }
            for _ in 0..<r.int(8) { insert(into: context, companies: companies, &r) }
            try context.save()

            let request = Self.request(layout)
            let controller = FetchedResultsController(fetchRequest: request, managedObjectContext: context,
                                                      sectionNameKeyPath: layout == .flat ? nil : layout == .bySalary ? "salary" : "company.name")
            var differences: [FetchedResultsDifference] = []
            controller.onChange = { differences.append($0) }
            try controller.performFetch()

            for step in 0..<14 {
                log = []
                let before = controller.sections.map { (name: $0.name, objects: $0.objects) }
                var edited: [Employee] = []
                let pool = try context.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.email)]))
                let ending = r.int(5)
                if ending == 4 && !context.hasChanges {
                    // Another context's save, merged in.
                    var editedIDs: [ManagedObjectID] = []
                    log.append("in other context:")
                    try other.performAndWait {
                        other.reset()
                        let theirs = try other.fetch(FetchRequest<Employee>(sortBy: [SortDescriptor(\.email)]))
                        let theirCompanies = try other.fetch(FetchRequest<Company>(sortBy: [SortDescriptor(\.name)]))
                        for _ in 0..<(1 + r.int(4)) {
                            if let e = edit(other, pool: theirs, companies: theirCompanies, &r) { editedIDs.append(e.objectID) }
                        }
                        // An edit that set a saved value back is no change, so the save does not report it
                        // (Apple: NSManagedObject.hasPersistentChangedValues), and the merge has nothing to show.
                        editedIDs = editedIDs.filter { other.registeredObject(for: $0)?.hasPersistentChangedValues ?? false }
                        try other.save()
                    }
                    log.append("merge")
                    for changes in recorder.take() { context.mergeChanges(fromContextDidSave: changes) }
                    edited = editedIDs.compactMap { context.registeredObject(for: $0) as? Employee }
                } else {
                    for _ in 0..<(1 + r.int(4)) {
                        if let e = edit(context, pool: pool, companies: companies, &r) { edited.append(e) }
                    }
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
                let label = "seed \(seed) \(layout) step \(step): \(log.joined(separator: ", "))"

                #expect(differences.count <= 1, "\(label): one event, one difference")
                let difference = differences.last ?? FetchedResultsDifference()
                differences = []
                let after = controller.sections.map { (name: $0.name, items: $0.objects.map(ObjectIdentifier.init)) }
                let old = before.map { (name: $0.name, items: $0.objects.map(ObjectIdentifier.init)) }
                #expect(FetchedResultsReplay.apply(difference, to: old, new: after) == after.map(\.items), "\(label): \(difference)")

                // The controller agrees with a fresh fetch, sections included.
                var fresh = try context.fetch(request)
                if layout == .byCompany {
                    // A context's fetch sorts by the stored values of related objects when only those have
                    // unsaved changes; the controller sorts by their current values, so compare with that.
                    fresh.sort { a, b in
                        let (x, y) = (a.company?.name, b.company?.name)
                        return x != y ? (x == nil || y != nil && x! < y!) : a.email! < b.email!
                    }
                }
                #expect(differences.isEmpty, "\(label): a fetch with nothing pending changed the results")
                #expect(fresh.map(\.name) == controller.fetchedObjects.map(\.name), "\(label)")
                #expect(fresh.map(ObjectIdentifier.init) == controller.fetchedObjects.map(ObjectIdentifier.init), "\(label)")
                if layout == .flat {
                    #expect(controller.sections.map(\.name) == [""], "\(label)")
                } else {
                    var runs: [String] = []
                    for e in fresh where runs.last != Self.sectionName(e, layout) { runs.append(Self.sectionName(e, layout)) }
                    #expect(controller.sections.map(\.name) == runs, "\(label)")
                }

                // Edited survivors are updates or moves.
                let wasThere = Set(before.flatMap { $0.objects.map(ObjectIdentifier.init) })
                for e in edited where wasThere.contains(ObjectIdentifier(e)) {
                    guard let path = controller.indexPath(forObject: e) else { continue }
                    #expect(difference.updated.contains(path) || difference.moved.contains { $0.to == path },
                            "\(label): \(e.name) changed but was not reported")
                }
                withExtendedLifetime(before) {}
            }
        }
    }

    @Test(arguments: Layout.allCases)
    func replayingTheDifferencesGivesTheNewResults(_ layout: Layout) async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed, layout: layout) }
        }
    }

    @Test func fixedSeedsStayGreen() throws {
        for seed in 0..<20 {
            for layout in Layout.allCases { try Self.check(seed: seed, layout: layout) }
        }
        // Found in a CI run: an object inserted and announced, then deleted and saved (a save with
        // nothing to write), stayed in the controller until the next fetch.
        try Self.check(seed: 4072246506705782064, layout: .bySalary)
    }

    /// The diff alone, on random sectioned lists: replaying always gives the new lists.
    @Test func sectionedDifferencesReplayExactly() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0...Int.max)) { seed in
            var r = Random(state: UInt64(seed))
            func lists(_ ids: [Int]) -> [(name: String, items: [Int])] {
                var sections: [(name: String, items: [Int])] = []
                for id in ids {
                    if sections.isEmpty || r.int(3) == 0 { sections.append((r.pick(["a", "b", "c", "d"]), [])) }
                    sections[sections.count - 1].items.append(id)
                }
                return sections
            }
            let old = Array(0..<r.int(12)).shuffled(using: &r)
            let new = (old.filter { _ in r.int(4) != 0 } + Array(20..<(20 + r.int(5)))).shuffled(using: &r)
            let before = lists(old)
            let after = lists(new)
            let changed = Set((0..<30).filter { _ in r.bool() })
            let (difference, changes) = FetchedResultsDifference.between(old: before, new: after, changed: changed)
            #expect(FetchedResultsReplay.apply(difference, to: before, new: after) == after.map(\.items), "seed \(seed)")
            #expect(changes.count == difference.deleted.count + difference.inserted.count + difference.moved.count + difference.updated.count)
        }
    }
}

extension FetchingPlannerPropertyTests.Random: RandomNumberGenerator {}
