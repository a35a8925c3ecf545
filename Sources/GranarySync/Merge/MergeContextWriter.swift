import Foundation
import Granary

/// Makes the merge context hold the projection for the keys a merge touched (§10.3): inserts with every
/// synced attribute, updates of the differences only, and deletes of objects the projection no longer
/// has, after clearing every relationship they hold so that no delete rule has anything to act on (M20,
/// M21).
///
/// Only canonical sides of relationships are written, one to-one or one member at a time; Granary's
/// inverse maintenance fills the derived sides (M17), as it does for the app's own edits.
///
/// A fuse group (M22) is one object in the store: the row of its representative key if it has one, else
/// the row of another key of the group, which the representative adopts (so the app's object keeps its
/// identity when a device learns that its own object was a duplicate). Other rows of the group are
/// deleted.
struct MergeContextWriter {
    /// What the writer did to the context.
    struct Outcome {
        /// Every object of the context the writer wrote or read, by the key representing it.
        var objects: [ObjectKey: ManagedObject] = [:]
        /// Keys of objects inserted, with their local keys (from `obtainPermanentIDs`).
        var inserted: [ObjectKey: Int64] = [:]
        /// Keys whose rows the representative of their fuse group adopted, with the row's local key.
        var adopted: [ObjectKey: Int64] = [:]
        /// Keys whose row was deleted or adopted: their mapping goes at finalize.
        var unmapped: Set<ObjectKey> = []
        /// Keys of deleted rows.
        var deleted: Set<ObjectKey> = []
    }

    let context: ManagedObjectContext
    let store: PersistentStore
    let schema: LedgerSchema
    /// The bytes of a data file the event store holds (M15); readiness lets no event whose files are
    /// missing be integrated, so nil here is an event store that lost a row.
    var dataFileBytes: (CloudFileName) throws(SyncError) -> Data? = { _ in nil }

