import Foundation
import Testing
@testable import Granary

final class DerivedWriter: ManagedObject {
    @Managed var name: String
    @Managed var nameLower: String?
}

/// Derived attributes of every supported form, on two related entities.
enum DerivedModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "derived") {
            Entity("Writer", as: DerivedWriter.self) {
                Attribute("name", .string)
                Attribute("nameLower", .string, optional: true, derivation: "lowercase:(name)")
                Attribute("nameUpper", .string, optional: true, derivation: "uppercase:(name)")
                Attribute("searchName", .string, optional: true, indexed: true, derivation: "canonical:(name)")
                Attribute("bookCount", .integer64, optional: true, derivation: "books.@count")
                Attribute("totalPages", .integer64, optional: true, derivation: "books.@sum.pages")
                Attribute("longest", .integer32, optional: true, derivation: "books.@max.pages")
                Attribute("shortest", .integer32, optional: true, derivation: "books.@min.pages")
                Attribute("averagePages", .double, optional: true, derivation: "books.@avg.pages")
                Attribute("touched", .date, optional: true, derivation: "now()")
                Relationship("books", toMany: "Volume", inverse: "writer")
            }
            Entity("Volume") {
                Attribute("title", .string)
                Attribute("pages", .integer32, defaultValue: 0)
                Attribute("titleCopy", .string, optional: true, derivation: "title")
                Attribute("writerName", .string, optional: true, derivation: "writer.name")
                Attribute("touched", .date, optional: true, derivation: "now()")
                Relationship("writer", to: "Writer", inverse: "books")
            }
        }
    }

    static func stack(at url: URL? = nil) throws -> (PersistentStoreCoordinator, ManagedObjectContext) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try make())
        try coordinator.addPersistentStore(type: url == nil ? .inMemory : .durable, at: url)
        return (coordinator, ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator))
    }
}

@Suite struct DerivedAttributeTests {
    @discardableResult
    private func volume(_ title: String, _ pages: Int32, _ writer: ManagedObject?, in context: ManagedObjectContext) throws -> ManagedObject {
        try context.insert("Volume", ["title": title, "pages": pages, "writer": writer])
    }

    @Test func derivedAttributesAreComputedAtSave() throws {
        let (_, context) = try DerivedModel.stack()
        try context.performAndWait {
            let writer = try context.insert("Writer", ["name": "Émile Zola"])
            let first = try volume("Nana", 400, writer, in: context)
            try volume("Germinal", 600, writer, in: context)
            try volume("Thérèse", 250, writer, in: context)
            // Nothing is computed before the save.
            #expect(try writer.get("nameLower", as: String.self) == nil)
            try context.save()
            #expect(try writer.get("nameLower", as: String.self) == "émile zola")
            #expect(try writer.get("nameUpper", as: String.self) == "ÉMILE ZOLA")
            #expect(try writer.get("searchName", as: String.self) == "emile zola")
            #expect(try writer.get("bookCount", as: Int64.self) == 3)
            #expect(try writer.get("totalPages", as: Int64.self) == 1250)
            #expect(try writer.get("longest", as: Int32.self) == 600)
            #expect(try writer.get("shortest", as: Int32.self) == 250)
            #expect(try writer.get("averagePages", as: Double.self) == 1250.0 / 3)
            #expect(try first.get("titleCopy", as: String.self) == "Nana")
            #expect(try first.get("writerName", as: String.self) == "Émile Zola")
            // One save, one now().
            let stamp = try #require(try writer.get("touched", as: Date.self))
            #expect(try first.get("touched", as: Date.self) == stamp)
            #expect(abs(stamp.timeIntervalSinceNow) < 60)
        }
    }

    @Test func aToManyCountAndAggregatesFollowMembersAddedAndRemoved() throws {
        let (_, context) = try DerivedModel.stack()
        try context.performAndWait {
            let writer = try context.insert("Writer", ["name": "Ann"])
            try context.save()
            #expect(try writer.get("bookCount", as: Int64.self) == 0)
            #expect(try writer.get("totalPages", as: Int64.self) == 0)
            // Core Data's @max/@min/@avg of nothing are nil.
            #expect(try writer.get("longest", as: Int32.self) == nil)
            #expect(try writer.get("averagePages", as: Double.self) == nil)
            let a = try volume("A", 100, writer, in: context)
            try volume("B", 300, writer, in: context)
            try context.save()
            #expect(try writer.get("bookCount", as: Int64.self) == 2)
            #expect(try writer.get("longest", as: Int32.self) == 300)
            context.delete(a)
            try context.save()
            #expect(try writer.get("bookCount", as: Int64.self) == 1)
            #expect(try writer.get("totalPages", as: Int64.self) == 300)
            #expect(try writer.get("shortest", as: Int32.self) == 300)
        }
    }

