// Port of Core Data's aggregate fetches, as Apple's `NSExpressionDescription`,
// `NSFetchRequest.propertiesToGroupBy` and `havingPredicate` reference pages describe them, and as
// Core Data code commonly writes them (an `NSExpressionDescription` of `count:` or `sum:` over an
// `NSExpression(forKeyPath:)`, named, with an `expressionResultType`).
//
// Lines a porter changes beyond `import CoreData` → `import GranaryCoreData`: none.
import GranaryCoreData
import Testing

@Suite struct AggregateFetchingTests {
    /// A view context with quakes ci1…ci20 saved: magnitude i % 7.
    func loadedContext() throws -> (NSPersistentContainer, NSManagedObjectContext) {
        registerEarthquakesModel()
        let container = NSPersistentContainer(name: "Earthquakes")
        container.persistentStoreDescriptions.first!.type = NSInMemoryStoreType
        container.loadPersistentStores { _, error in precondition(error == nil) }
        let context = container.viewContext
        try context.performAndWait {
            for values in feedRecords(1...20) {
                let quake = Quake(context: context)
                for (key, value) in values { try quake.setValue(value, forKey: key) }
            }
            try context.save()
        }
        return (container, context)
    }

    static func description(_ name: String, _ function: String, _ keyPath: String?, _ type: NSAttributeType) -> NSExpressionDescription {
        let description = NSExpressionDescription()
        description.name = name
        let argument = keyPath.map { NSExpression(forKeyPath: $0) } ?? NSExpression.expressionForEvaluatedObject()
        description.expression = NSExpression(forFunction: function, arguments: [argument])
        description.expressionResultType = type
        return description
    }

    // Apple: NSExpressionDescription — a column "that may not appear directly as an attribute … on an
    // entity", here the sum and the count of all quakes.
    @Test func aSumAndACountOverEveryObject() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Quake")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [
                Self.description("total", "sum:", "magnitude", .doubleAttributeType),
                Self.description("quakes", "count:", nil, .integer64AttributeType),
                Self.description("strongest", "max:", "magnitude", .undefinedAttributeType),
            ]
            let rows = try context.fetch(request)
            #expect(rows.count == 1)
            #expect(rows[0]["total"] as? Double == 63)
            #expect(rows[0]["quakes"] as? Int64 == 20)
            #expect(rows[0]["strongest"] as? Float == 6)
        }
    }

    // Apple: NSFetchRequest.propertiesToGroupBy and havingPredicate: quakes counted per magnitude,
    // keeping the magnitudes with more than two; the having predicate names the count's description
    // as a variable, in either of Core Data's spellings.
    @Test func aGroupedCountWithAHavingPredicate() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Quake")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["magnitude", Self.description("count", "count:", "code", .integer64AttributeType)]
            request.propertiesToGroupBy = ["magnitude"]
            request.sortDescriptors = [NSSortDescriptor(key: "magnitude", ascending: true)]
            let all = try context.fetch(request)
            #expect(all.map { $0["magnitude"] as? Float } == [0, 1, 2, 3, 4, 5, 6])
            #expect(all.map { $0["count"] as? Int64 } == [2, 3, 3, 3, 3, 3, 3])

            request.havingPredicate = NSPredicate(format: "$count > 2")
            #expect(try context.fetch(request).map { $0["magnitude"] as? Float } == [1, 2, 3, 4, 5, 6])
            request.havingPredicate = NSPredicate(format: "%@ > 2 AND magnitude < 3", NSExpression(forVariable: "count"))
            #expect(try context.fetch(request).map { $0["magnitude"] as? Float } == [1, 2])
        }
    }

    // Core Data reads an NSExpression argument of a format string as the expression it is: a key path
    // (or, in a having predicate, a result key named as a variable).
    @Test func anExpressionArgumentStandsForItsKeyPath() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let request = Quake.fetchRequest()
            request.predicate = NSPredicate(format: "%@ >= 6", NSExpression(forKeyPath: "magnitude"))
            let strongest = try context.fetch(request)
            #expect(strongest.count == 3)
        }
    }

    @Test func distinctValuesOfOneAttribute() throws {
        let (_, context) = try loadedContext()
        try context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Quake")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = ["magnitude"]
            request.returnsDistinctResults = true
            let magnitudes = try context.fetch(request)
            #expect(magnitudes.count == 7)
        }
    }

    // Core Data raises for a function its stores do not compute, and for a property fetched beside a
    // grouping that does not name it; here both are typed errors.
    @Test func badAggregatesAreTypedErrors() throws {
        let (_, context) = try loadedContext()
        context.performAndWait {
            let request = NSFetchRequest<NSDictionary>(entityName: "Quake")
            request.resultType = .dictionaryResultType
            request.propertiesToFetch = [Self.description("median", "median:", "magnitude", .doubleAttributeType)]
            #expect(throws: ContextError.self) { try context.fetch(request) }
            request.propertiesToFetch = ["place", Self.description("count", "count:", "code", .integer64AttributeType)]
            request.propertiesToGroupBy = ["magnitude"]
            let error = #expect(throws: ContextError.self) { try context.fetch(request) }
            guard case .ungroupedProperty("Quake", "place", ["magnitude"])? = error else {
                Issue.record("expected ungroupedProperty, got \(String(describing: error))")
                return
            }
        }
    }
}
