import Foundation
import Testing
@testable import Granary

/// Lightweight migration: each change inference supports, carried out on a real durable store and
/// checked after reopening; each change it does not support, refused with the store left alone.
@Suite struct MigrationInferenceTests {
    static func people(_ version: String, @EntityBuilder _ person: () -> [EntityComponent], @ModelBuilder more: () -> [ModelComponent] = { [] }) throws -> ManagedObjectModel {
        let entity = Entity("Person", person)
        return try ManagedObjectModel(version: version) { [ModelComponent.entity(entity.entity)] + more() }
    }

    @Test func addsAttributesRenamesWidensAndRemovesKeepingObjectIDs() throws {
        let v1 = try Self.people("1") {
            Attribute("name", .string)
            Attribute("age", .integer16, optional: true)
            Attribute("title", .string, optional: true)
        }
        let v2 = try Self.people("2") {
            Attribute("fullName", .string, renamingIdentifier: "name")
            Attribute("age", .integer32, optional: true)
            Attribute("nickname", .string, optional: true)
            Attribute("score", .integer64, defaultValue: 7)
        } more: {
            Entity("Team") { Attribute("name", .string) }
        }
        let store = MigrationHarness()
        let uri = try store.write(v1) { context in
            let ada = try context.insert("Person", ["name": "Ada", "age": Int16(36), "title": "Countess"])
            try context.insert("Person", ["name": "Alan", "age": nil])
            try context.obtainPermanentIDs(for: [ada])
            return ada.objectID.uriRepresentation
        }
        var seen: [MigrationProgress] = []
        let recorder = ProgressRecorder()
        var options = PersistentStore.Options()
        options.migration.progress = { recorder.add($0) }
        // `title` goes and `nickname` comes, both optional strings: meant as two changes, not a rename.
        options.migration.acknowledgedRemovals = ["Person.title"]
        try store.open(v2, options: options) { persistentStore, context in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.path == ["1", "2"])
            #expect(report.rowsWritten == 2 && report.rowsDropped == 0)
            let described = report.changes[0].map(\.description)
            #expect(described.contains("attribute Person.name renamed to fullName"))
            #expect(described.contains("attribute Person.age changed type from integer16 to integer32"))
            #expect(described.contains("attribute Person.title removed"))
            #expect(described.contains("entity Team added"))
            let people = try context.all("Person", sortedBy: "fullName")
            #expect(try people.map { try $0.get("fullName", as: String.self) } == ["Ada", "Alan"])
            #expect(try people[0].get("age", as: Int32.self) == 36)
            #expect(try people[1].get("age", as: Int32.self) == nil)
            #expect(try people.map { try $0.get("score", as: Int64.self) } == [7, 7])
            #expect(try people[0].get("nickname", as: String.self) == nil)
            // The object keeps its ID: URIs saved before the migration still find it.
            let ada = try context.existingObject(with: ManagedObjectID(uriRepresentation: uri))
            #expect(try ada.get("fullName", as: String.self) == "Ada")
            // New entities and new objects work in the migrated store.
            try context.insert("Team", ["name": "Engines"])
            try context.insert("Person", ["fullName": "Grace", "age": Int32(85)])
            try context.save()
            #expect(persistentStore.metadata.schemaVersion == "2")
        }
        seen = recorder.values
        #expect(seen.first?.phase == .mapping && seen.last?.phase == .finished)
        #expect(seen.last?.rowsCompleted == 2)
        #expect(seen.contains { $0.phase == .writing })
        // Opening again needs no migration and keeps everything.
        try store.open(v2) { persistentStore, context throws in
            #expect(persistentStore.migrationReport == nil)
            #expect(try context.all("Person", sortedBy: "fullName").count == 3)
            #expect(try context.all("Team", sortedBy: "name").count == 1)
        }
    }

    @Test func renamesAnEntityAndKeepsRelationshipsOnBothSides() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("volumes", toMany: "Volume", inverse: "writer", renamingIdentifier: "books")
            }
            Entity("Volume", renamingIdentifier: "Book") {
                Attribute("title", .string)
                Relationship("writer", to: "Author", inverse: "volumes", renamingIdentifier: "author")
            }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            let ada = try context.insert("Author", ["name": "Ada"])
            for title in ["Notes", "Sketches"] { try context.insert("Book", ["title": title, "author": ada]) }
            try context.insert("Book", ["title": "Orphan"])
        }
        try store.open(v2) { persistentStore, context in
            let changes = try #require(persistentStore.migrationReport).changes[0].map(\.description)
            #expect(changes.contains("entity Book renamed to Volume"))
            #expect(changes.contains("relationship Author.books renamed to volumes"))
            let ada = try #require(try context.all("Author", sortedBy: "name").first)
            let volumes = try #require(try ada.get("volumes", as: Set<ManagedObject>.self))
            #expect(Set(try volumes.map { try $0.get("title", as: String.self) }) == ["Notes", "Sketches"])
            let all = try context.all("Volume", sortedBy: "title")
            #expect(try all.map { try $0.get("title", as: String.self) } == ["Notes", "Orphan", "Sketches"])
            #expect(try all[0].get("writer", as: ManagedObject.self) === ada)
            #expect(try all[1].get("writer", as: ManagedObject.self) == nil)
        }
    }

    @Test func optionalityChangesFillNilsWithTheDefault() throws {
        let v1 = try Self.people("1") {
            Attribute("name", .string)
            Attribute("city", .string, optional: true)
        }
        let v2 = try Self.people("2") {
            Attribute("name", .string, optional: true)
            Attribute("city", .string, defaultValue: "Unknown")
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            try context.insert("Person", ["name": "Ada", "city": "London"])
            try context.insert("Person", ["name": "Alan"])
        }
        try store.open(v2) { _, context in
            let people = try context.all("Person", sortedBy: "name")
            #expect(try people.map { try $0.get("city", as: String.self) } == ["London", "Unknown"])
            try people[0].setValue(nil, forKey: "name")
            try context.save()
        }
        // Made required without a default: the object whose name is nil has nothing to become, so it
        // is named and nothing is written.
        let v3 = try Self.people("3") {
            Attribute("name", .string)
            Attribute("city", .string, defaultValue: "Unknown")
        }
        let before = try store.files()
        #expect {
            try store.open(v3) { _, _ in }
        } throws: { error in
            guard case MigrationError.validationFailed(let from, let to, let failures, let count) = error else { return false }
            return from == "2" && to == "3" && count == 1 && failures.map(\.property) == ["name"] && failures[0].reason == .missing
        }
        #expect(try store.files() == before)
    }

    @Test func aToOneBecomesAToMany() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("pet", to: "Pet", inverse: "owner")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "pet")
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("pet", toMany: "Pet", inverse: "owner")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "pet")
            }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            let ada = try context.insert("Owner", ["name": "Ada"])
            try context.insert("Pet", ["name": "Rex", "owner": ada])
            try context.insert("Owner", ["name": "Bob"])
        }
        try store.open(v2) { persistentStore, context in
            #expect(try #require(persistentStore.migrationReport).changes[0].map(\.description)
                        == ["relationship Owner.pet changed from to-one to to-many"])
            let owners = try context.all("Owner", sortedBy: "name")
            let pets = try #require(try owners[0].get("pet", as: Set<ManagedObject>.self))
            #expect(try pets.map { try $0.get("name", as: String.self) } == ["Rex"])
            #expect(try owners[1].get("pet", as: Set<ManagedObject>.self)?.isEmpty == true)
            // The new shape takes a second pet.
            let fido = try context.insert("Pet", ["name": "Fido", "owner": owners[0]])
            try context.save()
            #expect(try owners[0].get("pet", as: Set<ManagedObject>.self)?.contains(fido) == true)
        }
    }

    @Test func removingAnEntityDropsItsObjectsAndEveryReferenceToThem() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Shape", abstract: true) {
                Attribute("label", .string)
                Relationship("canvas", to: "Canvas", inverse: "shapes")
            }
            Entity("Circle", parent: "Shape") { Attribute("radius", .double) }
            Entity("Square", parent: "Shape") { Attribute("side", .double) }
            Entity("Canvas") {
                Attribute("name", .string)
                Relationship("shapes", toMany: "Shape", inverse: "canvas")
            }
        }
        // Squares go; a new sub-entity arrives (which shifts the entity codes in the shared table).
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Shape", abstract: true) {
                Attribute("label", .string)
                Relationship("canvas", to: "Canvas", inverse: "shapes")
            }
            Entity("Circle", parent: "Shape") { Attribute("radius", .double) }
            Entity("Arc", parent: "Shape") { Attribute("angle", .double, defaultValue: 90.0) }
            Entity("Canvas") {
                Attribute("name", .string)
                Relationship("shapes", toMany: "Shape", inverse: "canvas")
            }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            let canvas = try context.insert("Canvas", ["name": "Main"])
            try context.insert("Circle", ["label": "c1", "radius": 1.0, "canvas": canvas])
            try context.insert("Square", ["label": "s1", "side": 2.0, "canvas": canvas])
            try context.insert("Circle", ["label": "c2", "radius": 3.0, "canvas": canvas])
        }
        try store.open(v2) { persistentStore, context in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.rowsDropped == 1)
            #expect(report.changes[0].map(\.description).contains("entity Square removed (its objects are dropped)"))
            let canvas = try #require(try context.all("Canvas", sortedBy: "name").first)
            let shapes = try #require(try canvas.get("shapes", as: Set<ManagedObject>.self))
            #expect(Set(try shapes.map { try $0.get("label", as: String.self) }) == ["c1", "c2"])
            #expect(try context.all("Shape", sortedBy: "label").map { $0.entity.name } == ["Circle", "Circle"])
            try context.insert("Arc", ["label": "a1", "canvas": canvas])
            try context.save()
            #expect(try context.all("Shape", sortedBy: "label").map { $0.entity.name } == ["Arc", "Circle", "Circle"])
            #expect(try context.all("Arc", sortedBy: "label").first?.get("angle", as: Double.self) == 90)
        }
        // The raw rows agree: no reference points at a row that is not there.
        try store.open(v2) { persistentStore, _ in
            #expect(persistentStore.engine.verify().isSound)
            let snapshot = persistentStore.engine.read()
            let canvasRows = try snapshot.rows(in: "Canvas")
            let column = try #require(persistentStore.mapping.entity(named: "Canvas")?.column(forProperty: "shapes"))
            guard case .references(let refs) = canvasRows[0].row[column] else { Issue.record("no references"); return }
            #expect(refs.count == 3)  // c1, c2 and the arc added after the migration
            for ref in refs { #expect(try snapshot.row(in: "Shape", key: ref.key) != nil) }
        }
    }

    @Test func indexesAndUniquenessConstraintsFollowTheModel() throws {
        let v1 = try Self.people("1") {
            Attribute("email", .string)
            Attribute("age", .integer64)
        }
        let v2 = try Self.people("2") {
            Attribute("email", .string)
            Attribute("age", .integer64, indexed: true)
            Unique("email")
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            for i in 0..<20 { try context.insert("Person", ["email": "p\(i)@example.com", "age": Int64(i)]) }
        }
        try store.open(v2) { persistentStore, context in
            let changes = try #require(persistentStore.migrationReport).changes[0].map(\.description)
            #expect(changes.contains("index age (indexed attribute) added to Person"))
            #expect(changes.contains("uniqueness constraint on Person.(email) added"))
            var request = FetchRequest<ManagedObject>(entityName: "Person")
            request.filter = try PredicateParser.parse("age == 7")
            #expect(try context.explain(request).explain.contains("Person_age"))
            #expect(try context.fetch(request).count == 1)
            try context.insert("Person", ["email": "p3@example.com", "age": Int64(99)])
            #expect(throws: (any Error).self) { try context.save() }
        }
    }

    @Test func floatWidensToDoubleWhileARelationshipAndAnIndexGo() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Parcel") {
                Attribute("weight", .float)
                Relationship("box", to: "Box", inverse: "parcels")
                Index("byWeight", "weight")
            }
            Entity("Box") {
                Attribute("label", .string)
                Relationship("parcels", toMany: "Parcel", inverse: "box")
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Parcel") { Attribute("weight", .double) }
            Entity("Box") { Attribute("label", .string) }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            let box = try context.insert("Box", ["label": "B"])
            try context.insert("Parcel", ["weight": Float(2.5), "box": box])
        }
        try store.open(v2) { persistentStore, context throws in
            let changes = try #require(persistentStore.migrationReport).changes[0].map(\.description)
            #expect(changes.contains("attribute Parcel.weight changed type from float to double"))
            #expect(changes.contains("relationship Parcel.box removed"))
            #expect(changes.contains("relationship Box.parcels removed"))
            #expect(changes.contains("index byWeight removed from Parcel"))
            #expect(try context.all("Parcel", sortedBy: "weight").first?.get("weight", as: Double.self) == 2.5)
            let schema = try persistentStore.engine.read().schema(of: "Parcel")
            #expect(schema.indexes.isEmpty && schema.columns.map(\.name) == ["_entity", "_version", "weight"])
            #expect(try persistentStore.engine.read().schema(of: "Box").columns.map(\.name) == ["_entity", "_version", "label"])
        }
    }

    @Test func aUniquenessConstraintThatRowsBreakNamesTheDuplicatesAndLeavesTheStore() throws {
        let v1 = try Self.people("1") { Attribute("email", .string) }
        let v2 = try Self.people("2") {
            Attribute("email", .string)
            Unique("email")
        }
        let store = MigrationHarness()
        try store.write(v1) { context in
            for email in ["a@x", "b@x", "a@x", "c@x", "b@x", "a@x"] { try context.insert("Person", ["email": email]) }
        }
        let before = try store.files()
        #expect {
            try store.open(v2) { _, _ in }
        } throws: { error in
            guard case MigrationError.uniquenessViolation(let entity, let properties, let duplicates) = error else { return false }
            // Keys depend on the order the save assigned them; the counts do not.
            let a = duplicates.firstMatch(of: /"a@x" in rows (\d+), (\d+), (\d+)(;|$)/)
            let b = duplicates.firstMatch(of: /"b@x" in rows (\d+), (\d+)(;|$)/)
            return entity == "Person" && properties == ["email"] && a != nil && b != nil && !duplicates.contains("c@x")
        }
        #expect(try store.files() == before)
        try store.open(v1) { persistentStore, context throws in
            #expect(persistentStore.migrationReport == nil)
            #expect(try context.all("Person", sortedBy: "email").count == 6)
        }
    }

    @Test func changesInferenceCannotCarryOutAreAllListedAndNothingIsWritten() throws {
        let v1 = try ManagedObjectModel(version: "1") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("age", .string)
                Relationship("friends", toMany: "Person", inverse: "friends")
            }
        }
        let v2 = try ManagedObjectModel(version: "2") {
            Entity("Person") {
                Attribute("name", .string)
                Attribute("age", .integer64)
                Attribute("born", .date)
                Relationship("friends", to: "Person", inverse: "friends")
            }
        }
        let store = MigrationHarness()
        try store.write(v1) { context in try context.insert("Person", ["name": "Ada", "age": "36"]) }
        let before = try store.files()
        #expect {
            try store.open(v2) { _, _ in }
        } throws: { error in
            guard case MigrationError.cannotInferMapping(_, _, let problems) = error else { return false }
            // `born` (required, no default) is not among them: whether it migrates depends on the data.
            return problems.count == 2
                && problems.contains { $0.hasPrefix("attribute Person.age changed type from string to integer64: cannot be inferred") }
                && problems.contains { $0.hasPrefix("relationship Person.friends changed from to-many to to-one: cannot be inferred") }
                && "\(error)".contains("use a custom migration step")
        }
        #expect(try store.files() == before)
    }

    @Test func withAutomaticMigrationOffTheErrorListsTheDifferences() throws {
        let v1 = try Self.people("1") { Attribute("name", .string) }
        let v2 = try Self.people("2") {
            Attribute("name", .string)
            Attribute("email", .string, optional: true)
        }
        let store = MigrationHarness()
        try store.write(v1) { context in try context.insert("Person", ["name": "Ada"]) }
        var options = PersistentStore.Options()
        options.migration.shouldMigrateStoreAutomatically = false
        #expect {
            try store.open(v2, options: options) { _, _ in }
        } throws: { error in
            guard case MigrationError.incompatibleModel(_, let differences) = error else { return false }
            return differences == ["attribute Person.email added"]
        }
        try store.open(v1) { _, context throws in #expect(try context.all("Person", sortedBy: "name").count == 1) }
    }

    @Test func destroyAndRecreateEmptiesAnIncompatibleCacheOnlyWhenAskedTo() throws {
        let v1 = try Self.people("1") { Attribute("age", .string) }
        let v2 = try Self.people("2") { Attribute("age", .integer64) }
        let store = MigrationHarness()
        let oldIdentity = try store.write(v1) { context in
            try context.insert("Person", ["age": "old"])
            return context.persistentStoreCoordinator!.persistentStores[0].identifier
        }
        #expect(throws: MigrationError.self) { try store.open(v2) { _, _ in } }
        var options = PersistentStore.Options()
        options.migration.destroyAndRecreateOnIncompatibleModel = true
        try store.open(v2, options: options) { persistentStore, context in
            let report = try #require(persistentStore.migrationReport)
            #expect(report.wasRecreated && report.recreationReason?.contains("Person.age") == true)
            #expect(persistentStore.identifier != oldIdentity)
            #expect(try context.all("Person", sortedBy: "age").isEmpty)
            try context.insert("Person", ["age": Int64(3)])
            try context.save()
        }
        try store.open(v2) { _, context throws in #expect(try context.all("Person", sortedBy: "age").count == 1) }
    }

    @Test func aReadOnlyStoreThatNeedsMigratingIsRefused() throws {
        let v1 = try Self.people("1") { Attribute("name", .string) }
        let v2 = try Self.people("2") { Attribute("name", .string, optional: true) }
        let store = MigrationHarness()
        try store.write(v1) { context in try context.insert("Person", ["name": "Ada"]) }
        #expect {
            try store.open(v2, options: .init(readOnly: true)) { _, _ in }
        } throws: { error in
            if case MigrationError.readOnly = error { return true }
            return false
        }
    }
}

/// Collects progress reports from the migrating thread.
final class ProgressRecorder: @unchecked Sendable {
    // @unchecked: `values` is guarded by `lock`.
    private let lock = NSLock()
    private var stored: [MigrationProgress] = []
    func add(_ progress: MigrationProgress) { lock.withLock { stored.append(progress) } }
    var values: [MigrationProgress] { lock.withLock { stored } }
}