    @Test func aRelatedObjectsChangeRecomputesTheObjectsThatReadIt() throws {
        let (_, context) = try DerivedModel.stack()
        try context.performAndWait {
            let writer = try context.insert("Writer", ["name": "Ann"])
            let book = try volume("A", 100, writer, in: context)
            try context.save()
            #expect(try book.get("writerName", as: String.self) == "Ann")
            try writer.setValue("Anna", forKey: "name")
            try context.save()
            #expect(try book.get("writerName", as: String.self) == "Anna")
            // A member's pages change: the writer's sum follows, through the inverse.
            try book.setValue(Int32(150), forKey: "pages")
            try context.save()
            #expect(try writer.get("totalPages", as: Int64.self) == 150)
        }
    }

    @Test func settingADerivedAttributeIsATypedError() throws {
        let (_, context) = try DerivedModel.stack()
        try context.performAndWait {
            let writer = DerivedWriter(context: context)
            writer.name = "Bo"
            do {
                try writer.setValue("x", forKey: "nameLower")
                Issue.record("a derived attribute was set")
            } catch ContextError.readOnlyProperty(let entity, let key, let reason) {
                #expect(entity == "Writer" && key == "nameLower")
                #expect(reason.contains("derived attribute") && reason.contains("lowercase:(name)"))
            }
            // A typed setter cannot throw: the save reports it, and writes nothing.
            writer.nameLower = "x"
            #expect(throws: ContextError.self) { try context.save() }
        }
    }

    @Test func derivedValuesAreStoredQueryableAndSortableAfterReopening() throws {
        let url = scratchURL()
        do {
            let (coordinator, context) = try DerivedModel.stack(at: url)
            try context.performAndWait {
                for name in ["Émile", "ann", "Bo", "ÉMILIE"] { try context.insert("Writer", ["name": name]) }
                try context.save()
            }
            for store in coordinator.persistentStores { try coordinator.remove(store) }
        }
        let (coordinator, context) = try DerivedModel.stack(at: url)
        defer { for store in coordinator.persistentStores { try? coordinator.remove(store) } }
        try context.performAndWait {
            var request = FetchRequest<ManagedObject>(entityName: "Writer")
            request.filter = try PredicateParser.parse("searchName BEGINSWITH 'emil'")
            request.sortKeys = [SortKey("nameLower")]
            let found = try context.fetch(request)
            #expect(try found.map { try $0.get("name", as: String.self) } == ["Émile", "ÉMILIE"])
            var all = FetchRequest<ManagedObject>(entityName: "Writer")
            all.sortKeys = [SortKey("nameUpper", ascending: false)]
            #expect(try context.fetch(all).map { try $0.get("nameUpper", as: String.self) } == ["ÉMILIE", "ÉMILE", "BO", "ANN"])
        }
    }

    // MARK: Model checks

    private func error(_ attribute: Attribute) -> ModelError? {
        do {
            _ = try ManagedObjectModel {
                Entity("Writer") {
                    Attribute("name", .string)
                    Attribute("born", .date, optional: true)
                    Attribute("link", .uri, optional: true)
                    Relationship("books", toMany: "Volume", inverse: "writer")
                    attribute
                }
                Entity("Volume") {
                    Attribute("pages", .integer32, defaultValue: 0)
                    Relationship("writer", to: "Writer", inverse: "books")
                }
            }
            return nil
        } catch {
            return error
        }
    }

    private func reason(_ attribute: Attribute) -> String? {
        guard case .invalidDerivation(let entity, let name, _, let reason)? = error(attribute),
            entity == "Writer", name == attribute.attribute.name
        else { return nil }
        return reason
    }

    @Test func anExpressionThatDoesNotParseOrNamesAMissingPropertyIsAModelErrorNamingEntityAndAttribute() {
        #expect(reason(Attribute("x", .string, optional: true, derivation: "name ++ ")) != nil)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "reverse:(name)"))?.contains("reverse") == true)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "nickname"))?.contains("nickname") == true)
        #expect(reason(Attribute("x", .integer64, optional: true, derivation: "name.@count"))?.contains("to-many") == true)
        #expect(reason(Attribute("x", .integer64, optional: true, derivation: "books.@median.pages"))?.contains("@median") == true)
        #expect(reason(Attribute("x", .integer64, optional: true, derivation: "books.@sum.weight"))?.contains("weight") == true)
        #expect(reason(Attribute("x", .integer32, optional: true, derivation: "books.pages"))?.contains("to-many") == true)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "x"))?.contains("itself") == true)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "")) != nil)
    }

