import Foundation
import Granary
import GranaryStack
import Synchronization

/// A stack plus one serial background writer: CorePersistence's `StoreManager`.
///
/// Every write of the records services (`create`, `update`, `delete`) runs on a background context of
/// the stack, inside that context's own `perform`, one write at a time in the order they were asked
/// for; the view context (`mainContext`) sees each saved write before its completion runs there.
///
/// ```swift
/// StoreManager.default = try StoreManager(modelNamed: "Shop", location: .directory(storeURL))
/// let id = try await User.create { user, _ in user.uuid = "u1"; user.name = "Ada" }
/// ```
///
/// At start the manager checks that every entity whose class adopts `Persistable` has a uniqueness
/// constraint on its ID attribute, so that no ID is ever stored twice.
public final class StoreManager: Sendable {
    /// Choices made when the manager opens its store.
    public struct Options: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: Int
        /// Options from their bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// When the store was written by a model that lightweight migration cannot reach (no mapping can
        /// be inferred, or migrating would leave invalid values), delete the store (every file of it)
        /// and create an empty one, then call `handleMigration`. Off by default: an incompatible store
        /// is an error, never deleted silently.
        public static let recreatesIncompatibleStore = Options(rawValue: 1 << 0)
    }

    /// Where the manager's store lives.
    public enum StoreLocation: Sendable {
        /// The per-user data directory named after the model (see `StoreDirectory`).
        case defaultDirectory
        /// A directory of your choosing; the store is `<directory>/<name>.granary`.
        case directory(URL)
        /// In memory only, gone with the manager (for previews and tests).
        case inMemory
    }

    /// The stack the manager writes through.
    public let stack: any PersistentStack
    private let writer = RecordWriter()
    private let liveContexts = Mutex<[WeakContext]>([])

    /// The view context: reads for the user interface, completions of the writes. Background saves
    /// reach it without manual merging.
    public var mainContext: ManagedObjectContext { stack.viewContext }

    // MARK: Default manager

    private static let defaultManager = Mutex<StoreManager?>(nil)

    /// The manager the records services use when none is given. Set it once at start-up; reading it
    /// before it is set is a programmer error that stops the program (the services themselves throw
    /// `RecordsError.noDefaultStore` instead).
    public static var `default`: StoreManager {
        get {
            guard let manager = defaultManager.withLock({ $0 }) else {
                preconditionFailure("StoreManager.default was read before it was set: set it at start-up")
            }
            return manager
        }
        set { defaultManager.withLock { $0 = newValue } }
    }

    /// `store`, else the default manager.
    static func resolve(_ store: StoreManager?) throws(RecordsError) -> StoreManager {
        if let store { return store }
        guard let manager = defaultManager.withLock({ $0 }) else { throw .noDefaultStore }
        return manager
    }

    // MARK: Initializers

    /// A manager over a stack you made (any `PersistentStack`), started here if it was not.
    /// - Parameters:
    ///   - stack: The stack; its view context becomes `mainContext`.
    ///   - persistableTypes: Classes whose unique ID is checked besides those the model binds (every
    ///     entity whose class adopts `Persistable` is checked anyway).
    /// - Throws: `RecordsError.storeFailed` when the stack does not start; `.idNotUnique` naming the
    ///   entity whose ID attribute has no uniqueness constraint; `.unknownIDProperty`, `.unknownEntity`.
    public init(stack: any PersistentStack, persistableTypes: [any Persistable.Type] = []) throws(RecordsError) {
        self.stack = stack
        if !stack.isStarted {
            do { try stack.start() } catch { throw .storeFailed(name: stack.name, underlying: error) }
        }
        try Self.checkUniqueIDs(stack.managedObjectModel, extra: persistableTypes)
    }

    /// A manager for the model registered under `name` (or shipped as `<name>.xcdatamodeld`), with its
    /// store at `location`.
    ///
    /// A store written by an older model is migrated by Granary's lightweight migration. When that
    /// cannot reach the current model, opening fails with `RecordsError.storeFailed` unless `options`
    /// holds `.recreatesIncompatibleStore`: the store's files are then deleted, an empty store is made,
    /// and `handleMigration` is called (the seed's "heavyweight migration").
    /// - Throws: `RecordsError.storeFailed` (the model not found, the store not opened), and what
    ///   `init(stack:persistableTypes:)` throws.
    public convenience init(modelNamed name: String, registry: ModelRegistry = .shared, location: StoreLocation = .defaultDirectory,
                            options: Options = [], persistableTypes: [any Persistable.Type] = [],
                            handleMigration: (@Sendable () -> Void)? = nil) throws(RecordsError) {
        let model: ManagedObjectModel
        do { model = try registry.model(named: name) } catch { throw .storeFailed(name: name, underlying: error) }
        try self.init(name: name, model: model, location: location, options: options, persistableTypes: persistableTypes,
                      handleMigration: handleMigration)
    }

    /// A manager for the model in an Xcode model file (`.xcdatamodeld` or `.xcdatamodel`), with its
    /// store at `location` (see `init(modelNamed:registry:location:options:persistableTypes:handleMigration:)`
    /// for migration and `handleMigration`).
    /// - Parameters:
    ///   - url: The model file.
    ///   - name: Names the store; the file's name without extension when nil.
    ///   - classes: The classes of the entities, by entity name (your `Persistable` classes).
    ///   - location: Where the store lives.
    ///   - options: `recreatesIncompatibleStore` to recreate a store migration cannot bring forward.
    ///   - persistableTypes: `Persistable` classes to check beyond those the model binds.
    ///   - handleMigration: Called after a store was recreated.
    /// - Throws: `RecordsError.storeFailed` (the model unreadable, the store not opened), and what
    ///   `init(stack:persistableTypes:)` throws.
    public convenience init(modelAt url: URL, name: String? = nil, classes: [String: ManagedObject.Type] = [:],
                            location: StoreLocation = .defaultDirectory, options: Options = [],
                            persistableTypes: [any Persistable.Type] = [],
                            handleMigration: (@Sendable () -> Void)? = nil) throws(RecordsError) {
        let storeName = name ?? url.deletingPathExtension().lastPathComponent
        let model: ManagedObjectModel
        do { model = try ManagedObjectModel(contentsOf: url, classes: classes) } catch {
            throw .storeFailed(name: storeName, underlying: error)
        }
        try self.init(name: storeName, model: model, location: location, options: options, persistableTypes: persistableTypes,
                      handleMigration: handleMigration)
    }

    /// A manager for a model you hold, with its store at `location`.
    /// - Throws: as `init(modelNamed:registry:location:options:persistableTypes:handleMigration:)`.
    public convenience init(name: String, model: ManagedObjectModel, location: StoreLocation = .defaultDirectory,
                            options: Options = [], persistableTypes: [any Persistable.Type] = [],
                            handleMigration: (@Sendable () -> Void)? = nil) throws(RecordsError) {
        let stack = try Self.openStack(name: name, model: model, location: location, options: options, handleMigration: handleMigration)
        try self.init(stack: stack, persistableTypes: persistableTypes)
    }

    private static func makeContainer(name: String, model: ManagedObjectModel, location: StoreLocation) -> PersistentContainer {
        switch location {
        case .defaultDirectory:
            return PersistentContainer(name: name, model: model)
        case .directory(let directory):
            return PersistentContainer(name: name, model: model, options: StackOptions(storeDirectory: directory))
        case .inMemory:
            let container = PersistentContainer(name: name, model: model)
            let description = PersistentStoreDescription()
            description.type = .inMemory
            container.persistentStoreDescriptions = [description]
            return container
        }
    }

    private static func openStack(name: String, model: ManagedObjectModel, location: StoreLocation, options: Options,
                                  handleMigration: (@Sendable () -> Void)?) throws(RecordsError) -> PersistentContainer {
        let container = makeContainer(name: name, model: model, location: location)
        let storeURL = container.persistentStoreDescriptions.first?.url
        do {
            try container.start()
            RecordsLog.verbose("opened store '\(name)' at \(storeURL?.path ?? "memory")")
            return container
        } catch {
            guard options.contains(.recreatesIncompatibleStore), isIncompatibleModel(error), let storeURL else {
                RecordsLog.error("store '\(name)' did not open: \(error)")
                throw .storeFailed(name: name, underlying: error)
            }
            RecordsLog.warning("store '\(name)' at \(storeURL.path) was written by a model migration cannot reach (\(error)); deleting and recreating it")
            do { try FileManager.default.removeItem(at: storeURL) } catch {
                throw .storeFailed(name: name, underlying: error)
            }
            let fresh = makeContainer(name: name, model: model, location: location)
            do { try fresh.start() } catch { throw .storeFailed(name: name, underlying: error) }
            RecordsLog.warning("store '\(name)' recreated empty")
            handleMigration?()
            return fresh
        }
    }

    /// Whether opening failed because the store's model cannot be migrated to the current one.
    private static func isIncompatibleModel(_ error: StackError) -> Bool {
        guard case .attachFailed(_, _, _, let underlying) = error, let migration = underlying as? MigrationError else { return false }
        switch migration {
        case .incompatibleModel, .cannotInferMapping, .unknownSourceModel, .unannouncedRenames, .validationFailed, .uniquenessViolation:
            return true
        default: return false
        }
    }

    private static func checkUniqueIDs(_ model: ManagedObjectModel, extra: [any Persistable.Type]) throws(RecordsError) {
        var types: [any Persistable.Type] = extra
        for entity in model.entities {
            if let type = entity.objectType as? any Persistable.Type, !types.contains(where: { $0 == type }) { types.append(type) }
        }
        for type in types { try type.checkUniqueID(in: model) }
    }

    // MARK: Contexts

    /// A new background context of the stack, for reads off the main queue. The manager keeps a weak
    /// reference to it so that deletions made by `delete(with:)` reach it too.
    public func newBackgroundContext() -> ManagedObjectContext {
        let context = stack.newBackgroundContext()
        track(context)
        return context
    }

    private func track(_ context: ManagedObjectContext) {
        liveContexts.withLock { contexts in
            contexts = contexts.filter { $0.context != nil }
            contexts.append(WeakContext(context: context))
        }
    }

    /// Tells every live context the manager made (besides the view context, which merges saves on its
    /// own) that these objects are gone.
    func announceDeletions(_ ids: Set<ManagedObjectID>, except source: ManagedObjectContext) {
        guard !ids.isEmpty else { return }
        let contexts = liveContexts.withLock { $0.compactMap(\.context) }
        let changes = ContextChanges(deleted: ids)
        for context in contexts where context !== source && context !== mainContext {
            context.schedule { context.mergeChanges(fromContextDidSave: changes) }
        }
    }

    // MARK: Writing

    /// Runs `body` as the next write: on a new background context, inside its `perform`, after every
    /// write enqueued before it; saves when `body` changed something, then waits until the view
    /// context has merged the save, and hands the outcome to `done` (on the writer, not the main queue).
    func enqueueWrite<T: Sendable>(_ label: @escaping @autoclosure @Sendable () -> String,
                                   _ body: @escaping @Sendable (ManagedObjectContext) throws -> T,
                                   done: @escaping @Sendable (Result<T, any Error>) -> Void) {
        let stack = self.stack
        writer.enqueue {
            let context = stack.newBackgroundContext()

            let outcome: Result<T, any Error>
            do {
                let value = try await context.perform {
                    let value = try body(context)
                    if context.hasChanges {
                        try context.save()
                        RecordsLog.verbose("saved \(label())")
                    }
                    return value
                }
                outcome = .success(value)
            } catch {
                RecordsLog.error("\(label()) failed: \(error)")
                outcome = .failure(error)
            }
            do { try await stack.flush() } catch { RecordsLog.warning("merging \(label()) into the view context failed: \(error)") }
            done(outcome)
        }
    }

    /// Runs `deliver` on the view context's queue (completions of the closure forms).
    func onMain(_ deliver: @escaping @Sendable (ManagedObjectContext) -> Void) {
        let main = mainContext
        main.schedule { deliver(main) }
    }

    /// Waits until every write enqueued so far has finished and the view context has merged it.
    public func waitForWrites() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            writer.enqueue { continuation.resume() }
        }
    }
}

/// A context the manager made, held weakly: it belongs to its user.
struct WeakContext: Sendable {
    weak var context: ManagedObjectContext?
}
