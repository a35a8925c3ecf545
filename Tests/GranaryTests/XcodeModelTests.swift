import Foundation
import Testing
@testable import Granary

/// Loading the Library fixture, an Xcode model with every attribute type, inheritance, every kind of
/// relationship, indexes, constraints and configurations, and using it end to end.
@Suite struct XcodeModelTests {
    private func attribute(_ entity: String, _ name: String, in model: ManagedObjectModel) throws -> AttributeDescription {
        try #require(model.entity(named: entity)?.attributesByName[name], "\(entity).\(name)")
    }

    private func relationship(_ entity: String, _ name: String, in model: ManagedObjectModel) throws -> RelationshipDescription {
        try #require(model.entity(named: entity)?.relationshipsByName[name], "\(entity).\(name)")
    }

    @Test func everyXcodeAttributeTypeMapsToItsGranaryType() throws {
        let model = try XcodeFixtures.library()
        let expected: [(String, String, AttributeType)] = [
            ("Book", "year", .integer16), ("Book", "pages", .integer32), ("Item", "copies", .integer64),
            ("Book", "weight", .double), ("Book", "rating", .float), ("Book", "price", .decimal),
            ("Book", "inPrint", .boolean), ("Author", "name", .string), ("Author", "born", .date),
            ("Book", "cover", .binaryData), ("Item", "identifier", .uuid), ("Book", "website", .uri),
            // A property-list custom class with the default transformer is the keyed archive, as in Core Data.
            ("Author", "links", .secureUnarchiveFromData),
        ]
        for (entity, name, type) in expected {
            #expect(try attribute(entity, name, in: model).type == type, "\(entity).\(name)")
        }
        #expect(model.entities.map(\.name) == ["Author", "Book", "Item", "Loan", "Magazine", "Member"])
        #expect(model.versionIdentifier == "Library")
    }

    @Test func attributesAreRequiredUnlessXcodeMarksThemOptional() throws {
        let model = try XcodeFixtures.library()
        #expect(try !attribute("Author", "name", in: model).isOptional)
        #expect(try !attribute("Item", "title", in: model).isOptional)
        #expect(try !attribute("Loan", "due", in: model).isOptional)
        #expect(try attribute("Author", "born", in: model).isOptional)
        #expect(try attribute("Book", "cover", in: model).isOptional)
        #expect(try attribute("Book", "displayTitle", in: model).isTransient)
        #expect(try !attribute("Book", "isbn", in: model).isTransient)
        #expect(try attribute("Author", "name", in: model).isIndexed)
        #expect(try !attribute("Author", "email", in: model).isIndexed)
    }

    @Test func defaultValuesParseIntoTheAttributeTypesSwiftValues() throws {
        let model = try XcodeFixtures.library()
        func defaultValue(_ entity: String, _ name: String) throws -> (any Sendable)? {
            try attribute(entity, name, in: model).defaultValue
        }
        #expect(try defaultValue("Book", "pages") as? Int32 == 100)
        #expect(try defaultValue("Item", "copies") as? Int64 == 1)
        #expect(try defaultValue("Magazine", "issue") as? Int32 == 1)
        #expect(try defaultValue("Book", "weight") as? Double == 0.5)
        #expect(try defaultValue("Book", "price") as? Decimal == Decimal(string: "9.99"))
        #expect(try defaultValue("Book", "inPrint") as? Bool == true)
        #expect(try defaultValue("Loan", "returned") as? Bool == false)
        // Xcode stores dates as seconds since 2001-01-01 00:00:00 UTC.
        #expect(try defaultValue("Item", "added") as? Date == Date(timeIntervalSince1970: 978_307_200))
        #expect(try defaultValue("Item", "identifier") as? UUID == UUID(uuidString: "6B29FC40-CA47-1067-B31D-00DD010662DA"))
        // The file writes "&amp;": the value holds "&".
        #expect(try defaultValue("Book", "website") as? URL == URL(string: "https://example.com/books?sort=title&page=1"))
        #expect(try defaultValue("Author", "name") == nil)
        #expect(try defaultValue("Book", "rating") == nil)
    }

