import Foundation

/// Loads faults a batch at a time from the store, the whole batch on the first touch of any of its
/// objects: the members of a fired to-many relationship, and the objects of a fetch with a
/// `fetchBatchSize`.
///
/// The two differ in what they keep loaded:
/// - A relationship's members stay loaded once loaded, as Core Data's do. The collection handed out
///   holds every member anyway, and code touches them in any order (a `Set`'s hash order, sorted by a
///   property, at random): turning them back into faults made nearly every touch reload a batch, once
///   a relationship had more members than the resident batches held. Its batches follow the order in
///   which the collection handed out iterates, so a partial walk (`first`, `prefix`) loads only what
///   it walks.
/// - A batched fetch keeps a window of the batches loaded last and turns older ones back into faults,
///   so that a pass over a large result keeps a bounded number of objects loaded. That pays only for
///   access in order: touched out of order (sorted by a property, at random), every touch may reload
///   a batch evicted a moment ago. So the faulter stops evicting once the objects it reloaded add up to
///   the result's size, or to an eighth of it in reloads that jumped (a batch not next to the one
///   loaded before it): random access gives itself away within a fraction of the result, while a pass
///   in order, forwards or backwards, jumps once at most. No access pattern then loads more than about
///   three times the result (once, once more in reloads, and what was evicted when it stopped), random
///   access about one and a half times, and two passes in order keep the bound.
final class BatchFaulter {
    /// Loaded batches a batched fetch keeps while it evicts.
    static let residentBatches = 3
    /// Members of a to-many relationship loaded together when one of them is first touched.
    static let relationshipBatchSize = 512

    private let batches: [[ManagedObjectID]]
    private weak var context: ManagedObjectContext?
    /// Batches kept loaded, or `nil` once nothing is evicted (always, for a relationship).
    private var window: Int?
    /// Loaded batches, least recently loaded first, while evicting.
    private var resident: [Int] = []
    private var wasLoaded: [Bool]
    private var lastLoaded = -1
    private var reloadedObjects = 0
    private var reloadedByJumps = 0
    private let objectCount: Int

    private init(batches: [[ManagedObjectID]], window: Int?, objectCount: Int, context: ManagedObjectContext) {
        self.batches = batches
        self.window = window
        self.objectCount = objectCount
        self.context = context
        wasLoaded = window == nil ? [] : [Bool](repeating: false, count: batches.count)
    }

    /// Attaches the faults of a batched fetch's result, in the result's order.
    static func attach(_ objects: [ManagedObject], batchSize: Int, context: ManagedObjectContext) {
        attach(objects.filter(\.faultState), batchSize: batchSize, window: residentBatches, context: context)
    }

    /// Attaches faults of a fired to-many relationship in the order of the collection handed out,
    /// which is the order a walk over it touches them.
    static func attachMembers(_ faults: [ManagedObject], context: ManagedObjectContext) {
        // A single fault loads as fast alone.
        guard faults.count > 1 else { return }
        attach(faults, batchSize: relationshipBatchSize, window: nil, context: context)
    }

    private static func attach(_ faults: [ManagedObject], batchSize: Int, window: Int?, context: ManagedObjectContext) {
        guard !faults.isEmpty else { return }
        let ids = faults.map(\.objectID)
        let batches = stride(from: 0, to: ids.count, by: batchSize).map { Array(ids[$0..<min(ids.count, $0 + batchSize)]) }
        let faulter = BatchFaulter(batches: batches, window: window, objectCount: ids.count, context: context)
        for (i, object) in faults.enumerated() { object.batch = (faulter, i / batchSize) }
    }

    /// Loads every object of a batch that is still a fault from the store in one pass.
    func load(_ index: Int) {
        guard let context else { return }
        let faults = batches[index].compactMap { id -> ManagedObject? in
            guard let object = context.registeredObject(for: id), object.faultState else { return nil }
            object.batch = nil
            return object
        }
        context.fulfillFaults(faults)
        for object in faults where object.faultState { context.fulfillFault(object) }
        guard let window else { return }
        if wasLoaded[index] {
            reloadedObjects += batches[index].count
            if abs(index - lastLoaded) > 1 { reloadedByJumps += batches[index].count }
        }
        wasLoaded[index] = true
        lastLoaded = index
        if reloadedObjects > objectCount || reloadedByJumps * 8 > objectCount {
            // Out of order: evicting costs more loads than the memory it saves is worth.
            self.window = nil
            resident = []
            return
        }
        resident.removeAll { $0 == index }
        resident.append(index)
        while resident.count > window { evict(resident.removeFirst()) }
    }

    /// Turns a batch's unchanged objects back into faults of this batch.
    private func evict(_ index: Int) {
        guard let context else { return }
        for id in batches[index] {
            guard let object = context.registeredObject(for: id), !object.faultState, !object.hasChanges else { continue }
            object.willTurnIntoFault()
            object.values = object.layout.initialValues
            object.committed = nil
            object.faultState = true
            object.batch = (self, index)
            object.didTurnIntoFault()
        }
    }
}
