import Foundation
import Testing
@testable import Granary

/// Random saves (inserts, edits of chosen properties, deletes, relationship changes, some by batch
/// requests, from two contexts with different authors) against a reference list of the transactions each
/// should record; compared after every step, after purges and after reopening the store.
@Suite struct PersistentHistoryPropertyTests {
    typealias Random = FetchingPlannerPropertyTests.Random

    /// What one transaction should hold: per object, its change and (updates) property names or
    /// (deletes) tombstone title.
    struct Expected: Equatable, CustomStringConvertible {
        var author: String?
        var changes: [ManagedObjectID: Change]
        enum Change: Equatable {
            case insert
            case update(Set<String>)
            case delete(title: String?)
        }
        var description: String { "\(author ?? "-"): \(changes.map { "\($0.key.uriRepresentation.lastPathComponent)=\($0.value)" }.sorted())" }
    }

    /// The reference store: each book's title and pages, and its author.
    struct Book { var title: String?; var pages: Int64; var author: ManagedObjectID? }

    final class Run {
        let url = scratchURL("historyproperty")
        var coordinator: PersistentStoreCoordinator
        var contexts: [ManagedObjectContext]
        var books: [ManagedObjectID: Book] = [:]
        var authors: [ManagedObjectID] = []
        var expected: [Expected] = []
        /// Expected transactions still in the store (after purges), by index into `expected`.
        var firstKept = 0
        var serial = 0

        init() throws {
            (coordinator, contexts) = try Self.open(url)
        }

        static func open(_ url: URL) throws -> (PersistentStoreCoordinator, [ManagedObjectContext]) {
            let (coordinator, first) = try HistorySupport.stack(.durable, at: url)
            let second = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            first.transactionAuthor = "a"
            second.transactionAuthor = "b"
            return (coordinator, [first, second])
        }