    @Test func minimumMaximumAndPatternValidateValues() throws {
        let model = try XcodeFixtures.library()
        let name = try attribute("Author", "name", in: model)
        #expect(name.validate("").map(\.reason) == [.tooShort(length: 0, minimum: 1)])
        #expect(name.validate(String(repeating: "a", count: 101)).map(\.reason) == [.tooLong(length: 101, maximum: 100)])
        #expect(name.validate("Lem").isEmpty)

        let pages = try attribute("Book", "pages", in: model)
        #expect(pages.validate(0).map(\.reason) == [.belowMinimum(value: "0", minimum: "1")])
        #expect(pages.validate(10_001).map(\.reason) == [.aboveMaximum(value: "10001", maximum: "10000")])
        #expect(pages.validate(350).isEmpty)

        let rating = try attribute("Book", "rating", in: model)
        #expect(rating.validate(Float(5.5)).count == 1)
        #expect(rating.validate(Float(4.5)).isEmpty)
        let price = try attribute("Book", "price", in: model)
        #expect(price.validate(Decimal(-1)).count == 1)

        let born = try attribute("Author", "born", in: model)
        let beforeMinimum = Date(timeIntervalSinceReferenceDate: -3_187_296_001)  // a second before 1900
        #expect(born.validate(beforeMinimum).count == 1)
        #expect(born.validate(Date(timeIntervalSinceReferenceDate: -1_000_000_000)).isEmpty)
        #expect(born.validate(Date(timeIntervalSinceReferenceDate: 788_918_401)).count == 1)  // after 2026

        let email = try attribute("Author", "email", in: model)
        #expect(email.validate("lem@example.org").isEmpty)
        #expect(email.validate("not an address").map(\.reason) == [.patternMismatch(pattern: "[^@ ]+@[^@ ]+")])
    }

    @Test func relationshipsKeepInversesCardinalityOrderDeleteRulesAndCounts() throws {
        let model = try XcodeFixtures.library()
        let books = try relationship("Author", "books", in: model)
        #expect(books.isToMany && books.isOrdered && books.isOptional)
        #expect(books.destinationEntityName == "Book" && books.inverseName == "author")
        #expect(books.deleteRule == .deny)
        #expect(books.minCount == 1 && books.maxCount == 50)

        let author = try relationship("Book", "author", in: model)
        #expect(!author.isToMany && author.isOptional && author.deleteRule == .nullify && author.maxCount == 1)
        #expect(try relationship("Book", "loans", in: model).deleteRule == .cascade)

        let member = try relationship("Loan", "member", in: model)
        #expect(!member.isOptional && member.deleteRule == .noAction)
        #expect(try !relationship("Loan", "book", in: model).isOptional)

        let loans = try relationship("Member", "loans", in: model)
        #expect(loans.isToMany && !loans.isOrdered && loans.minCount == 0 && loans.maxCount == 5)
        #expect(loans.validate(count: 6).map(\.reason) == [.tooMany(count: 6, maximum: 5)])
        #expect(model.inverseRelationship(of: loans)?.qualifiedName == "Loan.member")
    }

    @Test func abstractParentEntityAndItsSubEntities() throws {
        let model = try XcodeFixtures.library()
        let item = try #require(model.entity(named: "Item"))
        #expect(item.isAbstract)
        #expect(item.subentities.map(\.name) == ["Book", "Magazine"])
        let book = try #require(model.entity(named: "Book"))
        #expect(!book.isAbstract && book.superentity == item)
        #expect(book.attributesByName["title"]?.entityName == "Item")  // inherited
        #expect(StorageMapping(model: model).entity(named: "Magazine")?.tableName == "Item")
    }

