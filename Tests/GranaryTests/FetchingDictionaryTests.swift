import Foundation
import Testing
@testable import Granary

/// Dictionary results, as Core Data's `NSFetchRequestResultType.dictionaryResultType` returns them.
@Suite struct FetchingDictionaryTests {
    /// Saved employees (Ada at Acme with a hire date, Bob at Acme without one, Cy without a company);
    /// the context is reset so that nothing is registered.
    static func populate(_ context: ManagedObjectContext) throws -> (acme: ManagedObjectID, ada: ManagedObjectID) {
        let acme = Company(context: context)
        acme.name = "Acme"
        let ada = makeEmployee(context, "Ada", salary: 3, company: acme)
        ada.hired = Date(timeIntervalSinceReferenceDate: 100)
        makeEmployee(context, "Bob", salary: 2, company: acme)
        makeEmployee(context, "Cy", salary: 1)
        try context.save()
        let ids = (acme.objectID, ada.objectID)
        context.reset()
        return ids
    }

    // Apple: NSFetchRequest.propertiesToFetch — "specify which properties should be returned by the
    // fetch … The property descriptions may represent attributes, to-one relationships, or expressions."
    @Test func dictionariesHoldOnlyTheNamedPropertiesAndToOnesAsObjectIDs() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let (acme, _) = try Self.populate(context)
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.propertiesToFetch = ["name", "company"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.map { Set($0.keys) } == [["name"], ["name", "company"], ["name", "company"]])
            #expect(rows.map { $0["name"] as? String } == ["Cy", "Bob", "Ada"])
            #expect(rows[1]["company"] as? ManagedObjectID == acme)
        }
    }

    // Core Data omits keys whose value is nil (an NSDictionary holds no nil); the object ID is there
    // only when asked for, as an NSExpressionDescription of `NSExpression.expressionForEvaluatedObject()`.
    @Test func nilValuesAreOmittedAndTheObjectIDOnlyWhenAsked() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let (_, ada) = try Self.populate(context)
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])
            request.propertiesToFetch = ["name", "hired", .objectID]
            let rows = try context.fetchDictionaries(request)
            #expect(rows[0]["hired"] as? Date == Date(timeIntervalSinceReferenceDate: 100))
            #expect(rows[1]["hired"] == nil && !rows[1].keys.contains("hired"))
            #expect(rows[0]["objectID"] as? ManagedObjectID == ada)
            // Every attribute when none is named, and no object ID.
            let all = try context.fetchDictionaries(FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)]))
            #expect(Set(all[0].keys) == ["name", "email", "salary", "hired"])
            #expect(Set(all[1].keys) == ["name", "email", "salary"])
        }
    }

    @Test func dictionariesAreReadWithoutRegisteringObjects() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            _ = try Self.populate(context)
            #expect(context.registeredObjects.isEmpty)
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.propertiesToFetch = ["name", "company"]
            request.filter = try PredicateParser.parse("salary > 1")
            #expect(try context.fetchDictionaries(request).count == 2)
            #expect(context.registeredObjects.isEmpty, "a dictionary fetch made objects")
        }
    }

    // Apple: NSFetchRequest.includesPendingChanges, Special Considerations — with the dictionary result
    // type "the array returned from the fetch reflects the current state in the persistent store, and
    // does not take into account any pending changes, insertions, or deletions in the context."
    @Test func pendingChangesAreNotSeen() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            _ = try Self.populate(context)
            makeEmployee(context, "Dee", salary: 9)
            let bob = try #require(try context.fetch(FetchRequest<Employee>(predicate: #Predicate { $0.name == "Bob" })).first)
            bob.name = "Robert"
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.name)])
            request.propertiesToFetch = ["name"]
            #expect(try context.fetchDictionaries(request).map { $0["name"] as? String } == ["Ada", "Bob", "Cy"])
        }
    }

    // Apple: NSFetchRequest.returnsDistinctResults — "If true, the request returns only distinct
    // values for the fields specified by propertiesToFetch."
    @Test func distinctResultsDropRepeatedDictionaries() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            let (acme, _) = try Self.populate(context)
            var request = FetchRequest<Employee>(sortBy: [SortDescriptor(\.salary)])
            request.propertiesToFetch = ["company"]
            request.returnsDistinctResults = true
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 2)
            #expect(rows[0].isEmpty && rows[1]["company"] as? ManagedObjectID == acme)
            request.fetchLimit = 1
            request.fetchOffset = 1
            #expect(try context.fetchDictionaries(request).count == 1)
            request.returnsDistinctResults = false
            request.fetchLimit = 0
            request.fetchOffset = 0
            #expect(try context.fetchDictionaries(request).count == 3)
        }
    }

    @Test func badPropertiesAreTypedErrors() throws {
        let (_, context) = try makeStack()
        context.performAndWait {
            var request = FetchRequest<Employee>()
            request.propertiesToFetch = ["nope"]
            let unknown = #expect(throws: ContextError.self) { try context.fetchDictionaries(request) }
            #expect(unknown.map { "\($0)" }?.contains("nope") == true)
            request.propertiesToFetch = ["reports"]
            let toMany = #expect(throws: ContextError.self) { try context.fetchDictionaries(request) }
            #expect(toMany.map { "\($0)" }?.contains("to-many") == true)
        }
    }

    @Test func aPredicateTheStoreCannotRunStillGivesStoredValues() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            _ = try Self.populate(context)
            var request = FetchRequest<Employee>(predicate: #Predicate { $0.name.count == 2 })
            request.propertiesToFetch = ["salary"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 1 && rows[0]["salary"] as? Int64 == 1)
        }
    }
}
