import Foundation
import Granary
import Testing

/// The code of "Defining a model", section "Fetched properties and derived attributes".
@Suite struct ComputedPropertiesArticleTests {
    @Test func derivedAttributesAreComputedAtSaveAndFetchedPropertiesWhenRead() throws {
        // snippet: model-computed-properties
        let library = try ManagedObjectModel(version: "1") {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("searchName", .string, optional: true, indexed: true, derivation: "canonical:(name)")
                Attribute("bookCount", .integer64, optional: true, derivation: "books.@count")
                Relationship("books", toMany: "Book", inverse: "author")
                FetchedProperty("themed", entity: "Book",
                                predicate: "author == $FETCH_SOURCE AND title CONTAINS[c] $FETCHED_PROPERTY.userInfo.word",
                                sortKeys: [SortKey("title")], userInfo: ["word": "night"])
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        // end-snippet
        let url = scratchStore()
        defer { removeScratch(url) }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: library)
        try coordinator.addPersistentStore(type: .durable, at: url)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            // snippet: model-computed-properties-use
            let ann = ManagedObject(entity: library.entity(named: "Author")!, insertInto: context)
            try ann.setValue("Ann Émond", forKey: "name")
            for title in ["Night Train", "Noon", "Deep Night"] {
                let book = ManagedObject(entity: library.entity(named: "Book")!, insertInto: context)
                try book.setValue(title, forKey: "title")
                try book.setValue(ann, forKey: "author")
            }
            try context.save()                                    // computes searchName and bookCount
            let count = try ann.value(forKey: "bookCount")        // 3
            let themed = try ann.fetchedObjects(forKey: "themed") // fetched now, kept until a refresh
            // end-snippet
            #expect(count as? Int64 == 3)
            #expect(try ann.value(forKey: "searchName") as? String == "ann emond")
            #expect(try themed.map { try $0.value(forKey: "title") as? String } == ["Deep Night", "Night Train"])
        }
    }
}
