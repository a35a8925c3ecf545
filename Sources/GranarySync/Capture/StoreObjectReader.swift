import Foundation
import Granary

/// Reads the app's store as sync sees it, on a context of the ensemble's coordinator: rows by object ID
/// in batches, related objects, and the way between global keys and primary keys (the ID map).
///
/// Capture, the seed and the rescan all read through it, so that each reads values and relationships
/// the same way.
final class StoreObjectReader {
    let context: ManagedObjectContext
    let store: PersistentStore
    let eventStore: EventStore
    private var keyCache: [ManagedObjectID: ObjectKey?] = [:]

    /// Rows are fetched this many at a time.
    static let batchSize = 512

    init(context: ManagedObjectContext, store: PersistentStore, eventStore: EventStore) {
        self.context = context
        self.store = store
        self.eventStore = eventStore
    }

    /// The objects of `ids` whose rows still exist, by ID; an ID whose row is gone is left out (its
    /// delete is in a later capture window). Call on the context's queue.
    /// - Throws: `SyncError.storeRead` naming the entity.
    func objects(_ ids: [ManagedObjectID]) throws(SyncError) -> [ManagedObjectID: ManagedObject] {
        var found: [ManagedObjectID: ManagedObject] = [:]
        var byEntity: [String: [ManagedObjectID]] = [:]
        for id in ids { byEntity[id.entityName, default: []].append(id) }
        for (entity, entityIDs) in byEntity.sorted(by: { $0.key < $1.key }) {
            var start = 0
            while start < entityIDs.count {
                let chunk = Array(entityIDs[start..<min(start + Self.batchSize, entityIDs.count)])
                start += chunk.count
                var request = FetchRequest<ManagedObject>(entityName: entity)
                request.includesSubentities = false
                do {
                    request.filter = try PredicateParser.parse("SELF IN %@", arguments: [chunk])
                    for object in try context.fetch(request) { found[object.objectID] = object }
                } catch {
                    throw .storeRead("fetching \(chunk.count) \(entity) objects by ID from \(storePath): \(error)")
                }
            }
        }
        return found
    }

    /// Every object of `entity` (not of its subentities), in batches of `batchSize` handed to `body`.
    /// - Throws: `SyncError.storeRead`, and what `body` throws.
    func forEachObject(of entity: String, _ body: ([ManagedObject]) throws(SyncError) -> Void) throws(SyncError) {
        let ids: [ManagedObjectID]
        do {
            var request = FetchRequest<ManagedObject>(entityName: entity)
            request.includesSubentities = false
            ids = try context.fetchObjectIDs(request)
        } catch {
            throw .storeRead("listing the \(entity) objects of \(storePath): \(error)")
        }
        var start = 0
        while start < ids.count {
            let chunk = Array(ids[start..<min(start + Self.batchSize, ids.count)])
            start += chunk.count
            let found = try objects(chunk)
            try body(chunk.compactMap { found[$0] })
        }
    }

    /// The objects `object` relates to through `relationship`, in the relationship's order when it is
    /// ordered.
    /// - Throws: `SyncError.storeRead`.
    func related(_ object: ManagedObject, _ relationship: String) throws(SyncError) -> [ManagedObject] {
        let value: Any?
        do { value = try object.value(forKey: relationship) } catch {
            throw .storeRead("\(object.entity.name).\(relationship) of \(object.objectID): \(error)")
        }
        switch value {
        case nil: return []
        case let target as ManagedObject: return [target]
        case let members as [ManagedObject]: return members
        case let members as Set<ManagedObject>: return Array(members)
        default:
            throw .storeRead("\(object.entity.name).\(relationship) of \(object.objectID) is a \(type(of: value)), not related objects")
        }
    }

    // MARK: The ID map

    /// The key `id`'s object is mapped to in the event store; nil when it was never captured or merged.
    func mappedKey(_ id: ManagedObjectID) throws(SyncError) -> ObjectKey? {
        if let cached = keyCache[id] { return cached }
        guard let localKey = id.primaryKey else { return nil }
        let key: ObjectKey?
        do { key = try eventStore.objectKey(entity: id.entityName, localKey: localKey) } catch { throw SyncError(error) }
        keyCache[id] = key
        return key
    }

    /// The object ID `key` is mapped to in this store; nil when it is not mapped.
    func objectID(for key: ObjectKey) throws(SyncError) -> ManagedObjectID? {
        let localKey: Int64?
        do { localKey = try eventStore.localKey(for: key) } catch { throw SyncError(error) }
        guard let localKey else { return nil }
        return objectID(entity: key.entity, localKey: localKey)
    }

    /// The ID of primary key `localKey` of `entity` in this store (whether or not the row exists).
    func objectID(entity: String, localKey: Int64) -> ManagedObjectID? {
        let name = entity.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? entity
        guard let uri = URL(string: "\(ManagedObjectID.uriScheme)://\(store.identifier.uuidString)/\(name)/p\(localKey)") else {
            return nil
        }
        return context.persistentStoreCoordinator?.managedObjectID(forURIRepresentation: uri)
    }

    /// Whether the row of `id` exists in the store now.
    func exists(_ id: ManagedObjectID) -> Bool {
        (try? context.existingObject(with: id)) != nil
    }

    private var storePath: String { store.url?.path ?? store.identifier.uuidString }
}
