import Foundation
import PropertyBased
import Testing

@_spi(GranaryRecords) @testable import Granary

/// An import logs the to-many sides of links it sets from the to-one side and applies them later
/// (`deferringInverseLinks`). Nothing may tell the difference: random link edits (to-one with an
/// unordered or an ordered to-many inverse, and a self-referential one), reads of both sides, inserts,
/// deletes, fetches, change sets, saves and rollbacks must observe exactly what the same steps observe
/// with every edit made at once, and leave the same store.
@Suite struct DeferredInverseLinksPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    /// What the steps of `seed` observe, in order, followed by the saved graph.
    static func trace(seed: Int, deferring: Bool) throws -> [String] {
        var r = Random(state: UInt64(seed))
        let (_, context) = try makeStack()
        var log: [String] = []
        try context.performAndWait {
            let companies = (0..<3).map { i in
                let c = Company(context: context)
                c.name = "C\(i)"
                return c
            }
            var employees = (0..<6).map { makeEmployee(context, "E\($0)", salary: $0, company: companies[$0 % 3]) }
            var badges: [Badge] = (0..<6).map { i in
                let b = Badge(context: context)
                b.title = "B\(i)"
                b.holder = employees[i % 6]
                return b
            }
            try context.save()
            var next = 6
            func names<S: Sequence>(_ objects: S) -> String where S.Element: Person { objects.map(\.name).sorted().joined(separator: ",") }
            let steps = {
                for step in 0..<(5 + r.int(60)) {
                    let live = employees.filter { !$0.isDeleted && $0.managedObjectContext != nil }
                    let liveBadges = badges.filter { !$0.isDeleted && $0.managedObjectContext != nil }
                    switch r.int(18) {
                    case 0, 1, 2, 3:
                        guard !live.isEmpty else { continue }
                        r.pick(live).company = r.int(5) == 0 ? nil : r.pick(companies)
                    case 4, 5:
                        guard !liveBadges.isEmpty else { continue }
                        r.pick(liveBadges).holder = r.int(5) == 0 || live.isEmpty ? nil : r.pick(live)
                    case 6:
                        guard live.count > 1 else { continue }
                        r.pick(live).manager = r.int(4) == 0 ? nil : r.pick(live)
                    case 7:
                        let c = r.pick(companies)
                        log.append("\(step) \(c.name).employees \(names(c.employees)) updated \(c.isUpdated)")
                    case 8:
                        guard !live.isEmpty else { continue }
                        let e = r.pick(live)
                        log.append("\(step) \(e.name).badges \(e.badges.map(\.title)) reports \(names(e.reports))")
                    case 9:
                        employees.append(makeEmployee(context, "E\(next)", salary: next, company: r.pick(companies)))
                        next += 1
                    case 10:
                        guard !live.isEmpty else { continue }
                        context.delete(r.pick(live))
                    case 11:
                        let c = r.pick(companies)
                        var request = FetchRequest<Employee>(entityName: "Employee")
                        request.filter = (FetchPredicate.key("company") == c.objectID).node
                        log.append("\(step) fetch \(c.name) \(names(try context.fetch(request)))")
                    case 12:
                        let updated = context.updatedObjects.compactMap { ($0 as? Company)?.name ?? ($0 as? Person)?.name }
                        log.append("\(step) updated \(updated.sorted()) hasChanges \(context.hasChanges)")
                    case 13:
                        try context.save()
                        log.append("\(step) saved")
                    case 14:
                        context.rollback()
                        log.append("\(step) rolled back")
                    case 15:
                        // The owner's current members are read and the new one added to them.
                        guard !live.isEmpty else { continue }
                        try r.pick(companies).add([r.pick(live)], toRelationship: "employees")
                    case 16:
                        guard !live.isEmpty else { continue }
                        let c = r.pick(companies)
                        try c.remove(Array(c.employees.sorted { $0.name < $1.name }.prefix(1)), fromRelationship: "employees")
                    default:
                        guard !live.isEmpty else { continue }
                        let b = Badge(context: context)
                        b.title = "B\(badges.count)"
                        b.holder = r.pick(live)
                        badges.append(b)
                    }
                }
            }
            if deferring { try context.deferringInverseLinks(steps) } else { try steps() }
            try context.save()
            for c in companies { log.append("saved \(c.name): \(names(c.employees))") }
            for e in employees where e.managedObjectContext != nil {
                log.append("saved \(e.name): \(e.company?.name ?? "-") \(e.badges.map(\.title)) \(e.manager?.name ?? "-") \(names(e.reports))")
            }
        }
        return log
    }

    @Test func deferredLinksAreObservedAsImmediateOnes() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max)) { seed in
            #expect(throws: Never.self) {
                let immediate = try Self.trace(seed: seed, deferring: false)
                let deferred = try Self.trace(seed: seed, deferring: true)
                #expect(deferred == immediate, "seed \(seed)")
            }
        }
    }

    /// The log is in use inside the call and gone after it: the saved owners hold every member.
    @Test func aParentReachedOnlyThroughLinksHoldsItsMembersAfterTheCall() throws {
        let (coordinator, context) = try makeStack()
        let companyID = try context.performAndWait {
            let c = Company(context: context)
            c.name = "Acme"
            try context.save()
            return c.objectID
        }
        let importer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try importer.performAndWait {
            let company = try #require(importer.existingObject(with: companyID) as? Company)
            importer.deferringInverseLinks {
                for i in 0..<100 { _ = makeEmployee(importer, "E\(i)", salary: i, company: company) }
                #expect(importer.deferredLinks?.isEmpty == false, "the links wait in the log")
            }
            #expect(importer.deferredLinks == nil)
            #expect(company.employees.count == 100)
            try importer.save()
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let company = try #require(reader.existingObject(with: companyID) as? Company)
            #expect(company.employees.count == 100)
        }
    }

    /// A save inside the call makes its `willSave()` hooks' links at once: the owner is saved with its
    /// new member under the member's permanent ID, and nothing is left unsaved.
    @Test func aLinkAWillSaveHookMakesDuringTheCallIsSaved() throws {
        let (coordinator, context) = try makeNotesStack()
        let folderID = try context.performAndWait {
            let folder = Folder(context: context)
            folder.name = "Inbox"
            try context.save()
            try context.deferringInverseLinks {
                let note = Note(context: context)
                note.title = "filed at save"
                note.folderForWillSave = folder
                try context.save()
                #expect(note.folder === folder)
                #expect(folder.notes.map(\.objectID) == [note.objectID])
                #expect(!note.objectID.isTemporaryID)
                #expect(!context.hasChanges)
            }
            return folder.objectID
        }
        let reader = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try reader.performAndWait {
            let folder = try #require(reader.existingObject(with: folderID) as? Folder)
            #expect(folder.notes.map(\.title) == ["filed at save"])
        }
    }

    /// Under an undo manager each edit is recorded where it happens: nothing is logged, and undo works.
    @Test func anUndoManagerTurnsTheLogOff() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            try context.save()
            context.undoManager = ContextUndoManager()
            context.deferringInverseLinks {
                _ = makeEmployee(context, "E", salary: 1, company: company)
                #expect(context.deferredLinks == nil)
            }
            #expect(company.employees.count == 1)
            try context.undo()
            #expect(company.employees.isEmpty)
        }
    }
}
