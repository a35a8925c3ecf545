import Foundation
import Granary

/// Every context attached to the coordinator, and nothing merged: each context sees other contexts'
/// saves only when it reads the store again.
///
/// **Freshness**: when a background `save()` returns, the data is in the store (on disk for a durable
/// store). The view context is *not* told: objects it has already loaded keep their old values (they
/// are stale) until it calls `refreshAllObjects()` or `refresh(_:mergeChanges:)`, or a fetch returns
/// them again (a fetch loads objects without unsaved changes afresh). New objects show up in its next
/// fetch; deleted ones stay loaded until refreshed.
///
/// Pick it when the view context must not change under the user while they look at it (a long form, a
/// report), or when you refresh at moments of your choosing (pull to refresh); it costs the view
/// context nothing while background work runs.
public struct IndependentStrategy: ContextStrategy {
    /// The view context's merge policy (see `init`).
    public var viewMergePolicy: MergePolicy
    /// The background contexts' merge policy (see `init`).
    public var backgroundMergePolicy: MergePolicy

    /// - Parameters:
    ///   - viewMergePolicy: The view context's policy; store-trump by default, so that its stale edits
    ///     lose per property to what was saved since.
    ///   - backgroundMergePolicy: Background contexts' policy; object-trump by default.
    public init(viewMergePolicy: MergePolicy = .mergeByPropertyStoreTrump,
                backgroundMergePolicy: MergePolicy = .mergeByPropertyObjectTrump) {
        self.viewMergePolicy = viewMergePolicy
        self.backgroundMergePolicy = backgroundMergePolicy
    }

    /// Builds the contexts for one container.
    public func makeContexts(_ environment: StackEnvironment) -> DirectContexts {
        DirectContexts(environment, strategy: DirectStrategy(viewMergePolicy: viewMergePolicy, backgroundMergePolicy: backgroundMergePolicy),
                       mergesAutomatically: false)
    }
}
