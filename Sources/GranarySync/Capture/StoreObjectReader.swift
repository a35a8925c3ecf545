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

    /// Objects are handed to a caller's body this many at a time.
    static let batchSize = 512

    init(context: ManagedObjectContext, store: PersistentStore, eventStore: EventStore) {
        self.context = context
        self.store = store
        self.eventStore = eventStore
    }

    /// The objects of `ids` whose rows still exist, by ID; an ID whose row is gone is left out (its
    /// delete is in a later capture window). Call on the context's queue.
    ///
    /// One read by primary key per object: a fetch with `SELF IN` would scan the whole table per batch.
    /// - Throws: `SyncError.storeRead` naming the object.
    func objects(_ ids: [ManagedObjectID]) throws(SyncError) -> [ManagedObjectID: ManagedObject] {
        var found: [ManagedObjectID: ManagedObject] = [:]
        for id in ids {
            do {
                found[id] = try context.existingObject(with: id)
            } catch ContextError.noSuchObject {
                continue
            } catch {
                throw .storeRead("reading \(id) from \(storePath): \(error)")
            }
        }
        return found
    }

    /// Every object of `entity` (not of its subentities), in batches of `batchSize` handed to `body`.
    /// - Throws: `SyncError.storeRead`, and what `body` throws.
    func forEachObject(of entity: String, _ body: ([ManagedObject]) throws(SyncError) -> Void) throws(SyncError) {
        let objects: [ManagedObject]
        do {
            var request = FetchRequest<ManagedObject>(entityName: entity)
            request.includesSubentities = false
            objects = try context.fetch(request)
        } catch {
            throw .storeRead("reading the \(entity) objects of \(storePath): \(error)")
        }
        var start = 0
        while start < objects.count {
            let chunk = Array(objects[start..<min(start + Self.batchSize, objects.count)])
            start += chunk.count
            try body(chunk)
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
