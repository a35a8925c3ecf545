import Foundation
import PropertyBased
import Testing

@testable import Granary

/// A context files an edited object once and then skips the filing until something leaves its change
/// tables (`objectDidChange`'s epochs). Random edits, inserts, deletes, announcements, saves and
/// rollbacks on a few objects must leave, after every step, exactly the objects a plain model says
/// have unsaved edits, announce exactly the objects edited since the last announcement, and save every
/// edit (checked from a second context).
@Suite struct ChangeFilingPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    static func check(seed: Int) throws {
        var r = Random(state: UInt64(seed))
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let box = EventBox()
            let subscription = context.objectsDidChangeFeed.subscribe { changes, _ in box.append(changes) }
            defer { context.objectsDidChangeFeed.unsubscribe(subscription) }
            var objects: [Employee] = (0..<4).map { makeEmployee(context, "E\($0)", salary: $0) }
            try context.save()
            _ = box.take()
            // The model: saved salaries by name, unsaved ones, objects edited since the last announcement.
            var saved: [String: Int] = Dictionary(uniqueKeysWithValues: objects.map { ($0.name, $0.salary) })
            var current = saved
            var edited = Set<String>()
            var dirty = Set<String>()
            var inserted = Set<String>()
            var announcedInserts = Set<String>()
            var next = 4
            for step in 0..<(10 + r.int(120)) {
                let where_ = "seed \(seed), step \(step)"
                switch r.int(8) {
                case 0, 1, 2:
                    guard !objects.isEmpty else { continue }
                    let e = r.pick(objects)
                    let value = 100 + r.int(5)
                    e.salary = value
                    // Setting the saved value back is still an edit (`hasChanges`), as in Core Data.
                    dirty.insert(e.name)
                    current[e.name] = value
                    if !inserted.contains(e.name) || announcedInserts.contains(e.name) { edited.insert(e.name) }
                case 3:
                    let e = makeEmployee(context, "E\(next)", salary: next)
                    next += 1
                    objects.append(e)
                    current[e.name] = e.salary
                    inserted.insert(e.name)
                case 4:
                    let found = box.take()
                    context.processPendingChanges()
                    let announced = box.take()
                    #expect(found.isEmpty, "\(where_)")
                    let updatedNames = Set(announced.flatMap { $0.updated }.compactMap { id in objects.first { $0.objectID == id }?.name })
                    #expect(updatedNames == edited, "\(where_): announced \(updatedNames), edited \(edited)")
                    edited = []
                    announcedInserts = inserted
                case 5:
                    try context.save()
                    _ = box.take()
                    saved = current
                    edited = []
                    dirty = []
                    inserted = []
                    announcedInserts = []
                case 6:
                    context.rollback()
                    _ = box.take()
                    objects = objects.filter { !inserted.contains($0.name) }
                    for name in inserted { current[name] = nil }
                    inserted = []
                    announcedInserts = []
                    current = saved
                    edited = []
                    dirty = []
                default:
                    // Reading does not file anything.
                    if let e = objects.first { _ = e.salary }
                }
                let changedNames = Set(objects.filter { $0.hasChanges }.map(\.name))
                #expect(changedNames == dirty.union(inserted), "\(where_)")
                for e in objects { #expect(e.salary == current[e.name], "\(where_): \(e.name)") }
                #expect(context.hasChanges == !changedNames.isEmpty, "\(where_)")
            }
            try context.save()
            saved = current
        }
        // Every saved salary reached the store.
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let stored = try reader.fetch(FetchRequest<Employee>(entityName: "Employee"))
            let byName = Dictionary(uniqueKeysWithValues: stored.map { ($0.name, $0.salary) })
            try context.performAndWait {
                let all = try context.fetch(FetchRequest<Employee>(entityName: "Employee"))
                #expect(byName == Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.salary) }), "seed \(seed): the store holds the context's values")
            }
        }
    }

    @Test func editsAreFiledAnnouncedAndSavedAsAPlainModelSays() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) { try Self.check(seed: seed) }
        }
    }
}