    @Test func uniquenessConstraintsAndIndexesBecomeEngineIndexes() throws {
        let model = try XcodeFixtures.library()
        #expect(model.entity(named: "Author")?.uniquenessConstraints == [["email"]])
        #expect(model.entity(named: "Book")?.indexes == [
            FetchIndexDescription(name: "byYearAndTitle", elements: [.ascending("year"), .descending("title")])
        ])
        let mapping = StorageMapping(model: model)
        #expect(mapping.entity(named: "Author")?.indexNames == ["Author_unique_email", "Author_name"])
        #expect(mapping.entity(named: "Book")?.indexNames == ["Book_unique_isbn", "Book_byYearAndTitle"])
        #expect(mapping.entity(named: "Item")?.indexNames == ["Item_byTitle"])
        #expect(mapping.entity(named: "Loan")?.indexNames == ["Loan_byDue"])
        // The older compound index form, named after its properties.
        #expect(mapping.entity(named: "Magazine")?.indexNames == ["Magazine_compoundIndex_issue_title"])
        let items = try #require(mapping.table(named: "Item"))
        let byYear = try #require(items.schema.indexes.first { $0.name == "Book_byYearAndTitle" })
        #expect(byYear.columns.map(\.isDescending) == [false, true])
        #expect(items.schema.indexes.first { $0.name == "Book_unique_isbn" }?.isUnique == true)
    }

    @Test func configurationsListTheirMemberEntities() throws {
        let model = try XcodeFixtures.library()
        #expect(model.configurations == [
            "Catalog": ["Author", "Book", "Item", "Magazine"],
            "Circulation": ["Loan", "Member"],
        ])
        #expect(model.entities(forConfiguration: "Circulation")?.map(\.name) == ["Loan", "Member"])
    }

    @Test func renamingIdentifiersAreKept() throws {
        let library = try XcodeFixtures.library()
        #expect(try attribute("Book", "pages", in: library).renamingIdentifier == "pageCount")
        #expect(try attribute("Book", "year", in: library).renamingIdentifier == nil)
        let tasks = try #require(try XcodeFixtures.tasks().version(named: "Tasks 2"))
        #expect(tasks.entity(named: "Project")?.renamingIdentifier == "Category")
        #expect(try attribute("Task", "name", in: tasks).renamingIdentifier == "title")
        #expect(try relationship("Task", "project", in: tasks).renamingIdentifier == "category")
    }

    @Test func classesBindByRepresentedClassNameWithOrWithoutModule() throws {
        let model = try XcodeFixtures.library()
        // The file says ".Author" (current module) and "Book"; both bind.
        #expect(model.entity(named: "Author")?.objectType == LibraryAuthor.self)
        #expect(model.entity(for: LibraryBook.self)?.name == "Book")
        #expect(model.entity(named: "Loan")?.objectType == nil)
        XcodeFixtures.registerLibraryTransformables()
        let qualified = try ManagedObjectModel(
            contentsOf: XcodeFixtures.url("Library.xcdatamodel"), classes: ["MyApp.Author": LibraryAuthor.self])
        #expect(qualified.entity(named: "Author")?.objectType == LibraryAuthor.self)
        #expect(qualified.entity(named: "Book")?.objectType == nil)
    }

    @Test func theLoadedModelWorksEndToEnd() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try XcodeFixtures.library())
        try coordinator.addPersistentStore(type: .inMemory, at: nil)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let model = try #require(context.model)
        try context.performAndWait {
            let lem = LibraryAuthor(context: context)
            lem.name = "Stanisław Lem"
            lem.email = "lem@example.org"
            for (title, year) in [("Solaris", 1961), ("The Cyberiad", 1965), ("Fiasco", 1986)] {
                let book = LibraryBook(context: context)
                book.title = title
                book.year = year
                book.author = lem
                // Defaults from the file.
                #expect(book.pages == 100 && book.inPrint && book.price == Decimal(string: "9.99"))
            }
            let member = ManagedObject(entity: try #require(model.entity(named: "Member")), insertInto: context)
            try member.setValue("Ada", forKey: "name")
            let loan = ManagedObject(entity: try #require(model.entity(named: "Loan")), insertInto: context)
            try loan.setValue(Date(timeIntervalSinceReferenceDate: 800_000_000), forKey: "due")
            try loan.setValue(lem.books[0], forKey: "book")
            try loan.setValue(member, forKey: "member")
            try context.save()

            let early = try context.fetch(
                FetchRequest<LibraryBook>(predicate: #Predicate { $0.year! < 1970 }, sortBy: [SortDescriptor(\.title)]))
            #expect(early.map(\.title) == ["Solaris", "The Cyberiad"])
            #expect(early.first?.author?.books.map(\.title) == ["Solaris", "The Cyberiad", "Fiasco"])

            var items = FetchRequest<ManagedObject>(entityName: "Item")
            items.filter = try PredicateParser.parse("title BEGINSWITH %@", arguments: ["The"])
            #expect(try context.fetch(items).map(\.entity.name) == ["Book"])
            let open = try context.fetch(FetchRequest<ManagedObject>(entityName: "Loan"))
            #expect(try open.map { try $0.value(forKey: "returned") as? Bool } == [false])

            // Rules from the file stop a save.
            let nameless = LibraryAuthor(context: context)
            nameless.name = ""
            nameless.email = "nobody"
            do {
                try context.save()
                Issue.record("an author with an empty name and a bad email was saved")
            } catch ContextError.validation(let errors) {
                #expect(Set(errors.map(\.propertyName)) == ["name", "email"])
            }
        }
    }
}
