import Foundation
import Granary
@testable import GranarySync

/// A class whose objects carry their global ID in `noteID` (a UUID attribute).
final class CapturedNote: ManagedObject, Syncable {
    static var globalIdentifierKey: String { "noteID" }
}

/// A `Syncable` class naming an attribute its entity does not have.
final class MisnamedNote: ManagedObject, Syncable {
    static var globalIdentifierKey: String { "nowhere" }
}

/// The model of the capture tests: every relationship shape the ledger distinguishes (one-to-many,
/// many-to-many, ordered without inverse, one-to-one), an entity of every attribute type, a `Syncable`
/// class, a transient, and an entity the configuration excludes.
enum CaptureFixture {
    static let gid = "uniqueIdentifier"

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel(version: "capture-1") {
            Entity("Author") {
                Attribute(gid, .string, optional: true)
                Attribute("name", .string, optional: true)
                Attribute("cachedSummary", .string, optional: true, transient: true)
                Relationship("books", toMany: "Book", inverse: "author")
            }
            Entity("Book") {
                Attribute(gid, .string, optional: true)
                Attribute("title", .string, optional: true)
                Attribute("year", .integer64, defaultValue: 0)
                Relationship("author", to: "Author", inverse: "books")
                Relationship("tags", toMany: "Tag", inverse: "books")
            }
            Entity("Tag") {
                Attribute(gid, .string, optional: true)
                Attribute("name", .string, optional: true)
                Relationship("books", toMany: "Book", inverse: "tags")
            }
            Entity("Shelf") {
                Attribute(gid, .string, optional: true)
                Attribute("label", .string, optional: true)
                Relationship("books", toMany: "Book", ordered: true)
            }
            Entity("Person") {
                Attribute(gid, .string, optional: true)
                Attribute("name", .string, optional: true)
                Relationship("passport", to: "Passport", inverse: "holder")
            }
            Entity("Passport") {
                Attribute(gid, .string, optional: true)
                Attribute("number", .string, optional: true)
                Relationship("holder", to: "Person", inverse: "passport")
            }
            Entity("Note", as: CapturedNote.self) {
                Attribute("noteID", .uuid, optional: true)
                Attribute("text", .string, optional: true)
            }
            Entity("Sample") {
                Attribute("i16", .integer16, optional: true)
                Attribute("i32", .integer32, optional: true)
                Attribute("i64", .integer64, optional: true)
                Attribute("double", .double, optional: true)
                Attribute("float", .float, optional: true)
                Attribute("decimal", .decimal, optional: true)
                Attribute("flag", .boolean, optional: true)
                Attribute("text", .string, optional: true)
                Attribute("date", .date, optional: true)
                Attribute("bytes", .binaryData, optional: true)
                Attribute("uuid", .uuid, optional: true)
                Attribute("link", .uri, optional: true)
                Attribute("archived", .transformable([String].self, name: "CaptureStrings"), optional: true)
            }
            Entity("Scratch") {
                Attribute("value", .string, optional: true)
            }
        }
    }

    static var configuration: EnsembleConfiguration {
        EnsembleConfiguration(globalIdentifierAttribute: gid, excludedEntities: ["Scratch"])
    }
}

/// One store with history tracking, in a scratch directory, as an ensemble sees it: the app's
/// coordinator and context, the ensemble's own coordinator sharing the store, an event store and a
/// recorder.
final class CaptureDevice {
    let scratch: URL
    let model: ManagedObjectModel
    let app: PersistentStoreCoordinator
    let appStore: PersistentStore
    let context: ManagedObjectContext
    let sync: PersistentStoreCoordinator
    let syncStore: PersistentStore
    private(set) var eventStore: EventStore
    let schema: LedgerSchema
    let identifiers: GlobalIdentifierSource
    private(set) var recorder: LocalChangeRecorder