        func step(_ r: inout Random) throws {
            let context = contexts[r.int(2)]
            var changes: [ManagedObjectID: Expected.Change] = [:]
            switch r.int(10) {
            case 0:
                // A batch update of every book's pages: only the rows whose value changes are updates.
                let pages = Int64(r.int(3))
                _ = try context.performAndWait {
                    try context.execute(BatchUpdateRequest(entityName: "Book", propertiesToUpdate: ["pages": pages]))
                }
                for (id, book) in books where book.pages != pages {
                    changes[id] = .update(["pages"])
                    books[id]!.pages = pages
                }
            case 2:
                // A batch insert of one or two books.
                let titles = (0..<(1 + r.int(2))).map { _ -> String in
                    serial += 1
                    return "t\(serial)"
                }
                let result = try context.performAndWait {
                    try context.execute(BatchInsertRequest(entityName: "Book", objects: titles.map { ["title": $0] }, resultType: .objectIDs))
                }
                for (id, title) in zip(result.objectIDs, titles) {
                    books[id] = Book(title: title, pages: 0, author: nil)
                    changes[id] = .insert
                }
            case 3 where !books.isEmpty:
                // A batch delete of one book: its author loses it, an update of the author's books.
                let id = books.keys.sorted { $0.primaryKey! < $1.primaryKey! }[r.int(books.count)]
                _ = try context.performAndWait { try context.execute(BatchDeleteRequest(objectIDs: [id])) }
                if let author = books[id]!.author { changes[author] = .update(["books"]) }
                changes[id] = .delete(title: books[id]!.title)
                books[id] = nil
                // The contexts still hold the deleted book: they forget what they hold.
                for context in contexts { context.performAndWait { context.reset() } }
            case 1 where !books.isEmpty:
                // Purge up to a random kept transaction.
                let kept = try HistorySupport.history(coordinator)
                guard !kept.isEmpty else { return }
                let cut = r.int(kept.count)
                _ = try coordinator.execute(.deleteHistory(before: kept[cut].token))
                firstKept += cut
                return
            default:
                try context.performAndWait {
                    for _ in 0..<(1 + r.int(3)) {
                        switch r.int(5) {
                        case 0:
                            let author = try HistorySupport.insert("Author", ["name": "n"], into: context)
                            try context.obtainPermanentIDs(for: [author])
                            authors.append(author.objectID)
                            changes[author.objectID] = .insert
                        case 1 where !books.isEmpty:
                            let id = books.keys.sorted { $0.primaryKey! < $1.primaryKey! }[r.int(books.count)]
                            guard changes[id] == nil else { continue }
                            context.delete(try context.existingObject(with: id))
                            if let author = books[id]!.author, changes[author] == nil { changes[author] = .update(["books"]) }
                            changes[id] = .delete(title: books[id]!.title)
                            books[id] = nil
                        case 2 where !books.isEmpty:
                            let id = books.keys.sorted { $0.primaryKey! < $1.primaryKey! }[r.int(books.count)]
                            guard changes[id] == nil else { continue }
                            let object = try context.existingObject(with: id)
                            var names: Set<String> = []
                            if r.int(2) == 0 {
                                serial += 1
                                try object.setValue("t\(serial)", forKey: "title")
                                books[id]!.title = "t\(serial)"
                                names.insert("title")
                            }
                            if !authors.isEmpty && r.int(2) == 0 {
                                let author = authors[r.int(authors.count)]
                                if author != books[id]!.author {
                                    for end in [books[id]!.author, author].compactMap({ $0 }) where changes[end] == nil {
                                        changes[end] = .update(["books"])
                                    }
                                    try object.setValue(try context.existingObject(with: author), forKey: "author")
                                    books[id]!.author = author
                                    names.insert("author")
                                }
                            }
                            if !names.isEmpty { changes[id] = .update(names) }
                        default:
                            serial += 1
                            let title: String? = r.int(4) == 0 ? nil : "t\(serial)"
                            let book = try HistorySupport.insert("Book", title.map { ["title": $0] } ?? [:], into: context)
                            try context.obtainPermanentIDs(for: [book])
                            books[book.objectID] = Book(title: title, pages: 0, author: nil)
                            changes[book.objectID] = .insert
                        }
                    }
                    try context.save()
                }
            }
            // An update of an object the same save inserted or deleted is that insert or delete.
            if !changes.isEmpty { expected.append(Expected(author: context.transactionAuthor, changes: changes)) }
            try compare()
        }

        func compare() throws {
            let found = try HistorySupport.history(coordinator).map { transaction in
                Expected(author: transaction.author, changes: Dictionary(uniqueKeysWithValues: transaction.changes.map { change in
                    let kind: Expected.Change
                    switch change.changeType {
                    case .insert: kind = .insert
                    case .update: kind = .update(change.updatedProperties ?? [])
                    case .delete: kind = .delete(title: change.tombstone?["title"] as? String)
                    }
                    return (change.changedObjectID, kind)
                }))
            }
            let reference = Array(expected[firstKept...])
            if found != reference {
                throw Mismatch(text: "history \(found) differs from the reference \(reference)")
            }
            let tokens = try HistorySupport.history(coordinator).map(\.token.transactionNumber)
            if tokens != tokens.sorted() || Set(tokens).count != tokens.count { throw Mismatch(text: "tokens out of order: \(tokens)") }
        }

        func reopen() throws {
            try coordinator.remove(coordinator.persistentStores[0])
            (coordinator, contexts) = try Self.open(url)
            try compare()
        }

        deinit { try? FileManager.default.removeItem(at: url) }
    }

    struct Mismatch: Error, CustomStringConvertible { var text: String; var description: String { text } }

    @Test func randomSavesAreRecordedAsAReferenceListSays() async {
        await SeededPropertyRuns.run(environmentPrefix: "HISTORY", label: "PersistentHistoryPropertyTests") { seed, steps in
            var r = Random(state: UInt64(truncatingIfNeeded: seed))
            let run = try Run()
            for _ in 0..<min(steps, 60) { try run.step(&r) }
            try run.reopen()
            for _ in 0..<5 { try run.step(&r) }
        }
    }
}
