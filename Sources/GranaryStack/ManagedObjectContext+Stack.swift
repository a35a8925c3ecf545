import Foundation
import Granary

/// What the stack does to contexts on their own queues.
extension ManagedObjectContext {
    /// Gives the objects inserted in this context permanent IDs before it saves into its parent: the
    /// parent's later save to the store cannot tell the child the IDs it chose, and a child that goes
    /// on editing those objects needs them. Called on the context's queue by will-save handlers.
    func obtainPermanentIDsForInsertedObjects() throws {
        let inserted = insertedObjects.filter(\.objectID.isTemporaryID)
        if !inserted.isEmpty { try obtainPermanentIDs(for: Array(inserted)) }
    }

    /// Saves on the context's own queue, later, reporting a failure instead of throwing it: for saves
    /// the stack runs on its own behalf.
    func scheduleSave(container: String, report: @escaping @Sendable (StackError) -> Void) {
        schedule { [self] in
            guard hasChanges else { return }
            do { try save() } catch {
                report(.backgroundSaveFailed(container: container, context: description, underlying: error))
            }
        }
    }

    /// Saves what is pending, on the context's queue, and waits.
    /// - Throws: `StackError.backgroundSaveFailed` naming the context.
    func saveIfChanged(container: String) async throws {
        try await perform { [self] in
            guard hasChanges else { return }
            do { try save() } catch {
                throw StackError.backgroundSaveFailed(container: container, context: description, underlying: error)
            }
        }
    }

    /// Waits until every block scheduled on the context's queue so far has run.
    func drain() async {
        _ = try? await perform {}
    }

    /// Removes the objects of the given stores from the context, telling its observers they are gone
    /// (what a detached store's objects become).
    func forgetObjects(ofStores identifiers: Set<UUID>) {
        let gone = registeredObjects.map(\.objectID).filter { $0.persistentStoreIdentifier.map(identifiers.contains) ?? false }
        if !gone.isEmpty { mergeChanges(fromContextDidSave: ContextChanges(deleted: Set(gone))) }
    }
}
