import Foundation
import Testing
@testable import Granary

@Suite struct RelationshipTests {
    @Test func settingOneSideUpdatesTheInverseAtOnce() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let boss = Employee(context: context)
            boss.name = "Boss"
            let a = Employee(context: context)
            a.name = "A"
            let b = Employee(context: context)
            b.name = "B"
            a.manager = boss
            #expect(boss.reports == [a])
            boss.reports = [a, b]
            #expect(b.manager === boss)
            // Moving b to another manager takes it out of the first manager's reports.
            let other = Employee(context: context)
            other.name = "Other"
            b.manager = other
            #expect(boss.reports == [a] && other.reports == [b])
            boss.reports = []
            #expect(a.manager == nil)
            // Ordered to-many keeps its order, and the inverse follows.
            let badges = (0..<3).map { i -> Badge in
                let badge = Badge(context: context)
                badge.title = "B\(i)"
                return badge
            }
            a.badges = [badges[2], badges[0], badges[1]]
            #expect(a.badges.map(\.title) == ["B2", "B0", "B1"] && badges[0].holder === a)
            try context.save()
            context.reset()
            let reloaded = try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.name == "A" }))
            #expect(reloaded.first?.badges.map(\.title) == ["B2", "B0", "B1"])
        }
    }

    /// Past 32 members the inverse side keeps a member set (`ManagedObject.memberSets`); every way of
    /// writing the relationship must keep it right, or links are lost or doubled.
    @Test func largeToManyInversesStayExactThroughEveryKindOfWrite() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let boss = Employee(context: context)
            boss.name = "Boss"
            let other = Employee(context: context)
            other.name = "Other"
            let staff = (0..<80).map { i -> Employee in
                let e = Employee(context: context)
                e.name = "E\(i)"
                return e
            }
            for e in staff { e.manager = boss }
            // Linking again changes nothing.
            for e in staff[0..<10] { e.manager = boss }
            #expect(boss.reports.count == 80)
            #expect(try (boss.value(forKey: "reports") as? Set<ManagedObject>)?.count == 80)
            // Moving some away, then replacing the whole set, then linking one by one again.
            for e in staff[0..<30] { e.manager = other }
            #expect(boss.reports.count == 50 && other.reports.count == 30)
            boss.reports = Set(staff[40..<80])
            #expect(staff[30..<40].allSatisfy { $0.manager == nil })
            for e in staff[30..<40] { e.manager = boss }
            for e in staff[30..<40] { e.manager = boss }
            #expect(boss.reports == Set(staff[30..<80]))
            // A rollback puts the saved (empty) relationship back; links made after it start afresh.
            context.rollback()
            let again = Employee(context: context)
            again.name = "Again"
            let team = (0..<40).map { i -> Employee in
                let e = Employee(context: context)
                e.name = "T\(i)"
                e.manager = again
                return e
            }
            for e in team { e.manager = again }
            #expect(again.reports == Set(team))
            try context.save()
            context.reset()
            let reloaded = try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.name == "Again" }))
            #expect(reloaded.first?.reports.count == 40)
        }
    }

    /// Unlinking members of a large to-many (one with a member set) in any order, by deletion or by
    /// relinking elsewhere, and relinking one, leaves exactly the rest, also after a save and a reload.
    @Test func unlinkingFromALargeToManyInAnyOrderLeavesExactlyTheRest() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let boss = Employee(context: context)
            boss.name = "Boss"
            let elsewhere = Employee(context: context)
            elsewhere.name = "Elsewhere"
            let staff = (0..<120).map { i -> Employee in
                let e = Employee(context: context)
                e.name = "S\(i)"
                e.manager = boss
                return e
            }
            try context.save()
            var remaining = Set(staff)
            var generator = SystemRandomNumberGenerator()
            for (step, e) in staff.shuffled(using: &generator).prefix(90).enumerated() {
                if step.isMultiple(of: 3) { context.delete(e) } else { e.manager = elsewhere }
                remaining.remove(e)
                #expect(boss.reports == remaining, "step \(step)")
                // Relinking one that left puts it back once.
                if step == 40 {
                    e.manager = boss
                    #expect(boss.reports == remaining.union([e]))
                    e.manager = elsewhere
                }
            }
            try context.save()
            context.reset()
            let reloaded = try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.name == "Boss" }))
            #expect(Set(reloaded.first?.reports.map(\.name) ?? []) == Set(remaining.map(\.name)))
        }
    }

    @Test func deleteRulesNullifyCascadeAndDeny() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            let boss = Employee(context: context)
            boss.name = "Boss"
            let worker = Employee(context: context)
            worker.name = "Worker"
            worker.manager = boss
            worker.company = company
            let badge = Badge(context: context)
            badge.title = "Gold"
            boss.badges = [badge]
            try context.save()

            // Deny: a company with employees cannot be deleted.
            context.delete(company)
            do {
                try context.save()
                Issue.record("deny rule did not block the save")
            } catch ContextError.deleteDenied(let entity, let relationship, _, let count) {
                #expect(entity == "Company" && relationship == "employees" && count == 1)
            }
            context.rollback()
            #expect(!company.isDeleted)

            // Nullify and cascade: deleting the boss empties the worker's manager and deletes the badge.
            context.delete(boss)
            #expect(worker.manager == nil)
            #expect(badge.isDeleted)
            try context.save()
            let snapshot = coordinator.persistentStores[0].engine.read()
            #expect(try snapshot.count(in: "Badge") == 0)
            #expect(try context.fetch(FetchRequest<Employee>()).map(\.name) == ["Worker"])
        }
    }

    @Test func toManyFaultsLoadOnFirstTouch() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Big"
            for i in 0..<20 {
                let e = Employee(context: context)
                e.name = "E\(i)"
                e.company = company
            }
            try context.save()
            context.reset()
            let fetched = try #require(try context.fetch(FetchRequest<Company>()).first)
            let members = fetched.employees
            #expect(members.count == 20)
            #expect(members.allSatisfy { $0.isFault })  // destinations are faults until touched
            #expect(members.map(\.name).sorted().first == "E0")
            #expect(members.allSatisfy { !$0.isFault })
        }
    }
}

@Suite struct SelfReferenceDeletionTests {
    /// Deleting an unsaved object whose relationship points at itself: the nullify rule edits the
    /// object's own inverse, which used to put it back into the change set, detached and with a
    /// temporary ID, so fetches returned it and the next save wrote it as an update.
    /// (Found by the object-graph property test on branch `graphtests`.)
    @Test func deletingAnUnsavedObjectThatManagesItselfLeavesNothingBehind() throws {
        let (coordinator, context) = try makeStack()
        try context.performAndWait {
            let loner = Employee(context: context)
            loner.name = "Loner"
            loner.manager = loner
            #expect(loner.reports == [loner])
            context.delete(loner)
            #expect(!context.hasChanges && loner.managedObjectContext == nil)
            #expect(try context.fetch(FetchRequest<Employee>()).isEmpty)
            let other = Employee(context: context)
            other.name = "Other"
            try context.save()
            #expect(try coordinator.persistentStores[0].engine.read().count(in: "Person") == 1)
        }
    }
}
