import Foundation
import Testing
@testable import Granary

/// One-sided relationships across model versions, with the `OneSide…` corpus bundles: an inverse removed
/// (its links move to the hidden inverse), one-sided relationships added to a model with data, an inverse
/// given to a one-sided relationship (filled from the hidden inverse), and inverses that do not point back.
/// After each migration a deleted destination must still leave no reference behind.
@Suite struct OneSidedMigrationTests {
    private func bundle(_ name: String) throws -> XcodeModelBundle {
        try XcodeModelBundle(contentsOf: XcodeCorpus.bundleURL(name))
    }

    private func objects(_ context: ManagedObjectContext, _ entity: String) throws -> [ManagedObject] {
        try context.fetch(FetchRequest<ManagedObject>(entityName: entity))
    }

    private func name(_ object: Any?) -> String? {
        guard let object = object as? ManagedObject else { return nil }
        return (try? object.value(forKey: "name")) as? String ?? (try? object.value(forKey: "street")) as? String
            ?? (try? object.value(forKey: "title")) as? String
    }

    private func names(_ value: Any?) -> [String] {
        let members = (value as? [ManagedObject]) ?? (value as? Set<ManagedObject>).map(Array.init) ?? []
        return members.compactMap(name).sorted()
    }

    @Test func theLoaderWarnsAboutEachRelationshipItLoadsAsOneSided() throws {
        let mismatched = try bundle("OneSideMismatchedInverse")
        let first = mismatched.warnings(forVersion: "OneSideMismatchedInverse")
        #expect(first.count == 1)
        guard case .inverseNotPointingBack(let location, "Team", "captain", "team", let reason)? = first.first else {
            Issue.record("expected Team.captain not pointing back, got \(first)")
            return
        }
        #expect(location.line != nil && reason.contains("'Player.team' names 'players'"))
        let second = mismatched.warnings(forVersion: "OneSideMismatchedInverse 2").map(\.description)
        #expect(second.contains { $0.contains("'Player.mentor' names 'mentee'") && $0.contains("has no inverse") })
        #expect(second.contains { $0.contains("'Team.coach' names 'coachOf'") && $0.contains("no property of that name") })
        #expect(second.contains { $0.contains("'Player.mentee' has no inverse; loaded as one-sided") })
        // The model: the pair that agrees stays two-sided, the others are one-sided.
        let model = try #require(mismatched.version(named: "OneSideMismatchedInverse 2"))
        #expect(model.entity(named: "Team")?.relationshipsByName["captain"]?.inverseName == nil)
        #expect(model.entity(named: "Team")?.relationshipsByName["players"]?.inverseName == "team")
        #expect(model.entity(named: "Player")?.relationshipsByName["team"]?.inverseName == "players")
        #expect(model.entity(named: "Player")?.relationshipsByName["mentor"]?.inverseName == nil)
        let toOne = try bundle("OneSideToOne")
        #expect(toOne.warnings(forVersion: "OneSideToOne 3").count == 4)
        let transient = try #require(toOne.version(named: "OneSideToOne 3")?.entity(named: "Person")?.relationshipsByName["draft"])
        #expect(transient.isTransient && transient.inverseName == nil)
    }

    /// Version 1 links people and addresses both ways; version 2 drops the inverse. The links survive, and
    /// deleting an address afterwards clears the person's `home`: the hidden inverse was filled from the
    /// removed one.
    @Test func removingAnInverseKeepsTheLinksAndTheirIntegrity() throws {
        let versions = try bundle("OneSideToOne")
        let v1 = try #require(versions.version(named: "OneSideToOne"))
        let v2 = try #require(versions.version(named: "OneSideToOne 2"))
        let store = MigrationHarness("oneSideToOne")
        defer { try? FileManager.default.removeItem(at: store.url) }
        try store.write(v1) { context in
            for i in 0..<3 {
                let address = ManagedObject(entity: v1.entity(named: "Address")!, insertInto: context)
                try address.setValue("s\(i)", forKey: "street")
                let person = ManagedObject(entity: v1.entity(named: "Person")!, insertInto: context)
                try person.setValue("p\(i)", forKey: "name")
                try person.setValue(address, forKey: "home")
            }
        }
        try store.open(v2) { persistentStore, context in
            #expect(persistentStore.migrationReport != nil)
            let people = try objects(context, "Person").sorted { name($0)! < name($1)! }
            #expect(try people.map { name(try $0.value(forKey: "home")) } == ["s0", "s1", "s2"])
            let s1 = try #require(objects(context, "Address").first { name($0) == "s1" })
            context.delete(s1)
            #expect(try people[1].value(forKey: "home") == nil)
            try context.save()
        }
        try store.open(v2) { _, context in
            let people = try objects(context, "Person").sorted { name($0)! < name($1)! }
            #expect(try people.map { name(try $0.value(forKey: "home")) } == ["s0", nil, "s2"])
            #expect(try TwoContextPropertyTests.danglingReferences(in: context.persistentStoreCoordinator!.persistentStores[0]).isEmpty)
        }
    }

