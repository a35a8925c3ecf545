import Foundation
import Granary

/// Ties a configuration of the model to a kind of store: which entities, in memory or on disk, opened
/// how.
///
/// The location comes from the call that attaches it (`attachPersistentStore(at:for:)`): a durable
/// store is the folder `<name>.granary` in the directory given (the container's name stands in for the
/// default configuration), so one list of configurations can be attached in a different directory per
/// user.
///
/// ```swift
/// let settings = StoreConfiguration(name: "Settings", type: .durable)
/// let cache = StoreConfiguration(name: "Cache", type: .inMemory)
/// ```
public struct StoreConfiguration: Sendable, Hashable {
    /// The model's configuration, or `nil` for its default one (every entity).
    public var name: String?
    /// In memory (gone when detached) or durable (a `.granary` directory).
    public var type: PersistentStore.StoreType
    /// How the store's engine is opened: durability, read-only.
    public var options: PersistentStore.Options

    /// - Parameters:
    ///   - name: A configuration of the model, or `nil` for every entity.
    ///   - type: `.durable` (the default) for a store on disk, `.inMemory` for scratch data.
    ///   - options: How the engine is opened (durability, read-only).
    public init(name: String? = nil, type: PersistentStore.StoreType = .durable, options: PersistentStore.Options = .init()) {
        self.name = name
        self.type = type
        self.options = options
    }

    /// Where the store of this configuration lives inside `directory` (`nil` for an in-memory store).
    public func url(in directory: URL, containerName: String) -> URL? {
        guard type == .durable else { return nil }
        return directory.appendingPathComponent("\(name ?? containerName).granary", isDirectory: true)
    }
}
