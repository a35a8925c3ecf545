import Foundation
import Granary
import Testing

/// The code of the article "Fetching and query planning", on the example's store (Lem and three books).
@Suite struct FetchingArticleTests {
    @Test func threeWaysToSayOnePredicatePlanAlike() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            // snippet: fetching-three-ways
            let typed = FetchRequest<Book>(predicate: #Predicate { $0.year >= 1960 && $0.year < 1970 },
                                           sortBy: [SortDescriptor(\.year)])

            var built = FetchRequest<Book>()
            built.filter = (FetchPredicate.key("year") >= 1960 && FetchPredicate.key("year") < 1970).node
            built.sortKeys = [SortKey("year")]

            var parsed = FetchRequest<Book>()
            parsed.filter = try PredicateParser.parse("year >= %d AND year < %d", arguments: [1960, 1970])
            parsed.sortKeys = [SortKey("year")]
            // end-snippet
            for request in [typed, built, parsed] {
                #expect(try context.fetch(request).map(\.title) == ["Solaris", "The Cyberiad"])
            }

            // snippet: fetching-explain
            print(try context.explain(typed))        // INDEX Book_byYear RANGE [1960, 1970) ORDER SATISFIED
            let notSolaris = FetchRequest<Book>(predicate: #Predicate { $0.year >= 1960 && $0.title != "Solaris" })
            print(try context.explain(notSolaris))   // INDEX Book_byYear RANGE [1960, +inf), RESIDUAL title != 'Solaris'
            var byAuthor = FetchRequest<Book>()
            byAuthor.filter = try PredicateParser.parse("author.name == %@", arguments: ["Stanisław Lem"])
            print(try context.explain(byAuthor))     // SCAN Book, RESIDUAL author.name == 'Stanisław Lem'
            // end-snippet
            for request in [typed, built, parsed] {
                #expect(try context.explain(request).explain == "INDEX Book_byYear RANGE [1960, 1970) ORDER SATISFIED")
            }
            #expect(try context.explain(notSolaris).explain == "INDEX Book_byYear RANGE [1960, +inf), RESIDUAL title != 'Solaris'")
            #expect(try context.explain(byAuthor).explain == "SCAN Book, RESIDUAL author.name == 'Stanisław Lem'")
            #expect(try context.fetch(notSolaris).map(\.title).sorted() == ["Fiasco", "The Cyberiad"])
            #expect(try context.fetch(byAuthor).count == 3)

            // A typed predicate through an optional to-one relationship is not translated today: the fetch
            // reads every book and evaluates it on the objects, and the plan shows a plain scan.
            let typedByAuthor = FetchRequest<Book>(predicate: #Predicate { $0.author?.name == "Stanisław Lem" })
            #expect(try context.explain(typedByAuthor).explain == "SCAN Book")
            #expect(try context.fetch(typedByAuthor).count == 3)
        }
    }

    @Test func resultShapes() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            // snippet: fetching-shapes
            var request = FetchRequest<Book>(sortBy: [SortDescriptor(\.title)])
            request.fetchBatchSize = 100                       // faults, loaded 100 at a time as they are touched
            request.relationshipKeyPathsForPrefetching = ["author"]
            let books = try context.fetch(request)
            let count = try context.count(for: request)
            let ids = try context.fetchObjectIDs(request)      // Sendable: hand them to other contexts

