import Foundation
import Granary

/// How an ensemble identifies objects, what it syncs and when it merges.
public struct EnsembleConfiguration: Sendable {
    /// The attribute holding global identifiers, for every entity that has a string or UUID attribute of
    /// this name (the seed's `"uniqueIdentifier"`); nil to rely on ``Syncable`` and the delegate only.
    /// Objects of entities without one get random identifiers, so they are never deduplicated.
    public var globalIdentifierAttribute: String?
    /// Entities whose objects stay on each device.
    public var excludedEntities: Set<String>
    /// Properties, as `"Entity.property"`, that stay on each device.
    public var excludedProperties: Set<String>
    /// Where the ensemble keeps its event store; nil puts it beside the store, in
    /// `<store>.sync/<ensembleIdentifier>`.
    public var localDataRoot: URL?
    /// Whether the ensemble purges the store's persistent history up to what it has captured, after each
    /// capture. Off by default: the app may read history too, and should then purge with
    /// `purgeableHistoryToken` as the bound.
    public var purgesHistory: Bool
    /// Older versions of the model that events in the cloud may have been made with; events of a model
    /// neither this nor the current one describes wait for an update of the app.
    public var previousModels: [ManagedObjectModel]
    /// When the ensemble writes a baseline and removes the events it covers from the cloud.
    public var rebase: RebasePolicy
    /// When the ensemble merges by itself; `.manual` (the default) leaves every merge to the app.
    public var automaticMerging: AutomaticMerging

    public init(globalIdentifierAttribute: String? = nil, excludedEntities: Set<String> = [],
                excludedProperties: Set<String> = [], localDataRoot: URL? = nil, purgesHistory: Bool = false,
                previousModels: [ManagedObjectModel] = [], rebase: RebasePolicy = .default,
                automaticMerging: AutomaticMerging = .manual) {
        self.globalIdentifierAttribute = globalIdentifierAttribute
        self.excludedEntities = excludedEntities
        self.excludedProperties = excludedProperties
        self.localDataRoot = localDataRoot
        self.purgesHistory = purgesHistory
        self.previousModels = previousModels
        self.rebase = rebase
        self.automaticMerging = automaticMerging
    }
}