    /// Writes `projection`, the projection of `ledger`, for every key in `touched` (and for any object a
    /// touched one refers to that the store lacks), then obtains permanent IDs for the inserted objects.
    /// `idMap` is the event store's map from keys to the app's rows.
    /// - Throws: `SyncError.dataCorruption` when a value does not fit the model, `.storeSave` when the
    ///   store cannot be read or keys cannot be reserved.
    func write(_ projection: Projection, of ledger: Ledger, touched: Set<ObjectKey>,
               idMap: [ObjectKey: Int64]) throws(SyncError) -> Outcome {
        var result: Result<Outcome, SyncError> = .success(Outcome())
        context.performAndWait {
            do throws(SyncError) {
                var run = Run(writer: self, projection: projection, reader: LedgerReader(ledger: ledger), idMap: idMap)
                try run.perform(touched: touched)
                result = .success(run.outcome)
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    /// One `write`, on the context's queue.
    private struct Run {
        let writer: MergeContextWriter
        let projection: Projection
        let reader: LedgerReader
        let idMap: [ObjectKey: Int64]
        var outcome = Outcome()
        /// The row each representative (written or referred to) lives in; nil: it is to be inserted.
        var rows: [ObjectKey: Int64?] = [:]
        var pending: [ObjectKey] = []
        var fullyWritten: Set<ObjectKey> = []

        init(writer: MergeContextWriter, projection: Projection, reader: LedgerReader, idMap: [ObjectKey: Int64]) {
            self.writer = writer
            self.projection = projection
            self.reader = reader
            self.idMap = idMap
        }

        var context: ManagedObjectContext { writer.context }

        mutating func perform(touched: Set<ObjectKey>) throws(SyncError) {
            var groups: [[ObjectKey]] = []
            var seen: Set<ObjectKey> = []
            for key in touched.sorted() where !seen.contains(key) {
                let group = reader.group(of: key)
                seen.formUnion(group)
                groups.append(group)
            }
            // Rows first: deletes before writes, so a row adopted by a fuse survivor is never also deleted.
            var deletions: [(ObjectKey, Int64)] = []
            for group in groups {
                let representative = reader.representative(of: group)
                let mapped = group.compactMap { key in idMap[key].map { (key, $0) } }
                guard let representative, projection.objects[representative] != nil else {
                    deletions += mapped
                    continue
                }
                if let own = idMap[representative] {
                    rows[representative] = own
                    deletions += mapped.filter { $0.0 != representative }
                } else if let (donor, row) = mapped.first {
                    rows[representative] = row
                    outcome.adopted[representative] = row
                    outcome.unmapped.insert(donor)
                    deletions += mapped.dropFirst()
                } else {
                    rows[representative] = .some(nil)
                }
                pending.append(representative)
            }
            for (key, row) in deletions {
                outcome.unmapped.insert(key)
                guard let object = try fetch(key.entity, row) else { continue }
                try clearRelationships(of: object)
                context.delete(object)
                outcome.deleted.insert(key)
            }
            while let key = pending.popLast() {
                guard !fullyWritten.contains(key), let projected = projection.objects[key] else { continue }
                fullyWritten.insert(key)
                try write(projected, to: try object(for: key))
            }
            let inserted = outcome.objects.filter { $0.value.isInserted }
            do { try context.obtainPermanentIDs(for: Array(inserted.values)) } catch {
                throw .storeSave("reserving keys for \(inserted.count) merged objects failed: \(error)")
            }
            for (key, object) in inserted {
                guard let localKey = object.objectID.primaryKey else {
                    throw .storeSave("\(key) has no permanent ID after obtainPermanentIDs")
                }
                outcome.inserted[key] = localKey
            }
        }

        /// The object representing `key` in the context: fetched from its row, or inserted (and queued
        /// for a full write) when it has none or its row is gone.
        mutating func object(for key: ObjectKey) throws(SyncError) -> ManagedObject {
            if let object = outcome.objects[key] { return object }
            let row: Int64? = rows[key] ?? idMap[key]
            if let row, let object = try fetch(key.entity, row) {
                outcome.objects[key] = object
                return object
            }
            // No row, or a mapped row the app deleted: the projection says the object exists, so it is made.
            guard let entity = context.persistentStoreCoordinator?.managedObjectModel.entity(named: key.entity) else {
                throw .dataCorruption("the ledger holds \(key), whose entity the model does not have")
            }
            let type = (entity.objectType as? ManagedObject.Type) ?? ManagedObject.self
            let object = type.init(entity: entity, insertInto: context)
            outcome.objects[key] = object
            if !fullyWritten.contains(key) { pending.append(key) }
            return object
        }

        /// The row `key` is known to live in: decided by this run, else the ID map's; nil for a key to be
        /// inserted or unknown.
        func knownRow(of key: ObjectKey) -> Int64? {
            if let decided = rows[key] { return decided }
            return idMap[key]
        }

        func fetch(_ entity: String, _ row: Int64) throws(SyncError) -> ManagedObject? {
            let escaped = entity.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? entity
            guard let uri = URL(string: "\(ManagedObjectID.uriScheme)://\(writer.store.identifier.uuidString)/\(escaped)/p\(row)"),
                  let id = try? ManagedObjectID(uriRepresentation: uri) else {
                throw .dataCorruption("no object ID can name row \(row) of \(entity)")
            }
            do {
                return try context.existingObject(with: id)
            } catch ContextError.noSuchObject {
                return nil
            } catch {
                throw .storeSave("reading \(entity) row \(row) failed: \(error)")
            }
        }

        /// Sets what differs from `projected`: every attribute the ledger has a write for, canonical
        /// to-ones, canonical to-many members (and order).
        mutating func write(_ projected: ProjectedObject, to object: ManagedObject) throws(SyncError) {
            let entity = object.entity
            guard let shape = writer.schema.entities[entity.name] else {
                throw .dataCorruption("the ledger schema has no entity \(entity.name)")
            }
            for name in shape.attributes {
                // No write at all (a key only ever updated elsewhere): the store's value stays.
                guard let value = projected.attributes[name] else { continue }
                guard let attribute = entity.attributesByName[name] else {
                    throw .dataCorruption("\(entity.name) has no attribute \(name), which the ledger holds")
                }
                // A data file's reference is compared by its content hash, without loading the bytes.
                if !object.isInserted, LargeValues.isSameValue(value, try AttributeValueReader.value(of: attribute, in: object)) { continue }
                try set(object, name, try MergeValues.objectValue(try resolved(value, of: attribute), attribute: attribute))
            }
            for name in shape.toOnes.keys.sorted() {
                let target: ManagedObject?
                if let key = projected.toOnes[name] ?? nil {
                    // Already pointing at the target's row: done, without reading the target, whose row
                    // (with its to-many of every object pointing at it) is the expensive part.
                    if outcome.objects[key] == nil, let row = knownRow(of: key), let current = try get(object, name) as? ManagedObject,
                       current.entity.name == key.entity, current.objectID.primaryKey == row {
                        continue
                    }
                    target = try self.object(for: key)
                } else {
                    target = nil
                }
                if (try get(object, name) as? ManagedObject) === target { continue }
                try set(object, name, target)
            }
            for (name, relationship) in shape.toManys.sorted(by: { $0.key < $1.key }) {
                var members: [ManagedObject] = []
                for key in projected.toManys[name] ?? [] { members.append(try self.object(for: key)) }
                let current = try get(object, name)
                if relationship.isOrdered {
                    let now = current as? [ManagedObject] ?? []
                    guard !now.elementsEqual(members, by: ===) else { continue }
                    try set(object, name, members)
                } else {
                    let now = current as? Set<ManagedObject> ?? []
                    let wanted = Set(members.map(ObjectIdentifier.init))
                    let removed = now.filter { !wanted.contains(ObjectIdentifier($0)) }
                    let have = Set(now.map(ObjectIdentifier.init))
                    let added = members.filter { !have.contains(ObjectIdentifier($0)) }
                    do {
                        if !removed.isEmpty { try object.remove(Array(removed), fromRelationship: name) }
                        if !added.isEmpty { try object.add(added, toRelationship: name) }
                    } catch {
                        throw .dataCorruption("changing the members of \(entity.name).\(name) failed: \(error)")
                    }
                }
            }
        }

        /// `value` with a data file's reference replaced by the file's bytes.
        func resolved(_ value: SyncValue?, of attribute: AttributeDescription) throws(SyncError) -> SyncValue? {
            guard case let .dataFile(name)? = value else { return value }
            guard let bytes = try writer.dataFileBytes(name) else {
                throw .eventStore("the value of \(attribute.qualifiedName) is in data file \(name), which the event store does not hold")
            }
            return .data(bytes)
        }

        /// Empties every relationship of an object about to be deleted, so that its delete rules
        /// (cascade, deny, nullify) find nothing (M20, M21); inverse maintenance clears the other ends.
        func clearRelationships(of object: ManagedObject) throws(SyncError) {
            for relationship in object.entity.relationships.sorted(by: { $0.name < $1.name }) {
                try set(object, relationship.name, relationship.isToMany ? [ManagedObject]() : nil)
            }
        }

        func get(_ object: ManagedObject, _ key: String) throws(SyncError) -> Any? {
            do { return try object.value(forKey: key) } catch {
                throw .dataCorruption("reading \(object.entity.name).\(key) failed: \(error)")
            }
        }

        func set(_ object: ManagedObject, _ key: String, _ value: Any?) throws(SyncError) {
            do { try object.setValue(value, forKey: key) } catch {
                throw .dataCorruption("setting \(object.entity.name).\(key) failed: \(error)")
            }
        }
    }
}
