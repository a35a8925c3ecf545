import Foundation
import Granary
import GranaryStorage
import Testing
@testable import GranarySync

/// The library model of `libraryLedgerSchema` as a Granary model, with the knobs the merge tests turn:
/// the delete rule of `Author.books`, whether `Book.author` is required, and whether author names are
/// unique.
/// The library model of the merge tests. `oneToOne: false` leaves out Person and Passport, whose
/// one-to-one relationship makes every merge read the whole ledger.
func libraryModel(authorBooksRule: DeleteRule = .nullify, bookAuthorRequired: Bool = false,
                  uniqueAuthorName: Bool = false, oneToOne: Bool = true) throws -> ManagedObjectModel {
    try ManagedObjectModel(version: "1") {
        Entity("Author") {
            Attribute("name", .string, optional: true)
            Relationship("books", toMany: "Book", inverse: "author", deleteRule: authorBooksRule)
            if uniqueAuthorName { Unique("name") }
        }
        Entity("Book") {
            Attribute("title", .string, optional: true)
            Attribute("year", .integer64, optional: true)
            Relationship("author", to: "Author", inverse: "books", deleteRule: .nullify, optional: !bookAuthorRequired)
            Relationship("tags", toMany: "Tag", inverse: "books")
        }
        Entity("Tag") {
            Attribute("name", .string, optional: true)
            Relationship("books", toMany: "Book", inverse: "tags")
        }
        Entity("Shelf") {
            Attribute("label", .string, optional: true)
            Relationship("books", toMany: "Book", ordered: true)
        }
        if oneToOne {
            Entity("Person") {
                Attribute("name", .string, optional: true)
                Relationship("passport", to: "Passport", inverse: "holder")
            }
            Entity("Passport") {
                Attribute("number", .string, optional: true)
                Relationship("holder", to: "Person", inverse: "passport")
            }
        }
    }
}

/// One device's side of a merge: the app's durable store (history on) with its coordinator, the
/// ensemble's coordinator sharing that store, and the event store beside it.
final class MergeTestStack {
    let directory: URL
    let model: ManagedObjectModel
    let schema: LedgerSchema
    let storeID: StoreID
    let appCoordinator: PersistentStoreCoordinator
    let appStore: PersistentStore
    let ensembleCoordinator: PersistentStoreCoordinator
    let ensembleStore: PersistentStore
    var eventStore: EventStore

    init(model: ManagedObjectModel, in directory: URL, storeID: StoreID = orderedStores[3],
         durability: Engine.Durability = .off) throws {
        self.directory = directory
        self.model = model
        self.storeID = storeID
        schema = LedgerSchema(model: model)
        appCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        appStore = try appCoordinator.addPersistentStore(type: .durable, at: directory.appendingPathComponent("App.granary"),
                                                         options: .init(durability: durability, persistentHistoryTracking: true))
        ensembleCoordinator = PersistentStoreCoordinator(managedObjectModel: model)
        ensembleStore = try ensembleCoordinator.addPersistentStore(sharing: appStore)
        eventStore = try EventStore.open(at: directory.appendingPathComponent("events.granary"), creatingWith: storeID)
    }

    func close() {
        try? eventStore.close()
        try? ensembleCoordinator.remove(ensembleStore)
        try? appCoordinator.remove(appStore)
    }

    func integrator() -> MergeIntegrator {
        MergeIntegrator(eventStore: eventStore, coordinator: ensembleCoordinator, store: ensembleStore, schema: schema)
    }

    /// Imports `events` as downloaded and integrates every downloaded event.
    @discardableResult
    func merge(_ events: [Event], with integrator: MergeIntegrator? = nil) throws -> MergeIntegrator.Outcome {
        for event in events { try eventStore.importEvent(event) }
        return try (integrator ?? self.integrator()).integrate(try eventStore.events(withStatus: .downloaded))
    }

    func ledgerGraph() throws -> Projection {
        Projection(of: try eventStore.loadLedger(), schema: schema)
    }