    /// Version 2 has one-sided `featured` and a two-sided `books`; version 3 gives `featured` an inverse
    /// (filled from the hidden one) and removes `books`' inverse (its links move to a hidden one).
    @Test func anInverseAddedToAOneSidedRelationshipIsFilledFromTheHiddenOne() throws {
        let versions = try bundle("OneSideToMany")
        let v2 = try #require(versions.version(named: "OneSideToMany 2"))
        let v3 = try #require(versions.version(named: "OneSideToMany 3"))
        let store = MigrationHarness("oneSideToMany")
        defer { try? FileManager.default.removeItem(at: store.url) }
        try store.write(v2) { context in
            let books = try (0..<4).map { i -> ManagedObject in
                let book = ManagedObject(entity: v2.entity(named: "Book")!, insertInto: context)
                try book.setValue("b\(i)", forKey: "title")
                return book
            }
            for (i, members) in [[0, 1, 2], [2, 3]].enumerated() {
                let library = ManagedObject(entity: v2.entity(named: "Library")!, insertInto: context)
                try library.setValue("l\(i)", forKey: "name")
                try library.setValue(members.map { books[$0] }, forKey: "featured")
                try library.setValue(Set(members.map { books[$0] }), forKey: "books")
            }
            try books[0].setValue([books[3]], forKey: "related")
        }
        try store.open(v3) { persistentStore, context in
            #expect(persistentStore.migrationReport != nil)
            let books = try objects(context, "Book").sorted { name($0)! < name($1)! }
            #expect(try books.map { names(try $0.value(forKey: "featuredIn")) } == [["l0"], ["l0"], ["l0", "l1"], ["l1"]])
            let libraries = try objects(context, "Library").sorted { name($0)! < name($1)! }
            // `books` was one-to-many in version 2: b2 moved to l1 when l1 took it.
            #expect(try libraries.map { names(try $0.value(forKey: "books")) } == [["b0", "b1"], ["b2", "b3"]])
            // The books' hidden inverse was filled from the removed `library`: deleting b2 clears it from
            // both libraries' books, and from b0's one-sided `related` (b3).
            context.delete(books[2])
            context.delete(books[3])
            #expect(try libraries.map { names(try $0.value(forKey: "books")) } == [["b0", "b1"], []])
            #expect(try names(books[0].value(forKey: "related")).isEmpty)
            try context.save()
            #expect(try TwoContextPropertyTests.danglingReferences(in: persistentStore).isEmpty)
        }
    }

    @Test func aMismatchedInverseMadeRightIsFilledFromTheHiddenOne() throws {
        let versions = try bundle("OneSideMismatchedInverse")
        let v2 = try #require(versions.version(named: "OneSideMismatchedInverse 2"))
        let v3 = try #require(versions.version(named: "OneSideMismatchedInverse 3"))
        let store = MigrationHarness("oneSideMismatched")
        defer { try? FileManager.default.removeItem(at: store.url) }
        try store.write(v2) { context in
            let player = ManagedObject(entity: v2.entity(named: "Player")!, insertInto: context)
            try player.setValue("p", forKey: "name")
            let team = ManagedObject(entity: v2.entity(named: "Team")!, insertInto: context)
            try team.setValue("t", forKey: "name")
            try team.setValue(player, forKey: "captain")
        }
        try store.open(v3) { _, context in
            let player = try #require(objects(context, "Player").first)
            #expect(name(try player.value(forKey: "captainOf")) == "t")
        }
    }

    @Test func transientRelationshipsLoadAndPairOnlyWithTransientInverses() throws {
        func load(_ body: String) throws -> XcodeModelBundle {
            let directory = try XcodeFixtures.scratchDirectory()
            let contents = XcodeFixtures.model(entity: body, after: """
                    <entity name="Other" representedClassName="Other" syncable="YES">
                        <relationship name="back" optional="YES" transient="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Thing" inverseName="link" inverseEntity="Thing"/>
                        <relationship name="stored" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Thing" inverseName="mixed" inverseEntity="Thing"/>
                    </entity>

                """)
            return try XcodeModelBundle(contentsOf: XcodeFixtures.writePackage(contents, named: "Transient", in: directory))
        }
        let bundle = try load("""
                    <relationship name="link" optional="YES" transient="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Other" inverseName="back" inverseEntity="Other"/>
                    <relationship name="mixed" optional="YES" transient="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Other" inverseName="stored" inverseEntity="Other"/>
            """)
        let model = try #require(bundle.versions.first)
        let thing = try #require(model.entity(named: "Thing"))
        // Both transient: a pair, stored nowhere.
        #expect(thing.relationshipsByName["link"]?.inverseName == "back" && thing.relationshipsByName["link"]?.isTransient == true)
        #expect(StorageMapping(model: model).entity(named: "Thing")?.column(forProperty: "link") == nil)
        // One transient, one stored: neither keeps the other as inverse, each with a warning.
        #expect(thing.relationshipsByName["mixed"]?.inverseName == nil)
        #expect(model.entity(named: "Other")?.relationshipsByName["stored"]?.inverseName == nil)
        let warnings = bundle.warnings.map(\.description)
        #expect(warnings.count == 2 && warnings.allSatisfy { $0.contains("one of the two is transient and the other is stored") })
    }
}
