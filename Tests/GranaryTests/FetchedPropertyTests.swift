import Foundation
import Testing
@testable import Granary

final class ShelfAuthor: ManagedObject {
    @Managed var name: String
    @Managed var books: Set<ShelfBook>
}

final class ShelfBook: ManagedObject {
    @Managed var title: String
    @Managed var pages: Int
    @Managed var author: ShelfAuthor?
}

/// A model with fetched properties of every kind the tests read: through `$FETCH_SOURCE`, through a key
/// path of it, through `$FETCHED_PROPERTY.userInfo`, sorted, and inherited by a sub-entity.
enum ShelfModel {
    static func make(fetched: Bool = true) throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "shelf") {
            Entity("Author", as: ShelfAuthor.self) {
                Attribute("name", .string)
                Relationship("books", toMany: "Book", inverse: "author")
                if fetched {
                    FetchedProperty(
                        "longBooks", entity: "Book", predicate: "author == $FETCH_SOURCE AND pages > 300",
                        sortKeys: [SortKey("title")])
                    FetchedProperty(
                        "wordBooks", entity: "Book", predicate: "title CONTAINS [c] $FETCHED_PROPERTY.userInfo.word",
                        sortKeys: [SortKey("title", ascending: false)], userInfo: ["word": "night"])
                    FetchedProperty("namesakes", entity: "Book", predicate: "title BEGINSWITH $FETCH_SOURCE.name")
                }
            }
            Entity("Book", as: ShelfBook.self) {
                Attribute("title", .string)
                Attribute("pages", .integer32, defaultValue: 0)
                Relationship("author", to: "Author", inverse: "books")
                if fetched {
                    FetchedProperty(
                        "sameAuthor", entity: "Book", predicate: "author == $FETCH_SOURCE.author AND title != $FETCH_SOURCE.title",
                        sortKeys: [SortKey("title")])
                }
            }
            Entity("Novel", parent: "Book") {
                Attribute("genre", .string, optional: true)
            }
        }
    }

    static func stack(_ model: ManagedObjectModel, at url: URL? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(type: url == nil ? .inMemory : .durable, at: url)
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }

    /// Ann (three books, two long) and Bo (one); one book without an author.
    @discardableResult
    static func fill(_ context: ManagedObjectContext) throws -> (ann: ShelfAuthor, bo: ShelfAuthor) {
        let ann = ShelfAuthor(context: context)
        ann.name = "Ann"
        let bo = ShelfAuthor(context: context)
        bo.name = "Bo"
        for (title, pages, author) in [
            ("Night Train", 420, ann), ("Annals", 120, ann), ("Deep Night", 380, ann), ("Noon", 500, bo),
            ("Orphan Night", 90, nil),
        ] as [(String, Int, ShelfAuthor?)] {
            let book = ShelfBook(context: context)
            book.title = title
            book.pages = pages
            book.author = author
        }
        return (ann, bo)
    }
}

@Suite struct FetchedPropertyTests {
    private func titles(_ value: Any?) -> [String] {
        ((value as? [ManagedObject]) ?? []).compactMap { try? $0.value(forKey: "title") as? String }
    }

    @Test func aFetchedPropertyReturnsTheDestinationObjectsTheSourceSelects() throws {
        let (_, context) = try ShelfModel.stack(try ShelfModel.make())
        try context.performAndWait {
            let (ann, bo) = try ShelfModel.fill(context)
            try context.save()
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Night Train"])
            #expect(titles(try bo.value(forKey: "longBooks")) == ["Noon"])
            // A key path of $FETCH_SOURCE: the source's name.
            #expect(titles(try ann.value(forKey: "namesakes")) == ["Annals"])
            // A to-one of the source, compared by identity, and an attribute of it.
            let train = try #require(ann.books.first { $0.title == "Night Train" })
            #expect(titles(try train.value(forKey: "sameAuthor")) == ["Annals", "Deep Night"])
        }
    }

    @Test func fetchedPropertyUserInfoIsReadThroughTheFetchedPropertyVariable() throws {
        let (_, context) = try ShelfModel.stack(try ShelfModel.make())
        try context.performAndWait {
            let (ann, _) = try ShelfModel.fill(context)
            // Unsaved objects count: the fetch includes pending changes, as Core Data's does.
            #expect(titles(try ann.value(forKey: "wordBooks")) == ["Orphan Night", "Night Train", "Deep Night"])
            let description = try #require(ann.entity.fetchedPropertiesByName["wordBooks"])
            #expect(description.userInfo == ["word": "night"])
            #expect(description.entityName == "Author" && description.qualifiedName == "Author.wordBooks")
        }
    }

