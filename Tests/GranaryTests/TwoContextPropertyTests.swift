import Foundation
import PropertyBased
import Synchronization
import Testing
@testable import Granary

/// Random inserts, edits, relationship changes, deletes, saves, rollbacks and merges across two
/// contexts on one durable store, checked against a plain model of what the store must hold after
/// every save and after reopening the store.
///
/// The contexts save with `.mergeByPropertyObjectTrump`: what a context changed wins property by
/// property, what it did not change keeps the other context's saved value, and an object deleted by
/// the other context stays deleted. Relationships must stay two-sided whatever the interleaving:
/// `reports` is exactly the employees whose `manager` is that employee, a badge is in exactly its
/// holder's `badges`, deleting an employee nullifies its reports and cascades to its badges (also the
/// ones the deleting context never saw), and no row refers to a row that is gone.
///
/// Employees also have one-sided relationships (no inverse): a mentor (to-one, nullify) and the badges
/// they watch (to-many, no action). A mentor or badge deleted in one context must leave no reference in
/// any employee, including those the other context holds, edits and saves without having merged, and
/// after reopening.
///
/// `TWO_CONTEXT_SEED=n` replays one seed, `TWO_CONTEXT_SEEDS=n` runs n seeds per variant (40 by
/// default), and `TWO_CONTEXT_STEPS=n` makes each run n steps long (200).
@Suite struct TwoContextPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    struct Person: Equatable {
        var name: String
        var salary: Int
        var manager: String?
        var mentor: String? = nil
        var watching: Set<String> = []
    }

    /// What the store must hold: employees by email, badges by title with their holder's email.
    struct StoreModel: Equatable {
        var employees: [String: Person] = [:]
        var badges: [String: String?] = [:]

        mutating func deleteEmployee(_ key: String) {
            guard employees.removeValue(forKey: key) != nil else { return }
            for (other, person) in employees where person.manager == key { employees[other]!.manager = nil }
            for (other, person) in employees where person.mentor == key { employees[other]!.mentor = nil }
            for (title, holder) in badges where holder == key { deleteBadge(title) }
        }

        mutating func deleteBadge(_ title: String) {
            badges[title] = nil
            for (key, person) in employees where person.watching.contains(title) { employees[key]!.watching.remove(title) }
        }
    }

    enum Edit {
        case setName(String, String)
        case setSalary(String, Int)
    }

    final class Writer {
        let context: ManagedObjectContext
        let label: String
        var edits: [Edit] = []
        /// Saves of the other context that this one has not merged yet (when it does not merge by itself).
        var undelivered: [ContextChanges] = []
        let lastSave = SaveSlot()
        private var token: NSObjectProtocol?

        init(_ context: ManagedObjectContext, label: String) {
            self.context = context
            self.label = label
            let box = lastSave
            token = NotificationCenter.default.addObserver(forName: .managedObjectContextDidSave, object: context, queue: nil) { note in
                let changes = note.userInfo?[ContextChanges.userInfoKey] as? ContextChanges
                box.changes.withLock { $0 = changes }
            }
        }

        deinit { if let token { NotificationCenter.default.removeObserver(token) } }

        func employee(_ key: String) throws -> Employee? {
            try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.email == key })).first
        }

        func badge(_ title: String) throws -> Badge? {
            try context.fetch(FetchRequest<Badge>(predicate: #Predicate { $0.title == title })).first
        }
    }

    final class SaveSlot: Sendable {
        let changes = Mutex<ContextChanges?>(nil)
    }

    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    final class Run {
        let url = scratchURL("twocontexts")
        let coordinator: PersistentStoreCoordinator
        var store: PersistentStore
        var writers: [Writer] = []
        var model = StoreModel()
        var keys: [String] = []
        var titles: [String] = []
        var serial = 0
        var trace: [String] = []

        init(autoMerge: [Bool]) throws {
            coordinator = PersistentStoreCoordinator(managedObjectModel: try makeCompanyModel(oneSided: true))
            store = try coordinator.addPersistentStore(type: .durable, at: url)
            for (i, auto) in autoMerge.enumerated() {
                let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                context.mergePolicy = .mergeByPropertyObjectTrump
                context.automaticallyMergesChangesFromParent = auto
                writers.append(Writer(context, label: i == 0 ? "A" : "B"))
            }
        }

        deinit {
            try? coordinator.remove(store)
            try? FileManager.default.removeItem(at: url)
        }

        func fail(_ problem: String) -> Mismatch {
            Mismatch(description: ([problem, "trace:"] + trace.suffix(60)).joined(separator: "\n"))
        }

        func step(_ r: inout Random) throws {
            let w = writers[r.int(writers.count)]
            let other = writers.first { $0 !== w } ?? w
            let c = w.context
            let op = r.int(48)
            switch op {
            case 0..<5:
                serial += 1
                let key = "e\(serial)@x.io"
                let salary = r.int(1000)
                let managerKey = keys.isEmpty || r.bool() ? nil : r.pick(keys)
                keys.append(key)
                try c.performAndWait {
                    let e = Employee(context: c)
                    e.name = "n\(serial)"
                    e.email = key
                    e.salary = salary
                    if let managerKey, let m = try w.employee(managerKey) { e.manager = m }
                }
                trace.append("\(w.label) insert \(key) salary \(salary) manager \(managerKey ?? "-")")
            case 5..<8 where !keys.isEmpty:
                let key = r.pick(keys)
                let name = "r\(r.int(100))"
                try c.performAndWait {
                    guard let e = try w.employee(key) else { return }
                    e.name = name
                    w.edits.append(.setName(key, name))
                    trace.append("\(w.label) \(key).name = \(name)")
                }
            case 8..<11 where !keys.isEmpty:
                let key = r.pick(keys)
                let salary = r.int(1000)
                try c.performAndWait {
                    guard let e = try w.employee(key) else { return }
                    e.salary = salary
                    w.edits.append(.setSalary(key, salary))
                    trace.append("\(w.label) \(key).salary = \(salary)")
                }
            case 11..<16 where !keys.isEmpty:
                let key = r.pick(keys)
                let managerKey = r.int(5) == 0 ? nil : r.pick(keys)
                try c.performAndWait {
                    guard let e = try w.employee(key) else { return }
                    let m = try managerKey.flatMap { try w.employee($0) }
                    e.manager = m
                    trace.append("\(w.label) \(key).manager = \(m?.email ?? "nil")")
                }
            case 16..<18 where !keys.isEmpty:
                let key = r.pick(keys)
                try c.performAndWait {
                    guard let e = try w.employee(key) else { return }
                    c.delete(e)
                    trace.append("\(w.label) delete \(key)")
                }
            case 18..<21 where !keys.isEmpty:
                serial += 1
                let title = "b\(serial)"
                let holderKey = r.pick(keys)
                titles.append(title)
                try c.performAndWait {
                    guard let holder = try w.employee(holderKey) else { return }
                    let badge = Badge(context: c)
                    badge.title = title
                    badge.holder = holder
                    trace.append("\(w.label) badge \(title) → \(holderKey)")
                }
            case 21..<23 where !titles.isEmpty:
                let title = r.pick(titles)
                try c.performAndWait {
                    guard let badge = try w.badge(title) else { return }
                    c.delete(badge)
                    trace.append("\(w.label) delete badge \(title)")
                }
            case 36..<40 where !keys.isEmpty:
                let key = r.pick(keys)
                let mentorKey = r.int(4) == 0 ? nil : r.pick(keys)
                try c.performAndWait {
                    guard let e = try w.employee(key) else { return }
                    let m = try mentorKey.flatMap { try w.employee($0) }
                    try e.setValue(m, forKey: "mentor")
                    trace.append("\(w.label) \(key).mentor = \(m?.email ?? "nil")")
                }
            case 40..<48 where !keys.isEmpty && !titles.isEmpty:
                let key = r.pick(keys)
                let title = r.pick(titles)
                let adds = r.int(3) > 0
                try c.performAndWait {
                    guard let e = try w.employee(key), let badge = try w.badge(title) else { return }
                    if adds {
                        try e.add([badge], toRelationship: "watching")
                    } else {
                        try e.remove([badge], fromRelationship: "watching")
                    }
                    trace.append("\(w.label) \(key).watching \(adds ? "+=" : "-=") \(title)")
                }
            case 23..<30:
                try save(w, other: other, mergeNow: r.bool())
            case 30..<32:
                c.performAndWait { c.rollback() }
                w.edits = []
                trace.append("\(w.label) rollback")
            case 32..<35:
                let pending = w.undelivered
                w.undelivered = []
                c.performAndWait { for changes in pending { c.mergeChanges(fromContextDidSave: changes) } }
                if !pending.isEmpty { trace.append("\(w.label) merges \(pending.count) saves") }
            case 35:
                try reopen()
            default:
                break
            }
        }

        /// The model's prediction for a save of `w`, read before it saves: its inserted objects' values,
        /// its explicit attribute edits, its deletions, and its changed managers.
        func save(_ w: Writer, other: Writer, mergeNow: Bool) throws {
            let c = w.context
            var next = model
            let saved: Bool = try c.performAndWait {
                guard c.hasChanges else { return false }
                func key(_ id: ManagedObjectID?) -> String? {
                    guard let id else { return nil }
                    return ((try? c.existingObject(with: id)) as? Employee)?.email
                }
                let layout = EntityLayout.of(coordinator.managedObjectModel.entity(named: "Employee")!)
                let managerIndex = layout.indexByName["manager"]!
                let mentorIndex = layout.indexByName["mentor"]!
                let watchingIndex = layout.indexByName["watching"]!
                func title(_ id: ManagedObjectID) -> String? { ((try? c.existingObject(with: id)) as? Badge)?.title }
                var managers: [(String, String?)] = []
                var mentors: [(String, String?)] = []
                var watching: [(key: String, added: Set<String>, removed: Set<String>)] = []
                func oneSided(_ e: Employee, _ k: String, all: Bool) {
                    if all || (e.changedIndexes.contains(mentorIndex) && !e.holdsCommittedValue(at: mentorIndex)) { mentors.append((k, key(e.values[mentorIndex] as? ManagedObjectID))) }
                    if all || e.changedIndexes.contains(watchingIndex) {
                        // A to-many saves as the context's edit of it: what it added to and removed from
                        // the members it last saw, applied to the members stored now (a stale context's
                        // set does not replace members another context added since).
                        let now = Set(e.values[watchingIndex] as? [ManagedObjectID] ?? [])
                        let base = Set(e.committed?[watchingIndex] as? [ManagedObjectID] ?? [])
                        watching.append((k, Set(now.subtracting(base).compactMap(title)), Set(base.subtracting(now).compactMap(title))))
                    }
                }
                var insertedBadges: [(String, String?)] = []
                for object in c.insertedObjects {
                    if let e = object as? Employee {
                        next.employees[e.email!] = Person(name: e.name, salary: e.salary, manager: nil)
                        managers.append((e.email!, key(e.values[managerIndex] as? ManagedObjectID)))
                        oneSided(e, e.email!, all: true)
                    } else if let b = object as? Badge {
                        insertedBadges.append((b.title, b.holder?.email))
                    }
                }
                // A property set back to the value the context last saw is no change (Core Data's merge
                // policies compare with the object's snapshot): the other context's saved value stays.
                let nameIndex = layout.indexByName["name"]!, salaryIndex = layout.indexByName["salary"]!
                func changes(_ e: Employee, _ i: Int) -> Bool { e.changedIndexes.contains(i) && !e.holdsCommittedValue(at: i) }
                let edited = Set(w.edits.map { edit -> String in
                    switch edit { case .setName(let k, _), .setSalary(let k, _): k }
                })
                for object in c.updatedObjects {
                    guard let e = object as? Employee, let k = e.email else { continue }
                    if next.employees[k] != nil && edited.contains(k) {
                        if changes(e, nameIndex) { next.employees[k]!.name = e.name }
                        if changes(e, salaryIndex) { next.employees[k]!.salary = e.salary }
                    }
                    if changes(e, managerIndex) { managers.append((k, key(e.values[managerIndex] as? ManagedObjectID))) }
                    oneSided(e, k, all: false)
                }
                for object in c.deletedObjects {
                    if let e = object as? Employee, let k = e.committedValues(forKeys: ["email"])["email"] as? String {
                        next.deleteEmployee(k)
                    } else if let b = object as? Badge, let t = b.committedValues(forKeys: ["title"])["title"] as? String {
                        next.deleteBadge(t)
                    }
                }
                for (k, m) in managers where next.employees[k] != nil {
                    next.employees[k]!.manager = m.flatMap { next.employees[$0] == nil ? nil : $0 }
                }
                for (title, holder) in insertedBadges {
                    next.badges[title] = .some(holder.flatMap { next.employees[$0] == nil ? nil : $0 })
                }
                // What the save writes of a one-sided to-one wins, a to-many merges its edit; the store drops what is gone.
                for (k, m) in mentors where next.employees[k] != nil {
                    next.employees[k]!.mentor = m.flatMap { next.employees[$0] == nil ? nil : $0 }
                }
                for (k, added, removed) in watching where next.employees[k] != nil {
                    next.employees[k]!.watching = next.employees[k]!.watching.subtracting(removed).union(added)
                        .filter { next.badges[$0] != nil }
                }
                w.lastSave.changes.withLock { $0 = nil }
                do { try c.save() } catch { throw fail("\(w.label) save failed: \(error)") }
                return true
            }
            guard saved else { return }
            model = next
            w.edits = []
            trace.append("\(w.label) save")
            let changes = w.lastSave.changes.withLock { $0 } ?? ContextChanges()
            if other !== w && !other.context.automaticallyMergesChangesFromParent {
                if mergeNow {
                    other.context.performAndWait { other.context.mergeChanges(fromContextDidSave: changes) }
                } else {
                    other.undelivered.append(changes)
                }
            }
            try check("\(w.label) saved", verify: false)
        }

        func reopen() throws {
            for w in writers {
                w.context.performAndWait {
                    w.context.rollback()
                    w.context.reset()
                }
                w.edits = []
                w.undelivered = []
            }
            try coordinator.remove(store)
            store = try coordinator.addPersistentStore(type: .durable, at: url)
            trace.append("reopen")
            try check("reopening", verify: true)
        }

        func check(_ when: String, verify: Bool) throws {
            // Let automatic merges scheduled by the save run before the next step.
            for w in writers { w.context.performAndWait {} }
            var problems: [String] = []
            if verify {
                let report = store.engine.verify()
                if !report.isSound { problems += report.problems.map { "engine: \($0)" } }
            }
            problems += try danglingReferences()
            let checker = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try checker.performAndWait {
                var seen = StoreModel()
                var reports: [String: Set<String>] = [:]
                var badgeSets: [String: Set<String>] = [:]
                for e in try checker.fetch(FetchRequest<Employee>()) {
                    let k = e.email ?? "?"
                    if seen.employees[k] != nil { problems.append("two employees \(k)") }
                    seen.employees[k] = Person(
                        name: e.name, salary: e.salary, manager: e.manager?.email,
                        mentor: (try e.value(forKey: "mentor") as? Employee)?.email,
                        watching: Set((try e.value(forKey: "watching") as? Set<ManagedObject> ?? []).compactMap { ($0 as? Badge)?.title }))
                    reports[k] = Set(e.reports.map { $0.email ?? "?" })
                    badgeSets[k] = Set(e.badges.map(\.title))
                }
                for b in try checker.fetch(FetchRequest<Badge>()) { seen.badges[b.title] = .some(b.holder?.email) }
                for (k, person) in model.employees where seen.employees[k] != person {
                    problems.append("\(k): store \(seen.employees[k].map { "\($0)" } ?? "missing"), expected \(person)")
                }
                for k in seen.employees.keys where model.employees[k] == nil { problems.append("\(k) in the store, expected deleted") }
                for (title, holder) in model.badges where seen.badges[title] != holder {
                    problems.append("badge \(title): store \(seen.badges[title].map { "\($0 ?? "nil")" } ?? "missing"), expected \(holder ?? "nil")")
                }
                for title in seen.badges.keys where model.badges[title] == nil { problems.append("badge \(title) in the store, expected deleted") }
                for k in model.employees.keys {
                    let expectedReports = Set(model.employees.filter { $0.value.manager == k }.map(\.key))
                    if let got = reports[k], got != expectedReports {
                        problems.append("\(k).reports \(got.sorted()), expected \(expectedReports.sorted())")
                    }
                    let expectedBadges = Set(model.badges.filter { $0.value == k }.map(\.key))
                    if let got = badgeSets[k], got != expectedBadges {
                        problems.append("\(k).badges \(got.sorted()), expected \(expectedBadges.sorted())")
                    }
                }
            }
            if !problems.isEmpty { throw fail("after \(when):\n" + problems.joined(separator: "\n")) }
        }

        func danglingReferences() throws -> [String] { try TwoContextPropertyTests.danglingReferences(in: store) }
    }

    /// Stored references to rows that do not exist in `store`, read from the raw rows (decoding would
    /// hide them).
    static func danglingReferences(in store: PersistentStore) throws -> [String] {
        var problems: [String] = []
        let snapshot = store.engine.read()
        for table in snapshot.tableNames {
            try snapshot.forEachRow(in: table) { key, row in
                for value in row.values {
                    for ref in GraphRepair.references(in: value) {
                        guard let target = snapshot.tableName(for: ref.table), try snapshot.contains(in: target, key: ref.key) else {
                            problems.append("\(table) row \(key) refers to missing row \(ref)")
                            continue
                        }
                    }
                }
                return true
            }
        }
        return problems
    }

    static func check(seed: Int, autoMerge: [Bool], steps: Int) throws {
        var r = Random(state: UInt64(seed))
        let run = try Run(autoMerge: autoMerge)
        for _ in 0..<steps { try run.step(&r) }
        for w in run.writers { try run.save(w, other: run.writers.first { $0 !== w } ?? w, mergeNow: true) }
        try run.reopen()
    }

    static func property(autoMerge: [Bool]) async {
        await SeededPropertyRuns.run(environmentPrefix: "TWO_CONTEXT", label: "TwoContextPropertyTests") { seed, steps in
            try check(seed: seed, autoMerge: autoMerge, steps: steps)
        }
    }

    @Test func twoContextsMergingByHandMatchTheModel() async { await Self.property(autoMerge: [false, false]) }

    @Test func twoContextsOneMergingAutomaticallyMatchTheModel() async { await Self.property(autoMerge: [true, false]) }

    @Test func twoContextsBothMergingAutomaticallyMatchTheModel() async { await Self.property(autoMerge: [true, true]) }

    /// Seeds the random runs found: B sets `e11.manager` (`e7.manager` in the second) back to nil, the
    /// value its copy was last refreshed with, after A saved another manager there: a set-back is no
    /// change, so A's manager stays (StaleSetBackMergeTests).
    @Test(arguments: [67_291_276_917_030_197, 623_892_503_395_362_805])
    func aToOneSetBackAfterALateMergeKeepsTheOtherContextsValue(seed: Int) throws {
        try Self.check(seed: seed, autoMerge: [true, false], steps: 200)
    }
}
