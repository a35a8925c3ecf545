import Foundation
@testable import Granary
import Testing

// The live proxies of to-many relationships: `mutableSetValue(forKey:)` and
// `mutableOrderedSetValue(forKey:)`, and Foundation collections assigned to relationships.
@Suite struct RelationshipMutableSetTests {
    // Apple: NSObject.mutableSetValue(forKey:) — "Objects added to the mutable set proxy become related
    // to the receiver, and objects removed from the mutable set become unrelated."
    @Test func theSetProxyLinksAndUnlinksWithTheInverse() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            let ada = Employee(context: context), bob = Employee(context: context), cy = Employee(context: context)
            for (employee, name) in [(ada, "Ada"), (bob, "Bob"), (cy, "Cy")] { employee.name = name }
            let proxy = company.mutableSetValue(forKey: "employees")
            proxy.add(ada)
            proxy.addObjects(from: [bob, cy])
            #expect(proxy.count == 3)
            #expect(company.employees == [ada, bob, cy])
            #expect(bob.company === company)
            #expect(proxy.contains(bob))
            proxy.remove(bob)
            #expect(bob.company == nil)
            proxy.minus([AnyHashable(cy)])
            #expect(company.employees == [ada])
            // The proxy reads the relationship on every call: a change made elsewhere shows.
            cy.company = company
            #expect(proxy.count == 2)
            proxy.removeAllObjects()
            #expect(company.employees.isEmpty && ada.company == nil)
            try context.save()
            #expect(!context.hasChanges)
        }
    }

    // Apple: NSObject.mutableOrderedSetValue(forKey:) — a mutable ordered set proxy with read-write access
    // to an ordered to-many relationship; an object already a member keeps its place.
    @Test func theOrderedProxyInsertsReplacesAndRemovesInPlace() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let holder = Employee(context: context)
            holder.name = "Ada"
            holder.salary = 1
            let badges = (0..<4).map { i in
                let badge = Badge(context: context)
                badge.title = "b\(i)"
                return badge
            }
            let proxy = holder.mutableOrderedSetValue(forKey: "badges")
            proxy.add(badges[1])
            proxy.insert(badges[0], at: 0)
            proxy.insert(badges[0], at: 1)
            proxy.addObjects(from: [badges[2]])
            #expect(holder.badges.map(\.title) == ["b0", "b1", "b2"])
            proxy.replaceObject(at: 2, with: badges[3])
            #expect(badges[2].holder == nil && badges[3].holder === holder)
            proxy.removeObject(at: 0)
            #expect(holder.badges.map(\.title) == ["b1", "b3"])
            #expect(proxy.index(of: badges[3]) == 1)
            #expect(proxy.object(at: 0) as? Badge === badges[1])
            try context.save()
        }
    }

    // Granary's choice where Core Data raises: a value that is not a managed object is kept out and the
    // next save throws, naming the entity and key.
    @Test func aValueThatIsNoManagedObjectFailsTheNextSave() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            let company = Company(context: context)
            company.name = "Acme"
            company.mutableSetValue(forKey: "employees").add(42)
            #expect(company.employees.isEmpty)
            #expect {
                try context.save()
            } throws: { error in
                guard case ContextError.wrongValueType(let entity, let key, _, _) = error else { return false }
                return entity == "Company" && key == "employees"
            }
        }
    }

    // Core Data's generated classes declare to-many relationships as `NSSet?` / `NSOrderedSet?`: setting
    // one through key-value coding replaces the members.
    @Test func foundationCollectionsSetThroughKeyValueCodingReplaceTheMembers() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let company = Company(context: context)
            let ada = Employee(context: context), bob = Employee(context: context)
            try company.setValue(NSSet(array: [ada, bob]), forKey: "employees")
            #expect(company.employees == [ada, bob])
            let a = Badge(context: context), b = Badge(context: context)
            try ada.setValue(NSOrderedSet(array: [b, a]), forKey: "badges")
            #expect(ada.badges == [b, a])
        }
    }
}