    @Test func theResultIsKeptUntilTheObjectIsRefreshed() throws {
        let (_, context) = try ShelfModel.stack(try ShelfModel.make())
        try context.performAndWait {
            let (ann, _) = try ShelfModel.fill(context)
            try context.save()
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Night Train"])
            let epic = ShelfBook(context: context)
            epic.title = "Epic"
            epic.pages = 900
            epic.author = ann
            try context.save()
            // Cached: not evaluated again on the second read.
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Night Train"])
            context.refresh(ann, mergeChanges: true)
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Epic", "Night Train"])
            epic.pages = 10
            try context.save()
            context.refresh(ann, mergeChanges: false)
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Night Train"])
        }
    }

    @Test func theTypedAccessorCastsTheResultAndRefusesAnotherClass() throws {
        let (_, context) = try ShelfModel.stack(try ShelfModel.make())
        try context.performAndWait {
            let (ann, _) = try ShelfModel.fill(context)
            let books: [ShelfBook] = try ann.fetchedObjects(forKey: "longBooks", as: ShelfBook.self)
            #expect(books.map(\.title) == ["Deep Night", "Night Train"])
            #expect(throws: ContextError.self) { try ann.fetchedObjects(forKey: "longBooks", as: ShelfAuthor.self) }
            #expect(throws: ContextError.self) { try ann.fetchedObjects(forKey: "noSuchProperty") }
        }
    }

    @Test func aFetchedPropertyIsReadOnly() throws {
        let (_, context) = try ShelfModel.stack(try ShelfModel.make())
        try context.performAndWait {
            let (ann, _) = try ShelfModel.fill(context)
            do {
                try ann.setValue([ShelfBook](), forKey: "longBooks")
                Issue.record("setting a fetched property succeeded")
            } catch ContextError.readOnlyProperty(let entity, let key, _) {
                #expect(entity == "Author" && key == "longBooks")
            }
        }
    }

    @Test func subEntitiesInheritFetchedPropertiesAndResultsIncludeSubEntities() throws {
        let model = try ShelfModel.make()
        let novel = try #require(model.entity(named: "Novel"))
        #expect(novel.fetchedProperties.map(\.name) == ["sameAuthor"])
        #expect(novel.fetchedPropertiesByName["sameAuthor"]?.entityName == "Book")
        #expect(model.entity(named: "Author")?.properties.map(\.name) == ["name", "books"])
        let (_, context) = try ShelfModel.stack(model)
        try context.performAndWait {
            let (ann, _) = try ShelfModel.fill(context)
            let saga = ManagedObject(entity: novel, insertInto: context)
            try saga.setValue("Saga", forKey: "title")
            try saga.setValue(700, forKey: "pages")
            try saga.setValue(ann, forKey: "author")
            #expect(titles(try ann.value(forKey: "longBooks")) == ["Deep Night", "Night Train", "Saga"])
            let sameAuthor = try saga.value(forKey: "sameAuthor") as? [ManagedObject]
            #expect(sameAuthor?.count == 3)
        }
    }

    @Test func fetchedPropertiesAreNotStoredAndLeaveTheVersionHashAlone() throws {
        let without = try ShelfModel.make(fetched: false)
        let with = try ShelfModel.make()
        #expect(without.versionHash == with.versionHash)
        #expect(without.entityVersionHashes == with.entityVersionHashes)
        // A store written without them opens with them, no migration, and the fetch runs after reopening.
        let url = scratchURL()
        do {
            let (coordinator, context) = try ShelfModel.stack(without, at: url)
            try context.performAndWait {
                for (title, pages) in [("Long", 400), ("Short", 40)] {
                    let book = try context.insert("Book", ["title": title, "pages": Int32(pages)])
                    _ = book
                }
                let author = try context.insert("Author", ["name": "Sol"])
                for book in try context.all("Book", sortedBy: "title") { try book.setValue(author, forKey: "author") }
                try context.save()
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let (coordinator, context) = try ShelfModel.stack(with, at: url)
        defer { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        try context.performAndWait {
            let author = try #require(try context.all("Author", sortedBy: "name").first)
            #expect(titles(try author.value(forKey: "longBooks")) == ["Long"])
        }
    }

    @Test func aPredicateThatCannotBeEvaluatedForTheObjectIsATypedError() throws {
        let model = try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string, optional: true)
                FetchedProperty("missing", entity: "Author", predicate: "name == $FETCH_SOURCE.nickname")
            }
        }
        let (_, context) = try ShelfModel.stack(model)
        try context.performAndWait {
            let author = try context.insert("Author", ["name": "Ann"])
            #expect(throws: PredicateParseError.self) { try author.value(forKey: "missing") }
        }
    }