    init(configuration: EnsembleConfiguration = CaptureFixture.configuration,
         delegate: GlobalIdentifierSource.Delegate? = nil, storeID: StoreID = orderedStores[0]) throws {
        scratch = try makeScratchDirectory()
        model = try CaptureFixture.model()
        app = PersistentStoreCoordinator(managedObjectModel: model)
        appStore = try app.addPersistentStore(type: .durable, at: scratch.appendingPathComponent("App.granary"),
                                              options: .init(durability: .off, persistentHistoryTracking: true))
        context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: app)
        sync = PersistentStoreCoordinator(managedObjectModel: model)
        syncStore = try sync.addPersistentStore(sharing: appStore)
        eventStore = try EventStore.open(at: scratch.appendingPathComponent("events.granary"), creatingWith: storeID)
        schema = LedgerSchema(model: model, configuration: configuration)
        identifiers = try GlobalIdentifierSource(model: model, attribute: configuration.globalIdentifierAttribute,
                                                 delegate: delegate)
        recorder = LocalChangeRecorder(coordinator: sync, store: syncStore, eventStore: eventStore, schema: schema,
                                       identifiers: identifiers)
    }

    /// Closes the event store and opens it again, with a new recorder: what a relaunch does.
    func reopenEventStore() throws {
        try eventStore.close()
        eventStore = try EventStore.open(at: eventStore.directory)
        recorder = LocalChangeRecorder(coordinator: sync, store: syncStore, eventStore: eventStore, schema: schema,
                                       identifiers: identifiers)
    }

    deinit {
        try? eventStore.close()
        removeScratch(scratch)
    }

    /// Runs `body` on the app context's queue, then saves.
    @discardableResult
    func save<T>(author: String? = nil, _ body: (ManagedObjectContext) throws -> T) throws -> T {
        try context.performAndWait {
            context.transactionAuthor = author
            defer { context.transactionAuthor = nil }
            let result = try body(context)
            try context.save()
            return result
        }
    }

    /// A new object of `entity` with `values`, in `context`.
    @discardableResult
    func insert(_ entity: String, _ values: [String: Any?], in context: ManagedObjectContext) throws -> ManagedObject {
        guard let description = model.entity(named: entity) else { throw CaptureTestError.noEntity(entity) }
        let object = ManagedObject(entity: description, insertInto: context)
        for (key, value) in values { try object.setValue(value, forKey: key) }
        return object
    }

    /// The object of `entity` whose global ID attribute is `gid`, in `context`.
    func object(_ entity: String, _ gid: String, in context: ManagedObjectContext) throws -> ManagedObject {
        var request = FetchRequest<ManagedObject>(entityName: entity)
        request.filter = try PredicateParser.parse("\(CaptureFixture.gid) == %@", arguments: [gid])
        guard let found = try context.fetch(request).first else { throw CaptureTestError.noObject(entity, gid) }
        return found
    }

    /// The ledger's projection: what the other devices will build from this device's events.
    func ledgerProjection() throws -> Projection {
        Projection(of: try eventStore.loadLedger(), schema: schema)
    }

    /// The store's synced graph in the projection's form, objects named through the event store's ID map;
    /// an object the map lacks is named `unmapped/<entity>/<key>`, which no projection holds.
    func storeGraph() throws -> Projection {
        try GranarySyncTests.storeGraph(sync: sync, store: syncStore, eventStore: eventStore, schema: schema)
    }

    /// The local events recorded, oldest first.
    func localEvents() throws -> [Event] {
        try eventStore.events(withStatus: .localUnexported)
    }
}

/// The synced graph of `store` in the projection's form, objects named through `eventStore`'s ID map;
/// an object the map lacks is named `unmapped/<entity>/<key>`, which no projection holds.
func storeGraph(sync: PersistentStoreCoordinator, store: PersistentStore, eventStore: EventStore,
                schema: LedgerSchema) throws -> Projection {
    let reading = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: sync)
    return try reading.performAndWait {
        let reader = StoreObjectReader(context: reading, store: store, eventStore: eventStore)
        func key(_ object: ManagedObject) throws -> ObjectKey {
            try reader.mappedKey(object.objectID)
                ?? ObjectKey("unmapped", "\(object.objectID.entityName)/\(object.objectID.primaryKey ?? -1)")
        }
        var objects: [ObjectKey: ProjectedObject] = [:]
        for (entity, shape) in schema.entities {
            let derived = schema.derivedRelationships(of: entity)
            try reader.forEachObject(of: entity) { batch throws(SyncError) in
                for object in batch {
                    do {
                        var projected = ProjectedObject()
                        for name in shape.attributes {
                            guard let attribute = object.entity.attributesByName[name] else { continue }
                            projected.attributes[name] = .some(try AttributeValueReader.value(of: attribute, in: object))
                        }
                        for name in Array(shape.toOnes.keys) + derived.filter(\.value).map(\.key) {
                            projected.toOnes[name] = .some(try reader.related(object, name).first.map(key))
                        }
                        for (name, toMany) in shape.toManys {
                            let members = try reader.related(object, name).map(key)
                            projected.toManys[name] = toMany.isOrdered ? members : members.sorted()
                        }
                        for name in derived.filter({ !$0.value }).map(\.key) {
                            projected.toManys[name] = try reader.related(object, name).map(key).sorted()
                        }
                        objects[try key(object)] = projected
                    } catch let error as SyncError {
                        throw error
                    } catch {
                        throw SyncError.storeRead("\(error)")
                    }
                }
            }
        }
        return Projection(objects: objects)
    }
}

enum CaptureTestError: Error {
    case noEntity(String)
    case noObject(String, String)
}

extension Event {
    /// The change of `key`, if the event holds one.
    func change(_ key: ObjectKey) -> ObjectChange? { changes.first { $0.key == key } }
}
