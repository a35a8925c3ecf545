import Foundation
import Granary

final class Author: ManagedObject {
    @Managed var name: String
    @Managed var born: Int
    @Managed var books: Set<Book>
}

final class Book: ManagedObject {
    @Managed var title: String
    @Managed var year: Int
    @Managed var price: Double
    @Managed var author: Author?
}

/// The object-graph half of the demo: a Core Data–style model with a relationship, saved to a durable
/// store, reopened through a fresh coordinator, and fetched with a `#Predicate`.
enum ObjectGraphDemo {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "1") {
            Entity("Author", as: Author.self) {
                Attribute("name", .string)
                Attribute("born", .integer32)
                Relationship("books", toMany: "Book", inverse: "author", deleteRule: .cascade)
                Unique("name")
            }
            Entity("Book", as: Book.self) {
                Attribute("title", .string)
                Attribute("year", .integer32, validation: [.range(min: 1000, max: 2100)])
                Attribute("price", .double, defaultValue: 0)
                Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify)
                Index("byYear", "year")
            }
        }
    }

    static func run(store url: URL) throws {
        print("Object graph (module Granary)")
        let model = try model()
        var coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        var context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let existing = try context.count(for: FetchRequest<Book>())
            if existing == 0 {
                let catalogue: [(String, Int, [(String, Int, Double)])] = [
                    ("Ursula K. Le Guin", 1929, [("The Left Hand of Darkness", 1969, 9.99), ("The Dispossessed", 1974, 10.99), ("A Wizard of Earthsea", 1968, 8.5)]),
                    ("Stanisław Lem", 1921, [("Solaris", 1961, 11.0), ("The Cyberiad", 1965, 12.5)]),
                    ("Octavia E. Butler", 1947, [("Kindred", 1979, 9.5), ("Parable of the Sower", 1993, 13.0)]),
                ]
                for (name, born, books) in catalogue {
                    let author = Author(context: context)
                    author.name = name
                    author.born = born
                    for (title, year, price) in books {
                        let book = Book(context: context)
                        book.title = title
                        book.year = year
                        book.price = price
                        book.author = author  // the inverse (author.books) follows at once
                    }
                }
                try context.save()
                print("  saved 3 authors and 7 books with their relationships")
            } else {
                print("  the store already holds \(existing) books from an earlier run")
            }
        }
        // Reopen through a brand-new coordinator, as a new process would.
        try coordinator.remove(coordinator.persistentStores[0])
        coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: .durable, at: url)
        context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let request = FetchRequest<Book>(predicate: #Predicate { $0.year >= 1965 && $0.year < 1980 },
                                             sortBy: [SortDescriptor(\.year)])
            let books = try context.fetch(request)
            print("  reopened; books from 1965 to 1979, by year (plan: \(try context.explain(request).explain)):")
            for book in books { print("    \(book.year)  \(book.title) — \(book.author?.name ?? "?")") }
            let lem = try context.fetch(FetchRequest<Author>(predicate: #Predicate { $0.name == "Stanisław Lem" })).first
            print("  \(lem?.name ?? "?") has \(lem?.books.count ?? 0) books: \(lem?.books.map(\.title).sorted().joined(separator: ", ") ?? "")")
            let invalid = Book(context: context)
            invalid.title = "Undated"
            invalid.year = 99
            do {
                try context.save()
            } catch {
                print("  an invalid book is refused at save: \(error)")
                context.rollback()
            }
        }
        try coordinator.remove(coordinator.persistentStores[0])
        print("")
    }
}
