import Granary

// The seed's completion-handler forms, for code ported from Ensembles, and the attach/detach names.
// Completions run on an arbitrary executor: Linux has no main thread to promise, and a @MainActor app
// hops there itself.
extension PersistentStoreEnsemble {
    /// `leech()` with a completion handler (Ensembles' `leechPersistentStoreWithCompletion:`); the error
    /// is a ``SyncError`` or nil.
    public func leechPersistentStore(seedPolicy: SeedPolicy = .mergeAllData, completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do throws(SyncError) {
                try await leech(seedPolicy: seedPolicy)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// `deleech()` with a completion handler (Ensembles' `deleechPersistentStoreWithCompletion:`).
    public func deleechPersistentStore(completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do throws(SyncError) {
                try await deleech()
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// `merge()` with a completion handler (Ensembles' `mergeWithCompletion:`).
    public func merge(options: MergeOptions = [], completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do throws(SyncError) {
                try await merge(options: options)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// The same as ``leech(seedPolicy:)``: starts syncing the store.
    public func attach(seedPolicy: SeedPolicy = .mergeAllData) async throws(SyncError) {
        try await leech(seedPolicy: seedPolicy)
    }

    /// The same as ``deleech()``: stops syncing the store.
    public func detach() async throws(SyncError) {
        try await deleech()
    }
}
