import Foundation
import Testing
@testable import Granary

@Suite struct ModelVersionHashTests {
    /// A small model whose parts the tests below vary one at a time.
    private func model(
        nameOptional: Bool = false,
        nameDefault: String = "",
        nameValidation: [ValidationRule] = [],
        ageName: String = "age",
        ageType: AttributeType = .integer32,
        ageTransient: Bool = false,
        ageIndexed: Bool = false,
        petsToMany: Bool = true,
        petsOrdered: Bool = false,
        deleteRule: DeleteRule = .nullify,
        renaming: String? = nil,
        indexes: [Index] = [],
        unique: [Unique] = [],
        extraEntity: Bool = false,
        reversed: Bool = false,
        version: String? = "1"
    ) throws -> ManagedObjectModel {
        let person = Entity("Person") {
            if reversed {
                Attribute(ageName, ageType, optional: true, transient: ageTransient, indexed: ageIndexed)
                Attribute("name", .string, optional: nameOptional, defaultValue: nameDefault, validation: nameValidation, renamingIdentifier: renaming)
            } else {
                Attribute("name", .string, optional: nameOptional, defaultValue: nameDefault, validation: nameValidation, renamingIdentifier: renaming)
                Attribute(ageName, ageType, optional: true, transient: ageTransient, indexed: ageIndexed)
            }
            if petsToMany {
                Relationship("pets", toMany: "Pet", ordered: petsOrdered, inverse: "owner", deleteRule: deleteRule)
            } else {
                Relationship("pets", to: "Pet", inverse: "owner", deleteRule: deleteRule)
            }
            for index in indexes { index }
            for constraint in unique { constraint }
        }
        let pet = Entity("Pet") { Relationship("owner", to: "Person", inverse: "pets") }
        return try ManagedObjectModel(version: version) {
            if reversed { pet; person } else { person; pet }
            if extraEntity { Entity("Vet") }
        }
    }

    @Test func hashesAreHexSHA256() throws {
        let hash = try model().versionHash
        #expect(hash.count == 64)
        #expect(hash.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(try model().entityVersionHashes.keys.sorted() == ["Person", "Pet"])
    }

    @Test func theSameModelAlwaysHashesTheSame() throws {
        #expect(try model().versionHash == model().versionHash)
        #expect(try model().entityVersionHashes == model().entityVersionHashes)
        #expect(try ModelFixtures.company().versionHash == ModelFixtures.company().versionHash)
    }

    /// Pins the canonical text: a hash that changes between builds or processes (dictionary order,
    /// a format slip) would force every store to migrate.
    @Test func hashesAreStableAcrossProcesses() throws {
        let model = try ManagedObjectModel {
            Entity("A") { Attribute("x", .integer64); Unique("x") }
        }
        let text = VersionHash.canonicalText(model.entitiesByName["A"]!.storage.declaration)
        #expect(text == """
            granary-model-hash-1
            entity 1:A
            abstract 0
            superentity -
            attribute 1:x 9:integer64 optional=0 transient=0 indexed=0
            unique 1:x
            """)
        #expect(model.entityVersionHashes["A"] == SHA256.hexDigest(text))
        #expect(model.versionHash == SHA256.hexDigest("granary-model-hash-1\n1:A \(SHA256.hexDigest(text))"))
    }

    @Test func whatDoesNotAffectStorageDoesNotChangeTheHash() throws {
        let base = try model().versionHash
        #expect(try model(nameDefault: "anonymous").versionHash == base)
        #expect(try model(nameValidation: [.length(min: 1, max: 10)]).versionHash == base)
        #expect(try model(deleteRule: .cascade).versionHash == base)
        #expect(try model(renaming: "fullName").versionHash == base)
        #expect(try model(version: "2").versionHash == base)
        #expect(try model(reversed: true).versionHash == base)
    }

    @Test func whatAffectsStorageChangesTheHash() throws {
        let base = try model()
        let variants: [(String, ManagedObjectModel)] = [
            ("attribute type", try model(ageType: .integer64)),
            ("attribute name", try model(ageName: "years")),
            ("optionality", try model(nameOptional: true)),
            ("transient flag", try model(ageTransient: true)),
            ("indexed flag", try model(ageIndexed: true)),
            ("to-many", try model(petsToMany: false)),
            ("ordered", try model(petsOrdered: true)),
            ("new index", try model(indexes: [Index("byName", "name")])),
            ("index direction", try model(indexes: [Index("byName", .descending("name"))])),
            ("uniqueness constraint", try model(unique: [Unique("name")])),
            ("new entity", try model(extraEntity: true)),
        ]
        var seen: Set<String> = [base.versionHash]
        for (change, variant) in variants {
            #expect(variant.versionHash != base.versionHash, "\(change)")
            seen.insert(variant.versionHash)
        }
        #expect(seen.count == variants.count + 1)
        #expect(try model(indexes: [Index("byName", "name")]).versionHash != model(indexes: [Index("byName", .descending("name"))]).versionHash)
    }

    @Test func entityHashesChangeOnlyForTheEntityThatChanged() throws {
        let base = try model()
        let changed = try model(ageType: .double)
        #expect(changed.entityVersionHashes["Person"] != base.entityVersionHashes["Person"])
        #expect(changed.entityVersionHashes["Pet"] == base.entityVersionHashes["Pet"])
        let withVet = try model(extraEntity: true)
        #expect(withVet.entityVersionHashes["Person"] == base.entityVersionHashes["Person"])
        #expect(withVet.entityVersionHashes["Vet"] != nil)
    }

    @Test func inheritanceAndAbstractnessChangeTheHash() throws {
        let flat = try ManagedObjectModel { Entity("A"); Entity("B") }
        let nested = try ManagedObjectModel { Entity("A"); Entity("B", parent: "A") }
        let abstract = try ManagedObjectModel { Entity("A", abstract: true); Entity("B", parent: "A") }
        #expect(Set([flat.versionHash, nested.versionHash, abstract.versionHash]).count == 3)
        #expect(flat.entityVersionHashes["A"] == nested.entityVersionHashes["A"])
        #expect(flat.entityVersionHashes["B"] != nested.entityVersionHashes["B"])
    }

    @Test func relationshipDestinationAndInverseChangeTheHash() throws {
        let toB = try ManagedObjectModel {
            Entity("A") { Relationship("link", to: "B", inverse: "back") }
            Entity("B") { Relationship("back", to: "A", inverse: "link") }
            Entity("C")
        }
        let toC = try ManagedObjectModel {
            Entity("A") { Relationship("link", to: "C", inverse: "back") }
            Entity("B")
            Entity("C") { Relationship("back", to: "A", inverse: "link") }
        }
        let renamedInverse = try ManagedObjectModel {
            Entity("A") { Relationship("link", to: "B", inverse: "source") }
            Entity("B") { Relationship("source", to: "A", inverse: "link") }
            Entity("C")
        }
        #expect(toB.entityVersionHashes["A"] != toC.entityVersionHashes["A"])
        #expect(toB.entityVersionHashes["A"] != renamedInverse.entityVersionHashes["A"])
    }

    @Test func classesAndConfigurationsDoNotChangeTheHash() throws {
        let plain = try ManagedObjectModel { Entity("Person") }
        let typed = try ManagedObjectModel {
            Entity("Person", as: ModelFixtures.Person.self)
            Configuration("All", entities: "Person")
        }
        #expect(plain.versionHash == typed.versionHash)
    }
}
