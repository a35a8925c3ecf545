import Foundation
import Testing
@testable import Granary

/// Aggregate and grouped dictionary fetches, as Core Data's `NSExpressionDescription`,
/// `NSFetchRequest.propertiesToGroupBy` and `havingPredicate` describe them.
@Suite struct AggregateFetchTests {
    static func expression(_ name: String, _ expression: ExpressionDescription.Expression, as type: AttributeType = .undefined) -> FetchProperty {
        .expression(ExpressionDescription(name: name, expression: expression, resultType: type))
    }

    /// Saved purchases: books 10, 20, 30 (prices 1.5, 2.5, none); food 5 and one without an amount;
    /// one without a category worth 7. Returns the outlets (Ann's in Oslo has the books, Bo's the rest).
    /// The context is reset, so nothing is registered.
    @discardableResult
    static func populate(_ context: ManagedObjectContext) throws -> (ann: ManagedObjectID, bo: ManagedObjectID) {
        let ann = Outlet(context: context)
        ann.name = "Ann's"
        ann.city = "Oslo"
        let bo = Outlet(context: context)
        bo.name = "Bo's"
        makePurchase(context, "books", amount: 10, price: 1.5, quantity: 1, total: Decimal(string: "0.10"), sold: Date(timeIntervalSinceReferenceDate: 300), outlet: ann)
        makePurchase(context, "books", amount: 20, price: 2.5, quantity: 2, total: Decimal(string: "0.20"), sold: Date(timeIntervalSinceReferenceDate: 100), outlet: ann)
        makePurchase(context, "books", amount: 30, quantity: 3, outlet: ann)
        makePurchase(context, "food", amount: 5, price: 4, quantity: 4, outlet: bo)
        makePurchase(context, "food", amount: nil, price: 8, quantity: 5, outlet: bo)
        makePurchase(context, nil, amount: 7, quantity: 6, outlet: bo)
        try context.save()
        let ids = (ann.objectID, bo.objectID)
        context.reset()
        return ids
    }

