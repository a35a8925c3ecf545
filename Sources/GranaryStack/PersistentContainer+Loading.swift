import Foundation
import Granary

extension PersistentContainer {
    /// Opens the store of every description in `persistentStoreDescriptions` and calls `completionHandler`
    /// once per description, with the error that stopped it or nil: Core Data's
    /// `loadPersistentStores(completionHandler:)`.
    ///
    /// Each store is opened on the calling thread, and its handler called there before this returns,
    /// unless its description's `shouldAddStoreAsynchronously` is set: that store is opened on a
    /// background queue (one after the other, in order) and its handler called there. Once a store's
    /// handler is called without an error, the store is in `persistentStoreCoordinator.persistentStores`
    /// and the contexts reach it. A store that fails does not stop the others, as in Core Data. Stores
    /// attached before (`attachPersistentStore(at:for:)`) are kept.
    ///
    /// The errors handed over are `StackError`s: `.attachFailed` naming the store and the Granary error
    /// underneath (locked, damaged, written by an incompatible model); `.unsupportedOption` for a
    /// description asking for remote-change notifications; `.unknownConfiguration`,
    /// `.alreadyAttached` (two descriptions of one configuration); for every description, `.modelNotFound`
    /// or `.modelUnreadable` when `init(name:)` found no usable model, and `.alreadyStarted` when the
    /// container was loaded or started before.
    /// - Parameter completionHandler: Called once per description, with the error if its store did not load.
    public func loadPersistentStores(completionHandler: @escaping @Sendable (PersistentStoreDescription, (any Error)?) -> Void) {
        let descriptions = persistentStoreDescriptions
        if let failure = beginLoading() {
            for description in descriptions { completionHandler(description, failure) }
            return
        }
        for description in descriptions {
            if description.shouldAddStoreAsynchronously {
                loadQueue.async { [self] in completionHandler(description, loadStore(of: description).failure) }
            } else {
                completionHandler(description, loadStore(of: description).failure)
            }
        }
    }

    /// Opens the store of every description, off the calling thread, and returns them: the async form of
    /// `loadPersistentStores(completionHandler:)`, for code that awaits.
    ///
    /// Every description is tried, in order, whatever its `shouldAddStoreAsynchronously`; the stores
    /// that opened stay open when another fails.
    /// - Returns: The stores opened, in the order of the descriptions.
    /// - Throws: The first description's error (see `loadPersistentStores(completionHandler:)`).
    @discardableResult
    public func loadPersistentStores() async throws(StackError) -> [PersistentStore] {
        let descriptions = persistentStoreDescriptions
        if let failure = beginLoading() { throw failure }
        let outcome: Result<[PersistentStore], StackError> = await withCheckedContinuation { continuation in
            loadQueue.async { [self] in
                var stores: [PersistentStore] = []
                var firstFailure: StackError?
                for description in descriptions {
                    switch loadStore(of: description) {
                    case .success(let store): stores.append(store)
                    case .failure(let error): firstFailure = firstFailure ?? error
                    }
                }
                continuation.resume(returning: firstFailure.map { .failure($0) } ?? .success(stores))
            }
        }
        return try outcome.get()
    }

    /// Starts the container with the stores attached so far, so that each description's store joins
    /// the coordinator as it opens.
    /// - Returns: Why no store can load: no model, or loaded before.
    private func beginLoading() -> StackError? {
        if let modelFailure { return modelFailure }
        do throws(StackError) {
            try attachments.start(defaults: [])
        } catch {
            return error
        }
        return nil
    }

    private func loadStore(of description: PersistentStoreDescription) -> Result<PersistentStore, StackError> {
        do throws(StackError) {
            let request = try description.storeRequest(container: name)
            return .success(try attachments.attach([request])[0])
        } catch {
            return .failure(error)
        }
    }
}

extension Result {
    /// The error, or nil for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