    // MARK: Model checks

    private func modelError(_ fetched: FetchedProperty, attributes: [Attribute] = []) -> ModelError? {
        do {
            _ = try ManagedObjectModel {
                Entity("Author") {
                    Attribute("name", .string)
                    for attribute in attributes { attribute }
                    fetched
                }
            }
            return nil
        } catch {
            return error
        }
    }

    @Test func aFetchedPropertyOfAnUnknownEntityIsAModelError() {
        guard case .invalidFetchedProperty(let entity, let property, let reason)? =
            modelError(FetchedProperty("ghosts", entity: "Ghost"))
        else { Issue.record("no error"); return }
        #expect(entity == "Author" && property == "ghosts" && reason.contains("Ghost"))
    }

    @Test func aPredicateThatDoesNotParseOrNamesAnUnknownVariableIsAModelError() {
        guard case .invalidFetchedProperty(_, "bad", let reason)? =
            modelError(FetchedProperty("bad", entity: "Author", predicate: "name ==== 3"))
        else { Issue.record("no error"); return }
        #expect(reason.contains("does not parse"))
        guard case .invalidFetchedProperty(_, "other", let other)? =
            modelError(FetchedProperty("other", entity: "Author", predicate: "name == $SOMETHING_ELSE"))
        else { Issue.record("no error"); return }
        #expect(other.contains("$FETCH_SOURCE"))
        // Both variables, in every position a comparison allows, pass the check.
        #expect(modelError(FetchedProperty(
            "fine", entity: "Author",
            predicate: "name IN $FETCHED_PROPERTY.userInfo.names OR $FETCH_SOURCE.name BEGINSWITH name OR SELF == $FETCH_SOURCE"))
            == nil)
    }

    @Test func aSortKeyOfAnUnknownPropertyIsAModelError() {
        guard case .invalidFetchedProperty(_, "sorted", let reason)? =
            modelError(FetchedProperty("sorted", entity: "Author", sortKeys: [SortKey("born")]))
        else { Issue.record("no error"); return }
        #expect(reason.contains("born"))
    }

    @Test func aFetchedPropertyNamedLikeAnotherPropertyIsAModelError() {
        #expect(modelError(FetchedProperty("name", entity: "Author")) == .duplicateProperty(entity: "Author", property: "name"))
        if case .invalidName? = modelError(FetchedProperty("_hidden", entity: "Author")) {} else { Issue.record("expected invalidName") }
    }

    // MARK: Substitution variables

    @Test func substitutionVariablesTakeTheirValuesThroughKeyPaths() throws {
        let node = try PredicateParser.parse(
            "name == $NAME AND size > $LIMITS.low", variables: ["NAME": "Ann", "LIMITS": ["low": 3]])
        #expect(node == PredicateNode.and([
            .compare(["name"], .equal, .value(.string("Ann"))), .compare(["size"], .greater, .value(.int(3))),
        ]))
        #expect(try PredicateParser.parse("name == $MISSING.key", variables: ["MISSING": [String: String]()])
            == .isNil(["name"]))
        do {
            _ = try PredicateParser.parse("name == $NAME")
            Issue.record("an undefined variable parsed")
        } catch PredicateParseError.variable(let name, _, let offset) {
            #expect(name == "NAME" && offset == 8)
        }
        // SUBQUERY variables keep working beside substitution variables.
        let subquery = try PredicateParser.parse(
            "SUBQUERY(books, $b, $b.pages > $MIN).@count > 0", variables: ["MIN": 10])
        #expect(subquery == .any(["books"], .compare(["pages"], .greater, .value(.int(10)))))
    }
}
