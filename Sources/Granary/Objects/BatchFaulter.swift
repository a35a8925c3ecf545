import Foundation

/// Loads the objects of a batched fetch (`fetchBatchSize`) a batch at a time, on first touch, and turns
/// batches touched long ago back into faults, so iterating a large result keeps a bounded number of
/// loaded objects however long the result is.
final class BatchFaulter {
    /// Loaded batches kept before the oldest goes back to being faults.
    static let residentBatches = 3
    /// Members of a to-many relationship loaded together when one of them is first touched.
    static let relationshipBatchSize = 512

    private let batches: [[ManagedObjectID]]
    private weak var context: ManagedObjectContext?
    private var loadedOrder: [Int] = []

    private init(batches: [[ManagedObjectID]], context: ManagedObjectContext) {
        self.batches = batches
        self.context = context
    }

    static func attach(_ objects: [ManagedObject], batchSize: Int, context: ManagedObjectContext) {
        let ids = objects.map(\.objectID)
        let batches = stride(from: 0, to: ids.count, by: batchSize).map { Array(ids[$0..<min(ids.count, $0 + batchSize)]) }
        let faulter = BatchFaulter(batches: batches, context: context)
        for (i, object) in objects.enumerated() where object.faultState {
            object.batch = (faulter, i / batchSize)
        }
    }

    /// Loads every object of a batch from the store in one pass.
    func load(_ index: Int) {
        guard let context else { return }
        let faults = batches[index].compactMap { id -> ManagedObject? in
            guard let object = context.registeredObject(for: id), object.faultState else { return nil }
            object.batch = nil
            return object
        }
        context.fulfillFaults(faults)
        for object in faults where object.faultState { context.fulfillFault(object) }
        loadedOrder.removeAll { $0 == index }
        loadedOrder.append(index)
        while loadedOrder.count > Self.residentBatches {
            let old = loadedOrder.removeFirst()
            for id in batches[old] {
                guard let object = context.registeredObject(for: id), !object.faultState, !object.hasChanges else { continue }
                object.values = object.layout.initialValues
                object.committed = nil
                object.faultState = true
                object.batch = (self, old)
            }
        }
    }
}
