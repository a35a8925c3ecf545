import Granary
import GranaryStorage

/// Whether a merge that read only part of the ledger may make an object collide, under a uniqueness
/// constraint, with one outside that part (M22): the store, which holds the projection of every
/// integrated event, is asked for each touched object's constrained values.
///
/// A collision needs a touched object: the merges before this one fused every collision among the
/// others. When the store has another object with those values, the merge starts again on the whole
/// ledger, where `UniquenessResolver` finds and fuses it as it always has; when it has none, the
/// slice holds every object that can collide. A value the store cannot be asked about cheaply (a data
/// file, a relationship in the constraint) also sends the merge to the whole ledger.
struct OutsideCollisionProbe {
    let coordinator: PersistentStoreCoordinator
    let resolver: UniquenessResolver

    /// Whether a constraint may be violated by `projection` (read from `ledger`) together with an
    /// object outside it. `idMap` gives each key's row in the store.
    /// - Throws: `SyncError.storeRead` when the store cannot be read; `.dataCorruption` for a value
    ///   that does not fit its attribute.
    func mayCollide(_ projection: Projection, ledger: Ledger, idMap: [ObjectKey: Int64]) throws(SyncError) -> Bool {
        guard !resolver.constraints.isEmpty else { return false }
        let model = coordinator.managedObjectModel
        let reader = LedgerReader(ledger: ledger)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        var result: Result<Bool, SyncError> = .success(false)
        context.performAndWait {
            do throws(SyncError) {
                for key in projection.objects.keys.sorted() {
                    guard let constraints = resolver.constraints[key.entity], let object = projection.objects[key] else { continue }
                    // The rows of the key's fuse group are the object itself, not another one.
                    let ownRows = Set(reader.group(of: key).compactMap { idMap[$0] })
                    for constraint in constraints {
                        guard let owner = model.entity(named: constraint.owner) else { return result = .success(true) }
                        var terms: [PredicateNode] = []
                        for name in constraint.properties {
                            guard let attribute = owner.attributesByName[name] else { return result = .success(true) }
                            guard let value = object.attributes[name] ?? nil else { break }
                            if case .dataFile = value { return result = .success(true) }
                            terms.append(.compare([name], .equal, .value(try MergeValues.storedValue(value, attribute: attribute))))
                        }
                        // An object with a nil among the constrained values is exempt, as Granary has it.
                        guard terms.count == constraint.properties.count else { continue }
                        var request = FetchRequest<ManagedObject>(entityName: constraint.owner)
                        request.filter = terms.count == 1 ? terms[0] : .and(terms)
                        request.includesPendingChanges = false
                        request.fetchLimit = ownRows.count + 1
                        let found: [ManagedObject]
                        do { found = try context.fetch(request) } catch {
                            throw .storeRead("looking for objects of \(constraint.owner) sharing \(constraint.properties) with \(key): \(error)")
                        }
                        if found.contains(where: { $0.objectID.primaryKey.map { !ownRows.contains($0) } ?? true }) {
                            return result = .success(true)
                        }
                    }
                }
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }
}
