import Foundation
import Granary
import Synchronization

/// How a container opens one store: where, in memory or on disk, for which configuration, with which
/// options. Core Data's `NSPersistentStoreDescription`.
///
/// A class, as in Core Data, so that code carried over can change the container's default description
/// in place before loading:
///
/// ```swift
/// container.persistentStoreDescriptions.first!.url = URL(fileURLWithPath: "/dev/null")   // in memory
/// ```
///
/// The Core Data properties (`isReadOnly`, `timeout`, `shouldMigrateStoreAutomatically`,
/// `shouldInferMappingModelAutomatically`) are views of `options` under Core Data's keys (see
/// `OptionKey`), so setting either the property or the option has the same effect. Granary's own
/// settings (`durability`, `recovery`, the rest of `migrationOptions`) are properties only.
/// `storeOptions` is what loading opens the store with.
///
/// Persistent history tracking (`OptionKey.historyTracking`) set to true opens the store with
/// `PersistentStore.Options.persistentHistoryTracking`. Options Granary does not support yet fail the
/// load rather than being ignored: remote-change notifications (`OptionKey.remoteChangeNotificationPost`)
/// set to true make loading that store report `StackError.unsupportedOption`. Other keys are kept in
/// `options` and not read.
public final class PersistentStoreDescription: Sendable, CustomStringConvertible {
    private struct State: Sendable {
        var url: URL?
        var type: PersistentStore.StoreType = .durable
        var configuration: String?
        var shouldAddStoreAsynchronously = false
        var options: [String: any Sendable] = [
            OptionKey.migrateStoreAutomatically: true,
            OptionKey.inferMappingModelAutomatically: true,
        ]
        var durability: Engine.Durability = .full
        var recovery: Engine.Recovery = .strict
        /// Versions, steps, recreation and progress; its two flags are read from `options` instead.
        var migration = MigrationOptions()
    }
    private let state: Mutex<State>

    /// A description of a durable store at `url` (Core Data's `init(url:)`), or with no location yet
    /// when `url` is nil: set `url`, or make it in memory with `type = .inMemory`.
    /// - Parameter url: The store's directory, by convention `<name>.granary`; `/dev/null` means an
    ///   in-memory store, as in Core Data.
    public init(url: URL? = nil) {
        state = Mutex(State(url: url))
    }

    /// Where the store lives: a `.granary` directory. `/dev/null` makes it an in-memory store whatever
    /// `type` says, Core Data's idiom for a store that is never written.
    public var url: URL? {
        get { state.withLock { $0.url } }
        set { state.withLock { $0.url = newValue } }
    }

    /// `.durable` (the default) or `.inMemory`. Core Data's type strings (`NSSQLiteStoreType`…) are not
    /// accepted here.
    public var type: PersistentStore.StoreType {
        get { state.withLock { $0.type } }
        set { state.withLock { $0.type = newValue } }
    }

    /// `type` under a second name, which GranaryCoreData's string-typed `type` (Core Data's, holding
    /// `NSSQLiteStoreType` or `NSInMemoryStoreType`) does not hide from code that imports it.
    public var storeType: PersistentStore.StoreType {
        get { type }
        set { type = newValue }
    }

    /// The model's configuration whose entities the store holds; nil (the default) for every entity.
    public var configuration: String? {
        get { state.withLock { $0.configuration } }
        set { state.withLock { $0.configuration = newValue } }
    }

    /// Whether `loadPersistentStores(completionHandler:)` opens this store on a background queue and
    /// returns before it is open (the handler is then called on that queue); false by default.
    public var shouldAddStoreAsynchronously: Bool {
        get { state.withLock { $0.shouldAddStoreAsynchronously } }
        set { state.withLock { $0.shouldAddStoreAsynchronously = newValue } }
    }

    /// Whether the store is opened read-only: saves to it fail, and a missing store is not created
    /// (`OptionKey.readOnly`); false by default.
    public var isReadOnly: Bool {
        get { flag(OptionKey.readOnly, default: false) }
        set { setOption(newValue, forKey: OptionKey.readOnly) }
    }

    /// Core Data's connection timeout, in seconds (`OptionKey.timeout`, 240 by default). Kept for code
    /// carried over, and not used: Granary opens a store or refuses at once (a store another process
    /// holds fails the load with the engine's `lockHeld`), it never waits for one.
    public var timeout: TimeInterval {
        get {
            let value = state.withLock { $0.options[OptionKey.timeout] }
            return (value as? TimeInterval) ?? (value as? NSNumber)?.doubleValue ?? (value as? Int).map(TimeInterval.init) ?? 240
        }
        set { setOption(newValue, forKey: OptionKey.timeout) }
    }

