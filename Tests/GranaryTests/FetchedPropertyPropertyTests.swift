import Foundation
import Testing
@testable import Granary

/// Random edits of authors and books, saved now and then into a durable store, with the authors' fetched
/// properties read between them: a read returns what a plain reference selects when the author was last
/// refreshed (the cached result otherwise), and after reopening the store every fetched property matches
/// the reference again.
@Suite struct FetchedPropertyPropertyTests {
    typealias Random = DerivedAttributePropertyTests.Random

    struct Book {
        var title: String
        var pages: Int32
        var author: Int64?
    }

    /// Titles sort uniquely: a serial number, then words the `wordBooks` property may look for.
    static let words = ["Night", "night", "NIGHT", "Noon", "Dawn", "Nightly"]

    final class Run {
        let url = scratchURL("FetchedPropertyPropertyTests")
        let model: ManagedObjectModel
        var coordinator: PersistentStoreCoordinator
        var context: ManagedObjectContext
        var books: [Int64: Book] = [:]
        var authors: Set<Int64> = []
        var bookObjects: [Int64: ShelfBook] = [:]
        var authorObjects: [Int64: ShelfAuthor] = [:]
        /// The objects each author's fetched properties returned when first read since the last refresh
        /// (by identity: a book deleted since reads as an empty object).
        var cached: [Int64: [String: [ObjectIdentifier]]] = [:]
        var nextID: Int64 = 1

        init() throws {
            model = try ShelfModel.make()
            (coordinator, context) = try ShelfModel.stack(model, at: url)
        }

        func expected(_ key: String, of author: Int64) -> [String] {
            let name = "a\(author)"
            switch key {
            case "longBooks":
                return books.values.filter { $0.author == author && $0.pages > 300 }.map(\.title).sorted()
            case "wordBooks":
                return books.values.filter { $0.title.range(of: "night", options: .caseInsensitive) != nil }.map(\.title)
                    .sorted(by: >)
            default:
                return books.values.filter { $0.title.hasPrefix(name) }.map(\.title).sorted()
            }
        }

        func titles(_ author: ShelfAuthor, _ key: String) throws -> [String] {
            let objects = try author.fetchedObjects(forKey: key, as: ShelfBook.self).map(\.title)
            return key == "namesakes" ? objects.sorted() : objects
        }

        func step(_ r: inout Random) throws {
            try context.performAndWait {
                switch r.int(9) {
                case 0 where authors.count < 4, 1 where authors.isEmpty:
                    let id = nextID
                    nextID += 1
                    let author = ShelfAuthor(context: context)
                    author.name = "a\(id)"
                    authors.insert(id)
                    authorObjects[id] = author
                case 0, 1, 2:
                    let id = nextID
                    nextID += 1
                    // Some titles start with an author's name, for `namesakes`.
                    let prefix = r.int(3) == 0 ? authors.sorted().randomElement(using: &r).map { "a\($0)" } ?? "b" : "b"
                    let book = Book(title: "\(prefix)-\(id) \(r.pick(FetchedPropertyPropertyTests.words))",
                                    pages: Int32(r.int(600)), author: r.int(4) == 0 ? nil : authors.sorted().randomElement(using: &r))
                    let object = ShelfBook(context: context)
                    object.title = book.title
                    object.pages = Int(book.pages)
                    object.author = book.author.flatMap { authorObjects[$0] }
                    books[id] = book
                    bookObjects[id] = object
                case 3 where !books.isEmpty:
                    let id = books.keys.sorted().randomElement(using: &r)!
                    context.delete(bookObjects.removeValue(forKey: id)!)
                    books[id] = nil
                case 4 where !books.isEmpty:
                    let id = books.keys.sorted().randomElement(using: &r)!
                    let pages = Int32(r.int(600))
                    bookObjects[id]!.pages = Int(pages)
                    books[id]!.pages = pages
                case 5 where !books.isEmpty:
                    let id = books.keys.sorted().randomElement(using: &r)!
                    let author = r.int(4) == 0 ? nil : authors.sorted().randomElement(using: &r)
                    bookObjects[id]!.author = author.flatMap { authorObjects[$0] }
                    books[id]!.author = author
                case 6 where !authors.isEmpty:
                    let id = authors.sorted().randomElement(using: &r)!
                    // Unsaved changes of the author are kept, so the refresh merges them.
                    context.refresh(authorObjects[id]!, mergeChanges: true)
                    cached[id] = nil
                case 7 where r.int(3) == 0:
                    try context.save()
                default:
                    guard let id = authors.sorted().randomElement(using: &r) else { return }
                    let key = r.pick(["longBooks", "wordBooks", "namesakes"])
                    let author = authorObjects[id]!
                    if let earlier = cached[id]?[key] {
                        let read = try author.fetchedObjects(forKey: key).map(ObjectIdentifier.init)
                        #expect(read == earlier, "author \(id).\(key): a second read fetched again")
                    } else {
                        #expect(try titles(author, key) == expected(key, of: id), "author \(id).\(key) at its first read")
                        cached[id, default: [:]][key] = try author.fetchedObjects(forKey: key).map(ObjectIdentifier.init)
                    }
                }
            }
        }

        func reopen() throws {
            try context.performAndWait { try context.save() }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            (coordinator, context) = try ShelfModel.stack(model, at: url)
            try context.performAndWait {
                for author in try context.fetch(FetchRequest<ShelfAuthor>()) {
                    let id = try #require(Int64(author.name.dropFirst()))
                    for key in ["longBooks", "wordBooks", "namesakes"] {
                        #expect(try titles(author, key) == expected(key, of: id), "after reopening: author \(id).\(key)")
                    }
                }
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test func fetchedPropertiesMatchAReferenceWhenFirstReadAndStayCachedUntilARefresh() async {
        await SeededPropertyRuns.run(environmentPrefix: "FETCHED", label: "FetchedPropertyPropertyTests") { seed, steps in
            var r = Random(state: UInt64(truncatingIfNeeded: seed))
            let run = try Run()
            for _ in 0..<steps { try run.step(&r) }
            try run.reopen()
        }
    }
}
