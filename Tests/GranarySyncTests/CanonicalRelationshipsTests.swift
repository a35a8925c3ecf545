import Granary
import Testing
@testable import GranarySync

/// Which relationship side a model sends (the terms of MergeSemantics.md) and what it leaves out (M27).
@Suite struct CanonicalRelationshipsTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("cachedSummary", .string, optional: true, transient: true)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
                Relationship("tags", toMany: "Tag", inverse: "books")
                Relationship("cover", to: "Cover", inverse: "book")
            }
            Entity("Poet", parent: "Author") { Attribute("form", .string) }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("books", toMany: "Book", inverse: "tags")
            }
            Entity("Cover") {
                Attribute("color", .string)
                Relationship("book", to: "Book", inverse: "cover")
            }
            Entity("Shelf") {
                Relationship("books", toMany: "Book", ordered: true)
                Relationship("featured", to: "Book")
            }
        }
    }

    @Test func theToOneSideOfAOneToManyIsCanonical() throws {
        let schema = LedgerSchema(model: try Self.model())
        #expect(schema.entities["Book"]?.toOnes["author"] == .init(destination: "Author", inverse: .toMany("books")))
        #expect(schema.entities["Author"]?.toManys.isEmpty == true)
        #expect(schema.derivedRelationships(of: "Author") == ["books": false])
    }

    @Test func otherwiseTheSideWhoseQualifiedNameSortsFirst() throws {
        let schema = LedgerSchema(model: try Self.model())
        // "Book.tags" < "Tag.books"; "Book.cover" < "Cover.book".
        #expect(schema.entities["Book"]?.toManys["tags"] == .init(destination: "Tag", isOrdered: false, inverse: "books"))
        #expect(schema.entities["Tag"]?.toManys.isEmpty == true)
        #expect(schema.entities["Book"]?.toOnes["cover"] == .init(destination: "Cover", inverse: .toOne("book")))
        #expect(schema.entities["Cover"]?.toOnes.isEmpty == true)
    }

    @Test func relationshipsWithoutInverseAreTheirOwnCanonicalSide() throws {
        let schema = LedgerSchema(model: try Self.model())
        #expect(schema.entities["Shelf"]?.toManys["books"] == .init(destination: "Book", isOrdered: true, inverse: nil))
        #expect(schema.entities["Shelf"]?.toOnes["featured"] == .init(destination: "Book", inverse: .none))
    }

    @Test func subentitiesGetTheDerivedSidesOfTheirSuperentity() throws {
        let schema = LedgerSchema(model: try Self.model())
        #expect(schema.entities["Poet"]?.superentity == "Author")
        #expect(schema.derivedRelationships(of: "Poet") == ["books": false])
        #expect(schema.entities["Poet"]?.attributes.contains("name") == true)
    }

    @Test func m27TransientPropertiesAreNotSynced() throws {
        let schema = LedgerSchema(model: try Self.model())
        #expect(schema.entities["Author"]?.attributes == ["name"])
    }
}