    /// Whether a store written by another version of the model is migrated when it is loaded
    /// (`OptionKey.migrateStoreAutomatically`); true by default. When false, such a store fails to
    /// load with `MigrationError.incompatibleModel`.
    public var shouldMigrateStoreAutomatically: Bool {
        get { flag(OptionKey.migrateStoreAutomatically, default: false) }
        set { setOption(newValue, forKey: OptionKey.migrateStoreAutomatically) }
    }

    /// Whether the mapping between model versions is inferred when no `MigrationStep` covers them
    /// (`OptionKey.inferMappingModelAutomatically`); true by default.
    public var shouldInferMappingModelAutomatically: Bool {
        get { flag(OptionKey.inferMappingModelAutomatically, default: false) }
        set { setOption(newValue, forKey: OptionKey.inferMappingModelAutomatically) }
    }

    /// The options by key, as Core Data's `options`: the Core Data properties above under their keys,
    /// and whatever `setOption(_:forKey:)` set.
    public var options: [String: any Sendable] { state.withLock { $0.options } }

    /// Sets an option, or removes it when `option` is nil, as Core Data's `setOption(_:forKey:)` does.
    /// Booleans may be `Bool` or `NSNumber`.
    /// - Parameters:
    ///   - option: The value; nil removes the key.
    ///   - key: One of `OptionKey`'s keys, or any other (kept, not read).
    public func setOption(_ option: (any Sendable)?, forKey key: String) {
        state.withLock { $0.options[key] = option }
    }

    /// When a commit is on disk (`Engine.Durability`): `.full`, the default, syncs every save.
    public var durability: Engine.Durability {
        get { state.withLock { $0.durability } }
        set { state.withLock { $0.durability = newValue } }
    }

    /// What loading does with a damaged store: throw (`.strict`, the default) or keep the commits before
    /// the damage (`Engine.Recovery.keepConsistentPrefix`).
    public var recovery: Engine.Recovery {
        get { state.withLock { $0.recovery } }
        set { state.withLock { $0.recovery = newValue } }
    }

    /// How a store written by another model version is migrated: the two Core Data flags above, plus
    /// Granary's earlier versions, custom steps, recreation of caches and progress. Setting it sets the
    /// two flags' options too.
    public var migrationOptions: MigrationOptions {
        get {
            var migration = state.withLock { $0.migration }
            migration.shouldMigrateStoreAutomatically = shouldMigrateStoreAutomatically
            migration.shouldInferMappingModelAutomatically = shouldInferMappingModelAutomatically
            return migration
        }
        set {
            state.withLock { $0.migration = newValue }
            shouldMigrateStoreAutomatically = newValue.shouldMigrateStoreAutomatically
            shouldInferMappingModelAutomatically = newValue.shouldInferMappingModelAutomatically
        }
    }

    /// The options the store is opened with: durability, read-only, migration, recovery and history
    /// tracking as this description says.
    public var storeOptions: PersistentStore.Options {
        PersistentStore.Options(durability: durability, readOnly: isReadOnly, migration: migrationOptions, recovery: recovery,
                                persistentHistoryTracking: flag(OptionKey.historyTracking, default: false))
    }

    /// The store's type and location, as a log line shows it.
    public var description: String {
        let (type, url, configuration) = state.withLock { ($0.type, $0.url, $0.configuration) }
        let kind = isInMemory ? "inMemory" : type.rawValue
        return "PersistentStoreDescription(type: \(kind), url: \(url?.path ?? "none"), configuration: \(configuration ?? "default"))"
    }

    // MARK: Loading

    /// Whether the store is kept in memory: its type says so, or its URL is `/dev/null`.
    var isInMemory: Bool {
        state.withLock { $0.type == .inMemory || $0.url?.standardizedFileURL.path == "/dev/null" }
    }

    /// The store to open for this description.
    /// - Throws: `StackError.unsupportedOption` when remote-change notifications are asked for.
    func storeRequest(container: String) throws(StackError) -> StoreRequest {
        let location = isInMemory ? nil : url
        if flag(OptionKey.remoteChangeNotificationPost, default: false) {
            throw .unsupportedOption(container: container, url: location, key: OptionKey.remoteChangeNotificationPost,
                                     reason: "remote-change notifications are not yet available in Granary; remove the option to load the store (persistent history tracking is available)")
        }
        let configuration = StoreConfiguration(name: self.configuration, type: isInMemory ? .inMemory : .durable, options: storeOptions)
        return StoreRequest(configuration: configuration, url: location)
    }

    /// Whether the option `key` is set to a true value: `Bool`, `NSNumber`, a non-zero integer, or
    /// "YES"/"true"/"1". Anything else that is set (Core Data also takes dictionaries for history
    /// tracking) counts as true, so that a request for a feature is never mistaken for its absence.
    private func flag(_ key: String, default absent: Bool) -> Bool {
        guard let value = state.withLock({ $0.options[key] }) else { return absent }
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        if let integer = value as? Int { return integer != 0 }
        if let text = value as? String { return ["1", "yes", "true"].contains(text.lowercased()) }
        return true
    }
}