    // Apple: NSExpressionDescription — "An expression description … describes a column to be returned
    // from a fetch that may not appear directly as an attribute or relationship on an entity", such as
    // "the sum of a column"; the function names are NSExpression's (`sum:`, `average:`, `min:`, `max:`,
    // `count:`).
    @Test func anAggregateWithoutGroupingIsOneDictionaryOverEveryMatchingObject() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [
                Self.expression("sum", .sum("amount")), Self.expression("average", .average("amount")),
                Self.expression("min", .min("amount")), Self.expression("max", .max("amount")),
                Self.expression("values", .count("amount")), Self.expression("objects", .count()),
                Self.expression("priceSum", .sum("price")), Self.expression("totalSum", .sum("total")),
                Self.expression("quantitySum", .sum("quantity")), Self.expression("smallest", .min("quantity")),
            ]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(row["sum"] as? Int64 == 72)
            #expect(row["average"] as? Double == 72.0 / 5)
            #expect(row["min"] as? Int64 == 5)
            #expect(row["max"] as? Int64 == 30)
            #expect(row["values"] as? Int64 == 5)
            #expect(row["objects"] as? Int64 == 6)
            #expect(row["priceSum"] as? Double == 16)
            #expect(row["totalSum"] as? Decimal == Decimal(string: "0.3"))
            #expect(row["quantitySum"] as? Int64 == 21)
            // A minimum keeps the attribute's own type.
            #expect(row["smallest"] as? Int16 == 1)
            #expect(context.registeredObjects.isEmpty, "an aggregate fetch made objects")
        }
    }

    // Apple: NSExpressionDescription.expressionResultType — "the type of the value that is returned
    // … as an NSAttributeType".
    @Test func theResultTypeConvertsNumbers() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [
                Self.expression("sum", .sum("amount"), as: .double), Self.expression("average", .average("amount"), as: .integer64),
                Self.expression("priceSum", .sum("price"), as: .decimal), Self.expression("small", .sum("quantity"), as: .integer16),
                Self.expression("firstSold", .min("sold"), as: .date),
            ]
            let row = try #require(try context.fetchDictionaries(request).first)
            #expect(row["sum"] as? Double == 72)
            #expect(row["average"] as? Int64 == 14)
            #expect(row["priceSum"] as? Decimal == 16)
            #expect(row["small"] as? Int16 == 21)
            #expect(row["firstSold"] as? Date == Date(timeIntervalSinceReferenceDate: 100))
        }
    }

    // Nulls take no part (as in SQL and Core Data's SQLite store); with nothing to aggregate, a sum and
    // a count are 0 and an average, minimum or maximum is absent, as Core Data leaves nil out of a
    // dictionary.
    @Test func nilValuesTakeNoPartAndAnEmptyMatchStillGivesOneDictionary() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.filter = try PredicateParser.parse("category == 'none such'")
            request.propertiesToFetch = [Self.expression("sum", .sum("amount")), Self.expression("count", .count()),
                                         Self.expression("average", .average("price")), Self.expression("max", .max("sold"))]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 1)
            #expect(rows[0]["sum"] as? Int64 == 0 && rows[0]["count"] as? Int64 == 0)
            #expect(rows[0]["average"] == nil && rows[0]["max"] == nil)
            // Grouped, no match is no group.
            request.propertiesToFetch = ["category", Self.expression("sum", .sum("amount"))]
            request.propertiesToGroupBy = ["category"]
            #expect(try context.fetchDictionaries(request).isEmpty)
        }
    }

    // Apple: NSFetchRequest.propertiesToGroupBy — "An array of objects that indicate how data should
    // be grouped before a select statement is run in an SQL database"; the properties fetched must be
    // those grouped by or aggregate expressions.
    @Test func groupingGivesOneDictionaryPerDistinctValue() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", Self.expression("count", .count("amount")), Self.expression("total", .sum("amount"))]
            request.propertiesToGroupBy = ["category"]
            request.sortKeys = [SortKey("category")]
            let rows = try context.fetchDictionaries(request)
            // Null sorts first, and a null category is a group of its own whose key is left out.
            #expect(rows.map { $0["category"] as? String } == [nil, "books", "food"])
            #expect(rows.map { $0["count"] as? Int64 } == [1, 3, 1])
            #expect(rows.map { $0["total"] as? Int64 } == [7, 60, 5])
            #expect(!rows[0].keys.contains("category"))
        }
    }

    @Test func groupingByAToOneRelationshipOrAKeyPathThroughIt() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            let (ann, bo) = try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["outlet", Self.expression("quantity", .sum("quantity"))]
            request.propertiesToGroupBy = ["outlet"]
            request.sortKeys = [SortKey("quantity")]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.map { $0["outlet"] as? ManagedObjectID } == [ann, bo])
            #expect(rows.map { $0["quantity"] as? Int64 } == [6, 15])

            request.propertiesToFetch = ["outlet.city", Self.expression("n", .count())]
            request.propertiesToGroupBy = ["outlet.city"]
            request.sortKeys = [SortKey("outlet.city", ascending: false)]
            let cities = try context.fetchDictionaries(request)
            #expect(cities.map { $0["outlet.city"] as? String } == ["Oslo", nil])
            #expect(cities.map { $0["n"] as? Int64 } == [3, 3])
            // A key path expression fetches a grouped value under another name.
            request.propertiesToFetch = [Self.expression("city", .keyPath("outlet.city")), Self.expression("n", .count())]
            #expect(try context.fetchDictionaries(request).map { $0["city"] as? String } == ["Oslo", nil])
        }
    }

    // Apple: NSFetchRequest.havingPredicate — "The predicate used to filter rows being returned by a
    // query containing a GROUP BY."
    @Test func theHavingPredicateFiltersGroupsByTheirAggregates() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", Self.expression("count", .count())]
            request.propertiesToGroupBy = ["category"]
            request.havingPredicate = try PredicateParser.parseHaving("count > 1")
            request.sortKeys = [SortKey("count", ascending: false)]
            #expect(try context.fetchDictionaries(request).map { $0["category"] as? String } == ["books", "food"])
            // Core Data's way of naming an expression: a variable.
            request.havingPredicate = try PredicateParser.parseHaving("$count > 2 OR category == 'food'")
            #expect(try context.fetchDictionaries(request).map { $0["category"] as? String } == ["books", "food"])
            request.havingPredicate = try PredicateParser.parseHaving("$count > 2")
            #expect(try context.fetchDictionaries(request).map { $0["category"] as? String } == ["books"])
        }
    }

    @Test func groupsAreSortedByAggregatesAndWindowed() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", Self.expression("total", .sum("amount"))]
            request.propertiesToGroupBy = ["category"]
            request.sortKeys = [SortKey("total", ascending: false)]
            #expect(try context.fetchDictionaries(request).map { $0["total"] as? Int64 } == [60, 7, 5])
            request.fetchOffset = 1
            request.fetchLimit = 1
            #expect(try context.fetchDictionaries(request).map { $0["total"] as? Int64 } == [7])
            // A typed sort descriptor names a grouped key.
            var typed = FetchRequest<Purchase>(sortBy: [SortDescriptor(\.category, order: .reverse)])
            typed.propertiesToFetch = ["category"]
            typed.propertiesToGroupBy = ["category"]
            #expect(try context.fetchDictionaries(typed).map { $0["category"] as? String } == ["food", "books", nil])
        }
    }

    // Apple: NSFetchRequest.returnsDistinctResults with an aggregate fetch: equal dictionaries once.
    @Test func distinctDropsGroupsThatLookAlike() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            // Grouped by category and outlet, fetching the outlet alone: books and food both at one outlet.
            request.propertiesToFetch = ["outlet"]
            request.propertiesToGroupBy = ["outlet", "category"]
            #expect(try context.fetchDictionaries(request).count == 3)
            request.returnsDistinctResults = true
            #expect(try context.fetchDictionaries(request).count == 2)
        }
    }

    // Grouped by their stored bytes, a double's two zeros are still one value, as they are equal.
    @Test func theTwoZerosOfADoubleAreOneGroup() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            makePurchase(context, "a", amount: 1, price: 0.0)
            makePurchase(context, "b", amount: 2, price: -0.0)
            makePurchase(context, "c", amount: 4, price: 1)
            try context.save()
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["price", Self.expression("sum", .sum("amount"))]
            request.propertiesToGroupBy = ["price"]
            request.sortKeys = [SortKey("price")]
            #expect(try context.fetchDictionaries(request).map { $0["sum"] as? Int64 } == [3, 4])
        }
    }

    @Test func minimumAndMaximumCompareDatesAndStrings() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = [Self.expression("first", .min("sold")), Self.expression("last", .max("sold")),
                                         Self.expression("a", .min("category")), Self.expression("z", .max("category"))]
            let row = try #require(try context.fetchDictionaries(request).first)
            #expect(row["first"] as? Date == Date(timeIntervalSinceReferenceDate: 100))
            #expect(row["last"] as? Date == Date(timeIntervalSinceReferenceDate: 300))
            #expect(row["a"] as? String == "books" && row["z"] as? String == "food")
        }
    }

    @Test func thePlannerChoosesAnIndexForThePredicateAndAnExtremeReadsOneEndOfAnIndex() throws {
        let (coordinator, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.filter = try PredicateParser.parse("category == 'books'")
            request.propertiesToFetch = [Self.expression("sum", .sum("amount"))]
            let before = coordinator.fetchStatistics
            #expect(try context.fetchDictionaries(request).first?["sum"] as? Int64 == 60)
            #expect(coordinator.fetchStatistics.lastPlan?.contains("INDEX Purchase_byCategory EQUAL") == true, "\(coordinator.fetchStatistics.lastPlan ?? "no plan")")
            #expect(coordinator.fetchStatistics.rowsExamined - before.rowsExamined == 3)

            var extremes = FetchRequest<Purchase>()
            extremes.propertiesToFetch = [Self.expression("min", .min("amount")), Self.expression("max", .max("amount")),
                                          Self.expression("n", .count())]
            let examined = coordinator.fetchStatistics.rowsExamined
            let row = try #require(try context.fetchDictionaries(extremes).first)
            #expect(row["min"] as? Int64 == 5 && row["max"] as? Int64 == 30 && row["n"] as? Int64 == 6)
            #expect(coordinator.fetchStatistics.rowsExamined - examined == 2, "the extremes were not read from the index")
            #expect(coordinator.fetchStatistics.lastPlan?.contains("INDEX Purchase_byAmount NOT NULL") == true, "\(coordinator.fetchStatistics.lastPlan ?? "no plan")")
        }
    }

    // Apple: NSFetchRequest.includesPendingChanges, Special Considerations — a dictionary result
    // "reflects the current state in the persistent store, and does not take into account any pending
    // changes, insertions, or deletions in the context". Aggregates are dictionary results.
    @Test func pendingChangesAreNotSeenByAggregates() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category", Self.expression("sum", .sum("amount"))]
            request.propertiesToGroupBy = ["category"]
            request.sortKeys = [SortKey("category")]
            let saved = try context.fetchDictionaries(request).map { $0["sum"] as? Int64 }
            makePurchase(context, "books", amount: 1_000)
            let some = try #require(try context.fetch(FetchRequest<Purchase>(predicate: #Predicate { $0.category == "food" })).first)
            some.amount = 99
            context.delete(try #require(try context.fetch(FetchRequest<Purchase>(predicate: #Predicate { $0.category == nil })).first))
            #expect(context.hasChanges)
            #expect(try context.fetchDictionaries(request).map { $0["sum"] as? Int64 } == saved)
            try context.save()
            #expect(try context.fetchDictionaries(request).map { $0["sum"] as? Int64 } == [1_060, 99])
        }
    }

    @Test func aSubentityIsAggregatedAloneInItsSharedTable() throws {
        let (_, context) = try makeStack()
        try context.performAndWait {
            makeEmployee(context, "Ada", salary: 3)
            makeEmployee(context, "Bob", salary: 5)
            let contractor = Contractor(context: context)
            contractor.name = "Cy"
            contractor.rate = 100
            try context.save()
            var request = FetchRequest<Employee>()
            request.propertiesToFetch = [Self.expression("total", .sum("salary")), Self.expression("n", .count())]
            let row = try #require(try context.fetchDictionaries(request).first)
            #expect(row["total"] as? Int64 == 8 && row["n"] as? Int64 == 2)
            var people = FetchRequest<Person>()
            people.propertiesToFetch = [Self.expression("n", .count())]
            #expect(try context.fetchDictionaries(people).first?["n"] as? Int64 == 3)
        }
    }

    @Test func aPredicateTheStoreCannotRunIsAppliedToObjectsFirst() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>(predicate: #Predicate { ($0.category ?? "").count == 4 })
            request.propertiesToFetch = ["category", Self.expression("sum", .sum("amount"))]
            request.propertiesToGroupBy = ["category"]
            let rows = try context.fetchDictionaries(request)
            #expect(rows.count == 1 && rows[0]["category"] as? String == "food" && rows[0]["sum"] as? Int64 == 5)
        }
    }

    @Test func theTypedConvenienceReturnsOneAggregate() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            let books = FetchRequest<Purchase>(predicate: #Predicate { $0.category == "books" })
            #expect(try context.aggregate(.sum("amount"), for: books, as: Int64.self) == 60)
            #expect(try context.aggregate(.sum("amount"), for: books, as: Int.self) == 60)
            #expect(try context.aggregate(.average("amount"), for: books, as: Double.self) == 20)
            #expect(try context.aggregate(.max("sold"), for: books, as: Date.self) == Date(timeIntervalSinceReferenceDate: 300))
            #expect(try context.aggregate(.average("price"), for: FetchRequest<Purchase>(predicate: #Predicate { $0.category == "none" }), as: Double.self) == nil)
            let wrong = #expect(throws: ContextError.self) { try context.aggregate(.max("sold"), for: books, as: Double.self) }
            #expect(wrong.map { "\($0)" }?.contains("date") == true)
        }
    }

    @Test func aDistinctListOfPlainPropertiesIsReadWithoutObjects() throws {
        let (_, context) = try makeAggregateStack()
        try context.performAndWait {
            try Self.populate(context)
            var request = FetchRequest<Purchase>()
            request.propertiesToFetch = ["category"]
            request.returnsDistinctResults = true
            request.sortKeys = [SortKey("category", ascending: false)]
            #expect(try context.fetchDictionaries(request).map { $0["category"] as? String } == ["food", "books", nil])
            #expect(context.registeredObjects.isEmpty)
            // Renamed, through the per-object path: the same values.
            request.propertiesToFetch = [Self.expression("kind", .keyPath("category"))]
            request.sortKeys = []
            #expect(Set(try context.fetchDictionaries(request).map { $0["kind"] as? String }) == ["food", "books", nil])
        }
    }
}
