import Granary

/// Collects the app's repairs of one merge: each reparation context the hooks were given is read into
/// object changes (M24), saved into the merge context, and its inserted objects get permanent IDs, so
/// that the pending record can map them before the store save.
struct MergeRepairs {
    let context: ManagedObjectContext
    let schema: LedgerSchema
    let newGlobalID: (ManagedObject) -> String
    /// The key of a row `keyOfRow` does not name: a merge that read only part of the ledger knows only
    /// its rows, and a repair may touch any object of the store.
    var keyOfUnknownRow: (String, Int64) -> ObjectKey? = { _, _ in nil }
    /// Where the repairs' large values are stored as data files (M15); nil: they travel inline.
    var eventStore: EventStore? = nil

    /// Records `reparation`'s changes into `changes` (merged with earlier repairs of the same object) and
    /// the rows of objects it inserted into `mapped`. `keyOfRow` names every row the merge knows, by
    /// entity and primary key.
    /// - Throws: `SyncError.mergeValidationFailed` when the repairs themselves do not validate (a child
    ///   context's save validates them); `.storeSave`, `.dataCorruption`.
    func record(_ reparation: ManagedObjectContext, keyOfRow: [String: [Int64: ObjectKey]],
                into changes: inout [ObjectChange], mapped: inout [ObjectKey: Int64]) throws(SyncError) {
        guard reparation.performAndWait({ reparation.hasChanges }) else { return }
        let recorder = RepairRecorder(schema: schema)
        var (repairs, inserted) = try recorder.changes(in: reparation, key: { id in
            id.primaryKey.flatMap { keyOfRow[id.entityName]?[$0] ?? keyOfUnknownRow(id.entityName, $0) }
        }, newGlobalID: newGlobalID)
        if let eventStore {
            // Stored ahead of the merge event, which the finalize commits; an unreferenced file left by a
            // merge that fails after this is dropped by the next clean-up.
            do {
                let extracted = LargeValues.extract(repairs, writer: try eventStore.state().storeID)
                try eventStore.storeDataFiles(extracted.files)
                repairs = extracted.changes
            } catch {
                throw SyncError(error)
            }
        }
        var failure: Error?
        reparation.performAndWait {
            do { try reparation.save() } catch { failure = error }
        }
        if let failure {
            if case let ContextError.validation(list) = failure { throw .mergeValidationFailed(list) }
            throw .storeSave("saving the repairs into the merge context failed: \(failure)")
        }
        var keyed: [(ObjectKey, ManagedObject)] = []
        var result: Result<Void, SyncError> = .success(())
        context.performAndWait {
            for (id, key) in inserted {
                if let object = context.registeredObject(for: id) { keyed.append((key, object)) }
            }
            do { try context.obtainPermanentIDs(for: keyed.map(\.1)) } catch {
                result = .failure(.storeSave("reserving keys for \(keyed.count) repaired objects failed: \(error)"))
            }
        }
        try result.get()
        for (key, object) in keyed {
            guard let localKey = object.objectID.primaryKey else { throw .storeSave("\(key) has no permanent ID after obtainPermanentIDs") }
            mapped[key] = localKey
        }
        for repair in repairs { Self.merge(repair, into: &changes) }
    }

    /// Adds `change`, folding an update into an earlier insert or update of the same key so that one
    /// event never writes one property twice (the ledger keeps the first write of an event).
    static func merge(_ change: ObjectChange, into changes: inout [ObjectChange]) {
        guard change.kind == .update,
              let index = changes.lastIndex(where: { $0.key == change.key && ($0.kind == .update || $0.kind == .insert) }) else {
            changes.append(change)
            return
        }
        changes[index].attributes.merge(change.attributes) { $1 }
        changes[index].toOnes.merge(change.toOnes) { $1 }
        for (name, adds) in change.memberAdds {
            let removed = Set(adds.map(\.member))
            changes[index].memberRemoves[name] = changes[index].memberRemoves[name]?.filter { !removed.contains($0) }
            changes[index].memberAdds[name] = (changes[index].memberAdds[name] ?? []).filter { !removed.contains($0.member) } + adds
        }
        for (name, removes) in change.memberRemoves {
            let gone = Set(removes)
            changes[index].memberAdds[name] = changes[index].memberAdds[name]?.filter { !gone.contains($0.member) }
            if changes[index].kind == .update { changes[index].memberRemoves[name, default: []] += removes }
        }
    }
}