    /// The app's store as a projection: every object of every synced entity by its key in the ID map
    /// (an unmapped row shows as `Entity/unmapped-<key>`), with its attributes and both sides of every
    /// relationship, read through a fresh context of the app's coordinator.
    func storeGraph() throws -> Projection {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: appCoordinator)
        let store = eventStore
        let schema = self.schema
        return try context.performAndWait { () throws -> Projection in
            var keys: [ObjectIdentifier: ObjectKey] = [:]
            var all: [(ObjectKey, ManagedObject)] = []
            for entity in schema.entities.keys.sorted() {
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) where object.entity.name == entity {
                    let localKey = try #require(object.objectID.primaryKey)
                    let key = try store.objectKey(entity: entity, localKey: localKey) ?? ObjectKey(entity, "unmapped-\(localKey)")
                    keys[ObjectIdentifier(object)] = key
                    all.append((key, object))
                }
            }
            func key(_ object: ManagedObject) -> ObjectKey {
                keys[ObjectIdentifier(object)] ?? ObjectKey(object.entity.name, "unknown-\(object.objectID)")
            }
            var objects: [ObjectKey: ProjectedObject] = [:]
            for (objectKey, object) in all {
                let shape = try #require(schema.entities[objectKey.entity])
                var projected = ProjectedObject()
                for name in shape.attributes {
                    let attribute = try #require(object.entity.attributesByName[name])
                    projected.attributes[name] = .some(try AttributeValueReader.value(of: attribute, in: object))
                }
                var toOnes = Array(shape.toOnes.keys), toManys = shape.toManys.map { ($0.key, $0.value.isOrdered) }
                for (name, isToOne) in schema.derivedRelationships(of: objectKey.entity) {
                    if isToOne { toOnes.append(name) } else { toManys.append((name, false)) }
                }
                for name in toOnes { projected.toOnes[name] = .some((try object.value(forKey: name) as? ManagedObject).map(key)) }
                for (name, isOrdered) in toManys {
                    let value = try object.value(forKey: name)
                    projected.toManys[name] = isOrdered ? (value as? [ManagedObject] ?? []).map(key)
                        : (value as? Set<ManagedObject> ?? []).map(key).sorted()
                }
                objects[objectKey] = projected
            }
            return Projection(objects: objects)
        }
    }
}

/// `projection` with nil attributes and to-ones and empty to-manys left out, so that "never written" and
/// "written nil" compare equal, as they read the same from a store.
func normalized(_ projection: Projection) -> Projection {
    var objects: [ObjectKey: ProjectedObject] = [:]
    for (key, object) in projection.objects {
        var copy = ProjectedObject()
        for (name, value) in object.attributes { if let value { copy.attributes[name] = value } }
        for (name, value) in object.toOnes { if let value { copy.toOnes[name] = value } }
        for (name, value) in object.toManys where !value.isEmpty { copy.toManys[name] = value }
        objects[key] = copy
    }
    return Projection(objects: objects)
}

/// Checks that the stack's store holds exactly its ledger's projection (compared by global ID).
func expectStoreMatchesLedger(_ stack: MergeTestStack, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
    let store = normalized(try stack.storeGraph()), ledger = normalized(try stack.ledgerGraph())
    #expect(store == ledger, "\(comment)\nstore\n\(store)\nledger\n\(ledger)", sourceLocation: sourceLocation)
}

/// Runs `body` on `context`'s queue with a fresh object lookup by key through `stack`'s ID map.
func object(_ key: ObjectKey, in context: ManagedObjectContext, of stack: MergeTestStack) throws -> ManagedObject {
    let localKey = try #require(try stack.eventStore.localKey(for: key), "\(key) is not mapped")
    let uri = try #require(URL(string: "x-granary://\(stack.appStore.identifier.uuidString)/\(key.entity)/p\(localKey)"))
    let id = try #require(context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri))
    return try context.existingObject(with: id)
}