    @Test func anExpressionOfTheWrongTypeIsAModelError() {
        #expect(reason(Attribute("x", .string, optional: true, derivation: "now()"))?.contains("date") == true)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "books.@count")) != nil)
        #expect(reason(Attribute("x", .integer16, optional: true, derivation: "lowercase:(name)")) != nil)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "uppercase:(born)"))?.contains("string") == true)
        #expect(reason(Attribute("x", .date, optional: true, derivation: "name")) != nil)
        #expect(reason(Attribute("x", .string, optional: true, derivation: "link")) != nil)
        #expect(reason(Attribute("x", .string, optional: true, transient: true, derivation: "name"))?.contains("transient") == true)
        // And every supported form passes.
        for (type, expression) in [
            (AttributeType.string, "name"), (.string, "lowercase:(name)"), (.string, "canonical:( name )"),
            (.integer16, "books.@count"), (.double, "books.@avg.pages"), (.integer64, "books.@sum.pages"),
            (.date, "now()"), (.date, "born"),
        ] {
            #expect(error(Attribute("x", type, optional: true, derivation: expression)) == nil, "\(expression)")
        }
    }

    @Test func theDerivationIsPartOfTheDescriptionButNotOfTheVersionHash() throws {
        let plain = try ManagedObjectModel { Entity("A") { Attribute("n", .string); Attribute("m", .string, optional: true) } }
        let derived = try ManagedObjectModel {
            Entity("A") { Attribute("n", .string); Attribute("m", .string, optional: true, derivation: "lowercase:(n)") }
        }
        #expect(plain.versionHash == derived.versionHash)
        let attribute = try #require(derived.entity(named: "A")?.attributesByName["m"])
        #expect(attribute.isDerived && attribute.derivationExpression == "lowercase:(n)")
        #expect(attribute.description.contains("derived from lowercase:(n)"))
    }
}

@Suite struct DerivedAttributeContextTests {
    @Test func aChildContextsSaveComputesDerivedValuesForItsParentAndTypedPropertiesReadThem() throws {
        let (_, parent) = try DerivedModel.stack()
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        let id = try child.performAndWait {
            let writer = DerivedWriter(context: child)
            writer.name = "Ada LOVELACE"
            try child.save()
            #expect(writer.nameLower == "ada lovelace")
            return writer.objectID
        }
        try parent.performAndWait {
            let inParent = try #require(try parent.existingObject(with: id) as? DerivedWriter)
            #expect(inParent.nameLower == "ada lovelace")
            #expect(parent.hasChanges)
            try parent.save()
            #expect(inParent.nameLower == "ada lovelace")
        }
    }
}

@Suite struct DerivedAttributeOneSidedTests {
    /// Book.author has no inverse; the object graph's hidden inverse still leads from a renamed author to
    /// the books whose derivation reads its name, and `@count` of a one-sided to-many follows its members.
    @Test func aDerivationThroughAOneSidedRelationshipFollowsTheRelatedObject() throws {
        let model = try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("favorites", toMany: "Book")
                Attribute("favoriteCount", .integer64, optional: true, derivation: "favorites.@count")
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author")
                Attribute("authorName", .string, optional: true, derivation: "author.name")
            }
        }
        let (_, context) = try ShelfModel.stack(model)
        try context.performAndWait {
            let ann = try context.insert("Author", ["name": "Ann"])
            let book = try context.insert("Book", ["title": "A", "author": ann])
            try ann.setValue(Set([book]), forKey: "favorites")
            try context.save()
            #expect(try book.get("authorName", as: String.self) == "Ann")
            #expect(try ann.get("favoriteCount", as: Int64.self) == 1)
            try ann.setValue("Anna", forKey: "name")
            try context.save()
            #expect(try book.get("authorName", as: String.self) == "Anna")
            try ann.setValue(Set<ManagedObject>(), forKey: "favorites")
            try context.save()
            #expect(try ann.get("favoriteCount", as: Int64.self) == 0)
        }
    }
}

@Suite struct DerivedAttributeConversionTests {
    @Test func anAverageStoredInAnIntegerAttributeKeepsItsWholePartAndAnOutOfRangeValueIsATypedError() throws {
        let model = try ManagedObjectModel {
            Entity("Shelf") {
                Attribute("name", .string)
                Attribute("meanPages", .integer32, optional: true, derivation: "books.@avg.pages")
                Attribute("smallTotal", .integer16, optional: true, derivation: "books.@sum.pages")
                Relationship("books", toMany: "Tome", inverse: "shelf")
            }
            Entity("Tome") {
                Attribute("pages", .integer64, defaultValue: 0)
                Relationship("shelf", to: "Shelf", inverse: "books")
            }
        }
        let (_, context) = try ShelfModel.stack(model)
        try context.performAndWait {
            let shelf = try context.insert("Shelf", ["name": "s"])
            for pages in [10, 11] { try context.insert("Tome", ["pages": Int64(pages), "shelf": shelf]) }
            try context.save()
            #expect(try shelf.get("meanPages", as: Int32.self) == 10)
            try context.insert("Tome", ["pages": Int64(40_000), "shelf": shelf])
            do {
                try context.save()
                Issue.record("a sum beyond Int16 was saved")
            } catch ContextError.derivationFailed(let entity, let attribute, _, _) {
                #expect(entity == "Shelf" && attribute == "smallTotal")
            }
        }
    }
}