            var columns = FetchRequest<Book>(sortBy: [SortDescriptor(\.year)])
            columns.propertiesToFetch = ["title", "year"]
            let rows = try context.fetchDictionaries(columns)  // [["title": "Solaris", "year": 1961], …]
            // end-snippet
            #expect(books.map(\.title) == ["Fiasco", "Solaris", "The Cyberiad"])
            #expect(count == 3 && ids.count == 3)
            #expect(rows.first?["title"] as? String == "Solaris")
            #expect((rows.first?["year"] as? Int32).map(Int.init) == 1961)
        }
        #expect(coordinator.fetchStatistics.indexScans + coordinator.fetchStatistics.fullScans > 0)
    }

    @Test func objectsAsPredicateArgumentsAndDictionaries() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let lem = try #require(try context.fetch(FetchRequest<Author>()).first)
            // snippet: fetching-objects
            var byLem = FetchRequest<Book>(sortBy: [SortDescriptor(\.year)])
            byLem.filter = try PredicateParser.parse("author == %@", arguments: [lem])   // or lem.objectID
            let lemID: ManagedObjectID? = lem.objectID
            let typedByLem = FetchRequest<Book>(predicate: #Predicate { $0.author?.objectID == lemID })

            var titles = FetchRequest<Book>(sortBy: [SortDescriptor(\.year)])
            titles.filter = (FetchKey("author") == lem).node
            titles.propertiesToFetch = ["title", "author", .objectID]
            let rows = try context.fetchDictionaries(titles)  // [["title": "Solaris", "author": <ID>, "objectID": <ID>], …]
            // end-snippet
            #expect(try context.fetch(byLem).map(\.title) == ["Solaris", "The Cyberiad", "Fiasco"])
            #expect(try context.fetch(typedByLem).count == 3)
            #expect(rows.map { $0["title"] as? String } == ["Solaris", "The Cyberiad", "Fiasco"])
            #expect(rows.allSatisfy { $0["author"] as? ManagedObjectID == lem.objectID && $0["objectID"] is ManagedObjectID })
        }
    }

    @Test func aggregatesAndGroups() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let lem = try #require(try context.fetch(FetchRequest<Author>()).first)
            // snippet: fetching-aggregates
            let total = try context.aggregate(.count(), for: FetchRequest<Book>(), as: Int.self)   // 3

            var perAuthor = FetchRequest<Book>()
            perAuthor.propertiesToFetch = ["author", .expression(ExpressionDescription(name: "books", expression: .count())),
                                           .expression(ExpressionDescription(name: "latest", expression: .max("year")))]
            perAuthor.propertiesToGroupBy = ["author"]
            perAuthor.havingPredicate = try PredicateParser.parseHaving("$books > 1")     // Core Data's spelling; `books > 1` too
            perAuthor.sortKeys = [SortKey("latest", ascending: false)]
            let rows = try context.fetchDictionaries(perAuthor)  // [["author": <ID>, "books": 3, "latest": 1986]]
            // end-snippet
            #expect(total == 3)
            #expect(rows.count == 1)
            #expect(rows.first?["author"] as? ManagedObjectID == lem.objectID)
            #expect(rows.first?["books"] as? Int64 == 3 && rows.first?["latest"] as? Int32 == 1986)
        }
    }

    @Test func aFetchedResultsControllerFollowsChanges() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            // snippet: fetching-controller
            let controller = FetchedResultsController(
                fetchRequest: FetchRequest<Book>(predicate: #Predicate { $0.year < 1980 }, sortBy: [SortDescriptor(\.year)]),
                managedObjectContext: context)
            controller.onChange = { difference in
                print("inserted \(difference.inserted), deleted \(difference.deleted), moved \(difference.moved.count)")
            }
            try controller.performFetch()
            let eden = Book(context: context)
            eden.title = "Eden"
            eden.year = 1959
            context.processPendingChanges()                    // inserted [[0, 0]], deleted [], moved 0
            // end-snippet
            #expect(controller.fetchedObjects.map(\.title) == ["Eden", "Solaris", "The Cyberiad"])
            #expect(controller.indexPath(forObject: eden) == IndexPath(item: 0, section: 0))
        }
    }

    @Test func batchRequestsAndMergingTheirChanges() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = try libraryCoordinator(at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let held = Held()
        try view.performAndWait { held.book = try view.fetch(FetchRequest<Book>(predicate: #Predicate { $0.year == 1986 })).first }
        // snippet: fetching-batch
        let result = try context.performAndWait {
            try context.execute(BatchUpdateRequest(for: Book.self, predicate: #Predicate { $0.year > 1980 },
                                                   propertiesToUpdate: ["title": "Fiasco (Fiasko)"], resultType: .objectIDs))
        }
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: result.changes, into: [view])   // live contexts catch up
        // end-snippet
        #expect(result.count == 1)
        #expect(view.performAndWait { held.book?.title } == "Fiasco (Fiasko)")
    }
}
