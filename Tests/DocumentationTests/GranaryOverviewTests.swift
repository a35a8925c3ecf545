import Foundation
import Granary
import Testing

// The classes of the README's and the Granary landing page's example, used by the other articles too.
// snippet: granary-classes
final class Author: ManagedObject {
    @Managed var name: String
    @Managed var books: Set<Book>
}
final class Book: ManagedObject {
    @Managed var title: String
    @Managed var year: Int
    @Managed var author: Author?
}
// end-snippet

/// The example's model, for the articles that go on from it.
func libraryModel() throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Author", as: Author.self) {
            Attribute("name", .string)
            Relationship("books", toMany: "Book", inverse: "author", deleteRule: .cascade)
            Unique("name")
        }
        Entity("Book", as: Book.self) {
            Attribute("title", .string)
            Attribute("year", .integer32, validation: [.range(min: 1000, max: 2100)])
            Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify)
            Index("byYear", "year")
        }
    }
}

/// A coordinator on a durable store of the example's model at `url`, holding Lem and three of his books.
func libraryCoordinator(at url: URL) throws -> PersistentStoreCoordinator {
    let coordinator = PersistentStoreCoordinator(managedObjectModel: try libraryModel())
    try coordinator.addPersistentStore(type: .durable, at: url)
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    try context.performAndWait {
        let lem = Author(context: context)
        lem.name = "Stanisław Lem"
        for (title, year) in [("Solaris", 1961), ("The Cyberiad", 1965), ("Fiasco", 1986)] {
            let book = Book(context: context)
            book.title = title
            book.year = year
            book.author = lem
        }
        try context.save()
    }
    return coordinator
}

@Suite struct GranaryOverviewTests {
    /// The README's and the landing page's example, as a function of the store's location.
    func overview(url: URL) throws {
        // snippet: granary-overview
        let model = try ManagedObjectModel(version: "1") {
            Entity("Author", as: Author.self) {
                Attribute("name", .string)
                Relationship("books", toMany: "Book", inverse: "author", deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book", as: Book.self) {
                Attribute("title", .string)
                Attribute("year", .integer32, validation: [.range(min: 1000, max: 2100)])
                Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify)
                Index("byYear", "year")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)        // a directory: Library.granary
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)

        try context.performAndWait {
            let lem = Author(context: context)
            lem.name = "Stanisław Lem"
            let solaris = Book(context: context)
            solaris.title = "Solaris"
            solaris.year = 1961
            solaris.author = lem                     // lem.books now contains solaris
            try context.save()                       // validates everything first; all errors reported together

            let request = FetchRequest<Book>(predicate: #Predicate { $0.year < 1970 }, sortBy: [SortDescriptor(\.year)])
            let early = try context.fetch(request)   // runs on the byYear index
            print(early.map(\.title))                // ["Solaris"]
            print(try context.explain(request))      // INDEX Book_byYear RANGE (-inf, 1970) ORDER SATISFIED
        }
        // end-snippet
        let request = FetchRequest<Book>(predicate: #Predicate { $0.year < 1970 }, sortBy: [SortDescriptor(\.year)])
        let (titles, booksOfTheAuthor, plan) = try context.performAndWait {
            let books = try context.fetch(request)
            return (books.map(\.title), books.first?.author?.books.map(\.title), try context.explain(request).explain)
        }
        #expect(titles == ["Solaris"])
        #expect(booksOfTheAuthor == ["Solaris"])
        #expect(plan == "INDEX Book_byYear RANGE (-inf, 1970) ORDER SATISFIED")
    }

    @Test func theOverviewRunsAndSaysWhatItPrints() throws {
        let url = scratchStore()
        defer { removeScratch(url) }
        try overview(url: url)
        // Reopened, the store has what the example saved.
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try libraryModel())
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let names = try context.performAndWait { try context.fetch(FetchRequest<Author>()).map(\.name) }
        #expect(names == ["Stanisław Lem"])
    }
}
